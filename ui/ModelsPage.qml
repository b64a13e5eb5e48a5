// The Models page (Ctrl+M): the checkpoints already on this computer, the recommended ones, the
// Hugging Face Hub's search, and the downloads under way. What each list holds and does is
// ModelLibrary's (app/library/); this file lays it out.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Dialog {
    id: page
    required property ModelLibrary library
    required property ModelController model

    objectName: "modelsPage"
    title: qsTr("Models")
    modal: true
    width: parent ? Math.min(Theme.px(980), parent.width - 40) : Theme.px(980)
    height: parent ? parent.height - 40 : Theme.px(700)
    standardButtons: Dialog.Close
    onOpened: {
        page.library.rescan()
        if (tabs.currentIndex === 1) page.library.openCatalogue()
    }

    property string query  // the search's text, kept while another tab is shown

    function openModel(path) {
        page.model.open(path)
        page.close()
    }

    // One row of a list: a title, a line of details, a note (why not, or what fits), and buttons.
    component Row: Rectangle {
        id: row
        property string title
        property string details
        property string note
        property color noteColor: Theme.muted
        property bool greyed: false
        default property alias buttons: buttonRow.data
        width: ListView.view ? ListView.view.width : implicitWidth
        implicitHeight: rowLayout.implicitHeight + Theme.px(12)
        color: "transparent"
        border.color: Theme.border
        radius: 6
        RowLayout {
            id: rowLayout
            anchors.fill: parent
            anchors.margins: Theme.px(6)
            ColumnLayout {
                Layout.fillWidth: true
                spacing: 2
                opacity: row.greyed ? 0.55 : 1
                Label {
                    text: row.title
                    font.bold: true
                    color: Theme.text
                    wrapMode: Text.WrapAnywhere
                    Layout.fillWidth: true
                }
                Label {
                    text: row.details
                    visible: text.length > 0
                    color: Theme.muted
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
                Label {
                    text: row.note
                    visible: text.length > 0
                    color: row.noteColor
                    wrapMode: Text.Wrap
                    Layout.fillWidth: true
                }
            }
            RowLayout { id: buttonRow }
        }
    }

    ColumnLayout {
        anchors.fill: parent
        spacing: Theme.px(8)

        TabBar {
            id: tabs
            Layout.fillWidth: true
            onCurrentIndexChanged: if (currentIndex === 1) page.library.openCatalogue()
            TabButton { text: qsTr("On this computer") }
            TabButton { objectName: "recommendedTab"; text: qsTr("Recommended") }
            TabButton { objectName: "searchTab"; text: qsTr("Search the Hub") }
        }

        Label {
            objectName: "hubMessage"
            text: page.library.hubMessage
            visible: text.length > 0 && tabs.currentIndex > 0
            color: Theme.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }

        // One tab made at a time, when shown: Qt 6.4's layouts do not lay out again what starts
        // hidden (in a StackLayout the search tab's lists stayed 0 px wide).
        Loader {
            Layout.fillWidth: true
            Layout.fillHeight: true
            sourceComponent: [localTab, recommendedTab, searchTab][tabs.currentIndex]
        }
        Component {
            id: localTab

                ColumnLayout {
                    Label {
                        text: page.library.scanning ? qsTr("Looking…")
                              : qsTr("%n checkpoint(s) in LlamaDesk's models folder (%1), the Hugging Face cache, LM Studio, GPT4All and Ollama, and opened before. Each opens where it lies.", "", page.library.local.length).arg(page.library.ownFolder())
                        color: Theme.muted
                        wrapMode: Text.Wrap
                        Layout.fillWidth: true
                    }
                    ListView {
                        objectName: "localList"
                        model: page.library.local
                        clip: true
                        spacing: Theme.px(4)
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        ScrollBar.vertical: ScrollBar {}
                        delegate: Row {
                            required property var modelData
                            title: modelData.name
                            details: [modelData.source, modelData.size, modelData.weightTypes, modelData.params]
                                     .filter(s => s && s.length > 0).join(" · ")
                            note: modelData.openable ? modelData.fitText + (modelData.fits ? "" : ": " + modelData.fitReason)
                                                     : qsTr("Will not open: %1").arg(modelData.reason)
                            noteColor: modelData.openable && modelData.fits ? Theme.muted : Theme.danger
                            greyed: !modelData.openable
                            Button {
                                objectName: "openModelButton"
                                text: qsTr("Open")
                                visible: modelData.openable
                                onClicked: page.openModel(modelData.path)
                            }
                        }
                    }
                }
        }
        Component {
            id: recommendedTab
                ListView {
                    objectName: "recommendedList"
                    model: page.library.recommended
                    clip: true
                    spacing: Theme.px(4)
                    ScrollBar.vertical: ScrollBar {}
                    delegate: Row {
                        required property var modelData
                        title: modelData.model + " · " + modelData.quant
                        details: [modelData.size, modelData.params, modelData.family, qsTr("licence %1").arg(modelData.licence),
                                  modelData.repo].join(" · ")
                        note: modelData.unavailable.length > 0 ? qsTr("Not available: %1").arg(modelData.unavailable)
                              : modelData.fitText + (modelData.fits ? "" : ": " + modelData.fitReason)
                        noteColor: modelData.fits && modelData.unavailable.length === 0 ? Theme.muted : Theme.danger
                        greyed: modelData.unavailable.length > 0 && modelData.downloaded.length === 0
                        Button {
                            visible: modelData.unavailable.length === 0 || modelData.downloaded.length > 0
                            text: modelData.downloaded.length > 0 ? qsTr("Open") : qsTr("Download")
                            onClicked: modelData.downloaded.length > 0 ? page.openModel(modelData.downloaded)
                                                                       : page.library.download(modelData.repo, modelData.file)
                        }
                    }
                }
        }
        Component {
            id: searchTab
                ColumnLayout {
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: query
                            objectName: "hubSearchField"
                            Component.onCompleted: text = page.query
                            onTextEdited: page.query = text
                            placeholderText: qsTr("Search GGUF models on %1 (e.g. llama 3.2)").arg(page.library.hubAddress)
                            Layout.fillWidth: true
                            onAccepted: page.library.search(text)
                        }
                        Button {
                            text: page.library.busy ? qsTr("Searching…") : qsTr("Search")
                            onClicked: page.library.search(query.text)
                        }
                    }
                    RowLayout {
                        Layout.fillWidth: true
                        TextField {
                            id: token
                            objectName: "tokenField"
                            echoMode: TextInput.Password
                            placeholderText: page.library.hasToken ? qsTr("An access token is kept for gated models; paste another to replace it")
                                                                   : qsTr("Access token for gated models (hf_…), after accepting their licence")
                            Layout.fillWidth: true
                        }
                        Button {
                            text: qsTr("Keep token")
                            enabled: token.text.length > 0
                            onClicked: {
                                tokenNote.text = page.library.setToken(token.text)
                                if (tokenNote.text.length === 0) token.text = ""
                            }
                        }
                    }
                    Label { id: tokenNote; visible: text.length > 0; color: Theme.danger; wrapMode: Text.Wrap; Layout.fillWidth: true }
                    // Anchors, not a RowLayout: Qt 6.4's layouts do not lay out again a row that starts
                    // hidden (this tab), and the results list stayed 0 px wide.
                    Item {
                        Layout.fillWidth: true
                        Layout.fillHeight: true
                        ListView {
                            id: resultList
                            objectName: "resultList"
                            model: page.library.results
                            clip: true
                            spacing: Theme.px(4)
                            anchors.left: parent.left
                            anchors.top: parent.top
                            anchors.bottom: parent.bottom
                            width: parent.width * 0.45
                            ScrollBar.vertical: ScrollBar {}
                            delegate: Row {
                                required property var modelData
                                title: modelData.id
                                details: qsTr("%1 downloads · %2 likes").arg(modelData.downloads).arg(modelData.likes)
                                         + (modelData.gated ? qsTr(" · gated: needs an access token") : "")
                                Button {
                                    text: qsTr("Files")
                                    onClicked: page.library.showRepo(modelData.id)
                                }
                            }
                        }
                        ListView {
                            objectName: "fileList"
                            model: page.library.files
                            clip: true
                            spacing: Theme.px(4)
                            anchors.left: resultList.right
                            anchors.leftMargin: Theme.px(8)
                            anchors.right: parent.right
                            anchors.top: parent.top
                            anchors.bottom: parent.bottom
                            ScrollBar.vertical: ScrollBar {}
                            header: Label {
                                text: page.library.repo.length > 0 ? page.library.repo : qsTr("Choose a repository to see its files")
                                font.bold: true
                                color: Theme.text
                                bottomPadding: Theme.px(4)
                            }
                            delegate: Row {
                                required property var modelData
                                title: modelData.path
                                details: [modelData.quant, modelData.size].filter(s => s.length > 0).join(" · ")
                                note: modelData.readable ? "" : qsTr("Will not open: %1").arg(modelData.reason)
                                noteColor: Theme.danger
                                greyed: !modelData.readable
                                Button {
                                    text: modelData.downloaded.length > 0 ? qsTr("Open") : qsTr("Download")
                                    visible: modelData.readable
                                    onClicked: modelData.downloaded.length > 0 ? page.openModel(modelData.downloaded)
                                                                               : page.library.download(page.library.repo, modelData.path)
                                }
                            }
                        }
                    }
                }
        }
        Label {
            text: qsTr("Downloads, into the Hugging Face cache")
            font.bold: true
            color: Theme.text
            visible: page.library.downloads.count > 0
        }
        ListView {
            objectName: "downloadList"
            model: page.library.downloads
            visible: count > 0
            clip: true
            spacing: Theme.px(4)
            Layout.fillWidth: true
            Layout.preferredHeight: Math.min(contentHeight, Theme.px(220))
            ScrollBar.vertical: ScrollBar {}
            delegate: Row {
                id: downloadRow
                required property int index
                required property string repo
                required property string path
                required property string state
                required property string message
                required property real progress
                required property string speed
                required property string timeLeft
                required property string file
                required property bool problem
                title: downloadRow.repo + " · " + downloadRow.path
                details: [Math.round(downloadRow.progress * 100) + " %", downloadRow.speed, downloadRow.timeLeft]
                         .filter(s => s.length > 0).join(" · ")
                note: downloadRow.message
                noteColor: downloadRow.problem ? Theme.danger : Theme.muted
                ProgressBar {
                    value: downloadRow.progress
                    visible: downloadRow.state !== "done"
                    Layout.preferredWidth: Theme.px(160)
                }
                Button {
                    text: qsTr("Pause")
                    visible: ["starting", "downloading", "waiting"].includes(downloadRow.state)
                    onClicked: page.library.downloads.pause(downloadRow.index)
                }
                Button {
                    text: qsTr("Resume")
                    visible: downloadRow.state === "paused" || downloadRow.state === "failed"
                    onClicked: page.library.downloads.resume(downloadRow.index)
                }
                Button {
                    text: qsTr("Cancel")
                    visible: !["done", "cancelled", "verifying"].includes(downloadRow.state)
                    onClicked: page.library.downloads.cancel(downloadRow.index)
                }
                Button {
                    text: qsTr("Open")
                    visible: downloadRow.state === "done"
                    onClicked: page.openModel(downloadRow.file)
                }
                Button {
                    text: qsTr("Remove")
                    visible: ["done", "cancelled", "failed"].includes(downloadRow.state)
                    onClicked: page.library.downloads.remove(downloadRow.index)
                }
            }
        }
    }
}
