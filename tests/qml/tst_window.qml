// The window as a person uses it: type and send, watch the answer stream, Stop, new
// conversation, switch back, a failed load's banner, and the live figures.
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

    SignalSpy { id: messageChanges; target: testApp.chat.messages; signalName: "dataChanged" }
    SignalSpy { id: figureChanges; target: testApp.figures; signalName: "generationChanged" }

    TestCase {
        name: "Window"
        when: windowShown

        // Every test needs the reference model; without ../shared each one is skipped.
        function init() {
            if (modelPath === "")
                skip("reference data not found: ../shared/models/stories260K (set LLAMADESK_SHARED_DIR)")
        }

        function initTestCase() {
            if (modelPath === "")
                return
            tryCompare(testApp.model, "hasModel", true, 60000)
            testApp.chat.settings.temperature = 0
            testApp.chat.settings.maxNewTokens = 400
        }

        function typeAndSend(text) {
            const input = findChild(view, "composerInput")
            verify(input)
            input.forceActiveFocus()
            for (let i = 0; i < text.length; ++i)
                keyClick(text[i])
            compare(input.text, text)
            keyClick(Qt.Key_Return)
            compare(input.text, "")
        }

        function lastBubbleText() {
            const list = findChild(view, "messageList")
            verify(list.height > 100, "the message list has room on screen")
            list.positionViewAtEnd()
            wait(50)
            for (let i = 0; i < list.contentItem.children.length; ++i) {
                const t = findChild(list.contentItem.children[i], "messageText")
                // Only text that is really on screen counts.
                if (t && list.contentItem.children[i].index === list.count - 1 && t.width > 0 && t.height > 0)
                    return t.text
            }
            return ""
        }

        function test_1_type_send_and_stream() {
            testApp.chat.newConversation()
            messageChanges.clear()
            typeAndSend("Hi")
            compare(testApp.chat.messages.count, 2)
            tryCompare(testApp.chat, "generating", false, 60000)
            verify(messageChanges.count >= 1)  // the answer arrived in pieces
            const shown = lastBubbleText()
            verify(shown.length > 0, "the answer is on screen")
        }

        function test_2_stop() {
            testApp.chat.newConversation()
            typeAndSend("Once upon a time")
            const button = findChild(view, "sendButton")
            verify(testApp.chat.generating)
            compare(button.text, "Stop")
            mouseClick(button)
            tryCompare(testApp.chat, "generating", false, 2000)
            compare(button.text, "Send")
            compare(testApp.chat.messages.count, 2)
            const list = findChild(view, "messageList")
            const answer = list.itemAtIndex(1)
            compare(answer.stopReason, "cancelled")
            verify(answer.text.length > 0, "the partial answer stays")
        }

        function test_3_new_conversation() {
            const before = testApp.chat.conversations.count
            const previous = testApp.chat.currentIndex
            mouseClick(findChild(view, "newConversationButton"))
            compare(testApp.chat.conversations.count, before + 1)
            verify(testApp.chat.currentIndex !== previous)
            compare(testApp.chat.messages.count, 0)
            tryCompare(testApp.figures, "cachedTokens", 0)
        }

        function test_4_switch_conversations() {
            typeAndSend("Hello")
            tryCompare(testApp.chat, "generating", false, 60000)
            const second = testApp.chat.currentIndex
            const list = findChild(view, "conversationList")
            const firstItem = list.itemAtIndex(0)
            verify(firstItem)
            mouseClick(firstItem)
            compare(testApp.chat.currentIndex, 0)
            compare(testApp.chat.messages.count, 2)
            tryVerify(() => testApp.figures.cachedTokens > 0, 5000, "its own cache is shown")
            mouseClick(list.itemAtIndex(second))
            compare(testApp.chat.currentIndex, second)
            compare(testApp.chat.messages.count, 2)
        }

        function test_5_failed_load_banner() {
            const name = testApp.model.name
            testApp.model.open(brokenModelPath)
            const banner = findChild(view, "errorBanner")
            tryCompare(banner, "visible", true, 30000)
            verify(findChild(banner, "errorText").text.indexOf("broken.gguf") >= 0)
            compare(testApp.model.name, name)
            compare(testApp.model.hasModel, true)
            testApp.dismissError()
            compare(banner.visible, false)
        }

        function test_6_figures_change_while_generating() {
            testApp.chat.newConversation()
            figureChanges.clear()
            typeAndSend("Tell me a story")
            tryCompare(testApp.chat, "generating", false, 60000)
            verify(figureChanges.count >= 2, "updated during and after the answer")
            verify(testApp.figures.generatedTokens > 0)
            verify(testApp.figures.decodeTokensPerSecond > 0)
            verify(testApp.figures.cachedTokens > 0)
            const decode = findChild(view, "decodeFigure")
            verify(decode.value !== "0.0")
        }

        // Ctrl+N starts a conversation, Esc stops the answer.
        function test_7_keyboard() {
            typeAndSend("Hello again")
            tryCompare(testApp.chat, "generating", false, 60000)
            const before = testApp.chat.conversations.count
            keyClick(Qt.Key_N, Qt.ControlModifier)
            compare(testApp.chat.conversations.count, before + 1)
            typeAndSend("Once upon a time")
            verify(testApp.chat.generating)
            keyClick(Qt.Key_Escape)
            tryCompare(testApp.chat, "generating", false, 2000)
            compare(findChild(view, "messageList").itemAtIndex(1).stopReason, "cancelled")
        }
    }
}
