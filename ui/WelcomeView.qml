// Shown while no model is loaded: which files to open, and the recent ones.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Item {
    id: welcome
    required property ModelController model
    signal openFileRequested()
    signal openFolderRequested()

    ColumnLayout {
        anchors.centerIn: parent
        width: Math.min(parent.width - 48, 560)
        spacing: 14

        Label {
            text: qsTr("Welcome to LlamaDesk")
            font.pixelSize: Theme.px(26)
            font.bold: true
            color: Theme.text
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.muted
            textFormat: Text.MarkdownText
            text: qsTr("Open a Llama 2 checkpoint to start chatting:\n\n"
                       + "* a **GGUF** file (`.gguf`: F32, F16, BF16, or quantized Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, "
                       + "Q4_K, Q5_K, Q6_K such as Q4_K_M); its vocabulary is inside;\n"
                       + "* a **llama2.c** file (`.bin`) with its SentencePiece `tokenizer.model` beside it "
                       + "(for stories260K: `tok512.model`);\n"
                       + "* a **Hugging Face** model folder (`config.json`, `*.safetensors` and `tokenizer.model`);\n"
                       + "* a **Meta** folder (`params.json`, `consolidated.00.pth` … and `tokenizer.model`);\n"
                       + "* or a folder holding one of these.\n\n"
                       + "You can also drop a file onto this window.")
        }
        RowLayout {
            spacing: 10
            Button { text: qsTr("Open checkpoint…"); highlighted: true; onClicked: welcome.openFileRequested() }
            Button { text: qsTr("Open folder…"); onClicked: welcome.openFolderRequested() }
        }
        Label {
            visible: welcome.model.recentCheckpoints.length > 0
            text: qsTr("Recent")
            font.bold: true
            color: Theme.text
        }
        Repeater {
            model: welcome.model.recentCheckpoints
            delegate: Button {
                id: recentButton
                required property string modelData
                text: recentButton.modelData
                contentItem: PathLabel { path: recentButton.modelData }
                flat: true
                Layout.fillWidth: true
                onClicked: welcome.model.open(recentButton.modelData)
                ToolTip.visible: hovered
                ToolTip.text: recentButton.modelData
                ToolTip.delay: 600
            }
        }
    }
}
