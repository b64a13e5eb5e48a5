// The keyboard shortcuts, opened with F1 or Ctrl+/. The list is the one MainView binds its keys
// from, so it cannot drift from what the keys do.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Dialog {
    id: dialog
    // [{keys, action}]
    required property var shortcuts

    objectName: "shortcutsDialog"
    title: qsTr("Keyboard shortcuts")
    modal: true
    standardButtons: Dialog.Close

    GridLayout {
        columns: 2
        columnSpacing: 24
        rowSpacing: 6
        Repeater {
            // Two cells a shortcut: its keys, then what they do.
            model: dialog.shortcuts.reduce((cells, s) => cells.concat([{ text: s.keys, keys: true },
                                                                      { text: s.action, keys: false }]), [])
            delegate: Label {
                required property var modelData
                text: modelData.text
                font.family: modelData.keys ? Theme.monospace : dialog.font.family
                font.bold: modelData.keys
                color: Theme.text
            }
        }
    }
}
