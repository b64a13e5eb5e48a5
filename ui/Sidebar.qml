// The conversations, newest first: new, search (Ctrl+K), select, rename (double-click or F2), export,
// delete (with a few seconds to undo), by mouse, context menu or keyboard; import and export all
// from the ⋯ menu. Each row shows its message count and how many of its tokens the KV cache holds
// (not known when the model runs on a server: its cache is the server's), or, while searching, a
// line of its matching text.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: sidebar
    required property ConversationList conversations
    required property ConversationSearch search
    required property ConversationTransfer transfer
    required property bool remote
    signal settingsRequested()
    signal shortcutsRequested()

    function focusSearch() { searchField.forceActiveFocus(); searchField.selectAll() }
    // Esc: true when it cleared a search (so it stops nothing else).
    function clearSearch() {
        if (searchField.text.length === 0)
            return false
        searchField.clear()
        return true
    }

    color: Theme.sidebar
    Binding { target: sidebar.search; property: "markColor"; value: String(Theme.searchMark) }

    // The conversation a menu or a dialog acts on, as a ConversationListModel row.
    property int actionRow: -1
    property bool actionPinned: false
    function openMenu(row, item, x, y) {
        actionRow = row
        actionPinned = sidebar.conversations.isPinned(row)
        conversationMenu.popup(item, x, y)
    }

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 10
        spacing: 8

        RowLayout {
            Layout.fillWidth: true
            spacing: 4
            Button {
                objectName: "newConversationButton"
                text: qsTr("+  New conversation")
                Layout.fillWidth: true
                onClicked: sidebar.conversations.newConversation()
                ButtonToolTip { visible: parent.hovered; text: qsTr("Ctrl+N") }
            }
            Button {
                id: moreButton
                objectName: "moreButton"
                text: "⋯"
                Layout.preferredWidth: 40
                Accessible.name: qsTr("More: import, export all, shortcuts")
                onClicked: moreMenu.popup(moreButton, 0, moreButton.height)
                Menu {
                    id: moreMenu
                    MenuItem { text: qsTr("Import conversations…"); onTriggered: importDialog.open() }
                    MenuItem {
                        text: qsTr("Export all conversations…")
                        onTriggered: exportDialog.start("all", -1)
                    }
                    MenuSeparator {}
                    MenuItem { text: qsTr("Keyboard shortcuts (F1)"); onTriggered: sidebar.shortcutsRequested() }
                }
            }
        }

        TextField {
            id: searchField
            objectName: "searchField"
            Layout.fillWidth: true
            placeholderText: qsTr("Search conversations (Ctrl+K)")
            Accessible.name: qsTr("Search conversations")
            rightPadding: clearButton.visible ? clearButton.width + 4 : padding
            // Every keystroke filters; 1000 conversations take a few milliseconds (test_conversation_search).
            onTextChanged: sidebar.search.query = text
            Keys.onDownPressed: { list.forceActiveFocus(); if (list.count > 0) sidebar.conversations.selectConversation(sidebar.search.sourceRow(0)) }
            Keys.onReturnPressed: if (list.count > 0) sidebar.conversations.selectConversation(sidebar.search.sourceRow(0))
            ToolButton {
                id: clearButton
                visible: searchField.text.length > 0
                anchors.right: parent.right
                anchors.verticalCenter: parent.verticalCenter
                text: "×"
                Accessible.name: qsTr("Clear the search")
                onClicked: searchField.clear()
            }
        }

        Label {
            objectName: "noMatches"
            visible: searchField.text.trim().length > 0 && list.count === 0
            text: qsTr("No conversation holds “%1”.").arg(searchField.text.trim())
            textFormat: Text.PlainText
            color: Theme.sidebarMuted
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 4
            model: sidebar.search
            activeFocusOnTab: true
            keyNavigationEnabled: false  // Up and Down select, below
            Accessible.role: Accessible.List
            Accessible.name: qsTr("Conversations")
            // Read again whenever the filter changes: the same count can hold other rows.
            currentIndex: { sidebar.search.count; sidebar.search.query; return sidebar.search.rowOfSource(sidebar.conversations.currentIndex) }

            function selectRow(row) {
                if (row >= 0 && row < count)
                    sidebar.conversations.selectConversation(sidebar.search.sourceRow(row))
            }
            Keys.onUpPressed: selectRow(currentIndex - 1)
            Keys.onDownPressed: selectRow(currentIndex + 1)
            Keys.onPressed: (event) => {
                if (currentItem && (event.key === Qt.Key_Menu || (event.key === Qt.Key_F10 && event.modifiers & Qt.ShiftModifier))) {
                    sidebar.openMenu(sidebar.conversations.currentIndex, currentItem, 20, currentItem.height / 2)
                    event.accepted = true
                } else if (currentItem && event.key === Qt.Key_F2) {
                    currentItem.editing = true
                    event.accepted = true
                } else if (event.key === Qt.Key_Delete) {
                    sidebar.conversations.deleteConversation(sidebar.conversations.currentIndex)
                    event.accepted = true
                }
            }

            // Where the keyboard is, when it is in the list.
            highlight: Rectangle { color: "transparent"; radius: 8; border.color: Theme.searchMark; border.width: 2; visible: list.activeFocus; z: 2 }
            highlightMoveDuration: 0

            delegate: Rectangle {
                id: item
                required property int index
                required property string title
                required property string titleMarked
                required property string snippet
                required property int messageCount
                required property int cachedTokens
                required property bool answering
                required property bool pinned
                required property string tags
                property bool editing: false
                readonly property int sourceRow: { sidebar.search.count; sidebar.search.query; return sidebar.search.sourceRow(index) }

                width: ListView.view.width
                height: column.implicitHeight + 16
                radius: 8
                color: ListView.isCurrentItem ? Theme.sidebarSelected
                                              : hover.hovered ? Theme.sidebarHover : "transparent"
                Accessible.role: Accessible.ListItem
                Accessible.name: item.title
                Accessible.selected: ListView.isCurrentItem

                HoverHandler { id: hover }
                TapHandler {
                    onTapped: sidebar.conversations.selectConversation(item.sourceRow)
                    onDoubleTapped: item.editing = true
                }
                TapHandler {
                    acceptedButtons: Qt.RightButton
                    onTapped: (point) => sidebar.openMenu(item.sourceRow, item, point.position.x, point.position.y)
                }

                ColumnLayout {
                    id: column
                    anchors.left: parent.left
                    anchors.right: parent.right
                    anchors.top: parent.top
                    anchors.margins: 8
                    anchors.rightMargin: rowActions.width + 4  // the ⋯ grows with the zoom
                    spacing: 2
                    Label {
                        visible: !item.editing
                        textFormat: Text.StyledText  // the search's marks; the title itself is escaped
                        text: item.titleMarked
                        color: Theme.sidebarText
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    TextField {
                        visible: item.editing
                        text: item.title
                        Layout.fillWidth: true
                        Accessible.name: qsTr("New title")
                        onVisibleChanged: if (visible) { forceActiveFocus(); selectAll() }
                        onAccepted: { sidebar.conversations.renameConversation(item.sourceRow, text); item.editing = false }
                        Keys.onEscapePressed: item.editing = false
                    }
                    Label {
                        objectName: "searchSnippet"
                        visible: item.snippet.length > 0
                        textFormat: Text.StyledText
                        text: item.snippet
                        color: Theme.sidebarMuted
                        font.pixelSize: Theme.px(11)
                        wrapMode: Text.Wrap
                        maximumLineCount: 2
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    Label {
                        objectName: "conversationDetail"
                        visible: item.snippet.length === 0
                        // While it answers, the answer's growth shows instead of the message count.
                        text: item.answering
                              ? (sidebar.remote ? qsTr("answering…")
                                 : qsTr("answering… · %1 cached tokens").arg(item.cachedTokens))
                              : (item.pinned ? qsTr("pinned · ") : "") + (item.tags ? item.tags + " · " : "")
                                + (sidebar.remote ? qsTr("%1 messages").arg(item.messageCount)
                                   : qsTr("%1 messages · %2 cached tokens").arg(item.messageCount).arg(item.cachedTokens))
                        color: Theme.sidebarMuted
                        font.pixelSize: Theme.px(11)
                        wrapMode: Text.Wrap  // at a large zoom the counts take a second line
                        Layout.fillWidth: true
                    }
                }

                ActionButton {
                    id: rowActions
                    anchors.right: parent.right
                    anchors.verticalCenter: parent.verticalCenter
                    visible: hover.hovered || item.ListView.isCurrentItem
                    text: "⋯"
                    font.pixelSize: Theme.px(16)
                    palette.buttonText: Theme.sidebarText
                    Accessible.name: qsTr("Actions for “%1”").arg(item.title)
                    onClicked: sidebar.openMenu(item.sourceRow, this, 0, height)
                }
            }
        }

        // Stands out from the list (the accent, not a row's colour); the title gets two lines.
        Rectangle {
            objectName: "undoDeleteBar"
            visible: sidebar.conversations.undoDeleteTitle.length > 0
            Layout.fillWidth: true
            implicitHeight: undoColumn.implicitHeight + 16
            radius: 8
            color: Theme.accent
            ColumnLayout {
                id: undoColumn
                anchors.fill: parent
                anchors.margins: 8
                spacing: 6
                Label {
                    text: qsTr("Deleted “%1”").arg(sidebar.conversations.undoDeleteTitle)
                    textFormat: Text.PlainText
                    color: Theme.accentText
                    wrapMode: Text.Wrap
                    maximumLineCount: 2
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "undoDeleteButton"
                    text: qsTr("Undo")
                    Layout.alignment: Qt.AlignRight
                    onClicked: sidebar.conversations.undoDelete()
                }
            }
        }

        // What the last export or import did; it goes after a few seconds.
        Label {
            id: transferNote
            objectName: "transferNote"
            visible: text.length > 0
            color: Theme.sidebarText
            wrapMode: Text.Wrap
            textFormat: Text.PlainText
            font.pixelSize: Theme.px(11)
            Layout.fillWidth: true
            Timer { id: noteTimer; interval: 6000; onTriggered: transferNote.text = "" }
            Connections {
                target: sidebar.transfer
                function onDone(message) { transferNote.text = message; noteTimer.restart() }
            }
        }

        Button {
            text: qsTr("Settings")
            Layout.fillWidth: true
            onClicked: sidebar.settingsRequested()
        }
    }

    WideMenu {
        id: conversationMenu
        objectName: "conversationMenu"
        MenuItem {
            text: qsTr("Rename")
            onTriggered: {
                const row = sidebar.search.rowOfSource(sidebar.actionRow)
                const delegate = list.itemAtIndex(row)
                if (delegate) delegate.editing = true
            }
        }
        MenuItem {
            objectName: "pinConversation"
            text: sidebar.actionPinned ? qsTr("Unpin") : qsTr("Pin to the top")
            onTriggered: sidebar.conversations.setPinned(sidebar.actionRow, !sidebar.actionPinned)
        }
        MenuItem {
            objectName: "tagConversation"
            text: qsTr("Tags…")
            onTriggered: {
                tagsField.text = sidebar.conversations.tagsOf(sidebar.actionRow)
                tagsDialog.open()
            }
        }
        MenuItem {
            text: qsTr("Export as Markdown…")
            onTriggered: exportDialog.start("md", sidebar.actionRow)
        }
        MenuItem {
            text: qsTr("Export as JSON…")
            onTriggered: exportDialog.start("json", sidebar.actionRow)
        }
        MenuSeparator {}
        MenuItem { text: qsTr("Delete"); onTriggered: sidebar.conversations.deleteConversation(sidebar.actionRow) }
    }

    // A conversation's tags, separated by commas; Ctrl+K finds conversations by them.
    Dialog {
        id: tagsDialog
        objectName: "tagsDialog"
        title: qsTr("Tags")
        modal: true
        anchors.centerIn: Overlay.overlay
        standardButtons: Dialog.Ok | Dialog.Cancel
        onAccepted: sidebar.conversations.setTags(sidebar.actionRow, tagsField.text)
        onOpened: tagsField.forceActiveFocus()  // typing goes to the tags at once
        TextField {
            id: tagsField
            objectName: "tagsField"
            implicitWidth: 320
            placeholderText: qsTr("e.g. work, recipes")
            Accessible.name: qsTr("Tags, separated by commas")
            onAccepted: tagsDialog.accept()
        }
    }

    ExportDialog {
        id: exportDialog
        objectName: "exportDialog"
        transfer: sidebar.transfer
    }
    FileDialog {
        id: importDialog
        objectName: "importDialog"
        title: qsTr("Import conversations")
        currentFolder: sidebar.transfer.startFolder()
        acceptLabel: qsTr("Import")
        nameFilters: [qsTr("LlamaDesk export (*.json)"), qsTr("All files (*)")]
        onAccepted: sidebar.transfer.importFile(selectedFile)
    }
}
