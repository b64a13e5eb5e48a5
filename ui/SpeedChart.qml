// Decode tokens/s over the current answer, drawn as a line with its peak marked.
import QtQuick

Canvas {
    id: chart
    required property var values

    onValuesChanged: requestPaint()
    onWidthChanged: requestPaint()
    Connections {  // painted colours do not follow the theme by themselves
        target: Theme
        function onDarkChanged() { chart.requestPaint() }
    }

    onPaint: {
        const ctx = getContext("2d")
        ctx.reset()
        ctx.fillStyle = Theme.codeBackground
        ctx.fillRect(0, 0, width, height)
        const n = values.length
        if (n < 2)
            return
        let peak = 0
        for (let i = 0; i < n; ++i)
            peak = Math.max(peak, values[i])
        if (peak <= 0)
            return
        const top = 14
        ctx.strokeStyle = Theme.accent
        ctx.lineWidth = 2
        ctx.beginPath()
        for (let i = 0; i < n; ++i) {
            const x = i * (width - 1) / (n - 1)
            const y = height - 2 - values[i] / peak * (height - top - 4)
            if (i === 0) ctx.moveTo(x, y); else ctx.lineTo(x, y)
        }
        ctx.stroke()
        ctx.fillStyle = Theme.muted
        ctx.font = "10px sans-serif"
        ctx.fillText(qsTr("peak %1 tok/s").arg(peak.toFixed(0)), 4, 11)
    }
}
