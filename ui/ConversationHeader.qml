// Above the messages: the conversation's title and its chat format (a chat family, or plain
// completion, which continues the text as written, as base and story models were trained for).
// The model's own suggestion is named with the reason for it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Rectangle {
    id: header
    required property ConversationList conversations
    required property Generation generation
    required property ChatFormatChoice format
    function indexOf(value) { return format.formats.findIndex(f => f.format === value) }
    function nameOf(value) { const i = indexOf(value); return i < 0 ? "" : format.formats[i].name }

    implicitHeight: row.implicitHeight + 12
    color: Theme.background

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.leftMargin: 16
        anchors.rightMargin: 12
        spacing: 10
        Label {
            text: header.conversations.currentTitle
            textFormat: Text.PlainText
            font.bold: true
            color: Theme.text
            elide: Text.ElideRight
            Layout.fillWidth: true
            Layout.minimumWidth: Math.min(implicitWidth, 120)  // the title never goes before the hint
        }
        // Which family was detected and why; a template of no family rendered here is a warning.
        Label {
            id: detectedLine
            objectName: "detectedFormat"
            text: !header.format.suggestedFormatKnown ? header.format.suggestedFormatReason
                  : header.format.suggestedFormat !== header.format.chatFormat
                  ? qsTr("the model suggests %1 (%2)").arg(header.nameOf(header.format.suggestedFormat))
                                                        .arg(header.format.suggestedFormatReason)
                  : qsTr("detected: %1").arg(header.format.suggestedFormatReason)
            visible: header.format.suggestedFormatReason !== ""
            textFormat: Text.PlainText
            color: header.format.suggestedFormatKnown ? Theme.muted : Theme.danger
            font.pixelSize: Theme.px(11)
            elide: Text.ElideRight
            Layout.maximumWidth: header.width * 0.35
            HoverHandler { id: detectedHover }
            ToolTip.visible: detectedHover.hovered && detectedLine.truncated
            ToolTip.text: detectedLine.text
            ToolTip.delay: 500
        }
        Label { text: qsTr("Format"); color: Theme.muted; font.pixelSize: Theme.px(12); visible: header.width > 560 }
        ChoiceBox {
            objectName: "formatSelector"
            Accessible.name: qsTr("Chat format")
            model: header.format.formats
            textRole: "name"
            valueRole: "format"
            currentIndex: header.indexOf(header.format.chatFormat)
            enabled: !header.generation.generating
            Layout.preferredWidth: 170
            onActivated: header.format.chatFormat = currentValue
        }
    }
}
