// A model on a server speaking the OpenAI-compatible API (vLLM, llama.cpp's server, ...): its
// address, an optional API key and the model, picked from the server's own list. Over plain HTTP
// to another machine nothing is sent until the person has read the warning and agreed.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ModelController model

    readonly property string warning: dialog.model.plainHttpWarning(urlField.text)
    readonly property bool maySend: urlField.text.trim().length > 0 && (warning.length === 0 || plainHttp.checked)

    title: qsTr("Use a model on a server")
    modal: true
    width: 600
    standardButtons: Dialog.Cancel
    onAboutToShow: {
        keyField.clear()
        plainHttp.checked = false
        urlField.forceActiveFocus()
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: 8
        Label {
            text: qsTr("The server's address (vLLM: http://host:8000/v1, llama.cpp's server: http://host:8080/v1):")
            Layout.fillWidth: true
            wrapMode: Text.Wrap
        }
        TextField {
            id: urlField
            objectName: "remoteUrlField"
            Accessible.name: qsTr("Server address")
            Layout.fillWidth: true
            placeholderText: "http://127.0.0.1:8000/v1"
            selectByMouse: true
        }
        TextField {
            id: keyField
            objectName: "remoteKeyField"
            Accessible.name: qsTr("API key")
            Layout.fillWidth: true
            placeholderText: qsTr("API key (leave empty when the server needs none)")
            echoMode: TextInput.Password
            selectByMouse: true
        }
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.px(11)
            color: Theme.muted
            text: qsTr("The key is sent only to this address and kept in %1.").arg(dialog.model.apiKeyStorage)
        }
        Label {
            objectName: "plainHttpWarning"
            visible: dialog.warning.length > 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            text: dialog.warning
        }
        CheckBox {
            id: plainHttp
            objectName: "plainHttpConsent"
            visible: dialog.warning.length > 0
            text: qsTr("Send over plain HTTP anyway")
        }
        RowLayout {
            Layout.fillWidth: true
            Button {
                objectName: "listModelsButton"
                text: qsTr("List models")
                enabled: dialog.maySend && !models.busy
                onClicked: models.fetch(urlField.text, keyField.text)
            }
            ChoiceBox {
                id: modelBox
                objectName: "remoteModelBox"
                Accessible.name: qsTr("Model on the server")
                Layout.fillWidth: true
                model: models.models
            }
        }
        Label {
            objectName: "remoteListError"
            visible: models.error.length > 0
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            color: Theme.danger
            text: models.error
        }
        Button {
            objectName: "remoteConnectButton"
            Layout.alignment: Qt.AlignRight
            text: qsTr("Use this model")
            enabled: dialog.maySend && modelBox.currentIndex >= 0 && !models.busy
            onClicked: {
                dialog.model.openRemote(urlField.text, keyField.text, modelBox.currentText)
                keyField.clear()
                dialog.close()
            }
        }
    }

    RemoteModelList { id: models }
}
