#include "settings/appearance.h"

#include <QEvent>
#include <QGuiApplication>
#include <QMetaEnum>
#include <QPalette>
#include <algorithm>
#include <cmath>
#include <iterator>

namespace {

// A browser's steps: small near 100 %, larger further out.
constexpr double kZoomSteps[] = {0.67, 0.75, 0.8, 0.9, 1.0, 1.1, 1.25, 1.5, 1.75, 2.0};
constexpr int kNormalStep = 4;
constexpr int kLastStep = int(std::size(kZoomSteps)) - 1;

const QString kThemeKey = QStringLiteral("appearance/theme");
const QString kZoomKey = QStringLiteral("appearance/zoom");

// Without a GUI application (tools, GUI-less tests) there is no desktop palette: light.
bool palette_is_dark() {
    return qobject_cast<QGuiApplication*>(QCoreApplication::instance()) &&
           QGuiApplication::palette().color(QPalette::Window).lightness() < 128;
}

}  // namespace

Appearance::Appearance(QSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings), system_dark_(palette_is_dark()) {
    if (QCoreApplication::instance())
        QCoreApplication::instance()->installEventFilter(this);
}

bool Appearance::eventFilter(QObject* watched, QEvent* event) {
    if (watched == QCoreApplication::instance() && event->type() == QEvent::ApplicationPaletteChange)
        setSystemDark(palette_is_dark());
    return false;
}

Appearance::ThemeChoice Appearance::theme() const {
    const QMetaEnum e = QMetaEnum::fromType<ThemeChoice>();
    bool ok = false;
    const int v = e.keyToValue(settings_->value(kThemeKey).toString().toLatin1().constData(), &ok);
    return ok ? ThemeChoice(v) : ThemeChoice::System;
}

void Appearance::setTheme(ThemeChoice theme) {
    if (theme == this->theme())
        return;
    settings_->setValue(kThemeKey, QString::fromLatin1(QMetaEnum::fromType<ThemeChoice>().valueToKey(int(theme))));
    emit changed();
}

bool Appearance::dark() const {
    switch (theme()) {
    case ThemeChoice::Light: return false;
    case ThemeChoice::Dark: return true;
    case ThemeChoice::System: break;
    }
    return system_dark_;
}

void Appearance::setSystemDark(bool dark) {
    if (dark == system_dark_)
        return;
    system_dark_ = dark;
    emit changed();
}

int Appearance::zoomStep() const {
    const double saved = settings_->value(kZoomKey, 1.0).toDouble();
    const auto nearest = std::min_element(std::begin(kZoomSteps), std::end(kZoomSteps),
                                          [saved](double a, double b) { return std::abs(a - saved) < std::abs(b - saved); });
    return int(nearest - std::begin(kZoomSteps));
}

void Appearance::setZoomStep(int step) {
    step = std::clamp(step, 0, kLastStep);
    if (step == zoomStep())
        return;
    settings_->setValue(kZoomKey, kZoomSteps[step]);
    emit changed();
}

double Appearance::zoom() const { return kZoomSteps[zoomStep()]; }
bool Appearance::canZoomIn() const { return zoomStep() < kLastStep; }
bool Appearance::canZoomOut() const { return zoomStep() > 0; }
void Appearance::zoomIn() { setZoomStep(zoomStep() + 1); }
void Appearance::zoomOut() { setZoomStep(zoomStep() - 1); }
void Appearance::resetZoom() { setZoomStep(kNormalStep); }
