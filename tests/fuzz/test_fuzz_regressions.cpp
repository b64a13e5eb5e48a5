// Replays every file in tests/fuzz/regressions/<target>/ (inputs that once crashed a reader, kept
// after the fix) and a seed corpus of the project's own writers through the fuzz targets. In the
// sanitizer run of installer/test.sh this is the fuzzers' regression suite; the long campaign is
// tests/fuzz/run.sh.
#include <QDir>
#include <QDirIterator>
#include <QFile>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "fuzz_targets.h"

using namespace llamadesk::fuzz;

class TestFuzzRegressions : public QObject {
    Q_OBJECT

    void replay(const QString& root) {
        int files = 0;
        for (const FuzzTarget& t : fuzz_targets()) {
            QDirIterator it(root + "/" + t.name, QDir::Files);
            while (it.hasNext()) {
                QFile f(it.next());
                QVERIFY(f.open(QIODevice::ReadOnly));
                const QByteArray bytes = f.readAll();
                t.run(reinterpret_cast<const uint8_t*>(bytes.constData()), size_t(bytes.size()));
                ++files;
            }
        }
        qInfo("%d files replayed from %s", files, qPrintable(root));
    }

private slots:
    void regressions() { replay(QStringLiteral(LLAMADESK_FUZZ_REGRESSIONS)); }

    void seeds() {
        QTemporaryDir dir;
        QProcess seeds;
        seeds.start(QStringLiteral(LLAMADESK_FUZZ_MAKE_SEEDS), {dir.path()});
        QVERIFY(seeds.waitForFinished(60000));
        QCOMPARE(seeds.exitCode(), 0);
        replay(dir.path());
    }
};

QTEST_GUILESS_MAIN(TestFuzzRegressions)
#include "test_fuzz_regressions.moc"
