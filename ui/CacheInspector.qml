// The current conversation's KV cache: element type, device, sizes, one line per layer
// (blocks x block size x kv heads x head dim) and the block table in position order, shared
// blocks (a prefix other conversations hold too) outlined and blocks read back from disk tinted.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Pane {
    id: panel
    required property CacheInspectorModel inspector
    required property ModelController model
    padding: 16
    background: null

    function mib(bytes) { return (bytes / (1024 * 1024)).toFixed(2) + " MiB" }

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 8

        Label { text: qsTr("KV cache inspector"); font.pixelSize: Theme.px(15); font.bold: true; color: Theme.text }
        Label {
            objectName: "inspectorRemote"
            visible: panel.model.remote
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.muted
            font.pixelSize: Theme.px(12)
            text: qsTr("This model runs on the server %1, and so does its KV cache: its blocks cannot be seen from here. What the server reports of it is under Figures.")
                  .arg(panel.model.device)
        }
        Label {
            objectName: "inspectorWeights"
            visible: panel.model.hasModel && !panel.model.remote
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.muted
            font.pixelSize: Theme.px(12)
            text: qsTr("Weights: %1\n%2 MB as stored (%3 bytes per parameter) · process resident %4")
                  .arg(panel.model.weightTypes).arg((panel.model.weightBytes / 1e6).toFixed(1))
                  .arg(panel.model.bytesPerParameter.toFixed(2))
                  .arg(panel.model.residentBytes >= 0 ? (panel.model.residentBytes / 1e6).toFixed(0) + " MB" : qsTr("unknown"))
        }
        Label {
            visible: !panel.model.remote
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.muted
            font.pixelSize: Theme.px(12)
            text: panel.inspector.blockSize > 0
                  ? qsTr("%1 on %2 · block size %3 · %4 kv heads × head dim %5\n%6 cached tokens in %7 blocks · %8 per block · %9 used")
                    .arg(panel.inspector.dtype).arg(panel.inspector.device).arg(panel.inspector.blockSize)
                    .arg(panel.inspector.kvHeads).arg(panel.inspector.headDim).arg(panel.inspector.cachedTokens)
                    .arg(panel.inspector.blocks).arg(panel.mib(panel.inspector.bytesPerBlock))
                    .arg(panel.mib(panel.inspector.bytesUsed))
                  : qsTr("Nothing cached for this conversation yet.")
        }
        Repeater {
            model: panel.inspector
            delegate: RowLayout {
                id: layerRow
                required property int layerIndex
                required property string shape
                required property real bytes
                Layout.fillWidth: true
                Label { text: qsTr("layer %1").arg(layerRow.layerIndex); font.family: Theme.monospace; font.pixelSize: Theme.px(11) }
                Label {
                    text: layerRow.shape
                    font.family: Theme.monospace
                    font.pixelSize: Theme.px(11)
                    color: Theme.muted
                    Layout.fillWidth: true
                }
                Label { text: panel.mib(layerRow.bytes); font.family: Theme.monospace; font.pixelSize: Theme.px(11) }
            }
        }
        Label {
            objectName: "inspectorBlockTableTitle"
            visible: panel.inspector.blocks > 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: qsTr("Block table")
                  + (panel.inspector.sharedBlocks > 0
                     ? qsTr(" · %n shared with other conversations (outlined)", "", panel.inspector.sharedBlocks) : "")
                  + (panel.inspector.restoredBlocks > 0
                     ? qsTr(" · %n restored from disk (tinted)", "", panel.inspector.restoredBlocks) : "")
            font.pixelSize: Theme.px(12)
            color: Theme.text
        }
        Flow {
            Layout.fillWidth: true
            spacing: 3
            Repeater {
                model: panel.inspector.blockTable
                delegate: Rectangle {
                    required property var modelData
                    readonly property bool shared: modelData.users > 1
                    width: 30
                    height: 20
                    radius: 3
                    color: modelData.restored ? Qt.tint(Theme.codeBackground, Theme.restoredTint) : Theme.codeBackground
                    border.color: shared ? Theme.accent : Theme.border
                    border.width: shared ? 2 : 1
                    ToolTip.visible: (shared || modelData.restored) && hover.hovered
                    ToolTip.text: qsTr("block %1").arg(modelData.block)
                                  + (shared ? qsTr(", held by %1 conversations").arg(modelData.users) : "")
                                  + (modelData.restored ? qsTr(", restored from disk") : "")
                    HoverHandler { id: hover }
                    Label {
                        anchors.centerIn: parent
                        text: parent.modelData.block
                        font.family: Theme.monospace
                        font.pixelSize: Theme.px(10)
                    }
                }
            }
        }
    }
}
