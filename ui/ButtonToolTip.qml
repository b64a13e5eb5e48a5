// A button's tip: under the button, wrapped to a readable width (the Basic style's default, above
// the button, covered the header's figures).
import QtQuick
import QtQuick.Controls

ToolTip {
    width: Math.min(implicitWidth, 360)
    x: Math.min(0, parent.width - width)
    y: parent.height + 6
    delay: 500
}
