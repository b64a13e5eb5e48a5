// A small text button under a message (Copy, Edit, Regenerate): no frame until hovered.
import QtQuick
import QtQuick.Controls

ToolButton {
    id: button
    font.pixelSize: Theme.px(11)
    padding: 4
    background: Rectangle {
        radius: 4
        color: button.down ? Theme.border : button.hovered ? Theme.codeBackground : "transparent"
        border.color: Theme.accent
        border.width: button.visualFocus ? 2 : 0  // reached with Tab: show where the keyboard is
    }
}
