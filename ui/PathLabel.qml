// A checkpoint's path as a person looks for it: the file (or folder) name, and under it, smaller,
// the folder that holds it, elided in the middle so that both of its ends stay readable.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ColumnLayout {
    id: label
    required property string path

    // Without trailing separators, so that a folder checkpoint shows its own name.
    readonly property string trimmed: path.replace(/[\/\\]+$/, "")
    readonly property int cut: Math.max(trimmed.lastIndexOf("/"), trimmed.lastIndexOf("\\"))

    spacing: 1
    Label {
        objectName: "pathName"
        text: label.trimmed.slice(label.cut + 1)
        textFormat: Text.PlainText
        color: Theme.text
        elide: Text.ElideMiddle
        Layout.fillWidth: true
    }
    Label {
        objectName: "pathFolder"
        visible: label.cut >= 0
        text: label.trimmed.slice(0, Math.max(label.cut, 1))  // "/" for a file at the root
        textFormat: Text.PlainText
        color: Theme.muted
        font.pixelSize: Theme.px(11)
        elide: Text.ElideMiddle
        Layout.fillWidth: true
    }
}
