// Opens when a checkpoint has no vocabulary of its own and none beside it: asks for the
// tokenizer.model file, then loads the checkpoint again with it.
import QtQuick
import QtQuick.Controls
import QtQuick.Dialogs
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ModelController model

    title: qsTr("This checkpoint needs a tokenizer")
    modal: true
    width: 480
    visible: model.needsTokenizer
    closePolicy: Popup.CloseOnEscape
    onRejected: model.cancelTokenizer()

    ColumnLayout {
        anchors.fill: parent
        spacing: 12
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: dialog.model.tokenizerMessage
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.muted
            text: qsTr("Choose the SentencePiece tokenizer.model that belongs to this model.")
        }
        RowLayout {
            Layout.alignment: Qt.AlignRight
            Button { text: qsTr("Cancel"); flat: true; onClicked: dialog.reject() }
            Button { text: qsTr("Choose tokenizer…"); highlighted: true; onClicked: tokenizerFile.open() }
        }
    }

    FileDialog {
        id: tokenizerFile
        title: qsTr("Choose a tokenizer")
        nameFilters: [qsTr("SentencePiece models (*.model)"), qsTr("All files (*)")]
        onAccepted: dialog.model.openWithTokenizer(String(selectedFile))
    }
}
