// One message. Answers render Markdown (code blocks in a monospace font); user messages can be
// edited and resent; each can be copied; the last answer can be regenerated.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: bubble
    required property int index
    required property string role
    required property string text
    required property bool streaming
    required property string stopReason
    required property bool isLast
    required property bool busy
    signal copyRequested(string text)
    signal regenerateRequested()
    signal resendRequested(int row, string text)

    readonly property bool mine: role === "user"
    property bool editing: false

    implicitHeight: column.implicitHeight

    ColumnLayout {
        id: column
        width: Math.min(bubble.width * 0.78, Math.max(body.implicitWidth, editor.implicitWidth, 160) + 28)
        anchors.right: bubble.mine ? parent.right : undefined
        anchors.left: bubble.mine ? undefined : parent.left
        anchors.rightMargin: 12
        anchors.leftMargin: 12
        spacing: 2

        Rectangle {
            Layout.fillWidth: true
            implicitHeight: (bubble.editing ? editor.implicitHeight : body.implicitHeight) + 20
            radius: Theme.radius
            color: bubble.mine ? Theme.userBubble : Theme.assistantBubble
            border.color: bubble.mine ? Theme.userBubble : Theme.border

            TextEdit {
                id: body
                objectName: "messageText"
                visible: !bubble.editing
                anchors.fill: parent
                anchors.margins: 10
                readOnly: true
                selectByMouse: true
                wrapMode: Text.Wrap
                color: bubble.mine ? Theme.accentText : Theme.text
                textFormat: bubble.mine ? TextEdit.PlainText : TextEdit.MarkdownText
                text: bubble.text + (bubble.streaming ? " ▍" : "")
            }
            ColumnLayout {
                id: editor
                visible: bubble.editing
                anchors.fill: parent
                anchors.margins: 10
                TextArea {
                    id: editArea
                    Layout.fillWidth: true
                    wrapMode: TextEdit.Wrap
                    background: Rectangle { color: Theme.surface; radius: 6 }
                }
                RowLayout {
                    Button {
                        text: qsTr("Send")
                        onClicked: { bubble.editing = false; bubble.resendRequested(bubble.index, editArea.text) }
                    }
                    Button { text: qsTr("Cancel"); flat: true; onClicked: bubble.editing = false }
                }
            }
        }

        RowLayout {
            Layout.alignment: bubble.mine ? Qt.AlignRight : Qt.AlignLeft
            spacing: 2
            visible: !bubble.streaming && !bubble.editing
            Label {
                // Why an answer ended early; an answer that reached its end says nothing.
                readonly property var notes: ({ "cancelled": qsTr("stopped"), "context full": qsTr("context full"),
                                                "max tokens": qsTr("token limit reached") })
                visible: text.length > 0
                text: notes[bubble.stopReason] || ""
                color: Theme.muted
                font.pixelSize: 11
            }
            ActionButton {
                text: qsTr("Copy")
                onClicked: bubble.copyRequested(bubble.text)
            }
            ActionButton {
                visible: bubble.mine
                enabled: !bubble.busy
                text: qsTr("Edit")
                onClicked: { editArea.text = bubble.text; bubble.editing = true }
            }
            ActionButton {
                visible: !bubble.mine && bubble.isLast
                enabled: !bubble.busy
                text: qsTr("Regenerate")
                onClicked: bubble.regenerateRequested()
            }
        }
    }
}
