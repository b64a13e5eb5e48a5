// The conversations, newest first: new, select, rename (double-click), delete (with a few seconds
// to undo); each with its message count and how many of its tokens the KV cache holds (not known
// when the model runs on a server: its cache is the server's).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: sidebar
    required property ChatController chat
    required property bool remote
    signal settingsRequested()

    color: Theme.sidebar

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 10
        spacing: 8

        Button {
            objectName: "newConversationButton"
            text: qsTr("+  New conversation")
            Layout.fillWidth: true
            onClicked: sidebar.chat.newConversation()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Ctrl+N")
        }

        ListView {
            id: list
            objectName: "conversationList"
            Layout.fillWidth: true
            Layout.fillHeight: true
            clip: true
            spacing: 4
            model: sidebar.chat.conversations
            currentIndex: sidebar.chat.currentIndex

            delegate: Rectangle {
                id: item
                required property int index
                required property string title
                required property int messageCount
                required property int cachedTokens
                required property bool answering
                property bool editing: false

                width: ListView.view.width
                height: 54
                radius: 8
                color: ListView.isCurrentItem ? Theme.sidebarSelected
                                              : hover.hovered ? "#2a3040" : "transparent"

                HoverHandler { id: hover }
                TapHandler {
                    onTapped: sidebar.chat.selectConversation(item.index)
                    onDoubleTapped: item.editing = true
                }

                ColumnLayout {
                    anchors.fill: parent
                    anchors.margins: 8
                    anchors.rightMargin: 34
                    spacing: 2
                    Label {
                        visible: !item.editing
                        textFormat: Text.PlainText
                        text: item.title
                        color: Theme.sidebarText
                        elide: Text.ElideRight
                        Layout.fillWidth: true
                    }
                    TextField {
                        visible: item.editing
                        text: item.title
                        Layout.fillWidth: true
                        onVisibleChanged: if (visible) { forceActiveFocus(); selectAll() }
                        onAccepted: { sidebar.chat.renameConversation(item.index, text); item.editing = false }
                        Keys.onEscapePressed: item.editing = false
                    }
                    Label {
                        objectName: "conversationDetail"
                        // While it answers, the answer's growth shows instead of the message count.
                        text: item.answering
                              ? (sidebar.remote ? qsTr("answering…")
                                 : qsTr("answering… · %1 cached tokens").arg(item.cachedTokens))
                              : sidebar.remote ? qsTr("%1 messages").arg(item.messageCount)
                              : qsTr("%1 messages · %2 cached tokens").arg(item.messageCount).arg(item.cachedTokens)
                        color: Theme.sidebarMuted
                        font.pixelSize: 11
                    }
                }

                ActionButton {
                    anchors.right: parent.right
                    anchors.verticalCenter: parent.verticalCenter
                    visible: hover.hovered || item.ListView.isCurrentItem
                    text: "⋯"
                    font.pixelSize: 16
                    palette.buttonText: Theme.sidebarText
                    onClicked: menu.open()
                    Menu {
                        id: menu
                        MenuItem { text: qsTr("Rename"); onTriggered: item.editing = true }
                        MenuItem { text: qsTr("Delete"); onTriggered: sidebar.chat.deleteConversation(item.index) }
                    }
                }
            }
        }

        // Stands out from the list (the accent, not a row's colour); the title gets two lines.
        Rectangle {
            objectName: "undoDeleteBar"
            visible: sidebar.chat.undoDeleteTitle.length > 0
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
                    text: qsTr("Deleted “%1”").arg(sidebar.chat.undoDeleteTitle)
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
                    onClicked: sidebar.chat.undoDelete()
                }
            }
        }

        Button {
            text: qsTr("Settings")
            Layout.fillWidth: true
            onClicked: sidebar.settingsRequested()
        }
    }
}
