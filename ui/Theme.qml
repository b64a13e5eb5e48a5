// Colours, sizes and fonts of the window, for the theme in use and the zoom; the window sets
// `dark` and `zoom` from Appearance. Every text colour meets WCAG AA (4.5:1) on the backgrounds it
// is drawn on, in both themes: tst_theme.qml checks each pair.
pragma Singleton
import QtQuick

QtObject {
    property bool dark: false
    property real zoom: 1
    // A font size in pixels at the zoom in use.
    function px(size) { return Math.round(size * zoom) }

    readonly property color background: dark ? "#14171d" : "#f5f6f8"
    readonly property color surface: dark ? "#1b1f27" : "#ffffff"
    readonly property color sidebar: dark ? "#101318" : "#1f2430"
    readonly property color sidebarText: "#e6e8ee"
    readonly property color sidebarMuted: dark ? "#939cb0" : "#a3abbd"
    readonly property color sidebarSelected: dark ? "#2c3342" : "#343b4d"
    readonly property color sidebarHover: dark ? "#1f2430" : "#2a3040"
    readonly property color searchMark: "#ffd24d"  // matches in the sidebar, dark in both themes
    readonly property color border: dark ? "#2f3542" : "#e1e4ea"
    readonly property color text: dark ? "#e4e7ee" : "#1d2230"
    readonly property color muted: dark ? "#9ba3b4" : "#5f6779"
    readonly property color accent: dark ? "#8ea0ff" : "#4560e0"
    readonly property color accentText: dark ? "#0f1424" : "#ffffff"  // on accent
    // Under `text`: a text selection and the current entry in Qt's own file and folder dialogs.
    // Also their focus frame, so at least 3:1 on `background`.
    readonly property color selection: dark ? "#4059dd" : "#6f84e7"
    readonly property color userBubble: dark ? "#3a52c4" : "#4560e0"
    readonly property color userText: "#ffffff"                       // on userBubble
    readonly property color assistantBubble: surface
    readonly property color danger: dark ? "#ff8080" : "#b93a3a"
    readonly property color dangerBackground: dark ? "#3b2024" : "#fdecec"
    readonly property color codeBackground: dark ? "#232833" : "#f0f2f6"
    readonly property color restoredTint: "#552f9e6b"  // blocks read back from disk, over codeBackground
    readonly property color dropTint: "#334f6bed"      // over the window while a file is dragged in
    readonly property int radius: 10
    readonly property int spacing: 12
    readonly property string monospace: "monospace"
}
