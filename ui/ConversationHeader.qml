// Above the messages: the conversation's title and its chat format (Llama 3 chat, Llama 2 chat, or
// plain completion, which continues the text as written, as base and story models were trained
// for). The model's own suggestion is named when it differs.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: header
    required property ChatController chat
    function indexOf(key) { return chat.formats.findIndex(f => f.key === key) }
    function nameOf(key) { const i = indexOf(key); return i < 0 ? key : chat.formats[i].name }

    implicitHeight: row.implicitHeight + 12
    color: Theme.background

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 12
        spacing: 10
        Label {
            text: header.chat.currentTitle
            textFormat: Text.PlainText
            font.bold: true
            color: Theme.text
            elide: Text.ElideRight
            Layout.fillWidth: true
        }
        Label {
            visible: header.chat.suggestedFormat !== header.chat.chatFormat
            text: qsTr("the model suggests %1").arg(header.nameOf(header.chat.suggestedFormat))
            color: Theme.muted
            font.pixelSize: 11
        }
        Label { text: qsTr("Format"); color: Theme.muted; font.pixelSize: 12 }
        ComboBox {
            objectName: "formatSelector"
            model: header.chat.formats
            textRole: "name"
            valueRole: "key"
            currentIndex: header.indexOf(header.chat.chatFormat)
            enabled: !header.chat.generating
            Layout.preferredWidth: 170
            onActivated: header.chat.chatFormat = currentValue
        }
    }
}
