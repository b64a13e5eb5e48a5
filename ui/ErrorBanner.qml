// A red strip with the last error (a failed load names the reader's message); hidden when empty.
// It takes its place in the layout, but the strip is a popup: it stays visible above open dialogs
// (an error raised from Settings' Reload) and tooltips.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Item {
    id: banner
    required property string message
    signal dismissed()

    visible: message.length > 0
    implicitHeight: visible ? strip.implicitHeight : 0

    Popup {
        id: strip
        objectName: "errorStrip"
        visible: banner.visible
        width: banner.width
        z: 1  // dialogs and tooltips have z 0
        closePolicy: Popup.NoAutoClose
        topPadding: 8
        bottomPadding: 8
        leftPadding: 16
        rightPadding: 8
        background: Rectangle {
            color: Theme.dangerBackground
            border.color: Theme.danger
        }
        contentItem: RowLayout {
            Label {
                objectName: "errorText"
                text: banner.message
                textFormat: Text.PlainText
                color: Theme.danger
                wrapMode: Text.Wrap
                Layout.fillWidth: true
            }
            Button {
                objectName: "dismissButton"
                text: qsTr("Dismiss")
                flat: true
                onClicked: banner.dismissed()
            }
        }
    }
}
