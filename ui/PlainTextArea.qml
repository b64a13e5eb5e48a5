// A text area for prose: Tab and Shift+Tab move the focus on instead of typing a tab, so a person
// on the keyboard is never stuck in it, and its border shows when it has the focus.
import QtQuick
import QtQuick.Controls

TextArea {
    id: area
    wrapMode: TextEdit.Wrap
    Accessible.name: placeholderText
    background: Rectangle {
        radius: Theme.radius
        color: Theme.surface
        border.color: area.activeFocus ? Theme.accent : Theme.border
        border.width: area.activeFocus ? 2 : 1
    }
    Keys.onTabPressed: (event) => {
        area.nextItemInFocusChain(true).forceActiveFocus(Qt.TabFocusReason)
        event.accepted = true
    }
    Keys.onBacktabPressed: (event) => {
        area.nextItemInFocusChain(false).forceActiveFocus(Qt.BacktabFocusReason)
        event.accepted = true
    }
}
