// AppSettings that outlive a restart: the folder the open dialogs start in and the window's
// geometry, read back by a second AppSettings on the same file as the next start would.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "app_settings.h"

class SettingsTest : public QObject {
    Q_OBJECT
private slots:
    void initTestCase() { QStandardPaths::setTestModeEnabled(true); }

    void lastFolderStartsAtHome() {
        QTemporaryDir dir;
        const AppSettings settings(dir.path() + "/s.ini");
        QCOMPARE(settings.lastFolder(), QUrl::fromLocalFile(QDir::homePath()));
    }

    void lastFolderIsRemembered() {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("models/tiny"));
        const QString models = dir.path() + "/models";
        {
            AppSettings settings(dir.path() + "/s.ini");
            QSignalSpy changed(&settings, &AppSettings::changed);
            settings.rememberFolderOf(QUrl::fromLocalFile(models + "/tiny.gguf").toString());
            QCOMPARE(changed.count(), 1);
            QCOMPARE(settings.lastFolder(), QUrl::fromLocalFile(models));
        }
        AppSettings restarted(dir.path() + "/s.ini");
        QCOMPARE(restarted.lastFolder(), QUrl::fromLocalFile(models));

        // A typed folder, with a trailing slash: shown next time among its siblings.
        restarted.rememberFolderOf(models + "/tiny/");
        QCOMPARE(restarted.lastFolder(), QUrl::fromLocalFile(models));
    }

    void removedFolderFallsBackToHome() {
        QTemporaryDir dir;
        QVERIFY(QDir(dir.path()).mkpath("gone"));
        AppSettings settings(dir.path() + "/s.ini");
        settings.rememberFolderOf(dir.path() + "/gone/model.bin");
        QCOMPARE(settings.lastFolder(), QUrl::fromLocalFile(dir.path() + "/gone"));
        QVERIFY(QDir(dir.path() + "/gone").removeRecursively());
        QCOMPARE(settings.lastFolder(), QUrl::fromLocalFile(QDir::homePath()));
    }

    void windowGeometryIsRemembered() {
        QTemporaryDir dir;
        {
            AppSettings settings(dir.path() + "/s.ini");
            QVERIFY(settings.windowGeometry().isNull());  // first start: the window picks its size
            settings.setWindowGeometry(QRect(-1200, 40, 1100, 700));  // left of the primary screen
        }
        const AppSettings restarted(dir.path() + "/s.ini");
        QCOMPARE(restarted.windowGeometry(), QRect(-1200, 40, 1100, 700));
    }
};

QTEST_GUILESS_MAIN(SettingsTest)
#include "test_app_settings.moc"
