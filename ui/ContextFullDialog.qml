// Opens when a message does not fit what is left of the model's context, or an answer reached it:
// send the message in a new conversation, or drop the oldest turns from the model's view (they stay
// on screen, marked) and continue here. The message stays in the composer either way.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property MessageComposer composer
    required property int contextLength

    objectName: "contextFullDialog"
    title: qsTr("The conversation is full")
    modal: true
    width: 480
    visible: composer.contextFull
    closePolicy: Popup.CloseOnEscape
    onRejected: composer.dismissContextFull()

    ColumnLayout {
        anchors.fill: parent
        spacing: 12
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: (dialog.composer.messageWaiting
                   ? qsTr("Your message does not fit in what is left of the model's context (%1 tokens). "
                          + "Send it in a new conversation, or drop the oldest turns from the model's "
                          + "memory and send it here. It stays in the composer until it is sent.")
                   : qsTr("This conversation has reached the model's context length (%1 tokens). "
                          + "Continue in a new conversation, or drop the oldest turns from the model's "
                          + "memory and continue here."))
                  .arg(dialog.contextLength)
                  + " " + qsTr("Dropped turns stay on screen, marked as outside the model's memory; "
                               + "the system prompt is kept.")
        }
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Button {
                objectName: "contextFullNewConversation"
                text: dialog.composer.messageWaiting ? qsTr("Send in a new conversation") : qsTr("New conversation")
                onClicked: dialog.composer.continueInNewConversation()
            }
            Button {
                objectName: "contextFullDropOldest"
                text: dialog.composer.messageWaiting ? qsTr("Drop oldest turns and send") : qsTr("Drop oldest turns")
                highlighted: true
                onClicked: dialog.composer.dropOldestTurnsAndContinue()
            }
        }
    }
}
