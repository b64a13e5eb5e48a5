// One entry of the Recent menu: a checkpoint as PathLabel shows it, or a server's model by name
// with the server's address under it.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Item {
    id: entry
    required property string location
    required property ModelController model
    readonly property bool remote: entry.model.isRemote(entry.location)

    implicitHeight: entry.remote ? server.implicitHeight : file.implicitHeight
    implicitWidth: 200
    PathLabel {
        id: file
        anchors.fill: parent
        visible: !entry.remote
        path: entry.location
    }
    ColumnLayout {
        id: server
        anchors.fill: parent
        visible: entry.remote
        spacing: 1
        Label {
            objectName: "remoteName"
            text: entry.model.displayName(entry.location)
            textFormat: Text.PlainText
            color: Theme.text
            elide: Text.ElideMiddle
            Layout.fillWidth: true
        }
        Label {
            text: qsTr("server · %1").arg(entry.model.serverAddress(entry.location))
            textFormat: Text.PlainText
            color: Theme.muted
            font.pixelSize: Theme.px(11)
            elide: Text.ElideMiddle
            Layout.fillWidth: true
        }
    }
}
