// Shown instead of the main window when another LlamaDesk owns this profile and did not answer.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

ApplicationWindow {
    id: window
    required property string message
    width: 480
    height: 160
    visible: true
    title: "LlamaDesk"
    color: Theme.background

    ColumnLayout {
        anchors.fill: parent
        anchors.margins: 20
        spacing: 16
        Label {
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            text: window.message
            color: Theme.text
        }
        Button {
            Layout.alignment: Qt.AlignRight
            text: qsTr("Close")
            onClicked: Qt.quit()
        }
    }
}
