// Live figures of the conversation on screen: its last answer's decode speed with its chart, time
// to first token and prefill (labelled with the model that wrote it), and the cache occupancy of
// this conversation and of the shared pool. For a model on a server: what was measured here as the
// answer arrived and what the server reported, "not reported by the server" for the rest.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import LlamaDesk.Core

Pane {
    id: panel
    required property Figures figures
    required property ModelController model
    readonly property bool server: panel.figures.fromServer || panel.model.remote
    readonly property string notReported: qsTr("not reported by the server")
    padding: 16
    background: null

    component Figure: ColumnLayout {
        required property string label
        required property string value
        property bool reported: true  // false: value says that the server gave none
        spacing: 0
        Layout.fillWidth: true
        Label {
            text: parent.value
            font.pixelSize: Theme.px(parent.reported ? 20 : 12)
            font.bold: parent.reported
            color: parent.reported ? Theme.text : Theme.muted
            Layout.fillWidth: true
            // a number never breaks ("1018." over "6"): it shrinks to fit; words may wrap
            wrapMode: parent.reported ? Text.NoWrap : Text.Wrap
            fontSizeMode: parent.reported ? Text.HorizontalFit : Text.FixedSize
            minimumPixelSize: Theme.px(10)
        }
        Label { text: parent.label; font.pixelSize: Theme.px(11); color: Theme.muted; wrapMode: Text.Wrap; Layout.fillWidth: true }
    }

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 12

        Label { text: qsTr("Figures"); font.pixelSize: Theme.px(15); font.bold: true; color: Theme.text }
        Label {
            objectName: "figuresCaption"
            Layout.fillWidth: true
            wrapMode: Text.Wrap
            font.pixelSize: Theme.px(11)
            color: Theme.muted
            textFormat: Text.PlainText
            text: !panel.figures.hasAnswer ? qsTr("No answer in this conversation since this model was loaded.")
                  : panel.figures.fromServer
                  ? qsTr("%1 answer · %2 on the server %3: measured here as it arrived, and what the server reported")
                    .arg(panel.figures.live ? qsTr("This conversation's") : qsTr("This conversation's last"))
                    .arg(panel.figures.answerModel).arg(panel.figures.server)
                  : panel.figures.live ? qsTr("This conversation's answer, now · %1").arg(panel.figures.answerModel)
                  : qsTr("This conversation's last answer · %1").arg(panel.figures.answerModel)
        }

        GridLayout {
            objectName: "serverFigures"
            visible: panel.server
            columns: 2
            columnSpacing: 12
            rowSpacing: 10
            Layout.fillWidth: true
            Figure {
                objectName: "serverTokensPerSecond"
                readonly property bool known: panel.figures.serverTokensPerSecond >= 0
                label: qsTr("tokens/s: the server's count over their arrival here")
                reported: !panel.figures.hasAnswer || known
                value: !panel.figures.hasAnswer ? "—" : known ? panel.figures.serverTokensPerSecond.toFixed(1) : panel.notReported
            }
            Figure {
                label: qsTr("text pieces/s, measured here")
                value: panel.figures.serverPiecesPerSecond >= 0 ? panel.figures.serverPiecesPerSecond.toFixed(1) : "—"
            }
            Figure {
                label: qsTr("time to first text, measured here")
                value: panel.figures.hasAnswer ? panel.figures.timeToFirstTokenMs.toFixed(0) + " ms" : "—"
            }
            Figure {
                label: qsTr("text pieces received")
                value: panel.figures.hasAnswer ? panel.figures.serverPieces : "—"
            }
            Figure {
                objectName: "serverPromptTokens"
                label: qsTr("prompt tokens (the server's count)")
                reported: !panel.figures.hasAnswer || panel.figures.serverPromptTokens >= 0
                value: !panel.figures.hasAnswer ? "—" : reported ? panel.figures.serverPromptTokens : panel.notReported
            }
            Figure {
                label: qsTr("completion tokens (the server's count)")
                reported: !panel.figures.hasAnswer || panel.figures.serverCompletionTokens >= 0
                value: !panel.figures.hasAnswer ? "—" : reported ? panel.figures.serverCompletionTokens : panel.notReported
            }
            Figure {
                objectName: "serverCachedTokens"
                label: qsTr("prompt tokens the server's cache already held")
                reported: !panel.figures.hasAnswer || panel.figures.serverCachedTokens >= 0
                value: !panel.figures.hasAnswer ? "—" : reported ? panel.figures.serverCachedTokens : panel.notReported
            }
            Figure {
                objectName: "serverCacheUsage"
                label: qsTr("the server's KV cache in use (all its requests)")
                reported: !panel.figures.hasAnswer || panel.figures.serverCacheUsage >= 0
                value: !panel.figures.hasAnswer ? "—"
                       : reported ? (panel.figures.serverCacheUsage * 100).toFixed(1) + " %" : panel.notReported
            }
        }

        GridLayout {
            visible: !panel.server
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
            objectName: "speedChart"
            visible: !panel.server
            Layout.fillWidth: true
            Layout.preferredHeight: 90
            values: panel.figures.decodeSeries
        }

        OccupancyBar {
            objectName: "conversationOccupancy"
            visible: !panel.server
            Layout.fillWidth: true
            label: qsTr("This conversation's cache")
            used: panel.figures.cachedTokens
            total: panel.figures.contextLength
            detail: qsTr("%1 / %2 tokens").arg(panel.figures.cachedTokens).arg(panel.figures.contextLength)
        }
        OccupancyBar {
            visible: !panel.server
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
