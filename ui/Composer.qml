// The input: Enter sends, Shift+Enter is a new line; Send turns into Stop while an answer streams.
// The text is the conversation's draft, kept by MessageComposer (and saved), so nothing typed is
// lost: not by switching conversations, not by a refused message, not by a restart. Under it, what
// the message costs in tokens and how many the conversation has left.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: composer
    required property MessageComposer drafts
    required property Generation generation
    required property ConversationList conversations
    required property bool ready
    // The window's shortcuts for a key event, true when one ran: X11's key theme gives a text area
    // Ctrl+K, Ctrl+N and others (Emacs-style editing) before the window's shortcuts see them.
    required property var runShortcut

    objectName: "composer"
    implicitHeight: Math.min(column.implicitHeight, 250) + 24
    color: Theme.background

    function submit() {
        if (composer.generation.generating || !composer.ready || input.text.trim().length === 0)
            return
        composer.drafts.send(input.text)
    }

    // Typing goes on at the end of a draft that comes back (restart, switch, refused message).
    function showDraft() {
        if (input.text === composer.drafts.draft)
            return
        input.text = composer.drafts.draft
        input.cursorPosition = input.length
    }

    // A new or another conversation: typing goes to its composer, whatever was clicked to get there.
    readonly property string conversationId: conversations.currentId
    onConversationIdChanged: input.forceActiveFocus()

    Component.onCompleted: {
        showDraft()
        input.forceActiveFocus()
    }
    Connections {
        target: composer.drafts
        function onDraftChanged() { composer.showDraft() }
    }
    Connections {
        target: composer.generation
        function onGeneratingChanged() {
            if (!composer.generation.generating)
                input.forceActiveFocus()
        }
    }

    ColumnLayout {
        id: column
        anchors.fill: parent
        anchors.margins: 12
        spacing: 4

        RowLayout {
            spacing: 10
            Layout.fillWidth: true
            Layout.fillHeight: true

            ScrollView {
                Layout.fillWidth: true
                Layout.fillHeight: true
                Layout.preferredHeight: Math.min(input.implicitHeight, 200)
                PlainTextArea {
                    id: input
                    objectName: "composerInput"
                    placeholderText: composer.ready ? qsTr("Message the model…") : qsTr("Open a model to send")
                    Accessible.name: qsTr("Message")
                    focus: true
                    onTextChanged: composer.drafts.draft = text
                    Keys.onPressed: (event) => {
                        if ((event.key === Qt.Key_Return || event.key === Qt.Key_Enter)
                                && !(event.modifiers & Qt.ShiftModifier)) {
                            composer.submit()
                            event.accepted = true
                        } else if ((event.modifiers & Qt.ControlModifier) && composer.runShortcut(event)) {
                            event.accepted = true
                        }
                    }
                }
            }
            Button {
                objectName: "sendButton"
                text: composer.generation.generating ? qsTr("Stop") : qsTr("Send")
                enabled: composer.generation.generating
                         || (composer.ready && input.text.trim().length > 0 && !composer.drafts.draftTooLong)
                highlighted: true
                Layout.preferredWidth: 90
                Layout.alignment: Qt.AlignBottom
                onClicked: composer.generation.generating ? composer.generation.stop() : composer.submit()
            }
        }

        // Always laid out (Qt 6.4 does not lay out again an item that starts invisible): empty
        // when there is nothing to say.
        Label {
            objectName: "draftNote"
            readonly property bool shown: input.text.length > 0 && composer.drafts.draftTokens >= 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.px(11)
            color: composer.drafts.draftTooLong ? Theme.danger : Theme.muted
            opacity: composer.drafts.draftCounted ? 1 : 0.6  // counting the latest keystrokes
            text: !shown ? ""
                  : composer.drafts.draftTooLong
                    ? qsTr("%1 tokens: longer than the model's whole context of %2 tokens. Shorten it or split it.")
                      .arg(composer.drafts.draftTokens).arg(composer.drafts.contextLength)
                  : composer.drafts.draftNeedsRoom
                    ? qsTr("%1 tokens: more than the %2 left in this conversation. Sending offers to make room.")
                      .arg(composer.drafts.draftTokens).arg(composer.drafts.draftRoom)
                    : qsTr("%1 tokens · %2 left in this conversation")
                      .arg(composer.drafts.draftTokens).arg(composer.drafts.draftRoom)
        }
    }
}
