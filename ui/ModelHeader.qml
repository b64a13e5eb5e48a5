// The top bar: the loaded model's figures, the backend, load progress, and the open buttons.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: header
    required property ModelController model
    required property bool panelShown
    // Narrow window: the open buttons fold into one menu.
    property bool compact: false
    signal openFileRequested()
    signal openFolderRequested()
    signal openPathRequested()
    signal openRemoteRequested()
    signal modelsRequested()
    signal settingsRequested()
    signal panelToggled()
    function showDetails() { if (header.model.hasModel && !header.model.loading) details.open() }

    // Beside its button, inside the header (below, it would cover the error banner), wrapped to fit
    // left of the first button: unwrapped, a long tip was pushed back over the button itself.
    component HeaderToolTip: ToolTip {
        width: Math.min(implicitWidth, 400)
        x: -width - 8
        y: (parent.height - height) / 2
        delay: 500
    }

    // "Q4_K_M: Q4_K ×61, Q6_K ×24 · 0.59 bytes/param · 180 MB resident"
    function weightsLine() {
        const resident = header.model.residentBytes >= 0
                ? qsTr(" · %1 MB resident").arg((header.model.residentBytes / 1e6).toFixed(0)) : ""
        return qsTr("%1 · %2 bytes/param%3").arg(header.model.weightTypes)
               .arg(header.model.bytesPerParameter.toFixed(2)).arg(resident)
    }

    // Taller when zoomed in; never from its lines' height, which changes while a model loads (a
    // layout that follows it re-laid the window out mid-load and crashed Qt 6.4's layouts).
    implicitHeight: Math.round(74 * Math.max(1, Theme.zoom))
    color: Theme.surface
    border.color: Theme.border

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 12
        spacing: 14

        ColumnLayout {
            id: lines
            spacing: 2
            Layout.fillWidth: true
            // The lines are cut to the header; a click shows them whole, to read and copy.
            readonly property bool cut: figuresLine.truncated || deviceLine.truncated || contextLine.truncated
            TapHandler {
                enabled: header.model.hasModel && !header.model.loading
                onTapped: header.showDetails()
            }
            HoverHandler {
                enabled: header.model.hasModel && !header.model.loading
                cursorShape: Qt.PointingHandCursor
            }
            RowLayout {
                spacing: 8
                Layout.fillWidth: true
                Label {
                    objectName: "modelName"
                    text: header.model.hasModel ? header.model.name : qsTr("No model loaded")
                    font.pixelSize: Theme.px(16)
                    font.bold: true
                    color: Theme.text
                    elide: Text.ElideRight
                    Layout.fillWidth: true  // up to its whole name; less, elided, beside the hint
                    Layout.maximumWidth: implicitWidth
                }
                // Never hidden, only emptied: Qt 6.4's layouts do not place an item shown after it
                // started hidden (the hint lay over the model's name).
                Label {
                    id: moreLabel
                    objectName: "modelDetailsHint"
                    text: lines.cut && header.model.hasModel && !header.model.loading ? qsTr("all details (Ctrl+I)") : ""
                    color: Theme.accent
                    font.pixelSize: Theme.px(12)
                }
                Item { Layout.fillWidth: true }
            }
            Label {
                id: figuresLine
                objectName: "modelFigures"
                visible: header.model.hasModel && !header.model.loading
                text: header.model.remote
                      ? qsTr("on the server %1 · %2 · its figures are the server's").arg(header.model.device)
                        .arg(header.model.format)
                      : qsTr("%1 params · %2 layers · %3/%4 heads (q/kv) · context %5 · %6 · %7")
                      .arg(header.model.parameters).arg(header.model.layers)
                      .arg(header.model.heads).arg(header.model.kvHeads)
                      .arg(header.model.contextLength).arg(header.model.format)
                      .arg(header.weightsLine())
                color: Theme.muted
                font.pixelSize: Theme.px(12)
                elide: Text.ElideRight
                Layout.fillWidth: true
                HoverHandler { id: figuresHover }
                ToolTip.visible: figuresHover.hovered && !details.visible && figuresLine.truncated
                ToolTip.text: figuresLine.text
                ToolTip.delay: 500
            }
            // Where it runs, and why not on the GPU when it could have.
            Label {
                id: deviceLine
                objectName: "modelDevice"
                visible: header.model.hasModel && !header.model.loading && !header.model.remote
                text: qsTr("on %1").arg(header.model.device.length > 0 ? header.model.device : header.model.backend)
                color: Theme.muted
                font.pixelSize: Theme.px(12)
                elide: Text.ElideRight
                Layout.fillWidth: true
                HoverHandler { id: deviceHover }
                ToolTip.visible: deviceHover.hovered && !details.visible && deviceLine.truncated
                ToolTip.text: deviceLine.text
                ToolTip.delay: 500
            }
            // Why this context: the model's own, or less to fit the memory, with the cache it takes.
            Label {
                id: contextLine
                objectName: "modelContext"
                visible: header.model.hasModel && !header.model.loading && header.model.contextReason !== ""
                text: qsTr("context %1: %2").arg(header.model.contextLength).arg(header.model.contextReason)
                color: Theme.muted
                font.pixelSize: Theme.px(12)
                elide: Text.ElideRight
                Layout.fillWidth: true
                HoverHandler { id: contextHover }
                ToolTip.visible: contextHover.hovered && !details.visible && contextLine.truncated
                ToolTip.text: contextLine.text
                ToolTip.delay: 500
            }
            Popup {
                id: details
                objectName: "modelDetails"
                y: header.height - lines.y
                width: Math.min(720, header.width - 32)
                padding: 12
                // Each line whole, one paragraph each; selectable, for a bug report.
                contentItem: TextEdit {
                    objectName: "modelDetailsText"
                    text: [figuresLine, deviceLine, contextLine].filter(line => line.visible)
                          .map(line => line.text).join("\n\n")
                    readOnly: true
                    selectByMouse: true
                    wrapMode: TextEdit.Wrap
                    textFormat: TextEdit.PlainText
                    color: Theme.text
                    selectionColor: Theme.accent
                    selectedTextColor: Theme.accentText
                    font.pixelSize: Theme.px(13)
                }
                background: Rectangle { color: Theme.surface; border.color: Theme.border; radius: 6 }
            }
            RowLayout {
                visible: header.model.loading
                Layout.fillWidth: true
                ProgressBar {
                    objectName: "loadProgress"
                    from: 0
                    to: 1
                    value: header.model.progress
                    Layout.preferredWidth: 220
                }
                Label {
                    text: header.model.stage
                    color: Theme.muted
                    font.pixelSize: Theme.px(12)
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
        }

        Button {
            id: modelsButton
            objectName: "modelsButton"
            visible: !header.compact
            text: qsTr("Models")
            onClicked: header.modelsRequested()
            HeaderToolTip {
                visible: modelsButton.hovered
                text: qsTr("Models on this computer, recommended ones and the Hugging Face Hub's, and downloads (Ctrl+M)")
            }
        }
        Button {
            id: openButton
            objectName: "openButton"
            visible: !header.compact
            text: qsTr("Open…")
            onClicked: header.openFileRequested()
            HeaderToolTip {
                objectName: "openToolTip"
                visible: openButton.hovered
                text: qsTr("Open a .gguf or .bin checkpoint, or a Hugging Face folder's config.json (Ctrl+O). In the dialog, Ctrl+L lets you type a path.")
            }
        }
        Button {
            text: qsTr("Folder…")
            visible: !header.compact
            onClicked: header.openFolderRequested()
        }
        Button {
            id: pathButton
            objectName: "pathButton"
            visible: !header.compact
            text: qsTr("Path…")
            onClicked: header.openPathRequested()
            HeaderToolTip {
                visible: pathButton.hovered
                text: qsTr("Type or paste the path of a checkpoint or its folder")
            }
        }
        Button {
            id: serverButton
            objectName: "serverButton"
            visible: !header.compact
            text: qsTr("Server…")
            onClicked: header.openRemoteRequested()
            HeaderToolTip {
                visible: serverButton.hovered
                text: qsTr("Use a model on a server speaking the OpenAI-compatible API (vLLM, llama.cpp's server)")
            }
        }
        Button {
            id: recentButton
            visible: !header.compact
            text: qsTr("Recent")
            enabled: header.model.recentCheckpoints.length > 0
            onClicked: recentMenu.open()
            Menu {
                id: recentMenu
                objectName: "recentMenu"
                x: recentButton.width - width
                y: recentButton.height
                width: 460
                z: 2  // a menu a person opened covers the error banner (z 1)
                Repeater {
                    model: header.model.recentCheckpoints
                    MenuItem {
                        id: recentItem
                        required property string modelData
                        text: recentItem.modelData
                        contentItem: RecentEntry { location: recentItem.modelData; model: header.model }
                        onTriggered: header.model.open(recentItem.modelData)
                        ToolTip {
                            visible: recentItem.hovered
                            text: recentItem.modelData
                            delay: 600
                            z: 2
                        }
                    }
                }
            }
        }
        Button {
            id: openMenuButton
            objectName: "openMenuButton"
            visible: header.compact
            text: qsTr("Open ▾")
            Accessible.name: qsTr("Open a model")
            onClicked: openMenu.popup(openMenuButton, 0, openMenuButton.height)
            Menu {
                id: openMenu
                z: 2
                MenuItem { text: qsTr("Models… (Ctrl+M)"); onTriggered: header.modelsRequested() }
                MenuItem { text: qsTr("File… (Ctrl+O)"); onTriggered: header.openFileRequested() }
                MenuItem { text: qsTr("Folder…"); onTriggered: header.openFolderRequested() }
                MenuItem { text: qsTr("Path…"); onTriggered: header.openPathRequested() }
                MenuItem { text: qsTr("Server…"); onTriggered: header.openRemoteRequested() }
                MenuItem {
                    text: qsTr("Recent…")
                    enabled: header.model.recentCheckpoints.length > 0
                    onTriggered: recentMenu.popup(openMenuButton, openMenuButton.width - recentMenu.width, openMenuButton.height)
                }
            }
        }
        Button {
            text: header.panelShown ? qsTr("Hide figures") : qsTr("Show figures")
            onClicked: header.panelToggled()
        }
    }
}
