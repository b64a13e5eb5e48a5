// The input: Enter sends, Shift+Enter is a new line; Send turns into Stop while an answer streams.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: composer
    required property ChatController chat
    required property bool ready

    implicitHeight: Math.min(row.implicitHeight, 220) + 24
    color: Theme.background

    function submit() {
        if (composer.chat.generating || !composer.ready || input.text.trim().length === 0)
            return
        composer.chat.send(input.text)
        input.clear()
    }

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: 12
        spacing: 10

        ScrollView {
            Layout.fillWidth: true
            Layout.fillHeight: true
            TextArea {
                id: input
                objectName: "composerInput"
                placeholderText: composer.ready ? qsTr("Message the model…") : qsTr("Open a model to start")
                enabled: composer.ready
                wrapMode: TextEdit.Wrap
                focus: true
                background: Rectangle {
                    radius: Theme.radius
                    color: Theme.surface
                    border.color: input.activeFocus ? Theme.accent : Theme.border
                }
                Keys.onPressed: (event) => {
                    if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                            && !(event.modifiers & Qt.ShiftModifier)) {
                        composer.submit()
                        event.accepted = true
                    }
                }
            }
        }
        Button {
            objectName: "sendButton"
            text: composer.chat.generating ? qsTr("Stop") : qsTr("Send")
            enabled: composer.chat.generating || (composer.ready && input.text.trim().length > 0)
            highlighted: true
            Layout.preferredWidth: 90
            Layout.alignment: Qt.AlignBottom
            onClicked: composer.chat.generating ? composer.chat.stop() : composer.submit()
        }
    }
}
