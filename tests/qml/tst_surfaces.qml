// Every text the application window draws stands out from what lies under it, in both themes
// (WCAG AA: 4.5:1, 3:1 for large text): the window, the Settings dialog with the theme switched
// while it is open, the undo bar and the export note, a menu, the error banner, the export dialog,
// Qt's folder and file dialogs, and the Models page. The test walks the items on screen, not a list of colour pairs: the
// pairs all passed while labels were dark on dark.
import QtQuick
import QtQuick.Controls
import QtTest
import LlamaDesk
import LlamaDesk.Core

Item {
    id: top
    width: 1280
    height: 800

    Component {
        id: applicationWindow
        Main {}
    }

    TestCase {
        name: "Surfaces"
        when: windowShown

        function cleanup() {
            testApp.appearance.theme = Appearance.System
            testApp.dismissError()
        }

        // WCAG 2.x relative luminance and contrast ratio.
        function luminance(c) {
            const f = (v) => v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4)
            return 0.2126 * f(c.r) + 0.7152 * f(c.g) + 0.0722 * f(c.b)
        }
        function contrast(a, b) {
            const la = luminance(a), lb = luminance(b)
            return (Math.max(la, lb) + 0.05) / (Math.min(la, lb) + 0.05)
        }
        function over(fg, bg) {  // a translucent colour as drawn on an opaque one
            return Qt.rgba(fg.r * fg.a + bg.r * (1 - fg.a), fg.g * fg.a + bg.g * (1 - fg.a),
                           fg.b * fg.a + bg.b * (1 - fg.a), 1)
        }
        function opaqueFill(item) {  // the colour an item paints behind its children, if it paints one
            if (!item || !item.visible || item.opacity < 1 || item.color === undefined || item.radius === undefined)
                return null
            return item.color.a === 1 ? item.color : null
        }
        // What lies under a text: the nearest item up its parents that paints an opaque colour,
        // a control's background included (it is drawn under the control's content).
        function backgroundOf(item, window) {
            for (let a = item; a; a = a.parent) {
                const own = a.background !== undefined ? opaqueFill(a.background) : null
                if (own)
                    return own
                const fill = a === item ? null : opaqueFill(a)
                if (fill)
                    return fill
            }
            return window.color
        }
        function isText(item) {
            return item.text !== undefined && typeof item.text === "string" && item.color !== undefined
                   && item.font !== undefined && item.contentWidth !== undefined
        }
        function opacityOf(item) {
            let o = 1
            for (let a = item; a; a = a.parent)
                o *= a.opacity
            return o
        }
        // "where: text on background is 2.10:1" for every text under `root` that fails.
        function badTexts(root, window, where) {
            const bad = []
            const walk = (item) => {
                if (!item.visible || item.opacity === 0)
                    return
                if (isText(item) && item.text.trim().length > 0 && item.enabled && item.width > 0
                        && opacityOf(item) === 1) {
                    const bg = backgroundOf(item, window)
                    const fg = over(item.color, bg)
                    const px = item.font.pixelSize > 0 ? item.font.pixelSize : item.font.pointSize * 96 / 72
                    const large = px >= 24 || (item.font.bold && px >= 18.66)
                    const ratio = contrast(fg, bg)
                    if (ratio < (large ? 3 : 4.5))
                        bad.push(`${where}: "${item.text.slice(0, 40)}" ${item.color} on ${bg} is ${ratio.toFixed(2)}:1`)
                }
                for (let i = 0; i < item.children.length; ++i)
                    walk(item.children[i])
            }
            walk(root)
            return bad
        }
        // The window's content and every open popup (they live in the window's overlay).
        function checkWindow(w, where) {
            return badTexts(w.contentItem, w, where).concat(badTexts(w.overlayLayer, w, where))
        }

        function test_every_text_stands_out_data() {
            return [{ tag: "light", dark: false }, { tag: "dark", dark: true }]
        }
        function test_every_text_stands_out(data) {
            const theme = data.dark ? Appearance.Dark : Appearance.Light
            const other = data.dark ? Appearance.Light : Appearance.Dark
            testApp.appearance.theme = theme
            const w = createTemporaryObject(applicationWindow, null, {app: testApp})
            tryCompare(w, "visible", true)
            let bad = checkWindow(w, "window")

            // Settings opened in the other theme, then the theme switched while it is open.
            testApp.appearance.theme = other
            const settings = findChild(w, "settingsDialog")
            settings.open()
            tryCompare(settings, "opened", true)
            testApp.appearance.theme = theme
            waitForRendering(w.contentItem)  // the popups take the palette one event later
            bad = bad.concat(checkWindow(w, "Settings"))
            settings.close()
            tryCompare(settings, "visible", false)

            // A menu, and the undo bar after a delete.
            const conversations = testApp.conversations
            conversations.newConversation()
            const sidebar = findChild(w, "sidebar")
            sidebar.openMenu(0, sidebar, 0, 0)
            const menu = findChild(w, "conversationMenu")
            tryCompare(menu, "opened", true)
            bad = bad.concat(checkWindow(w, "menu"))
            menu.close()
            conversations.deleteConversation(0)
            tryVerify(() => conversations.undoDeleteTitle.length > 0)
            bad = bad.concat(checkWindow(w, "undo bar"))
            conversations.undoDelete()
            // The note an export leaves in the sidebar.
            verify(testApp.transfer.exportMarkdown(0, "file://" + scratchFolder + "/surfaces.md"))
            tryVerify(() => findChild(w, "transferNote").visible)
            bad = bad.concat(checkWindow(w, "export note"))

            // The error banner.
            testApp.model.open(brokenModelPath)
            tryVerify(() => testApp.errorMessage.length > 0, 10000)
            tryVerify(() => !testApp.model.loading, 10000)
            bad = bad.concat(checkWindow(w, "error banner"))
            testApp.dismissError()

            // Qt's own dialogs, in the window's colours, in a folder with a file and a folder in
            // it: the entry under the cursor is drawn in other colours than the rest.
            for (const name of ["exportDialog", "folderDialog", "fileDialog"]) {
                const dialog = findChild(w, name)
                if (name !== "exportDialog")
                    dialog.currentFolder = "file://" + brokenModelPath.replace(/\/[^/]*$/, "")
                dialog.open()
                tryVerify(() => dialog.visible)
                waitForRendering(w.contentItem)
                bad = bad.concat(checkWindow(w, name))
                dialog.close()
                tryVerify(() => !dialog.visible)
            }

            const models = findChild(w, "modelsPage")
            models.open()
            tryCompare(models, "opened", true)
            bad = bad.concat(checkWindow(w, "Models page"))
            models.close()
            tryCompare(models, "visible", false)

            for (const line of bad)
                console.warn(line)  // QTest folds a long message
            verify(bad.length === 0, `${bad.length} texts under the contrast line in the ${data.tag} theme:\n` + bad.join("\n"))
        }
    }
}
