// Live figures of the conversation on screen: its last answer's decode speed with its chart, time
// to first token and prefill (labelled with the model that wrote it), and the cache occupancy of
// this conversation and of the shared pool.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Pane {
    id: panel
    required property Figures figures
    padding: 16
    background: null

    component Figure: ColumnLayout {
        required property string label
        required property string value
        spacing: 0
        Layout.fillWidth: true
        Label { text: parent.value; font.pixelSize: 20; font.bold: true; color: Theme.text }
        Label { text: parent.label; font.pixelSize: 11; color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
    }

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 12

        Label { text: qsTr("Figures"); font.pixelSize: 15; font.bold: true; color: Theme.text }
        Label {
            objectName: "figuresCaption"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: 11
            color: Theme.muted
            textFormat: Text.PlainText
            text: !panel.figures.hasAnswer ? qsTr("No answer in this conversation since this model was loaded.")
                  : panel.figures.live ? qsTr("This conversation's answer, now · %1").arg(panel.figures.answerModel)
                  : qsTr("This conversation's last answer · %1").arg(panel.figures.answerModel)
        }

        GridLayout {
            columns: 2
            columnSpacing: 12
            rowSpacing: 10
            Layout.fillWidth: true
            Figure {
                objectName: "decodeFigure"
                label: qsTr("decode tokens/s")
                value: panel.figures.hasAnswer ? panel.figures.decodeTokensPerSecond.toFixed(1) : "—"
            }
            Figure {
                label: qsTr("time to first token")
                value: panel.figures.hasAnswer ? panel.figures.timeToFirstTokenMs.toFixed(0) + " ms" : "—"
            }
            Figure {
                label: qsTr("prefill tokens/s")
                value: panel.figures.hasAnswer ? panel.figures.prefillTokensPerSecond.toFixed(0) : "—"
            }
            Figure {
                objectName: "prefilledFigure"
                // Every prefilled token is accounted for, so the figure never looks like a miscount.
                label: !panel.figures.hasAnswer ? qsTr("tokens prefilled")
                       : qsTr("tokens prefilled: %1 new").arg(panel.figures.promptTokens)
                       + (panel.figures.carriedTokens > 0
                          ? qsTr(" + %1 of the history not yet in the cache").arg(panel.figures.carriedTokens) : "")
                       + (panel.figures.reprefilledTokens > 0
                          ? qsTr(" + %1 evicted").arg(panel.figures.reprefilledTokens) : "")
                       + (panel.figures.sharedTokens > 0
                          ? qsTr(" − %1 shared with other conversations").arg(panel.figures.sharedTokens) : "")
                       + (panel.figures.restoredTokens > 0
                          ? qsTr(" · %1 of the history read back from disk, not computed").arg(panel.figures.restoredTokens) : "")
                value: panel.figures.hasAnswer ? panel.figures.prefilledTokens : "—"
            }
            Figure {
                label: qsTr("generated tokens")
                value: panel.figures.hasAnswer ? panel.figures.generatedTokens : "—"
            }
            Figure {
                label: qsTr("evictions")
                value: panel.figures.evictions
            }
        }

        SpeedChart {
            Layout.fillWidth: true
            Layout.preferredHeight: 90
            values: panel.figures.decodeSeries
        }

        OccupancyBar {
            objectName: "conversationOccupancy"
            Layout.fillWidth: true
            label: qsTr("This conversation's cache")
            used: panel.figures.cachedTokens
            total: panel.figures.contextLength
            detail: qsTr("%1 / %2 tokens").arg(panel.figures.cachedTokens).arg(panel.figures.contextLength)
        }
        OccupancyBar {
            Layout.fillWidth: true
            label: qsTr("KV pool (all conversations)")
            used: panel.figures.poolBlocksUsed
            total: panel.figures.poolBlocksTotal
            detail: qsTr("%1 / %2 blocks · %3 / %4 MiB").arg(panel.figures.poolBlocksUsed)
                    .arg(panel.figures.poolBlocksTotal).arg(panel.figures.poolMiBUsed.toFixed(1))
                    .arg(panel.figures.poolMiBTotal.toFixed(1))
        }
    }
}
