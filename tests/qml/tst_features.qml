// The window's everyday features by keyboard: search (Ctrl+K, Esc), the shortcuts list (F1), zoom
// (Ctrl+Plus, Ctrl+Minus, Ctrl+0), and both themes' text contrast (WCAG AA, 4.5:1). No model needed.
import QtQuick
import QtTest
import LlamaDesk

Item {
    id: top
    width: 1280
    height: 800

    MainView {
        id: view
        anchors.fill: parent
        app: testApp
    }

    TestCase {
        name: "Features"
        when: windowShown

        function cleanup() {
            testApp.search.query = ""
            findChild(view, "searchField").text = ""
            testApp.appearance.resetZoom()
            Theme.dark = false
            findChild(view, "modelsPage").close()
        }

        function test_ctrl_k_searches_and_esc_clears() {
            const field = findChild(view, "searchField")
            keyClick(Qt.Key_K, Qt.ControlModifier)
            verify(field.activeFocus)
            const all = testApp.search.count
            verify(all > 0)
            keyClick(Qt.Key_Z); keyClick(Qt.Key_Q); keyClick(Qt.Key_X)
            compare(testApp.search.query, "zqx")
            compare(testApp.search.count, 0)
            verify(findChild(view, "noMatches").visible)
            keyClick(Qt.Key_Escape)
            compare(field.text, "")
            compare(testApp.search.count, all)
            keyClick(Qt.Key_F, Qt.ControlModifier)  // the other key for it
            verify(field.activeFocus)
            // From the composer too, where Ctrl+K would otherwise delete to the end of the line.
            const composer = findChild(view, "composerInput")
            composer.forceActiveFocus()
            keyClick(Qt.Key_K, Qt.ControlModifier)
            verify(field.activeFocus, "Ctrl+K in the composer goes to the search")
        }

        // What the composer hands the window when X11's key theme gave it a shortcut first.
        function test_a_text_area_passes_shortcuts_on() {
            verify(view.runShortcut({ key: Qt.Key_Equal, modifiers: Qt.ControlModifier }))
            compare(testApp.appearance.zoom, 1.1)
            verify(view.runShortcut({ key: Qt.Key_0, modifiers: Qt.ControlModifier }))
            compare(testApp.appearance.zoom, 1)
            verify(view.runShortcut({ key: Qt.Key_K, modifiers: Qt.ControlModifier }))
            verify(findChild(view, "searchField").activeFocus)
            verify(!view.runShortcut({ key: Qt.Key_J, modifiers: Qt.ControlModifier }))
            verify(!view.runShortcut({ key: Qt.Key_K, modifiers: Qt.NoModifier }))
        }

        // Ctrl+M: the Models page lists what is on this computer, and a model opens from it where it lies.
        function test_ctrl_m_opens_a_model_where_it_lies() {
            const page = findChild(view, "modelsPage")
            keyClick(Qt.Key_M, Qt.ControlModifier)
            tryCompare(page, "opened", true)
            tryCompare(testApp.library, "scanning", false, 10000)
            const own = testApp.library.local.find(m => m.name === "own-model.gguf")
            verify(own, "the models folder's checkpoint is listed")
            compare(own.source, "LlamaDesk's models folder")
            verify(own.openable)
            verify(own.fits, own.fitReason)
            verify(own.fitText.startsWith("Fits this computer: context"))
            const list = findChild(view, "localList")
            const index = testApp.library.local.findIndex(m => m.name === "own-model.gguf")
            list.positionViewAtIndex(index, ListView.Contain)
            tryVerify(() => list.itemAtIndex(index) !== null)
            const row = list.itemAtIndex(index)
            const open = findChild(row, "openModelButton")
            verify(open && open.visible)
            mouseClick(open)
            tryCompare(page, "visible", false)
            tryCompare(testApp.model, "name", "own-model", 30000)
            compare(testApp.model.path, own.path)
            compare(testApp.settings.recentCheckpoints[0], own.path)
            // Back to the model the other tests expect.
            if (modelPath !== "") {
                testApp.model.open(modelPath)
                tryCompare(testApp.model, "name", "stories260K", 30000)
            }
        }

        function test_f1_lists_the_shortcuts() {
            const dialog = findChild(view, "shortcutsDialog")
            keyClick(Qt.Key_F1)
            tryCompare(dialog, "opened", true)
            for (const s of view.shortcuts)
                verify(s.keys.length > 0 && s.action.length > 0)
            dialog.close()
            tryCompare(dialog, "visible", false)
        }

        function test_zoom_keys_scale_the_text() {
            compare(testApp.appearance.zoom, 1)
            const before = Theme.px(11)
            keyClick(Qt.Key_Equal, Qt.ControlModifier)
            compare(testApp.appearance.zoom, 1.1)
            compare(Theme.zoom, 1)  // MainView alone: Main binds Theme to Appearance
            Theme.zoom = testApp.appearance.zoom
            verify(Theme.px(11) > before)
            keyClick(Qt.Key_Minus, Qt.ControlModifier)
            keyClick(Qt.Key_Minus, Qt.ControlModifier)
            compare(testApp.appearance.zoom, 0.9)
            keyClick(Qt.Key_0, Qt.ControlModifier)
            compare(testApp.appearance.zoom, 1)
            Theme.zoom = 1
        }

        // Tab goes round the window in reading order: the header, the sidebar, the conversation, the
        // composer; every stop has a name for screen readers and shows where the keyboard is.
        function test_tab_goes_round_in_order_with_names() {
            const first = findChild(view, "openButton")
            first.forceActiveFocus(Qt.TabFocusReason)
            const order = []
            let item = first
            for (let i = 0; i < 80; ++i) {
                const name = item.Accessible.name || item.text || ""
                verify(name.length > 0, "a focus stop without a name: " + item)
                if (item.visualFocus !== undefined)
                    verify(item.visualFocus, "no visible focus on " + name)
                order.push(item.objectName)
                keyClick(Qt.Key_Tab)
                item = view.Window.activeFocusItem
                while (item && item.parent && !item.activeFocusOnTab)  // a control's inner editor
                    item = item.parent
                if (item === first) break
            }
            const expected = ["openButton", "newConversationButton", "moreButton", "searchField",
                              "conversationList", "formatSelector", "composerInput"]
            let at = -1
            for (const name of expected) {
                const next = order.indexOf(name)
                verify(next > at, name + " out of order in " + order.join(", "))
                at = next
            }
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

        // A drop-down's list shows its current entry (it was white on white in the window).
        function test_a_drop_down_shows_its_current_entry_data() {
            return [{ tag: "light", dark: false }, { tag: "dark", dark: true }]
        }
        function test_a_drop_down_shows_its_current_entry(data) {
            Theme.dark = data.dark
            const box = findChild(view, "formatSelector")
            box.popup.open()
            tryVerify(() => box.popup.opened)
            const current = box.popup.contentItem.itemAtIndex(box.currentIndex)
            verify(current.highlighted)
            const ratio = contrast(current.contentItem.color, current.background.color)
            const colors = [String(current.contentItem.color), String(current.background.color)]
            box.popup.close()
            // the theme's own colours, as everywhere else in the window (this harness has the style's
            // default palette, under which the old list looked right)
            compare(colors, [String(Theme.text), String(Theme.codeBackground)])
            verify(ratio >= 4.5, `${data.tag}: the current entry's text ${current.contentItem.color} is ${ratio.toFixed(2)}:1 on its background ${current.background.color}`)
        }

        // The throughput chart is painted, not bound: it stayed a light box in the dark theme. A
        // change of theme paints it again.
        SignalSpy { id: chartPainted; signalName: "paint" }
        function test_the_speed_chart_follows_the_theme() {
            const chart = findChild(view, "speedChart")
            verify(chart.visible)
            chartPainted.target = chart
            for (const dark of [true, false]) {
                chartPainted.clear()
                Theme.dark = dark
                tryVerify(() => chartPainted.count > 0, 3000, "no paint in the " + (dark ? "dark" : "light") + " theme")
            }
        }

        // Open in a folder without subfolders takes that folder (it did nothing and said nothing):
        // until an entry is picked, the choice is the folder the dialog is in.
        function test_the_folder_dialog_takes_the_folder_it_is_in() {
            const dialog = findChild(view, "folderDialog")
            dialog.open()
            wait(200)
            const chosen = String(dialog.selectedFolder), shown = String(dialog.currentFolder)
            dialog.close()
            verify(shown !== "")
            compare(chosen, shown)
        }

        // A figure's number stays on one line and inside its column, however wide (it broke as
        // "1018." over "6").
        function test_a_figure_never_breaks_its_number() {
            const value = findChild(view, "decodeFigure").children[0]
            const before = value.text
            value.text = "123456789012.5"
            const lines = value.lineCount, fits = value.contentWidth <= value.width + 0.5
            value.text = before
            compare(lines, 1)
            verify(fits, "the number runs past its column")
        }

        // Export by keyboard: the path holds the documents folder and the conversation's name, the
        // name selected; a folder typed over it keeps the name, and Enter exports (Qt's save dialog
        // lost the name after Ctrl+L to a folder, and Enter in its name field did nothing).
        function test_export_by_keyboard() {
            const dialog = findChild(view, "exportDialog")
            dialog.start("md", 0)
            tryCompare(dialog, "opened", true)
            const field = findChild(dialog.contentItem, "exportPath")
            verify(field.activeFocus)
            const name = testApp.transfer.suggestedName(0, "md")
            compare(field.text, testApp.transfer.suggestedPath(0, "md"))
            compare(field.selectedText, name.slice(0, -".md".length))
            const replaces = findChild(dialog.contentItem, "exportReplaces")
            field.text = scratchFolder + "/typed folder/" + name
            compare(replaces.text, "")  // not written yet
            field.text = testApp.transfer.suggestedPath(0, "md")
            field.selectAll()
            const folder = scratchFolder + "/typed folder"
            for (const c of folder + "/")
                keyClick(c)
            keyClick(Qt.Key_Return)
            tryCompare(dialog, "visible", false)
            verify(testApp.transfer.exists("file://" + folder + "/" + name), "nothing written in " + folder)
            // Again: the file is there, and the dialog says Export replaces it.
            dialog.start("md", 0)
            tryCompare(dialog, "opened", true)
            field.text = folder + "/" + name
            verify(replaces.text.length > 0)
            dialog.reject()
        }

        // The header's lines are cut to its width; a click on them, or Ctrl+I, shows them whole
        // (they showed whole only in tooltips).
        function test_the_model_details_show_whole() {
            const details = findChild(view, "modelDetails")
            const figures = findChild(view, "modelFigures")
            mouseClick(figures)
            tryCompare(details, "opened", true)
            const text = findChild(view, "modelDetailsText").text
            for (const name of ["modelFigures", "modelDevice", "modelContext"]) {
                const line = findChild(view, name)
                if (line.visible)
                    verify(text.indexOf(line.text) >= 0, `${name} "${line.text}" not in "${text}"`)
            }
            details.close()
            tryCompare(details, "visible", false)
            keyClick(Qt.Key_I, Qt.ControlModifier)
            tryCompare(details, "opened", true)
            details.close()
        }

        function test_text_contrast_in_both_themes_data() {
            return [{ tag: "light", dark: false }, { tag: "dark", dark: true }]
        }
        function test_text_contrast_in_both_themes(data) {
            Theme.dark = data.dark
            // [text, background]: every pair the window draws text with.
            const pairs = [["text", "background"], ["text", "surface"], ["text", "codeBackground"],
                           ["muted", "background"], ["muted", "surface"], ["muted", "codeBackground"],
                           ["accent", "background"], ["accent", "surface"], ["accentText", "accent"],
                           ["text", "selection"],
                           ["userText", "userBubble"], ["text", "assistantBubble"],
                           ["danger", "background"], ["danger", "surface"], ["danger", "dangerBackground"],
                           ["sidebarText", "sidebar"], ["sidebarText", "sidebarSelected"],
                           ["sidebarText", "sidebarHover"], ["sidebarMuted", "sidebar"],
                           ["sidebarMuted", "sidebarSelected"], ["searchMark", "sidebar"],
                           ["searchMark", "sidebarSelected"]]
            for (const [fg, bg] of pairs) {
                const ratio = contrast(Theme[fg], Theme[bg])
                verify(ratio >= 4.5, `${data.tag}: ${fg} on ${bg} is ${ratio.toFixed(2)}:1, under 4.5:1`)
            }
            // Qt's dialogs draw their focus frame in the selection colour: 3:1 for what is not text.
            const frame = contrast(Theme.selection, Theme.background)
            verify(frame >= 3, `${data.tag}: selection on background is ${frame.toFixed(2)}:1, under 3:1`)
        }
    }
}
