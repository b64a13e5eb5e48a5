// One window per profile, with the real program: a second LlamaDesk on the same data folder brings
// the first to the front and ends without writing anything; when the owner does not answer, it says
// that LlamaDesk is already open, and still writes nothing.
#include <QCryptographicHash>
#include <QDirIterator>
#include <QLockFile>
#include <QProcess>
#include <QtTest>

#include "conversations/conversation_store.h"

namespace {

// Every file of the profile with a digest of its content and its modification time.
QMap<QString, QByteArray> snapshot(const QString& dir) {
    QMap<QString, QByteArray> out;
    QDirIterator it(dir, QDir::Files | QDir::Hidden, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        if (path.endsWith(".lock") || !file.open(QIODevice::ReadOnly))
            continue;
        out.insert(path, QCryptographicHash::hash(file.readAll(), QCryptographicHash::Sha1).toHex() + " " +
                             QByteArray::number(QFileInfo(path).lastModified().toMSecsSinceEpoch()));
    }
    return out;
}

}  // namespace

class SingleInstanceTest : public QObject {
    Q_OBJECT
    QTemporaryDir home_;

    QString dataDir() const { return home_.path() + "/data/LlamaDesk/LlamaDesk"; }

    QProcess* start(QObject* owner) {
        auto* process = new QProcess(owner);
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("XDG_DATA_HOME", home_.path() + "/data");
        env.insert("XDG_CONFIG_HOME", home_.path() + "/config");
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.remove("LLAMADESK_MODEL");
        process->setProcessEnvironment(env);
        process->start(LLAMADESK_APP_BINARY, {});
        return process;
    }

    static bool waitForError(QProcess* process, const QString& text, int timeout_ms) {
        QElapsedTimer clock;
        clock.start();
        QByteArray seen;
        while (clock.elapsed() < timeout_ms) {
            QTest::qWait(50);
            seen += process->readAllStandardError();
            if (seen.contains(text.toUtf8()))
                return true;
            if (process->state() == QProcess::NotRunning)
                break;
        }
        qWarning("stderr so far: %s", seen.constData());
        return false;
    }

private slots:
    void initTestCase() {
        QVERIFY(home_.isValid());
        // A saved conversation, so there is something a second window could overwrite.
        ConversationRecord c;
        c.id = "00000000-single-instance";
        c.title = "kept";
        c.created = QDateTime::currentDateTimeUtc();
        c.messages.append({Message::Role::User, "hello", false, {}, false});
        QVERIFY(ConversationStore(dataDir()).save(c));
    }

    void secondStartShowsTheFirstAndWritesNothing() {
        QObject owner;
        QProcess* first = start(&owner);
        QVERIFY(first->waitForStarted());
        QTRY_VERIFY_WITH_TIMEOUT(QFile::exists(dataDir() + "/llamadesk.lock"), 30000);
        const QMap<QString, QByteArray> before = snapshot(dataDir());

        QProcess* second = start(&owner);
        QVERIFY(second->waitForFinished(30000));
        QCOMPARE(second->exitCode(), 0);
        const QString said = QString::fromUtf8(second->readAllStandardError());
        QVERIFY2(said.contains("already open") && said.contains("brought to the front"), qPrintable(said));
        QVERIFY(waitForError(first, "showing this window", 10000));
        QCOMPARE(snapshot(dataDir()), before);

        first->kill();
        QVERIFY(first->waitForFinished());
    }

    void ownerThatDoesNotAnswerIsNamed() {
        QLockFile held(dataDir() + "/llamadesk.lock");  // this process, alive, with no window
        QVERIFY(held.tryLock());
        const QMap<QString, QByteArray> before = snapshot(dataDir());
        QObject owner;
        QProcess* second = start(&owner);
        QVERIFY(second->waitForStarted());
        QVERIFY(waitForError(second, "Close it before starting another", 30000));
        QVERIFY2(second->state() == QProcess::Running, "it shows the message in a window");
        second->kill();
        QVERIFY(second->waitForFinished());
        QCOMPARE(snapshot(dataDir()), before);
    }
};

QTEST_GUILESS_MAIN(SingleInstanceTest)
#include "test_single_instance.moc"
