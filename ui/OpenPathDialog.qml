// A field to type or paste a checkpoint's path, or its folder's. The file dialogs of Qt 6.4 show
// no such field (the Qt Quick one hides it behind Ctrl+L).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ModelController model
    required property AppSettings settings

    title: qsTr("Open a path")
    modal: true
    width: 560
    standardButtons: Dialog.Open | Dialog.Cancel
    onAboutToShow: {
        pathField.clear()
        pathField.forceActiveFocus()
    }
    onAccepted: {
        const path = pathField.text.trim()  // a pasted path often brings a newline or spaces
        if (path.length === 0)
            return
        dialog.settings.rememberFolderOf(path)
        dialog.model.open(path)
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            text: qsTr("A .gguf or .bin checkpoint, a folder holding one, or a Hugging Face model folder:")
            Layout.fillWidth: true
            wrapMode: Text.Wrap
        }
        TextField {
            id: pathField
            objectName: "pathField"
            Accessible.name: qsTr("Path of a checkpoint or its folder")
            Layout.fillWidth: true
            placeholderText: qsTr("/path/to/model.gguf")
            selectByMouse: true
            onAccepted: dialog.accept()
        }
    }
}
