// The current conversation: its title and chat format, and its messages, following the streaming
// answer while it grows.
import QtQuick
import QtQuick.Controls
import LlamaDesk.Core

Item {
    id: chatView
    required property ChatController chat

    ConversationHeader {
        id: header
        anchors.left: parent.left
        anchors.right: parent.right
        chat: chatView.chat
    }

    ListView {
        id: list
        objectName: "messageList"
        anchors.top: header.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.bottom: parent.bottom
        anchors.margins: 8
        clip: true
        spacing: 10
        model: chatView.chat.messages
        ScrollBar.vertical: ScrollBar {}

        // Keep the newest text in sight unless the reader has scrolled up.
        property bool following: true
        onMovementEnded: following = atYEnd
        onContentHeightChanged: if (following) positionViewAtEnd()
        onCountChanged: { following = true; positionViewAtEnd() }

        delegate: MessageBubble {
            width: ListView.view.width
            isLast: index === ListView.view.count - 1
            busy: chatView.chat.generating
            onCopyRequested: (text) => chatView.chat.copyText(text)
            onRegenerateRequested: chatView.chat.regenerate()
            onContinueRequested: chatView.chat.continueAnswer()
            onResendRequested: (row, text) => chatView.chat.editAndResend(row, text)
        }
    }

    Label {
        anchors.centerIn: parent
        width: parent.width - 48
        horizontalAlignment: Text.AlignHCenter
        wrapMode: Text.Wrap
        visible: list.count === 0
        text: chatView.chat.chatFormat === "completion"
              ? qsTr("Write the beginning of a text; the model continues it. Enter sends, Shift+Enter starts a new line.")
              : qsTr("Ask something. Enter sends, Shift+Enter starts a new line.")
        color: Theme.muted
    }
}
