// How the window looks, remembered with QSettings: the theme (follow the system, light or dark) and
// the zoom of its text. Qt 6.4 has no colour-scheme hint, so "follow the system" reads the
// desktop's palette: a dark window colour means a dark desktop, and a palette change is followed.
#pragma once

#include <QObject>
#include <QSettings>
#include <QtQml/qqmlregistration.h>

class Appearance : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(ThemeChoice theme READ theme WRITE setTheme NOTIFY changed)
    Q_PROPERTY(bool dark READ dark NOTIFY changed)
    Q_PROPERTY(double zoom READ zoom NOTIFY changed)
    Q_PROPERTY(bool canZoomIn READ canZoomIn NOTIFY changed)
    Q_PROPERTY(bool canZoomOut READ canZoomOut NOTIFY changed)
public:
    enum class ThemeChoice { System, Light, Dark };
    Q_ENUM(ThemeChoice)

    explicit Appearance(QSettings* settings, QObject* parent = nullptr);

    ThemeChoice theme() const;
    void setTheme(ThemeChoice theme);
    bool dark() const;
    double zoom() const;
    bool canZoomIn() const;
    bool canZoomOut() const;
    Q_INVOKABLE void zoomIn();
    Q_INVOKABLE void zoomOut();
    Q_INVOKABLE void resetZoom();

    // What the desktop says; read from the palette, set directly by tests.
    void setSystemDark(bool dark);

signals:
    void changed();

protected:
    bool eventFilter(QObject* watched, QEvent* event) override;

private:
    int zoomStep() const;
    void setZoomStep(int step);

    QSettings* settings_;
    bool system_dark_ = false;
};
