// Conversations on disk: a round trip, a restart that restores the engine's conversation, and
// saves killed at random moments (a child process saving in a loop) that never leave a torn file.
#include <cstdio>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QtTest>

#include "app_fixture.h"
#include "conversation_store.h"
#include "startup.h"
#include "test_support.h"

namespace {

Conversation sample(int version, int n_messages) {
    Conversation c;
    c.id = "0b9a4c6e-persist";
    c.title = QString("version %1").arg(version);
    c.created = QDateTime::fromMSecsSinceEpoch(1700000000000, Qt::UTC);
    for (int i = 0; i < n_messages; ++i) {
        const auto role = i % 2 == 0 ? Message::Role::User : Message::Role::Assistant;
        c.messages.append({role, QString("message %1 of version %2: \"quotes\", ünïcødé 🦙, ```code```\n")
                                     .arg(i).arg(version).repeated(8), false, i % 2 ? "eos" : ""});
    }
    return c;
}

// The child: saves ever newer versions of one conversation until it is killed.
int save_loop(const QString& dir) {
    const ConversationStore store(dir);
    for (int version = 1;; ++version) {
        store.save(sample(version, 400));
        if (version == 1) {  // tells the parent that saves are under way
            std::fputs("saving\n", stdout);
            std::fflush(stdout);
        }
    }
}

}  // namespace

class PersistenceTest : public QObject {
    Q_OBJECT
private slots:
    void roundTrip() {
        QTemporaryDir dir;
        const ConversationStore store(dir.path());
        Conversation c = sample(7, 5);
        Message streaming{Message::Role::Assistant, "half an ans", true, {}};
        c.messages.append(streaming);
        QVERIFY(store.save(c));
        QStringList errors;
        const QList<Conversation> loaded = store.loadAll(&errors);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join('\n')));
        QCOMPARE(loaded.size(), 1);
        const Conversation& back = loaded.first();
        QCOMPARE(back.id, c.id);
        QCOMPARE(back.title, c.title);
        QCOMPARE(back.created, c.created);
        QCOMPARE(back.messages.size(), 5);  // the streaming answer is not saved
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(back.messages[i].role, c.messages[i].role);
            QCOMPARE(back.messages[i].text, c.messages[i].text);
            QCOMPARE(back.messages[i].stop_reason, c.messages[i].stop_reason);
        }
        QVERIFY(store.remove(c.id));
        QVERIFY(store.loadAll().isEmpty());
    }

    void unreadableFileIsReportedNotFatal() {
        QTemporaryDir dir;
        const ConversationStore store(dir.path());
        QVERIFY(store.save(sample(1, 2)));
        QDir().mkpath(dir.path() + "/conversations");
        QFile junk(dir.path() + "/conversations/junk.json");
        QVERIFY(junk.open(QIODevice::WriteOnly));
        junk.write("{\"version\": 1, \"id\": ");
        junk.close();
        QStringList errors;
        QCOMPARE(store.loadAll(&errors).size(), 1);
        QCOMPARE(errors.size(), 1);
        QVERIFY(errors.first().contains("junk.json"));
    }

    void killedSaveLeavesPreviousFileReadable() {
        QTemporaryDir dir;
        const ConversationStore store(dir.path());
        QVERIFY(store.save(sample(0, 400)));
        const QByteArray one_save = ConversationStore::toJson(sample(0, 400));
        int newer_seen = 0;
        for (int round = 0; round < 20; ++round) {
            QProcess child;
            child.start(QCoreApplication::applicationFilePath(), {"--save-loop", dir.path()});
            QVERIFY(child.waitForStarted());
            // kill at a random moment once saves are under way (start-up time varies with load)
            QVERIFY(child.waitForReadyRead(30000));
            QTest::qWait(int(QRandomGenerator::global()->bounded(0, 40)));
            child.kill();  // SIGKILL: no cleanup of any kind
            QVERIFY(child.waitForFinished());

            QFile file(store.pathOf(sample(0, 1).id));
            QVERIFY(file.open(QIODevice::ReadOnly));
            QString error;
            const std::optional<Conversation> c = ConversationStore::fromJson(file.readAll(), &error);
            QVERIFY2(c, qPrintable(QString("round %1: %2").arg(round).arg(error)));
            QCOMPARE(c->messages.size(), 400);
            newer_seen += c->title != "version 0" ? 1 : 0;
        }
        qInfo("20 kills during saves of %lld bytes; a newer version was on disk after %d of them",
              qlonglong(one_save.size()), newer_seen);
        QVERIFY(newer_seen > 0);  // the child really was saving when killed
        QCOMPARE(store.loadAll().size(), 1);  // leftovers of killed saves are not conversations
    }

    // --model, else the last model used (if it still exists), else $LLAMADESK_MODEL, else the
    // reference model beside the source tree, else nothing (the welcome screen).
    void startupModelOrder() {
        QTemporaryDir dir;
        AppSettings settings(dir.path() + "/s.ini");
        const QString last = dir.path() + "/last.gguf";
        QFile(last).open(QIODevice::WriteOnly);
        qunsetenv("LLAMADESK_MODEL");
        const QString bundled = startup_model({}, settings);  // the source tree's ../shared, or ""
        QCOMPARE(bundled.isEmpty(), !QFileInfo::exists(LLAMADESK_TEST_SOURCE_DIR "/../shared/models/stories260K"));

        qputenv("LLAMADESK_MODEL", "/from/env.gguf");
        QCOMPARE(startup_model({}, settings), QString("/from/env.gguf"));
        settings.rememberModel(dir.path() + "/gone.gguf", {});  // no longer on disk: skipped
        QCOMPARE(startup_model({}, settings), QString("/from/env.gguf"));
        settings.rememberModel(last, {});
        QCOMPARE(startup_model({}, settings), last);
        QCOMPARE(startup_model(parse_startup_options({"llamadesk", "--model", "/cli.bin"}), settings),
                 QString("/cli.bin"));
        qunsetenv("LLAMADESK_MODEL");
        QCOMPARE(settings.recentCheckpoints(), QStringList({last, dir.path() + "/gone.gguf"}));
    }

    // After a restart the conversation comes back, and its first follow-up rebuilds the cache
    // from the restored turns (prefill covers the whole history, not only the new message).
    void restartRestoresTheConversation() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K");
        QTemporaryDir dir;
        QString id;
        QString first_answer;
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QVERIFY(f.load(model));
            f.app->chat()->settings()->setMaxNewTokens(24);
            const AppFixture::Finished* done = f.sendAndWait("Tell me a story.");
            QVERIFY(done && done->result.status.ok());
            id = f.app->chat()->currentId();
            first_answer = QString::fromStdString(done->result.text);
        }
        AppFixture f(dir.path());
        f.app->start(QString());
        QCOMPARE(f.app->chat()->currentId(), id);
        QCOMPARE(f.app->chat()->messages()->rowCount(), 2);
        QCOMPARE(f.app->chat()->messages()->index(1).data(MessageListModel::TextRole).toString(), first_answer);
        QVERIFY(f.load(model));
        const AppFixture::Finished* done = f.sendAndWait("And then?");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        QCOMPARE(done->n_turns, 2);
        QVERIFY(done->result.stats.prefilled_tokens > done->result.stats.prompt_tokens);
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && QByteArray(argv[1]) == "--save-loop")
        return save_loop(QString::fromLocal8Bit(argv[2]));
    QGuiApplication application(argc, argv);
    PersistenceTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_app_persistence.moc"
