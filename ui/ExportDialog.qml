// Where an export goes: a path to read and edit, with the conversation's name in the documents
// folder to start with, Enter to export, and Folder… to pick another folder by browsing (the name
// stays). Qt 6.4's own save dialog lost the name when Ctrl+L went to a folder, and Enter in its
// name field did nothing.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ConversationTransfer transfer
    property string mode: "json"  // "md", "json" or "all"
    property int row: -1          // the conversation, a ConversationListModel row
    readonly property string extension: mode === "md" ? "md" : "json"
    readonly property url target: transfer.targetOf(pathField.text, row, extension)

    function start(how, conversationRow) {
        mode = how
        row = how === "all" ? -1 : conversationRow
        pathField.text = transfer.suggestedPath(row, extension)
        open()
    }

    title: mode === "all" ? qsTr("Export all conversations")
                          : mode === "md" ? qsTr("Export a conversation as Markdown")
                                          : qsTr("Export a conversation as JSON")
    modal: true
    parent: Overlay.overlay  // the window's middle, whoever opens it
    anchors.centerIn: parent
    width: Math.min(600, parent ? parent.width - 24 : 600)
    standardButtons: Dialog.Save | Dialog.Cancel
    Component.onCompleted: standardButton(Dialog.Save).text = qsTr("Export")
    onOpened: {
        pathField.forceActiveFocus()
        // the name selected, ready to be typed over; the folder kept
        const name = pathField.text.lastIndexOf("/") + 1
        pathField.select(name, pathField.text.length - (dialog.extension.length + 1))
    }
    onAccepted: {
        if (mode === "all") transfer.exportAll(target)
        else if (mode === "md") transfer.exportMarkdown(row, target)
        else transfer.exportJson(row, target)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            text: qsTr("Save as (a folder that is not there yet is made):")
            Layout.fillWidth: true
            wrapMode: Text.Wrap
        }
        RowLayout {
            Layout.fillWidth: true
            TextField {
                id: pathField
                objectName: "exportPath"
                Accessible.name: qsTr("File to export to")
                Layout.fillWidth: true
                selectByMouse: true
                onAccepted: dialog.accept()
            }
            Button {
                objectName: "exportFolderButton"
                text: qsTr("Folder…")
                onClicked: folderPicker.open()
            }
        }
        // Emptied rather than hidden: Qt 6.4's layouts do not place an item shown after it started
        // hidden.
        Label {
            objectName: "exportReplaces"
            text: dialog.visible && dialog.transfer.exists(dialog.target) ? qsTr("That file exists: Export replaces it.") : ""
            color: Theme.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
    }

    FolderDialog {
        id: folderPicker
        objectName: "exportFolderDialog"
        title: qsTr("Export into a folder")
        currentFolder: dialog.transfer.startFolder()
        onCurrentFolderChanged: selectedFolder = currentFolder  // as the main window's Folder… dialog
        onAccepted: pathField.text = dialog.transfer.inFolder(pathField.text, selectedFolder)
        onVisibleChanged: if (!visible) pathField.forceActiveFocus()  // Enter exports after it, too
    }
}
