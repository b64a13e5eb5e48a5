// One message. Answers render Markdown (code blocks in a monospace font; raw HTML in an answer is
// shown as text, never rendered) or plain text; user messages can be edited and resent; each can be
// copied; the last answer can be regenerated, and continued when it was cut short. Messages dropped
// from the model's memory stay, dimmed and marked.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: bubble
    required property int index
    required property string role
    required property string text
    required property string html
    required property bool streaming
    required property string stopReason
    required property bool continuable
    required property bool forgotten
    required property bool isLast
    required property bool busy
    signal copyRequested(string text)
    signal regenerateRequested()
    signal continueRequested()
    signal resendRequested(int row, string text)

    readonly property bool mine: role === "user"
    readonly property bool empty: !mine && !streaming && text.length === 0
    property bool editing: false
    property bool plain: false

    implicitHeight: column.implicitHeight

    ColumnLayout {
        id: column
        width: Math.min(bubble.width * 0.78, Math.max(body.implicitWidth, editor.implicitWidth, 160) + 28)
        anchors.right: bubble.mine ? parent.right : undefined
        anchors.left: bubble.mine ? undefined : parent.left
        anchors.rightMargin: 12
        anchors.leftMargin: 12
        spacing: 2
        opacity: bubble.forgotten ? 0.55 : 1

        Label {
            visible: bubble.forgotten
            text: qsTr("outside the model's memory")
            color: Theme.muted
            font.pixelSize: 10
            font.italic: true
            Layout.alignment: bubble.mine ? Qt.AlignRight : Qt.AlignLeft
        }

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
                color: bubble.empty ? Theme.muted : bubble.mine ? Theme.accentText : Theme.text
                font.italic: bubble.empty
                textFormat: bubble.mine || bubble.plain || bubble.empty ? TextEdit.PlainText : TextEdit.RichText
                text: bubble.empty ? qsTr("(no text: the model ended its answer at once)")
                      : bubble.mine ? bubble.text
                      : bubble.plain ? bubble.text + (bubble.streaming ? " ▍" : "")
                      : bubble.html
            }
            ColumnLayout {
                id: editor
                visible: bubble.editing
                anchors.fill: parent
                anchors.margins: 10
                PlainTextArea {
                    id: editArea
                    Layout.fillWidth: true
                    Accessible.name: qsTr("Edited message")
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
                objectName: "stopNote"
                // Why an answer ended early; an answer that reached its end says nothing.
                readonly property var notes: ({ "cancelled": qsTr("stopped"), "context full": qsTr("context full"),
                                                "max tokens": qsTr("token limit reached"),
                                                "interrupted": qsTr("interrupted: LlamaDesk closed during the answer"),
                                                "error": qsTr("failed") })
                visible: text.length > 0
                text: notes[bubble.stopReason] || ""
                color: Theme.muted
                font.pixelSize: 11
            }
            ActionButton {
                id: copyButton
                property bool done: false
                text: done ? qsTr("Copied ✓") : qsTr("Copy")
                onClicked: { bubble.copyRequested(bubble.text); done = true; copiedTimer.restart() }
                Timer { id: copiedTimer; interval: 1500; onTriggered: copyButton.done = false }
            }
            ActionButton {
                visible: !bubble.mine && !bubble.empty
                text: bubble.plain ? qsTr("Formatted") : qsTr("Plain text")
                onClicked: bubble.plain = !bubble.plain
            }
            ActionButton {
                visible: bubble.mine
                enabled: !bubble.busy
                text: qsTr("Edit")
                onClicked: { editArea.text = bubble.text; bubble.editing = true }
            }
            ActionButton {
                objectName: "continueButton"
                visible: !bubble.mine && bubble.isLast && bubble.continuable && !bubble.forgotten
                enabled: !bubble.busy
                text: qsTr("Continue")
                onClicked: bubble.continueRequested()
            }
            ActionButton {
                objectName: "regenerateButton"
                visible: !bubble.mine && bubble.isLast && !bubble.forgotten
                enabled: !bubble.busy
                text: bubble.stopReason === "interrupted" ? qsTr("Retry") : qsTr("Regenerate")
                onClicked: bubble.regenerateRequested()
            }
        }
    }
}
