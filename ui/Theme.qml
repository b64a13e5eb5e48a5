// Colours, sizes and fonts of the window: constants only, no state.
pragma Singleton
import QtQuick

QtObject {
    readonly property color background: "#f5f6f8"
    readonly property color surface: "#ffffff"
    readonly property color sidebar: "#1f2430"
    readonly property color sidebarText: "#e6e8ee"
    readonly property color sidebarMuted: "#8a93a6"
    readonly property color sidebarSelected: "#343b4d"
    readonly property color border: "#e1e4ea"
    readonly property color text: "#1d2230"
    readonly property color muted: "#6b7385"
    readonly property color accent: "#4f6bed"
    readonly property color accentText: "#ffffff"
    readonly property color userBubble: "#4f6bed"
    readonly property color assistantBubble: "#ffffff"
    readonly property color danger: "#d64545"
    readonly property color dangerBackground: "#fdecec"
    readonly property color good: "#2f9e6b"
    readonly property color codeBackground: "#f0f2f6"
    readonly property color restoredTint: "#552f9e6b"  // blocks read back from disk, over codeBackground
    readonly property int radius: 10
    readonly property int spacing: 12
    readonly property string monospace: "monospace"
}
