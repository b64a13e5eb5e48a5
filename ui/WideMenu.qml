// A menu as wide as its widest item, so no entry is cut at a larger zoom.
import QtQuick
import QtQuick.Controls

Menu {
    width: {
        let widest = 240
        for (let i = 0; i < count; ++i)
            if (itemAt(i))
                widest = Math.max(widest, itemAt(i).implicitWidth)
        return widest
    }
}
