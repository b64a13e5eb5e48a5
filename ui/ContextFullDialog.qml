// Opens when a conversation reaches the model's context length: start a new conversation, or
// drop the oldest turns (the system prompt stays) and continue.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ChatController chat
    required property int contextLength

    objectName: "contextFullDialog"
    title: qsTr("The conversation is full")
    modal: true
    width: 460
    visible: chat.contextFull
    closePolicy: Popup.CloseOnEscape
    onRejected: chat.dismissContextFull()

    ColumnLayout {
        anchors.fill: parent
        spacing: 12
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("This conversation has reached the model's context length (%1 tokens). "
                       + "Start a new conversation, or drop the oldest turns and continue here "
                       + "(the system prompt is kept).").arg(dialog.contextLength)
        }
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Button {
                text: qsTr("New conversation")
                onClicked: { dialog.chat.dismissContextFull(); dialog.chat.newConversation() }
            }
            Button {
                text: qsTr("Drop oldest turns and continue")
                highlighted: true
                onClicked: dialog.chat.dropOldestTurnsAndContinue()
            }
        }
    }
}
