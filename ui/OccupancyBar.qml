// A labelled bar: used / total.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: bar
    required property string label
    required property real used
    required property real total
    required property string detail
    readonly property real fraction: total > 0 ? Math.min(1, used / total) : 0
    spacing: 3

    Label { text: bar.label; font.pixelSize: Theme.px(12); color: Theme.text; Layout.fillWidth: true; elide: Text.ElideRight }
    Label { text: bar.detail; font.pixelSize: Theme.px(11); color: Theme.muted; Layout.fillWidth: true; elide: Text.ElideRight }
    Rectangle {
        Layout.fillWidth: true
        implicitHeight: 8
        radius: 4
        color: Theme.border
        Rectangle {
            width: parent.width * bar.fraction
            height: parent.height
            radius: 4
            color: bar.fraction > 0.9 ? Theme.danger : Theme.accent
            Behavior on width { NumberAnimation { duration: 120 } }
        }
    }
}
