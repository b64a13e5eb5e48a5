// The application window. main() gives it the application object as `app`.
import QtQuick
import QtQuick.Controls
import LlamaDesk.Core

ApplicationWindow {
    id: window
    required property AppContext app

    width: 1320
    height: 820
    minimumWidth: 900
    minimumHeight: 560
    visible: true
    title: app.model.hasModel ? "LlamaDesk — " + app.model.name : "LlamaDesk"
    color: Theme.background

    MainView {
        anchors.fill: parent
        app: window.app
    }
}
