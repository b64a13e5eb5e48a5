// Where servers' API keys are kept: the system keyring when it takes them, else a file only the user
// can read. The keyring cases run on a private session bus (keyring-session.sh) and skip elsewhere.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "settings/api_key_store.h"
#include "settings/system_keyring.h"

namespace {

const QUrl kServer("http://127.0.0.1:8000/v1");

QByteArray contents(const QString& path) {
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

class TestApiKeyStore : public QObject {
    Q_OBJECT

    // Why a keyring case cannot run here; empty when it can.
    static QString missingKeyring(const QString& mode) {
        if (!system_keyring::built_in()) return "this build has no QtKeychain (Debian: qtkeychain-qt6-dev)";
        if (qEnvironmentVariable("LLAMADESK_TEST_KEYRING") == mode) return QString();
        return QStringLiteral("needs a private %1 keyring: run through keyring-session.sh %1 (dbus-run-session and "
                              "gnome-keyring-daemon)").arg(mode);
    }

private slots:
    void theFileKeepsKeysWhenTheKeyringIsOff() {
        qputenv("LLAMADESK_KEYRING", "off");
        QTemporaryDir dir;
        ApiKeyStore keys(dir.filePath("keys/api-keys.json"));
        QVERIFY(keys.setKey(kServer, "sk-one").isEmpty());
        QVERIFY(keys.setKey(QUrl("http://127.0.0.1:8001/v1"), "sk-two").isEmpty());
        QCOMPARE(QFile::permissions(keys.file()) & ~(QFile::ReadUser | QFile::WriteUser | QFile::ReadOwner |
                                                     QFile::WriteOwner),
                 QFile::Permissions());
        // One key per origin: the path does not matter, the port does.
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(QUrl("http://127.0.0.1:8000/other")), QStringLiteral("sk-one"));
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(QUrl("http://127.0.0.1:8001/v1")), QStringLiteral("sk-two"));
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(QUrl("http://localhost:8000/v1")), QString());
        QVERIFY2(keys.whereKept().contains(keys.file()), qPrintable(keys.whereKept()));
        QVERIFY(keys.setKey(kServer, QString()).isEmpty());
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(kServer), QString());
        QVERIFY(!contents(keys.file()).contains("sk-one"));
        qunsetenv("LLAMADESK_KEYRING");
    }

    void theKeyringTakesTheKeyAndTheFileHoldsNone() {
        if (const QString why = missingKeyring("unlocked"); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        ApiKeyStore keys(dir.filePath("api-keys.json"));
        QVERIFY2(keys.whereKept().contains("when it answers"), qPrintable(keys.whereKept()));
        // An older key that once went to the file (the keyring refused it then) must not survive.
        QFile old(keys.file());
        QVERIFY(old.open(QIODevice::WriteOnly));
        old.write("{\"http://127.0.0.1:8000\": \"sk-old\"}");
        old.close();

        QCOMPARE(keys.setKey(kServer, "sk-secret"), QString());
        QCOMPARE(keys.whereKept(), QStringLiteral("the system keyring"));
        QVERIFY(!contents(keys.file()).contains("sk-"));
        ApiKeyStore after_restart(keys.file());
        QCOMPARE(after_restart.keyFor(kServer), QStringLiteral("sk-secret"));
        QCOMPARE(after_restart.whereKept(), QStringLiteral("the system keyring"));
        QCOMPARE(system_keyring::read("http://127.0.0.1:8000").value, QStringLiteral("sk-secret"));

        QCOMPARE(keys.setKey(kServer, QString()), QString());
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(kServer), QString());
        const system_keyring::Answer gone = system_keyring::read("http://127.0.0.1:8000");
        QVERIFY(!gone.ok && gone.error.isEmpty());  // answered: no such entry
    }

    void aRefusingKeyringLeavesTheKeyInTheFileAndSaysWhy() {
        if (const QString why = missingKeyring("refusing"); !why.isEmpty()) QSKIP(qPrintable(why));
        QTemporaryDir dir;
        ApiKeyStore keys(dir.filePath("api-keys.json"));
        QCOMPARE(keys.setKey(kServer, "sk-secret"), QString());
        QVERIFY2(keys.whereKept().contains(keys.file()) && keys.whereKept().contains("keyring refused:"),
                 qPrintable(keys.whereKept()));
        QVERIFY(contents(keys.file()).contains("sk-secret"));
        QCOMPARE(ApiKeyStore(keys.file()).keyFor(kServer), QStringLiteral("sk-secret"));
    }
};

QTEST_GUILESS_MAIN(TestApiKeyStore)
#include "test_api_key_store.moc"
