// One message. Answers render Markdown as prose and code blocks (highlighted, each with a Copy
// button of its own; raw HTML in an answer is shown as text, never rendered) or plain text; user
// messages can be edited and resent; each can be copied; an answer can be regenerated, and the last
// continued when it was cut short; what a regenerate or an edit replaced stays as another version
// there ("‹ 1/2 ›"); right-click (or the Menu key) gives the same actions, deletes the exchange, and
// branches into a new conversation. Messages dropped from the model's memory stay, dimmed and marked.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Item {
    id: bubble
    required property int index
    required property bool mine  // a question; else an answer
    required property string text
    required property var blocks  // of the answer: {isCode, html, code, language}
    required property bool streaming
    required property int stopReason  // an AnswerEnd.Reason
    required property bool continuable
    required property bool forgotten
    required property bool isLast
    required property bool busy
    required property int version       // from 1
    required property int versionCount  // 1: never regenerated or edited here
    signal copyRequested(string text)
    signal regenerateRequested(int row)
    signal branchRequested(int row)
    signal versionRequested(int row, int version)  // version from 0
    signal continueRequested()
    signal resendRequested(int row, string text)
    signal deleteRequested(int row)

    readonly property bool empty: !mine && !streaming && text.length === 0
    readonly property bool formatted: !mine && !plain && !empty
    property bool editing: false
    property bool plain: false

    implicitHeight: column.implicitHeight

    Keys.onPressed: (event) => {
        if (event.key === Qt.Key_Menu || (event.key === Qt.Key_F10 && event.modifiers & Qt.ShiftModifier)) {
            messageMenu.popup(column, 20, 20)
            event.accepted = true
        }
    }

    function startEditing() { editArea.text = bubble.text; bubble.editing = true }

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
            font.pixelSize: Theme.px(10)
            font.italic: true
            Layout.alignment: bubble.mine ? Qt.AlignRight : Qt.AlignLeft
        }

        Rectangle {
            Layout.fillWidth: true
            implicitHeight: (bubble.editing ? editor.implicitHeight : body.implicitHeight) + 20
            radius: Theme.radius
            color: bubble.mine ? Theme.userBubble : Theme.assistantBubble
            border.color: bubble.mine ? Theme.userBubble : Theme.border

            TapHandler {
                acceptedButtons: Qt.RightButton
                onTapped: (point) => messageMenu.popup(point.position.x, point.position.y)
            }
            WideMenu {
                id: messageMenu
                objectName: "messageMenu"
                MenuItem { text: qsTr("Copy"); onTriggered: bubble.copyRequested(bubble.text) }
                // What does not apply to this message is greyed, so the menu keeps one shape.
                MenuItem {
                    text: qsTr("Edit and resend")
                    enabled: bubble.mine && !bubble.busy
                    onTriggered: bubble.startEditing()
                }
                MenuItem {
                    text: qsTr("Regenerate")
                    enabled: !bubble.mine && !bubble.forgotten && !bubble.busy
                    onTriggered: bubble.regenerateRequested(bubble.index)
                }
                MenuItem {
                    objectName: "branchHere"
                    text: qsTr("Branch into a new conversation")
                    enabled: !bubble.busy
                    onTriggered: bubble.branchRequested(bubble.index)
                }
                MenuSeparator {}
                MenuItem {
                    objectName: "deleteExchange"
                    text: qsTr("Delete question and answer")
                    enabled: !bubble.busy
                    onTriggered: bubble.deleteRequested(bubble.index)
                }
            }

            // Only one of the two exists, so the text a test or a screen reader finds is the one shown.
            Loader {
                id: body
                visible: !bubble.editing
                anchors.fill: parent
                anchors.margins: 10
                sourceComponent: bubble.formatted ? blockList : plainText
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
                visible: text.length > 0
                text: {
                    switch (bubble.stopReason) {
                    case AnswerEnd.Cancelled: return qsTr("stopped")
                    case AnswerEnd.ContextFull: return qsTr("context full")
                    case AnswerEnd.MaxTokens: return qsTr("token limit reached")
                    case AnswerEnd.Interrupted: return qsTr("interrupted: LlamaDesk closed during the answer")
                    case AnswerEnd.Error: return qsTr("failed")
                    default: return ""
                    }
                }
                color: Theme.muted
                font.pixelSize: Theme.px(11)
            }
            // ‹ 2/3 ›: the versions of this message (and of all after it) to move between.
            ActionButton {
                objectName: "previousVersion"
                visible: bubble.versionCount > 1
                enabled: bubble.version > 1 && !bubble.busy
                text: "‹"
                Accessible.name: qsTr("Previous version")
                onClicked: bubble.versionRequested(bubble.index, bubble.version - 2)
            }
            Label {
                objectName: "versionLabel"
                visible: bubble.versionCount > 1
                text: bubble.version + "/" + bubble.versionCount
                color: Theme.muted
                font.pixelSize: Theme.px(11)
            }
            ActionButton {
                objectName: "nextVersion"
                visible: bubble.versionCount > 1
                enabled: bubble.version < bubble.versionCount && !bubble.busy
                text: "›"
                Accessible.name: qsTr("Next version")
                onClicked: bubble.versionRequested(bubble.index, bubble.version)
            }
            CopyButton {
                onClicked: bubble.copyRequested(bubble.text)
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
                onClicked: bubble.startEditing()
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
                text: bubble.stopReason === AnswerEnd.Interrupted ? qsTr("Retry") : qsTr("Regenerate")
                onClicked: bubble.regenerateRequested(bubble.index)
            }
        }
    }

    // A Copy button that says "Copied ✓" for a moment after each click.
    component CopyButton: ActionButton {
        id: copy
        property bool done: false
        text: done ? qsTr("Copied ✓") : qsTr("Copy")
        onClicked: { done = true; copiedTimer.restart() }
        Timer { id: copiedTimer; interval: 1500; onTriggered: copy.done = false }
    }

    component MessageText: TextEdit {
        // A TextEdit is no control: it takes the zoom from Theme, not the window's font.
        font.pointSize: Qt.application.font.pointSize * Theme.zoom
        readOnly: true
        selectByMouse: true
        wrapMode: Text.Wrap
        color: Theme.text
    }

    Component {
        id: plainText
        MessageText {
            objectName: "messageText"
            color: bubble.empty ? Theme.muted : bubble.mine ? Theme.userText : Theme.text
            font.italic: bubble.empty
            textFormat: TextEdit.PlainText
            text: bubble.empty ? qsTr("(no text: the model ended its answer at once)")
                  : bubble.text + (bubble.streaming ? " ▍" : "")
        }
    }

    // A Column, not a ColumnLayout: Qt 6.4's layouts can crash laying out a Repeater's deleted
    // items, and the blocks are made anew with each piece of a streaming answer.
    Component {
        id: blockList
        Item {
            // What the widest block would take, for the bubble's width; a Column reports the widths
            // its children were given.
            implicitWidth: {
                let widest = 0
                for (let i = 0; i < blockColumn.children.length; ++i)
                    widest = Math.max(widest, blockColumn.children[i].implicitWidth)
                return widest
            }
            implicitHeight: blockColumn.implicitHeight
            Column {
                id: blockColumn
                width: parent.width
                spacing: 8
                // By count, so a streaming answer's blocks stay and change in place: made anew with
                // each piece, the ones taken away kept the bubble as tall as before for good.
                Repeater {
                    model: bubble.blocks.length
                    delegate: Loader {
                        id: block
                        required property int index
                        readonly property var modelData: bubble.blocks[index]
                        width: blockColumn.width
                        sourceComponent: modelData.isCode ? codeBlock : proseBlock

                        // Declared here, inside the delegate, to see its modelData.
                        Component {
                            id: proseBlock
                            MessageText {
                                objectName: "messageText"
                                textFormat: TextEdit.RichText
                                text: block.modelData.html
                            }
                        }
                        Component {
                            id: codeBlock
                            Rectangle {
                                implicitWidth: code.implicitWidth + 20
                                implicitHeight: code.implicitHeight + 12
                                color: Theme.codeBackground
                                radius: 6
                                ColumnLayout {
                                    id: code
                                    anchors.fill: parent
                                    anchors.margins: 10
                                    anchors.topMargin: 2
                                    spacing: 0
                                    RowLayout {
                                        Label {
                                            Layout.fillWidth: true
                                            text: block.modelData.language
                                            textFormat: Text.PlainText  // an info string is not markup
                                            elide: Text.ElideRight
                                            color: Theme.muted
                                            font.pixelSize: Theme.px(11)
                                        }
                                        CopyButton {
                                            objectName: "codeCopyButton"
                                            Accessible.name: qsTr("Copy code")
                                            onClicked: bubble.copyRequested(block.modelData.code)
                                        }
                                    }
                                    MessageText {
                                        objectName: "codeText"
                                        Layout.fillWidth: true
                                        textFormat: TextEdit.RichText
                                        text: block.modelData.html
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}
