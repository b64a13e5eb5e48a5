// Everything inside the window: header, sidebar, chat or welcome screen, figures and inspector,
// and the dialogs. Tests create this item directly.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import LlamaDesk.Core

Item {
    id: root
    required property AppContext app
    property bool showPanel: true

    Shortcut { sequence: "Ctrl+N"; onActivated: root.app.chat.newConversation() }
    Shortcut { sequence: "Ctrl+O"; onActivated: fileDialog.open() }
    Shortcut { sequence: "Esc"; onActivated: root.app.chat.stop() }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ModelHeader {
            Layout.fillWidth: true
            model: root.app.model
            panelShown: root.showPanel
            onOpenFileRequested: fileDialog.open()
            onOpenFolderRequested: folderDialog.open()
            onOpenPathRequested: pathDialog.open()
            onOpenRemoteRequested: remoteDialog.open()
            onSettingsRequested: settingsDialog.open()
            onPanelToggled: root.showPanel = !root.showPanel
        }

        ErrorBanner {
            objectName: "errorBanner"
            Layout.fillWidth: true
            message: root.app.errorMessage
            onDismissed: root.app.dismissError()
        }

        RowLayout {
            Layout.fillWidth: true
            Layout.fillHeight: true
            spacing: 0

            Sidebar {
                Layout.preferredWidth: 260
                Layout.fillHeight: true
                chat: root.app.chat
                remote: root.app.model.remote
                onSettingsRequested: settingsDialog.open()
            }

            // Plain anchors here: Qt 6.4's layouts neither lay out again an item that starts
            // invisible nor follow the composer's height as its text grows.
            Item {
                Layout.fillWidth: true
                Layout.fillHeight: true
                Item {
                    anchors.left: parent.left
                    anchors.right: parent.right
                    anchors.top: parent.top
                    anchors.bottom: composer.top
                    WelcomeView {
                        anchors.fill: parent
                        visible: !root.app.model.hasModel
                        model: root.app.model
                        onOpenFileRequested: fileDialog.open()
                        onOpenFolderRequested: folderDialog.open()
                    }
                    ChatView {
                        anchors.fill: parent
                        visible: root.app.model.hasModel
                        chat: root.app.chat
                        model: root.app.model
                    }
                }
                Composer {
                    id: composer
                    anchors.left: parent.left
                    anchors.right: parent.right
                    anchors.bottom: parent.bottom
                    height: implicitHeight
                    chat: root.app.chat
                    ready: root.app.model.hasModel
                }
            }

            ScrollView {
                visible: root.showPanel
                Layout.preferredWidth: 330
                Layout.fillHeight: true
                contentWidth: availableWidth
                background: Rectangle { color: Theme.surface; border.color: Theme.border }

                ColumnLayout {
                    width: parent.width
                    spacing: 0
                    FiguresPanel {
                        Layout.fillWidth: true
                        figures: root.app.figures
                        model: root.app.model
                    }
                    CacheInspector {
                        Layout.fillWidth: true
                        inspector: root.app.inspector
                        model: root.app.model
                    }
                }
            }
        }
    }

    DropArea {
        id: drop
        anchors.fill: parent
        onDropped: (event) => {
            if (event.hasUrls)
                root.app.model.open(String(event.urls[0]))
        }
        Rectangle {
            anchors.fill: parent
            visible: drop.containsDrag
            color: "#334f6bed"
            border.color: Theme.accent
            border.width: 3
            Label {
                anchors.centerIn: parent
                text: qsTr("Drop a checkpoint to load it")
                font.pixelSize: 22
                color: Theme.accent
            }
        }
    }

    FileDialog {
        id: fileDialog
        objectName: "fileDialog"
        title: qsTr("Open a checkpoint")
        nameFilters: [qsTr("Checkpoints (*.gguf *.bin *.safetensors config.json *.pth params.json)"), qsTr("All files (*)")]
        currentFolder: root.app.settings.lastFolder
        onAccepted: {
            const file = String(selectedFile)  // moving the dialog to the remembered folder clears it
            root.app.settings.rememberFolderOf(file)
            root.app.model.open(file)
        }
    }
    FolderDialog {
        id: folderDialog
        title: qsTr("Open a checkpoint folder")
        currentFolder: root.app.settings.lastFolder
        onAccepted: {
            const folder = String(selectedFolder)  // as above
            root.app.settings.rememberFolderOf(folder)
            root.app.model.open(folder)
        }
    }
    OpenPathDialog {
        id: pathDialog
        objectName: "openPathDialog"
        anchors.centerIn: parent
        model: root.app.model
        settings: root.app.settings
    }
    RemoteDialog {
        id: remoteDialog
        objectName: "remoteDialog"
        anchors.centerIn: parent
        model: root.app.model
    }
    SettingsDialog {
        id: settingsDialog
        anchors.centerIn: parent
        conversation: root.app.chat.settings
        appSettings: root.app.settings
        apiKeyStorage: root.app.model.apiKeyStorage
        onReloadRequested: root.app.model.reload()
    }
    ContextFullDialog {
        anchors.centerIn: parent
        chat: root.app.chat
        contextLength: root.app.model.contextLength
    }
    TokenizerDialog {
        anchors.centerIn: parent
        model: root.app.model
    }
}
