// AppSettings that outlive a restart: the folder the open dialogs start in, the window's geometry
// and the KV cache type, read back by a second AppSettings on the same file as the next start
// would; and the cache type reaching the engine at the next load.
#include <QDir>
#include <QTemporaryDir>
#include <QtTest>

#include "app_fixture.h"
#include "settings/app_settings.h"
#include "synthetic/synthetic_model.h"

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

    void kvCacheTypeIsRemembered() {
        QTemporaryDir dir;
        const QString file = dir.filePath("settings.ini");
        {
            AppSettings s(file);
            QCOMPARE(s.kvCacheType(), QString("f16"));
            QCOMPARE(AppSettings::kvCacheTypes(), QStringList({"f16", "f32", "q8_0"}));
            s.setKvCacheType("q8_0");
            s.setKvCacheType("q4_0");  // not a cache type: ignored
        }
        QCOMPARE(AppSettings(file).kvCacheType(), QString("q8_0"));
        QCOMPARE(AppSettings(file).kvCache(), llamadesk::KvCacheType::Q8_0);
        QSettings(file, QSettings::IniFormat).setValue("app/kvCacheType", "q9");  // edited by hand
        QCOMPARE(AppSettings(file).kvCache(), llamadesk::KvCacheType::F16);
    }

    // The chosen type applies at the next load; a model whose heads q8_0 cannot hold is refused
    // with the reason, and the model that was loaded stays.
    void kvCacheTypeAppliesAtLoad() {
        QTemporaryDir dir;
        auto write = [&](const QString& name, int n_heads, int head_dim) {
            llamadesk::ModelConfig c;
            c.n_heads = c.n_kv_heads = n_heads;
            c.dim = n_heads * head_dim;
            c.hidden_dim = 2 * c.dim;
            c.n_layers = 1;
            c.vocab_size = 320;
            c.seq_len = 128;
            const QString path = dir.filePath(name);
            llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(c, llamadesk::DType::F32, 5), path.toStdString());
            return path;
        };
        const QString wide = write("head32.gguf", 2, 32), narrow = write("head8.gguf", 2, 8);
        AppFixture f(dir.path());
        f.app->start(QString());
        f.app->settings()->setKvCacheType("q8_0");
        QVERIFY(f.load(wide));
        QVERIFY(f.sendAndWait("hello"));
        QVERIFY(wait_until([&] { return f.app->inspector()->dtype() == "q8_0"; }, 5000));
        QVERIFY(f.load(narrow));
        QVERIFY2(f.app->errorMessage().contains("head_dim"), qPrintable(f.app->errorMessage()));
        QCOMPARE(f.app->model()->path(), wide);
    }
};

QTEST_GUILESS_MAIN(SettingsTest)
#include "test_app_settings.moc"
