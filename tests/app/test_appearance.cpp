// The theme and the zoom: chosen, remembered across a restart (a new Appearance on the same
// settings), "follow the system" following the desktop's palette, and zoom steps within bounds.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "scene_graph.h"
#include "settings/appearance.h"

class TestAppearance : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<QSettings> settings_;

private slots:
    void init() {
        settings_ = std::make_unique<QSettings>(dir_.filePath("settings.ini"), QSettings::IniFormat);
        settings_->clear();
    }

    void followsTheSystemUntilAThemeIsChosen() {
        Appearance a(settings_.get());
        QCOMPARE(a.theme(), Appearance::ThemeChoice::System);
        QSignalSpy changed(&a, &Appearance::changed);
        a.setSystemDark(true);
        QVERIFY(a.dark());
        a.setSystemDark(false);
        QVERIFY(!a.dark());
        QCOMPARE(changed.size(), 2);
        a.setTheme(Appearance::ThemeChoice::Dark);
        QVERIFY(a.dark());
        a.setSystemDark(true);
        a.setTheme(Appearance::ThemeChoice::Light);
        QVERIFY(!a.dark());  // the choice wins over the desktop
    }

    void theThemeIsRemembered() {
        Appearance(settings_.get()).setTheme(Appearance::ThemeChoice::Dark);
        Appearance again(settings_.get());
        QCOMPARE(again.theme(), Appearance::ThemeChoice::Dark);
        settings_->setValue("appearance/theme", "Purple");  // a hand-edited file
        QCOMPARE(again.theme(), Appearance::ThemeChoice::System);
    }

    void zoomStepsStayInBoundsAndAreRemembered() {
        Appearance a(settings_.get());
        QCOMPARE(a.zoom(), 1.0);
        a.zoomIn();
        QCOMPARE(a.zoom(), 1.1);
        a.zoomIn();
        QCOMPARE(a.zoom(), 1.25);
        QCOMPARE(Appearance(settings_.get()).zoom(), 1.25);
        for (int i = 0; i < 20; ++i)
            a.zoomIn();
        QCOMPARE(a.zoom(), 2.0);
        QVERIFY(!a.canZoomIn());
        for (int i = 0; i < 20; ++i)
            a.zoomOut();
        QCOMPARE(a.zoom(), 0.67);
        QVERIFY(!a.canZoomOut());
        a.resetZoom();
        QCOMPARE(a.zoom(), 1.0);
        settings_->setValue("appearance/zoom", 1.3);  // between steps: the nearest
        QCOMPARE(a.zoom(), 1.25);
    }

    // Mesa's software rasterizers, by what they report, draw with Qt Quick's software renderer;
    // a GPU's driver does not.
    void softwareOpenGlIsKnownByItsName() {
        for (const char* software : {"llvmpipe (LLVM 15.0.6, 256 bits)", "softpipe", "Software Rasterizer",
                                     "Mesa DRI swrast"})
            QVERIFY2(is_software_opengl(software), software);
        for (const char* gpu : {"Mesa Intel(R) UHD Graphics 620 (KBL GT2)", "NVIDIA GeForce RTX 4090/PCIe/SSE2",
                                "AMD Radeon RX 7800 XT (radeonsi, navi32, LLVM 15.0.7, DRM 3.54)", ""})
            QVERIFY2(!is_software_opengl(gpu), gpu);
    }
};

QTEST_MAIN(TestAppearance)
#include "test_appearance.moc"
