// The top bar: the loaded model's figures, the backend, load progress, and the open buttons.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: header
    required property ModelController model
    required property bool panelShown
    signal openFileRequested()
    signal openFolderRequested()
    signal settingsRequested()
    signal panelToggled()

    implicitHeight: 58
    color: Theme.surface
    border.color: Theme.border

    RowLayout {
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 12
        spacing: 14

        ColumnLayout {
            spacing: 2
            Layout.fillWidth: true
            Label {
                objectName: "modelName"
                text: header.model.hasModel ? header.model.name : qsTr("No model loaded")
                font.pixelSize: 16
                font.bold: true
                color: Theme.text
                elide: Text.ElideRight
                Layout.fillWidth: true
            }
            Label {
                visible: header.model.hasModel && !header.model.loading
                text: qsTr("%1 params · %2 layers · %3/%4 heads (q/kv) · context %5 · %6 %7 · %8")
                      .arg(header.model.parameters).arg(header.model.layers)
                      .arg(header.model.heads).arg(header.model.kvHeads)
                      .arg(header.model.contextLength).arg(header.model.format).arg(header.model.dtype)
                      .arg(header.model.device.length > 0 ? header.model.device : header.model.backend)
                color: Theme.muted
                font.pixelSize: 12
                elide: Text.ElideRight
                Layout.fillWidth: true
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
                    font.pixelSize: 12
                    elide: Text.ElideRight
                    Layout.fillWidth: true
                }
            }
        }

        Button {
            text: qsTr("Open…")
            onClicked: header.openFileRequested()
            ToolTip.visible: hovered
            ToolTip.text: qsTr("Open a .gguf or .bin checkpoint (Ctrl+O)")
        }
        Button {
            text: qsTr("Folder…")
            onClicked: header.openFolderRequested()
        }
        Button {
            id: recentButton
            text: qsTr("Recent")
            enabled: header.model.recentCheckpoints.length > 0
            onClicked: recentMenu.open()
            Menu {
                id: recentMenu
                y: recentButton.height
                Repeater {
                    model: header.model.recentCheckpoints
                    MenuItem {
                        id: recentItem
                        required property string modelData
                        text: recentItem.modelData
                        onTriggered: header.model.open(recentItem.modelData)
                    }
                }
            }
        }
        Button {
            text: header.panelShown ? qsTr("Hide figures") : qsTr("Show figures")
            flat: true
            onClicked: header.panelToggled()
        }
    }
}
