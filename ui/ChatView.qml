// The current conversation: its title and chat format, and its messages, following the streaming
// answer while it grows.
import QtQuick
import QtQuick.Controls
import LlamaDesk.Core

Item {
    id: chatView
    required property ConversationList conversations
    required property Generation generation
    required property MessageComposer composer
    required property ChatFormatChoice format
    required property ConversationTransfer transfer
    required property ModelController model
    // The current conversation answers: one binding the bubbles share.
    readonly property bool busy: generation.generating

    ConversationHeader {
        id: header
        anchors.left: parent.left
        anchors.right: parent.right
        conversations: chatView.conversations
        generation: chatView.generation
        format: chatView.format
    }

    // The model loaded cannot write the format this conversation had: it took the model's own.
    Label {
        id: formatNote
        objectName: "formatNote"
        anchors.top: header.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        leftPadding: 12
        rightPadding: 12
        topPadding: 4
        text: chatView.format.formatNote
        visible: text !== ""
        height: visible ? implicitHeight : 0
        wrapMode: Text.Wrap
        textFormat: Text.PlainText
        color: Theme.muted
        font.pixelSize: Theme.px(12)
    }

    ListView {
        id: list
        objectName: "messageList"
        anchors.top: formatNote.bottom
        anchors.left: parent.left
        anchors.right: parent.right
        anchors.bottom: parent.bottom
        anchors.margins: 8
        clip: true
        spacing: 10
        model: chatView.conversations.messages
        ScrollBar.vertical: ScrollBar {}

        // Keep the newest text in sight unless the reader has scrolled up.
        property bool following: true
        onMovementEnded: following = atYEnd
        onContentHeightChanged: if (following) positionViewAtEnd()
        onCountChanged: { following = true; positionViewAtEnd() }

        delegate: MessageBubble {
            width: ListView.view.width
            isLast: index === ListView.view.count - 1
            busy: chatView.busy
            onCopyRequested: (text) => chatView.transfer.copyText(text)
            onRegenerateRequested: (row) => chatView.generation.regenerateAt(row)
            onBranchRequested: (row) => chatView.conversations.branchFromMessage(row)
            onVersionRequested: (row, version) => chatView.generation.showVersion(row, version)
            onContinueRequested: chatView.generation.continueAnswer()
            onResendRequested: (row, text) => chatView.generation.editAndResend(row, text)
            onDeleteRequested: (row) => chatView.generation.deleteExchange(row)
        }
    }

    Column {
        anchors.centerIn: parent
        width: parent.width - 48
        spacing: 10
        visible: list.count === 0

        Label {
            width: parent.width
            horizontalAlignment: Text.AlignHCenter
            wrapMode: Text.Wrap
            text: chatView.format.chatFormat === ChatFormatChoice.Completion
                  ? qsTr("Write the beginning of a text; the model continues it. Enter sends, Shift+Enter starts a new line.")
                  : qsTr("Ask something. Enter sends, Shift+Enter starts a new line.")
            color: Theme.muted
        }
        Label {
            width: parent.width
            horizontalAlignment: Text.AlignHCenter
            visible: chatView.model.suggestedQuestions.length > 0
            text: qsTr("The built-in model knows this app and its KV cache. Try:")
            color: Theme.muted
        }
        Repeater {
            model: chatView.model.suggestedQuestions
            delegate: Button {
                required property string modelData
                objectName: "suggestedQuestion"
                anchors.horizontalCenter: parent.horizontalCenter
                text: modelData
                flat: true
                onClicked: chatView.composer.send(modelData)
            }
        }
    }
}
