// The application window. main() gives it the application object as `app`.
import QtQuick
import QtQuick.Controls
import LlamaDesk.Core

ApplicationWindow {
    id: window
    required property AppContext app

    // The screen the window opens on, less panels (Screen.width too: the desktop may span screens).
    readonly property int freeWidth: Math.min(Screen.width, Screen.desktopAvailableWidth)
    readonly property int freeHeight: Math.min(Screen.height, Screen.desktopAvailableHeight)
    // The largest window that fits with its frame, which QML cannot measure: a guess on the large side.
    readonly property int roomWidth: freeWidth - 16
    readonly property int roomHeight: freeHeight - 48

    minimumWidth: Math.min(900, roomWidth)
    minimumHeight: Math.min(560, roomHeight)
    visible: true
    title: app.model.hasModel ? "LlamaDesk — " + app.model.name : "LlamaDesk"
    color: Theme.background
    // The theme and zoom live in Appearance; Theme and the controls' palette follow them. Fonts
    // scale from the desktop's size, and popups take the window's font and palette too.
    Binding { target: Theme; property: "dark"; value: window.app.appearance.dark }
    Binding { target: Theme; property: "zoom"; value: window.app.appearance.zoom }
    Binding { target: window.app.conversations.messages; property: "dark"; value: Theme.dark }  // code colours
    font.pointSize: Qt.application.font.pointSize * Theme.zoom
    palette {
        window: Theme.background
        windowText: Theme.text
        base: Theme.surface
        alternateBase: Theme.codeBackground
        text: Theme.text
        button: Theme.dark ? "#2a303c" : "#e6e9ef"
        buttonText: Theme.text
        brightText: Theme.text
        highlight: Theme.accent
        highlightedText: Theme.accentText
        light: Theme.dark ? "#3a4150" : "#ffffff"
        midlight: Theme.dark ? "#323846" : "#eceef2"
        mid: Theme.dark ? "#4a5262" : "#c4c9d4"
        dark: Theme.dark ? "#0c0e12" : "#9aa1b0"
        shadow: "#000000"
        placeholderText: Theme.muted
        toolTipBase: Theme.dark ? "#2a303c" : "#ffffff"
        toolTipText: Theme.text
        link: Theme.accent
    }

    // The screen holding the window's title bar, or null when it is on none of today's screens.
    function screenUnderTitleBar(r) {
        const px = r.x + r.width / 2, py = r.y + 10
        const screens = Qt.application.screens
        for (let i = 0; i < screens.length; ++i) {
            const s = screens[i]
            if (px >= s.virtualX && px < s.virtualX + s.width && py >= s.virtualY && py < s.virtualY + s.height)
                return s
        }
        return null
    }

    // Set once here, not bound: a later change of screen must not resize the window.
    Component.onCompleted: {
        const saved = app.settings.windowGeometry
        const remembered = saved.width > 0 && saved.height > 0
        // First start: roomy, with some desktop left around it on small screens.
        width = remembered ? Math.min(saved.width, roomWidth) : Math.min(1320, Math.round(roomWidth * 0.92))
        height = remembered ? Math.min(saved.height, roomHeight) : Math.min(820, Math.round(roomHeight * 0.92))
        // Back where it was, kept whole on that screen; an unplugged screen's place is forgotten.
        const s = remembered ? screenUnderTitleBar(saved) : null
        if (s) {
            x = Math.max(s.virtualX, Math.min(saved.x, s.virtualX + s.width - width))
            y = Math.max(s.virtualY, Math.min(saved.y, s.virtualY + s.height - height))
        } else {
            x = Screen.virtualX + (freeWidth - width) / 2
            y = Screen.virtualY + (freeHeight - height) / 2
        }
    }
    // A maximized or full-screen window keeps the normal geometry it had before.
    onClosing: {
        if (visibility === Window.Windowed)
            app.settings.windowGeometry = Qt.rect(x, y, width, height)
    }

    // Where the window's popups are drawn (tests walk it).
    readonly property Item overlayLayer: Overlay.overlay

    // Qt 6.4 gives an open popup the window's new palette but not the items in it: the Settings
    // labels stayed dark on dark after a switch to the dark theme, until the dialog was reopened.
    // Taking what the overlay holds out and putting it back, in its order, makes them inherit again.
    function repaletteOpenPopups() {
        const layer = Overlay.overlay
        const focused = window.activeFocusItem
        const items = []
        for (let i = 0; i < layer.children.length; ++i)
            items.push(layer.children[i])
        for (const item of items) {
            item.parent = null
            item.parent = layer
        }
        if (focused)
            focused.forceActiveFocus()
    }
    Connections {
        target: Theme
        function onDarkChanged() { Qt.callLater(window.repaletteOpenPopups) }  // after the palette's bindings
    }
    // Qt's own file and folder dialogs (where the desktop offers none) draw their path bar on a
    // fixed white, under the palette's text: pale on white in the dark theme. It takes the
    // theme's surface when such a dialog is shown. They also draw their current entry in the
    // palette's highlightedText over a 15 % tint of its light colour: the window's pair, meant for
    // white on the accent, left the file under the cursor at 1.2:1 (light) and 2.3:1 (dark), so
    // their popups take the theme's text over its selection colour.
    function dressQtDialogs(item) {
        if (String(item).startsWith("FolderBreadcrumbBar") && item.background)
            item.background.color = Qt.binding(() => Theme.surface)
        if (String(item).startsWith("QQuickPopupItem") && item.contentItem
                && /^(file|folder)DialogListView$/.test(item.contentItem.objectName)) {
            item.palette.highlight = Qt.binding(() => Theme.selection)
            item.palette.highlightedText = Qt.binding(() => Theme.text)
        }
        for (let i = 0; i < item.children.length; ++i)
            dressQtDialogs(item.children[i])
    }
    Connections {
        target: window.overlayLayer
        function onChildrenChanged() { window.dressQtDialogs(window.overlayLayer) }
    }

    MainView {
        anchors.fill: parent
        app: window.app
    }
}
