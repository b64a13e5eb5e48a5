// A drop-down whose list shows its current entry, in the theme's colours. The Basic style draws the
// entry under the highlight in palette.highlightedText on palette.light: with the window's palette
// (text on the accent is white) that was white on white, and the current entry looked blank.
import QtQuick
import QtQuick.Controls

ComboBox {
    id: box
    delegate: ItemDelegate {
        id: entry
        width: ListView.view.width
        // as the style's own delegate reads an entry, whatever the model (context properties)
        text: box.textRole ? (Array.isArray(box.model) ? modelData[box.textRole] : model[box.textRole]) : modelData
        font.weight: box.currentIndex === index ? Font.DemiBold : Font.Normal
        highlighted: box.highlightedIndex === index
        hoverEnabled: box.hoverEnabled
        contentItem: Label {
            text: entry.text
            font: entry.font
            color: Theme.text
            elide: Text.ElideRight
            verticalAlignment: Text.AlignVCenter
        }
        background: Rectangle { color: entry.highlighted || entry.down ? Theme.codeBackground : Theme.surface }
    }
}
