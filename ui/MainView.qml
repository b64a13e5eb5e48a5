// Everything inside the window: header, sidebar, chat or welcome screen, figures and inspector,
// and the dialogs. Tests create this item directly.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import QtQml.Models
import LlamaDesk.Core

Item {
    id: root
    required property AppContext app
    // Under this width the chat keeps its room: the figures panel starts hidden, the sidebar and
    // the panel narrow, and the header's open buttons fold into one menu.
    readonly property bool narrow: width < 1150
    // Whether the person wants the figures panel, in a wide window and in a narrow one.
    property bool panelWide: true
    property bool panelNarrow: false
    readonly property bool showPanel: narrow ? panelNarrow : panelWide

    // Every shortcut, once: the keys bound below and the list F1 shows. Entries without
    // sequences are handled where they act (the composer, focus) and only listed.
    readonly property var shortcuts: [
        { sequences: ["Ctrl+N"], keys: "Ctrl+N", action: qsTr("New conversation"),
          run: () => root.app.conversations.newConversation() },
        { sequences: ["Ctrl+O"], keys: "Ctrl+O", action: qsTr("Open a model file"), run: () => fileDialog.open() },
        { sequences: ["Ctrl+M"], keys: "Ctrl+M", action: qsTr("Models: on this computer, recommended, search, downloads"),
          run: () => modelsPage.open() },
        { sequences: ["Ctrl+I"], keys: "Ctrl+I", action: qsTr("The loaded model's details, whole"),
          run: () => modelHeader.showDetails() },
        { sequences: ["Ctrl+K", "Ctrl+F"], keys: "Ctrl+K, Ctrl+F", action: qsTr("Search conversations"),
          run: () => sidebar.focusSearch() },
        { sequences: [], keys: "Enter", action: qsTr("Send the message") },
        { sequences: [], keys: "Shift+Enter", action: qsTr("New line in the message") },
        { sequences: ["Esc"], keys: "Esc", action: qsTr("Clear the search, else stop the answer"),
          run: () => { if (!sidebar.clearSearch()) root.app.generation.stop() } },
        { sequences: ["Ctrl++", "Ctrl+="], keys: "Ctrl+Plus", action: qsTr("Zoom in"),
          run: () => root.app.appearance.zoomIn() },
        { sequences: ["Ctrl+-"], keys: "Ctrl+Minus", action: qsTr("Zoom out"),
          run: () => root.app.appearance.zoomOut() },
        { sequences: ["Ctrl+0"], keys: "Ctrl+0", action: qsTr("Zoom back to 100 %"),
          run: () => root.app.appearance.resetZoom() },
        { sequences: ["F1", "Ctrl+/"], keys: "F1, Ctrl+/", action: qsTr("This list"),
          run: () => shortcutsDialog.open() },
        { sequences: [], keys: "Tab, Shift+Tab", action: qsTr("Move between controls") },
        { sequences: [], keys: "↑, ↓", action: qsTr("Previous or next conversation, in the list") },
        { sequences: [], keys: "F2, Delete", action: qsTr("Rename or delete the conversation, in the list") },
        { sequences: [], keys: "Menu, Shift+F10", action: qsTr("The list's or a message's menu") }
    ]
    // Runs the shortcut a key event is ("Ctrl+" and one character), for a text area that took it
    // before the window could; true when one ran.
    function runShortcut(event) {
        for (const s of root.shortcuts)
            for (const sequence of s.sequences) {
                const m = /^Ctrl\+(.)$/.exec(sequence)
                if (m && event.modifiers === Qt.ControlModifier && event.key === m[1].toUpperCase().charCodeAt(0)) {
                    s.run()
                    return true
                }
            }
        return false
    }
    Instantiator {
        model: root.shortcuts.filter(s => s.sequences.length > 0)
        delegate: Shortcut {
            required property var modelData
            sequences: modelData.sequences
            onActivated: modelData.run()
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 0

        ModelHeader {
            id: modelHeader
            Layout.fillWidth: true
            model: root.app.model
            panelShown: root.showPanel
            compact: root.narrow
            onOpenFileRequested: fileDialog.open()
            onOpenFolderRequested: folderDialog.open()
            onOpenPathRequested: pathDialog.open()
            onOpenRemoteRequested: remoteDialog.open()
            onModelsRequested: modelsPage.open()
            onSettingsRequested: settingsDialog.open()
            onPanelToggled: {
                if (root.narrow) root.panelNarrow = !root.panelNarrow
                else root.panelWide = !root.panelWide
            }
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
                id: sidebar
                objectName: "sidebar"
                Layout.preferredWidth: root.narrow ? 220 : 260
                Layout.fillHeight: true
                conversations: root.app.conversations
                search: root.app.search
                transfer: root.app.transfer
                remote: root.app.model.remote
                onSettingsRequested: settingsDialog.open()
                onShortcutsRequested: shortcutsDialog.open()
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
                    // Made only while no model is loaded: laid out hidden, its list of recent files
                    // (rebuilt by every load) moving as the error strip came or went recursed through
                    // Qt 6.4's layouts until the stack ran out.
                    Loader {
                        anchors.fill: parent
                        active: !root.app.model.hasModel
                        sourceComponent: WelcomeView {
                            model: root.app.model
                            onOpenFileRequested: fileDialog.open()
                            onOpenFolderRequested: folderDialog.open()
                        }
                    }
                    ChatView {
                        anchors.fill: parent
                        visible: root.app.model.hasModel
                        conversations: root.app.conversations
                        generation: root.app.generation
                        composer: root.app.composer
                        format: root.app.format
                        transfer: root.app.transfer
                        model: root.app.model
                    }
                }
                Composer {
                    id: composer
                    anchors.left: parent.left
                    anchors.right: parent.right
                    anchors.bottom: parent.bottom
                    height: implicitHeight
                    drafts: root.app.composer
                    generation: root.app.generation
                    conversations: root.app.conversations
                    ready: root.app.model.hasModel
                    runShortcut: root.runShortcut
                }
            }

            ScrollView {
                id: panel
                objectName: "figuresScroll"
                visible: root.showPanel
                // Qt 6.4's RowLayout does not lay out again an item shown in the same pass as the
                // window crosses `narrow`: the panel kept no width, or its narrow place, and lay over
                // the sidebar or the chat. Hidden and shown again, one turn of the event loop apart,
                // it is laid out; it belongs at the right edge, with the width asked for.
                onVisibleChanged: if (visible) layoutCheck.restart()
                Timer {
                    id: layoutCheck
                    interval: 100  // after the layout's turn
                    onTriggered: {
                        const placed = Math.abs(panel.x + panel.width - panel.parent.width) < 1
                                       && Math.abs(panel.width - panel.Layout.preferredWidth) < 1
                        if (!panel.visible || placed)
                            return
                        panel.visible = false
                        Qt.callLater(() => { panel.visible = Qt.binding(() => root.showPanel) })
                    }
                }
                Layout.preferredWidth: root.narrow ? 280 : 330
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
            color: Theme.dropTint
            border.color: Theme.accent
            border.width: 3
            Label {
                anchors.centerIn: parent
                text: qsTr("Drop a checkpoint to load it")
                font.pixelSize: Theme.px(22)
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
        objectName: "folderDialog"
        title: qsTr("Open a checkpoint folder")
        currentFolder: root.app.settings.lastFolder
        // The folder one is in is the choice until an entry is picked: Qt 6.4's dialog took none in
        // a folder without subfolders, and Open did nothing and said nothing.
        onCurrentFolderChanged: selectedFolder = currentFolder
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
    ModelsPage {
        id: modelsPage
        anchors.centerIn: parent
        library: root.app.library
        model: root.app.model
    }
    SettingsDialog {
        id: settingsDialog
        anchors.centerIn: parent
        conversation: root.app.conversations.settings
        conversations: root.app.conversations
        appSettings: root.app.settings
        appearance: root.app.appearance
        apiKeyStorage: root.app.model.apiKeyStorage
        localServer: root.app.server
        onReloadRequested: root.app.model.reload()
    }
    ShortcutsDialog {
        id: shortcutsDialog
        anchors.centerIn: parent
        shortcuts: root.shortcuts
    }
    ContextFullDialog {
        anchors.centerIn: parent
        composer: root.app.composer
        contextLength: root.app.model.contextLength
    }
    TokenizerDialog {
        anchors.centerIn: parent
        model: root.app.model
    }
}
