// A red strip with the last error (a failed load names the reader's message); hidden when empty.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts

Rectangle {
    id: banner
    required property string message
    signal dismissed()

    visible: message.length > 0
    implicitHeight: visible ? row.implicitHeight + 16 : 0
    color: Theme.dangerBackground
    border.color: Theme.danger

    RowLayout {
        id: row
        anchors.fill: parent
        anchors.margins: 8
        anchors.leftMargin: 16
        Label {
            objectName: "errorText"
            text: banner.message
            color: Theme.danger
            wrapMode: Text.Wrap
            Layout.fillWidth: true
        }
        Button {
            text: qsTr("Dismiss")
            flat: true
            onClicked: banner.dismissed()
        }
    }
}
