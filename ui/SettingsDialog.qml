// Settings: this conversation's system prompt and sampling; the window's theme and zoom; app-wide threads, KV cache budget and
// type, the disk kept for caches between runs, the servers' timeout, and where servers' API keys
// are kept; the local server (on or off, port, network, key, address, the requests it served).
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: dialog
    required property ConversationSettings conversation
    required property ConversationList conversations  // its presets
    required property AppSettings appSettings
    required property Appearance appearance
    required property string apiKeyStorage
    required property LocalServer localServer
    signal reloadRequested()

    objectName: "settingsDialog"
    title: qsTr("Settings")
    modal: true
    width: 560
    // A window shorter than the settings scrolls them.
    height: parent ? Math.min(implicitHeight, parent.height - 24) : implicitHeight
    standardButtons: Dialog.Close

    // A row's name, in a column of its own; a long one, or any at a large zoom, takes two lines
    // (it ran under the row's control).
    component RowLabel: Label {
        Layout.preferredWidth: 180
        wrapMode: Text.Wrap
    }
    component SliderRow: RowLayout {
        id: sliderRow
        required property string label
        required property real from
        required property real to
        required property real stepSize
        required property real value
        signal moved(real value)
        Layout.fillWidth: true
        RowLabel { text: sliderRow.label }
        Slider {
            Accessible.name: sliderRow.label
            from: sliderRow.from; to: sliderRow.to; stepSize: sliderRow.stepSize
            value: sliderRow.value
            Layout.fillWidth: true
            onMoved: sliderRow.moved(value)
        }
        Label { text: sliderRow.value.toFixed(2); Layout.preferredWidth: 40 }
    }
    component SpinRow: RowLayout {
        id: spinRow
        required property string label
        required property int from
        required property int to
        required property int value
        signal modified(int value)
        Layout.fillWidth: true
        RowLabel { text: spinRow.label }
        SpinBox {
            Accessible.name: spinRow.label
            from: spinRow.from; to: spinRow.to; value: spinRow.value; editable: true
            Layout.fillWidth: true
            onValueModified: spinRow.modified(value)
        }
    }

    // A long label wraps within the dialog instead of widening it.
    component WrappingCheckBox: CheckBox {
        id: box
        Layout.fillWidth: true
        contentItem: Label {
            leftPadding: box.indicator.width + box.spacing
            text: box.text
            wrapMode: Text.Wrap
            color: Theme.text
        }
    }

    ScrollView {
        id: scroll
        objectName: "settingsScroll"
        anchors.fill: parent
        contentWidth: availableWidth
        clip: true

        ColumnLayout {
            objectName: "settingsColumn"
            width: scroll.availableWidth - 14  // clear of the scroll bar, which overlays the content
            spacing: 8

            Label { text: qsTr("This conversation"); font.bold: true }
            // Presets: named sets of system prompt, chat format and sampling.
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("Preset") }
                ChoiceBox {
                    id: presetChoice
                    objectName: "presetChoice"
                    Accessible.name: qsTr("Preset")
                    model: dialog.conversations.presets.names
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "applyPreset"
                    text: qsTr("Apply")
                    enabled: presetChoice.currentText !== ""
                    onClicked: dialog.conversations.applyPreset(presetChoice.currentText)
                }
                Button {
                    text: qsTr("Delete")
                    enabled: presetChoice.currentText !== ""
                    onClicked: dialog.conversations.presets.remove(presetChoice.currentText)
                }
            }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("Save as preset") }
                TextField {
                    id: presetName
                    objectName: "presetName"
                    placeholderText: qsTr("a name")
                    Accessible.name: qsTr("Name of the new preset")
                    Layout.fillWidth: true
                }
                Button {
                    objectName: "savePreset"
                    text: qsTr("Save preset")
                    enabled: presetName.text.trim() !== ""
                    onClicked: {
                        presetSaveError.text = dialog.conversations.savePreset(presetName.text)
                        if (presetSaveError.text === "") {
                            presetChoice.currentIndex = dialog.conversations.presets.names.indexOf(presetName.text.trim())
                            presetName.text = ""
                        }
                    }
                }
            }
            Label {
                id: presetSaveError
                visible: text !== ""
                color: Theme.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("For new chats") }
                ChoiceBox {
                    objectName: "presetForNew"
                    Accessible.name: qsTr("Preset new conversations take")
                    model: [qsTr("no preset (the defaults below)")].concat(dialog.conversations.presets.names)
                    currentIndex: Math.max(0, dialog.conversations.presets.names.indexOf(
                                               dialog.conversations.presets.forNewConversations) + 1)
                    onActivated: (index) => dialog.conversations.presets.forNewConversations =
                                     index === 0 ? "" : dialog.conversations.presets.names[index - 1]
                    Layout.fillWidth: true
                }
            }
            Label { text: qsTr("System prompt of this conversation (used from its first turn)"); color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
            PlainTextArea {
                objectName: "systemPrompt"
                Layout.fillWidth: true
                Layout.preferredHeight: 70
                placeholderText: qsTr("e.g. You are a helpful assistant.")
                Accessible.name: qsTr("System prompt of this conversation")
                text: dialog.conversation.systemPrompt
                onEditingFinished: dialog.conversation.systemPrompt = text
            }
            SliderRow {
                label: qsTr("Temperature"); from: 0; to: 2; stepSize: 0.05
                value: dialog.conversation.temperature
                onMoved: (v) => dialog.conversation.temperature = v
            }
            SliderRow {
                label: qsTr("Top-p"); from: 0.01; to: 1; stepSize: 0.01  // 0 is not a valid top-p
                value: dialog.conversation.topP
                onMoved: (v) => dialog.conversation.topP = v
            }
            SliderRow {
                label: qsTr("Min-p (0: off)"); from: 0; to: 1; stepSize: 0.01
                value: dialog.conversation.minP
                onMoved: (v) => dialog.conversation.minP = v
            }
            SliderRow {
                label: qsTr("Repetition penalty (1: off)"); from: 1; to: 2; stepSize: 0.01
                value: dialog.conversation.repeatPenalty
                onMoved: (v) => dialog.conversation.repeatPenalty = v
            }
            SpinRow {
                label: qsTr("Top-k (0: off)"); from: 0; to: 1000
                value: dialog.conversation.topK
                onModified: (v) => dialog.conversation.topK = v
            }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("Stop strings (one per line)"); Layout.alignment: Qt.AlignTop }
                PlainTextArea {
                    objectName: "stopStrings"
                    Layout.fillWidth: true
                    Layout.preferredHeight: 50
                    placeholderText: qsTr("e.g. ###")
                    Accessible.name: qsTr("Stop strings, one per line")
                    text: dialog.conversation.stopStrings
                    onEditingFinished: dialog.conversation.stopStrings = text
                }
            }
            SpinRow {
                label: qsTr("Max new tokens"); from: 1; to: 32768
                value: dialog.conversation.maxNewTokens
                onModified: (v) => dialog.conversation.maxNewTokens = v
            }
            SpinRow {
                label: qsTr("Seed (-1: random)"); from: -1; to: 2147483647
                value: dialog.conversation.seed
                onModified: (v) => dialog.conversation.seed = v
            }
            Label {
                text: dialog.conversation.lastError
                visible: text !== ""
                color: Theme.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }

            Label { text: qsTr("Appearance"); font.bold: true; Layout.topMargin: 8 }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("Theme") }
                ChoiceBox {
                    objectName: "themeSelector"
                    Accessible.name: qsTr("Theme")
                    textRole: "name"
                    valueRole: "value"
                    model: [{ name: qsTr("System (follow the desktop)"), value: Appearance.System },
                            { name: qsTr("Light"), value: Appearance.Light },
                            { name: qsTr("Dark"), value: Appearance.Dark }]
                    Component.onCompleted: currentIndex = indexOfValue(dialog.appearance.theme)
                    onActivated: dialog.appearance.theme = currentValue
                    Layout.fillWidth: true
                }
            }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("Zoom") }
                Button {
                    text: "−"; enabled: dialog.appearance.canZoomOut
                    Layout.preferredWidth: 44
                    Accessible.name: qsTr("Zoom out (Ctrl+Minus)")
                    onClicked: dialog.appearance.zoomOut()
                }
                Label {
                    objectName: "zoomLabel"
                    text: Math.round(dialog.appearance.zoom * 100) + " %"
                    horizontalAlignment: Text.AlignHCenter
                    Layout.preferredWidth: 60
                }
                Button {
                    text: "+"; enabled: dialog.appearance.canZoomIn
                    Layout.preferredWidth: 44
                    Accessible.name: qsTr("Zoom in (Ctrl+Plus)")
                    onClicked: dialog.appearance.zoomIn()
                }
                Button {
                    // Short, so the row fits the dialog at 200 %; the shortcut is in its name and tooltip.
                    text: qsTr("Reset"); flat: true
                    Accessible.name: qsTr("Back to 100 % (Ctrl+0)")
                    ToolTip.text: Accessible.name
                    ToolTip.visible: hovered
                    onClicked: dialog.appearance.resetZoom()
                }
                Item { Layout.fillWidth: true }
            }

            Label { text: qsTr("Application"); font.bold: true; Layout.topMargin: 8 }
            Label { text: qsTr("System prompt for new conversations (each keeps its own afterwards)"); color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
            PlainTextArea {
                objectName: "defaultSystemPrompt"
                Layout.fillWidth: true
                Layout.preferredHeight: 70
                placeholderText: qsTr("empty: new conversations start without one")
                Accessible.name: qsTr("System prompt for new conversations")
                text: dialog.conversation.defaultSystemPrompt
                onEditingFinished: dialog.conversation.defaultSystemPrompt = text
            }
            SpinRow {
                label: qsTr("CPU threads (0: one per core)"); from: 0; to: 256
                value: dialog.appSettings.threads
                onModified: (v) => dialog.appSettings.threads = v
            }
            SpinRow {
                label: qsTr("KV cache MiB (0: default)"); from: 0; to: 1048576
                value: dialog.appSettings.kvCacheMiB
                onModified: (v) => dialog.appSettings.kvCacheMiB = v
            }
            SpinRow {
                label: qsTr("Context at most (0: fit memory)"); from: 0; to: 1048576
                value: dialog.appSettings.contextLimit
                onModified: (v) => dialog.appSettings.contextLimit = v
            }
            WrappingCheckBox {
                objectName: "dropOldestWhenFull"
                text: qsTr("When a conversation is full, drop its oldest turns and go on (instead of asking)")
                checked: dialog.appSettings.dropOldestWhenFull
                onToggled: dialog.appSettings.dropOldestWhenFull = checked
            }
            SpinRow {
                label: qsTr("Server timeout (s)"); from: 1; to: 3600
                value: dialog.appSettings.serverTimeoutSeconds
                onModified: (v) => dialog.appSettings.serverTimeoutSeconds = v
            }
            RowLayout {
                Layout.fillWidth: true
                RowLabel { text: qsTr("KV cache type") }
                ChoiceBox {
                    objectName: "kvCacheTypeSelector"
                    Accessible.name: qsTr("KV cache type")
                    model: dialog.appSettings.kvCacheTypes
                    currentIndex: dialog.appSettings.kvCacheTypes.indexOf(dialog.appSettings.kvCacheType)
                    Layout.fillWidth: true
                    onActivated: dialog.appSettings.kvCacheType = currentText
                }
            }
            SpinRow {
                label: qsTr("Cache on disk MiB (0: off)"); from: 0; to: 1048576
                value: dialog.appSettings.kvSnapshotMiB
                onModified: (v) => dialog.appSettings.kvSnapshotMiB = v
            }
            RowLayout {
                Label {
                    text: qsTr("Threads, the cache's size and type, and the server timeout apply when the model "
                               + "is loaded (q8_0 takes half the memory of f16; CPU only). The cache on disk lets a "
                               + "conversation go on after a restart without computing its history again.")
                    color: Theme.muted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Button { text: qsTr("Reload model"); onClicked: dialog.reloadRequested() }
            }
            Label { text: qsTr("Local server"); font.bold: true; Layout.topMargin: 8 }
            Label {
                text: qsTr("Other programs (editors, Open WebUI, scripts) can use the model loaded here through "
                           + "the OpenAI-compatible API. Their requests share this window's batch and cache.")
                color: Theme.muted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            WrappingCheckBox {
                objectName: "localServerEnabled"
                text: qsTr("Serve the loaded model")
                checked: dialog.localServer.enabled
                onToggled: dialog.localServer.enabled = checked
            }
            SpinRow {
                objectName: "localServerPort"
                label: qsTr("Port"); from: 1; to: 65535
                value: dialog.localServer.port
                onModified: (v) => dialog.localServer.port = v
            }
            WrappingCheckBox {
                objectName: "localServerNetwork"
                text: qsTr("Allow other computers on my network (they must send the key)")
                checked: dialog.localServer.allowNetwork
                onToggled: dialog.localServer.allowNetwork = checked
            }
            RowLayout {
                visible: dialog.localServer.running
                Layout.fillWidth: true
                RowLabel { text: qsTr("Address") }
                TextField {
                    objectName: "localServerAddress"
                    text: dialog.localServer.address
                    onTextChanged: cursorPosition = 0  // the address's start in view
                    readOnly: true
                    selectByMouse: true
                    Accessible.name: qsTr("Local server address")
                    Layout.fillWidth: true
                }
                Button { text: qsTr("Copy"); onClicked: dialog.localServer.copyAddress() }
            }
            RowLayout {
                visible: dialog.localServer.running && dialog.localServer.allowNetwork
                Layout.fillWidth: true
                RowLabel { text: qsTr("Key") }
                TextField {
                    objectName: "localServerKey"
                    text: dialog.localServer.apiKey
                    readOnly: true
                    echoMode: TextInput.Password
                    Accessible.name: qsTr("Local server key")
                    Layout.fillWidth: true
                }
                Button { text: qsTr("Copy"); onClicked: dialog.localServer.copyKey() }
                Button { text: qsTr("New key"); onClicked: dialog.localServer.newKey() }
            }
            Label {
                objectName: "localServerStatus"
                text: dialog.localServer.status
                visible: text !== ""
                color: dialog.localServer.running ? Theme.muted : Theme.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Label {
                visible: dialog.localServer.running
                text: requestList.count === 0 ? qsTr("No requests yet.")
                                              : qsTr("Requests (newest first): client, prompt tokens (from the cache), "
                                                     + "answer tokens, tokens/s")
                color: Theme.muted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            ListView {
                id: requestList
                objectName: "localServerRequests"
                visible: dialog.localServer.running && count > 0
                model: dialog.localServer.requests
                clip: true
                Layout.fillWidth: true
                Layout.preferredHeight: Math.min(count, 6) * 24
                delegate: Label {
                    required property string client
                    required property string endpoint
                    required property int promptTokens
                    required property int cachedTokens
                    required property int completionTokens
                    required property real tokensPerSecond
                    required property bool finished
                    required property string outcome
                    width: ListView.view.width
                    height: 24
                    elide: Text.ElideRight
                    text: qsTr("%1 · %2 · %3 (%4 cached) · %5 · %6 tok/s · %7")
                              .arg(client).arg(endpoint).arg(promptTokens).arg(cachedTokens)
                              .arg(completionTokens).arg(tokensPerSecond.toFixed(1))
                              .arg(finished ? outcome : qsTr("answering"))
                }
            }

            Label {
                text: qsTr("Servers' API keys are kept in %1.").arg(dialog.apiKeyStorage)
                color: Theme.muted
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
        }
    }
}
