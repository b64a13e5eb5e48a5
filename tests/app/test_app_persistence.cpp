// Conversations on disk: a round trip, a restart that restores the engine's conversation, saves
// killed at random moments (a child process saving in a loop) that never leave a torn file, and
// saves retried while the data folder is read-only (a real tmpfs, remounted).
#include <cstdio>

#include <QDir>
#include <QFileInfo>
#include <QProcess>
#include <QRandomGenerator>
#include <QThread>
#include <QtTest>

#include "app_fixture.h"
#include "conversations/conversation_saver.h"
#include "conversations/conversation_store.h"
#include "llamadesk/builtin_model.h"
#include "startup.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

namespace {

ConversationRecord sample(int version, int n_messages) {
    ConversationRecord c;
    c.id = "0b9a4c6e-persist";
    c.title = QString("version %1").arg(version);
    c.created = QDateTime::fromMSecsSinceEpoch(1700000000000, Qt::UTC);
    for (int i = 0; i < n_messages; ++i) {
        const auto role = i % 2 == 0 ? Message::Role::User : Message::Role::Assistant;
        c.messages.append({role, QString("message %1 of version %2: \"quotes\", ünïcødé 🦙, ```code```\n")
                                     .arg(i).arg(version).repeated(8), false, i % 2 ? AnswerEnd::Eos : AnswerEnd::None});
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

// Random weights in the 15M shape: slow enough on a CPU (hundreds of tokens/s) that an answer
// streams for seconds, and one that practically never ends early.
QString long_answer_model(const QTemporaryDir& dir) {
    const QString path = dir.filePath("synthetic-15M.gguf");
    llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("15M"),
                                                               llamadesk::DType::F32, 7),
                          path.toStdString());
    return path;
}

// The child: answers one question at length and, once its answer has been saved mid-stream with
// some text, says so and stops its GUI thread, so the file stays as it was mid-answer until the
// parent kills it.
int stream_until_saved(const QString& root, const QString& model) {
    AppFixture f(root);
    f.app->start(QString());
    if (!f.load(model))
        return 1;
    f.app->conversations()->settings()->setMaxNewTokens(4000);
    const QString path = root + "/data/conversations/" + f.app->conversations()->currentId() + ".json";
    QTimer poll;
    QObject::connect(&poll, &QTimer::timeout, &f, [&] {
        QFile file(path);
        if (!file.open(QIODevice::ReadOnly))
            return;
        const std::optional<ConversationRecord> c = ConversationStore::fromJson(file.readAll());
        if (c && c->messages.size() == 2 && !c->messages[1].text.isEmpty()) {
            std::fputs(c->messages[1].stop_reason == AnswerEnd::Interrupted ? "saved\n" : "ended\n", stdout);
            std::fflush(stdout);
            QThread::sleep(3600);  // until killed
        }
    });
    poll.start(5);
    f.app->composer()->send("Once upon a time");
    return wait_until([] { return false; }, 120000) ? 0 : 1;
}

// What the child types before it is killed: a first part it leaves a second to be saved, then
// the rest key by key.
const QString kTypedFirst = QStringLiteral("Dear model, ");
const QString kTypedLast = QStringLiteral("the last words typed, ünïcødé 🦙, before the kill");

// The child: types kTypedFirst, waits for it to be saved, types kTypedLast a character at a time,
// says so, and stops its GUI thread at once, as a kill 0 s after the last key would find it.
int type_then_stop(const QString& root) {
    AppFixture f(root);
    f.app->start(QString());
    f.app->conversations()->newConversation();
    f.app->composer()->setDraft(kTypedFirst);
    wait_until([] { return false; }, 1500);  // the draft's deferred save
    QString text = kTypedFirst;
    for (const QChar ch : kTypedLast) {
        text += ch;
        f.app->composer()->setDraft(text);
    }
    std::fputs((f.app->conversations()->currentId() + "\n").toUtf8().constData(), stdout);
    std::fflush(stdout);
    QThread::sleep(3600);  // until killed
    return 1;
}

}  // namespace

class PersistenceTest : public QObject {
    Q_OBJECT
private slots:
    void roundTrip() {
        QTemporaryDir dir;
        const ConversationStore store(dir.path());
        ConversationRecord c = sample(7, 5);
        c.format = llamadesk::ChatFormat::Completion;
        c.draft = "words typed and not sent";
        c.model = "Llama-3.2-1B-Instruct-Q4_K_M";
        c.messages[0].forgotten = true;
        c.messages[1].time = QDateTime(QDate(2026, 12, 4), QTime(10, 11, 12, 345), Qt::UTC);
        Message streaming{Message::Role::Assistant, "half an ans", true, {}, false};
        c.messages.append(streaming);
        QVERIFY(store.save(c));
        QStringList errors;
        const QList<ConversationRecord> loaded = store.loadAll(&errors);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join('\n')));
        QCOMPARE(loaded.size(), 1);
        const ConversationRecord& back = loaded.first();
        QCOMPARE(back.id, c.id);
        QCOMPARE(back.title, c.title);
        QCOMPARE(back.created, c.created);
        QCOMPARE(back.format, llamadesk::ChatFormat::Completion);
        QCOMPARE(back.draft, c.draft);
        QCOMPARE(back.model, c.model);
        QCOMPARE(back.messages[1].time, c.messages[1].time);
        QVERIFY(!back.messages[2].time.isValid());  // none given: none read
        QCOMPARE(back.messages[0].forgotten, true);
        QCOMPARE(back.messages[1].forgotten, false);
        QCOMPARE(back.messages.size(), 6);
        for (int i = 0; i < 5; ++i) {
            QCOMPARE(back.messages[i].role, c.messages[i].role);
            QCOMPARE(back.messages[i].text, c.messages[i].text);
            QCOMPARE(back.messages[i].stop_reason, c.messages[i].stop_reason);
        }
        // The answer that was streaming comes back as interrupted, with what it had.
        QCOMPARE(back.messages[5].text, QString("half an ans"));
        QCOMPARE(back.messages[5].streaming, false);
        QCOMPARE(back.messages[5].stop_reason, AnswerEnd::Interrupted);
        QVERIFY(store.remove(c.id));
        QVERIFY(store.loadAll().isEmpty());
    }

    // Several unreadable files: each is named with its reason, in one message in the window, and
    // kept aside with its bytes, never over another kept file; the readable one loads.
    void everyUnreadableFileIsListedAndKeptAside() {
        QTemporaryDir dir;
        const QString conversations = dir.path() + "/data/conversations";
        const ConversationStore store(dir.path() + "/data");
        QVERIFY(store.save(sample(1, 2)));
        const QMap<QString, QByteArray> bad{{"junk.json", "{\"version\": 1, \"id\": "},
                                            {"empty.json", ""},
                                            {"newer.json", "{\"version\": 99, \"id\": \"x\"}"}};
        auto write = [](const QString& path, const QByteArray& bytes) {
            QFile f(path);
            return f.open(QIODevice::WriteOnly) && f.write(bytes) == bytes.size();
        };
        for (auto it = bad.cbegin(); it != bad.cend(); ++it)
            QVERIFY(write(conversations + "/" + it.key(), it.value()));
        QVERIFY(QDir().mkpath(store.unreadableDir()));
        QVERIFY(write(store.unreadableDir() + "/junk.json", "set aside earlier"));
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QCOMPARE(f.app->conversations()->model()->rowCount(), 1);
            const QString message = f.app->errorMessage();
            QVERIFY2(message.startsWith("3 saved conversations could not be read"), qPrintable(message));
            for (const QString& name : bad.keys())
                QVERIFY2(message.contains(name), qPrintable(name + " not in: " + message));
        }
        auto read = [](const QString& path) {
            QFile f(path);
            return f.open(QIODevice::ReadOnly) ? f.readAll() : QByteArray("(missing)");
        };
        QCOMPARE(read(store.unreadableDir() + "/junk.json"), QByteArray("set aside earlier"));
        QCOMPARE(read(store.unreadableDir() + "/junk-2.json"), bad["junk.json"]);
        QCOMPARE(read(store.unreadableDir() + "/empty.json"), bad["empty.json"]);
        QCOMPARE(read(store.unreadableDir() + "/newer.json"), bad["newer.json"]);
        QStringList errors;
        QCOMPARE(store.loadAll(&errors).size(), 1);
        QVERIFY2(errors.isEmpty(), qPrintable(errors.join("\n")));
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
            const std::optional<ConversationRecord> c = ConversationStore::fromJson(file.readAll(), &error);
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
    // built-in model ($LLAMADESK_BUILTIN_MODEL, or the one found beside the program).
    void startupModelOrder() {
        QTemporaryDir dir;
        AppSettings settings(dir.path() + "/s.ini");
        const QString last = dir.path() + "/last.gguf";
        QFile(last).open(QIODevice::WriteOnly);
        qunsetenv("LLAMADESK_MODEL");
        qputenv("LLAMADESK_BUILTIN_MODEL", "/built/in.gguf");
        QCOMPARE(startup_model({}, settings), QString("/built/in.gguf"));
        qunsetenv("LLAMADESK_BUILTIN_MODEL");
        QCOMPARE(startup_model({}, settings), QString::fromStdString(llamadesk::builtin_model_path()));

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
            f.app->conversations()->settings()->setMaxNewTokens(24);
            const AppFixture::Finished* done = f.sendAndWait("Tell me a story.");
            QVERIFY(done && done->result.status.ok());
            id = f.app->conversations()->currentId();
            first_answer = QString::fromStdString(done->result.text);
        }
        AppFixture f(dir.path());
        f.app->start(QString());
        QCOMPARE(f.app->conversations()->currentId(), id);
        QCOMPARE(f.app->conversations()->messages()->rowCount(), 2);
        QCOMPARE(f.app->conversations()->messages()->index(1).data(MessageListModel::TextRole).toString(), first_answer);
        QVERIFY(f.load(model));
        const AppFixture::Finished* done = f.sendAndWait("And then?");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        QCOMPARE(done->n_turns, 2);
        QVERIFY(done->result.stats.prefilled_tokens > done->result.stats.prompt_tokens);
    }
    // The conversation's cache goes to disk when it goes idle; after a restart its follow-up reads
    // the history's blocks back instead of prefilling them, and the figures and the inspector say
    // so. With the disk budget at 0 nothing is kept.
    void restartReadsTheCacheBackFromDisk() {
        QTemporaryDir dir;
        const QString model = dir.filePath("synthetic-260K.gguf");
        llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("260K"),
                                                                   llamadesk::DType::F32, 3),
                              model.toStdString());
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QVERIFY(f.load(model));
            f.app->conversations()->settings()->setMaxNewTokens(40);
            QVERIFY(f.sendAndWait("Tell me a story about the cache."));
            QVERIFY(f.sendAndWait("And what did the blocks do?"));
        }
        QVERIFY(!QDir(dir.filePath("data/kv-snapshots")).isEmpty());
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QVERIFY(f.load(model));
            const AppFixture::Finished* done = f.sendAndWait("And then?");
            QVERIFY(done && done->result.status.ok());
            const llamadesk::GenerationStats& s = done->result.stats;
            QVERIFY2(s.restored_tokens >= 64, qPrintable(QString::number(s.restored_tokens)));
            QVERIFY(s.prefilled_tokens < s.prompt_tokens + 16 + 2);  // the partial last block, the uncomputed tail
            QCOMPARE(f.app->figures()->restoredTokens(), s.restored_tokens);
            QVERIFY(wait_until([&] { return f.app->inspector()->restoredBlocks() * 16 == s.restored_tokens; }, 5000));
            f.app->settings()->setKvSnapshotMiB(0);
        }
        AppFixture f(dir.path());
        f.app->start(QString());
        QVERIFY(f.load(model));
        const AppFixture::Finished* done = f.sendAndWait("And then?");
        QVERIFY(done && done->result.status.ok());
        QCOMPARE(done->result.stats.restored_tokens, 0);
    }

    // kill -9 during an answer: after a restart the partial answer is there, marked interrupted,
    // and can be continued or retried.
    void killedDuringAnAnswerKeepsItAsInterrupted() {
        QTemporaryDir dir;
        const QString model = long_answer_model(dir);
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {"--stream-until-saved", dir.path(), model});
        QVERIFY(child.waitForStarted());
        QVERIFY2(child.waitForReadyRead(120000), "the child never saved a streaming answer");
        QCOMPARE(child.readLine().trimmed(), QByteArray("saved"));
        child.kill();
        QVERIFY(child.waitForFinished());

        AppFixture f(dir.path());
        f.app->start(QString());
        QCOMPARE(f.app->conversations()->messages()->rowCount(), 2);
        const QModelIndex answer = f.app->conversations()->messages()->index(1);
        const QString partial = answer.data(MessageListModel::TextRole).toString();
        QVERIFY(!partial.isEmpty());
        QCOMPARE(answer.data(MessageListModel::StopReasonRole).toInt(), int(AnswerEnd::Interrupted));
        QVERIFY(answer.data(MessageListModel::ContinuableRole).toBool());

        QVERIFY(f.load(model));
        f.app->conversations()->settings()->setMaxNewTokens(16);
        const qsizetype before = f.finished.size();
        f.app->generation()->continueAnswer();
        const AppFixture::Finished* continued = f.waitForAnswer(before);
        QVERIFY(continued);
        QVERIFY2(continued->result.status.ok(), continued->result.status.message.c_str());
        QCOMPARE(continued->n_turns, 1);
        const QString longer = f.app->conversations()->messages()->index(1).data(MessageListModel::TextRole).toString();
        QVERIFY2(longer.startsWith(partial) && longer.size() > partial.size(), qPrintable(longer));
        QVERIFY(f.app->conversations()->messages()->index(1).data(MessageListModel::StopReasonRole).toInt() != AnswerEnd::Interrupted);

        f.app->generation()->regenerate();  // Retry
        const AppFixture::Finished* retried = f.waitForAnswer(before + 1);
        QVERIFY(retried && retried->result.status.ok());
        QCOMPARE(f.app->conversations()->messages()->rowCount(), 2);
        QCOMPARE(f.app->conversations()->messages()->index(0).data(MessageListModel::TextRole).toString(), QString("Once upon a time"));
    }

    // Closing the window mid-answer stops the answer and saves what it had written.
    void closingDuringAnAnswerSavesIt() {
        QTemporaryDir dir;
        const QString model = long_answer_model(dir);
        QString id;
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QVERIFY(f.load(model));
            f.app->conversations()->settings()->setMaxNewTokens(4000);
            id = f.app->conversations()->currentId();
            QObject context;
            bool streaming = false;
            connect(f.app->worker(), &InferenceWorker::tokenGenerated, &context, [&] { streaming = true; });
            f.app->composer()->send("Once upon a time");
            QVERIFY(wait_until([&] { return streaming; }, 60000));
            QVERIFY(f.app->generation()->generating());
        }  // the window closes
        const QList<ConversationRecord> saved = ConversationStore(dir.path() + "/data").loadAll();
        QCOMPARE(saved.size(), 1);
        QCOMPARE(saved[0].id, id);
        QCOMPARE(saved[0].messages.size(), 2);
        QVERIFY(!saved[0].messages[1].text.isEmpty());
        QCOMPARE(saved[0].messages[1].stop_reason, AnswerEnd::Cancelled);
    }
    // What is typed and not sent survives a restart, with its conversation.
    void draftSurvivesARestart() {
        QTemporaryDir dir;
        QString id;
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            f.app->conversations()->newConversation();
            f.app->composer()->setDraft("half a thought");
            id = f.app->conversations()->currentId();
        }
        AppFixture f(dir.path());
        f.app->start(QString());
        QCOMPARE(f.app->conversations()->currentId(), id);
        QCOMPARE(f.app->composer()->draft(), QString("half a thought"));
    }

    // kill -9 right after the last key: every character typed is there after a restart (the
    // conversation file had only what was typed a second before), and is saved in its file.
    void draftTypedJustBeforeAKillSurvives() {
        QTemporaryDir dir;
        QProcess child;
        child.setProcessChannelMode(QProcess::ForwardedErrorChannel);
        child.start(QCoreApplication::applicationFilePath(), {"--type-then-stop", dir.path()});
        QVERIFY(child.waitForStarted());
        QVERIFY2(child.waitForReadyRead(60000), "the child never typed");
        const QString id = QString::fromUtf8(child.readLine().trimmed());
        child.kill();
        QVERIFY(child.waitForFinished());
        const ConversationRecord before = ConversationStore(dir.path() + "/data").loadAll().value(0);
        QCOMPARE(before.draft, kTypedFirst);  // the file alone would lose the last keys

        {
            AppFixture f(dir.path());
            f.app->start(QString());
            QCOMPARE(f.app->conversations()->currentId(), id);
            QCOMPARE(f.app->composer()->draft(), kTypedFirst + kTypedLast);
            QTRY_COMPARE_WITH_TIMEOUT(ConversationStore(dir.path() + "/data").loadAll().value(0).draft,
                                      kTypedFirst + kTypedLast, 10000);
        }
        AppFixture again(dir.path());  // and once more: the journal gave it to the file, no twice
        again.app->start(QString());
        QCOMPARE(again.app->composer()->draft(), kTypedFirst + kTypedLast);
    }

    // The data folder turns read-only while conversations change, then writable again: the saves
    // that failed are said once, retried, and end on disk in their newest version.
    void failedSavesAreRetried() {
        QTemporaryDir dir;
        llamadesk::test::ScratchMount mount(dir.path(), 8);
        if (!mount.mounted())
            QSKIP(llamadesk::test::kNoScratchMount);
        ConversationSaver saver(dir.path(), 50);
        QSignalSpy failed(&saver, &ConversationSaver::failed), recovered(&saver, &ConversationSaver::recovered);
        saver.save(sample(1, 2));
        QCOMPARE(failed.size(), 0);
        QVERIFY(mount.setReadOnly(true));
        saver.save(sample(2, 4));
        saver.save(sample(3, 6));
        QCOMPARE(failed.size(), 1);  // said once, not at every save
        const QString message = failed.first().first().toString();
        QVERIFY2(message.contains("0b9a4c6e-persist.json") && message.contains("Retrying"), qPrintable(message));
        QTest::qWait(300);  // several retries, all failing
        QCOMPARE(failed.size(), 1);
        QCOMPARE(recovered.size(), 0);
        QCOMPARE(ConversationStore(dir.path()).loadAll().first().title, QString("version 1"));
        QVERIFY(mount.setReadOnly(false));
        QVERIFY(QTest::qWaitFor([&] { return recovered.size() == 1; }, 5000));
        const QList<ConversationRecord> saved = ConversationStore(dir.path()).loadAll();
        QCOMPARE(saved.size(), 1);
        QCOMPARE(saved.first().title, QString("version 3"));
        QCOMPARE(saved.first().messages.size(), 6);
    }

    // The disk fills up: the save that does not fit fails without touching the saved file (never a
    // torn or empty one), is retried, and lands once there is room again.
    void aFullDiskKeepsTheSavedFile() {
        QTemporaryDir dir;
        llamadesk::test::ScratchMount mount(dir.path(), 8);
        if (!mount.mounted())
            QSKIP(llamadesk::test::kNoScratchMount);
        ConversationSaver saver(dir.path(), 50);
        QSignalSpy failed(&saver, &ConversationSaver::failed), recovered(&saver, &ConversationSaver::recovered);
        saver.save(sample(1, 2));
        const QString path = ConversationStore(dir.path()).pathOf(sample(1, 2).id);
        const qint64 saved_size = QFileInfo(path).size();
        QVERIFY(saved_size > 0);
        QFile filler(dir.path() + "/filler");
        QVERIFY(filler.open(QIODevice::WriteOnly));
        const QByteArray chunk(64 * 1024, 'f');
        while (filler.write(chunk) == chunk.size() && filler.flush()) {
        }
        filler.close();
        // A small save fits Qt's write buffer, so the disk refuses it only when the buffer is
        // written out; Qt 6.4's QSaveFile::commit() reported that as success, leaving 0 bytes.
        saver.save(sample(2, 3));
        QCOMPARE(failed.size(), 1);
        QCOMPARE(QFileInfo(path).size(), saved_size);
        saver.save(sample(2, 400));  // about 240 KB: more than is left
        QCOMPARE(QFileInfo(path).size(), saved_size);
        QCOMPARE(ConversationStore(dir.path()).loadAll().first().title, QString("version 1"));
        QVERIFY(QFile::remove(dir.path() + "/filler"));
        QVERIFY(QTest::qWaitFor([&] { return recovered.size() == 1; }, 5000));
        QCOMPARE(ConversationStore(dir.path()).loadAll().first().messages.size(), 400);
    }

    // The same through the window: its message says saving failed and is retried, goes away when
    // saving works again, and what was typed meanwhile is there after a restart.
    void theWindowSaysSavingFailedUntilItWorks() {
        QTemporaryDir dir;
        llamadesk::test::ScratchMount mount(dir.path(), 8);
        if (!mount.mounted())
            QSKIP(llamadesk::test::kNoScratchMount);
        QString id;
        {
            AppFixture f(dir.path());
            f.app->start(QString());
            f.app->conversations()->newConversation();
            f.app->composer()->setDraft("first words");
            id = f.app->conversations()->currentId();
            QVERIFY(QTest::qWaitFor([&] { return QFileInfo::exists(dir.path() + "/data/conversations/" + id + ".json"); }, 10000));
            QVERIFY(mount.setReadOnly(true));
            f.app->composer()->setDraft("words typed while the folder was read-only");
            QVERIFY(QTest::qWaitFor([&] { return f.app->errorMessage().contains("Retrying"); }, 10000));
            QVERIFY(mount.setReadOnly(false));
            QVERIFY2(QTest::qWaitFor([&] { return f.app->errorMessage().isEmpty(); }, 3 * ConversationSaver::kRetryMs),
                     qPrintable(f.app->errorMessage()));
        }
        AppFixture f(dir.path());
        f.app->start(QString());
        QCOMPARE(f.app->conversations()->currentId(), id);
        QCOMPARE(f.app->composer()->draft(), QString("words typed while the folder was read-only"));
    }

    // Closing while saves still fail: one last try, then the retries stop on their own thread (no
    // timer is left for another thread to kill).
    void closingWhileSavesFailStopsTheRetries() {
        QTemporaryDir dir;
        llamadesk::test::ScratchMount mount(dir.path(), 8);
        if (!mount.mounted())
            QSKIP(llamadesk::test::kNoScratchMount);
        QTest::failOnWarning(QRegularExpression("Timers cannot be stopped from another thread"));
        AppFixture f(dir.path());
        f.app->start(QString());
        f.app->conversations()->newConversation();
        QVERIFY(mount.setReadOnly(true));
        f.app->composer()->setDraft("typed while read-only");
        QVERIFY(QTest::qWaitFor([&] { return f.app->errorMessage().contains("Retrying"); }, 10000));
        f.app.reset();
        QVERIFY(mount.setReadOnly(false));
    }

    // A deleted conversation can be brought back for a few seconds; then its file is gone.
    void deleteIsUndoneOrCarriedOut() {
        QTemporaryDir dir;
        AppFixture f(dir.path());
        f.app->start(QString());
        f.app->composer()->setDraft("keep me");  // saved within a second, as the draft is
        const QString id = f.app->conversations()->currentId();
        const QString file = dir.path() + "/data/conversations/" + id + ".json";
        QTRY_VERIFY(QFile::exists(file));

        f.app->conversations()->deleteConversation(f.app->conversations()->currentIndex());
        QVERIFY(!f.app->conversations()->undoDeleteTitle().isEmpty());
        QCOMPARE(f.app->conversations()->model()->rowCount(), 1);  // a blank one stands in
        QVERIFY(f.app->conversations()->currentId() != id);
        f.app->conversations()->undoDelete();
        QCOMPARE(f.app->conversations()->model()->rowCount(), 1);  // and goes again
        QCOMPARE(f.app->conversations()->currentId(), id);
        QCOMPARE(f.app->composer()->draft(), QString("keep me"));

        f.app->conversations()->deleteConversation(f.app->conversations()->currentIndex());
        QTest::qWait(500);
        QVERIFY2(QFile::exists(file), "nothing is removed while it can be undone");
        QTRY_VERIFY_WITH_TIMEOUT(!QFile::exists(file), 10000);
        QVERIFY(f.app->conversations()->undoDeleteTitle().isEmpty());
    }
};

int main(int argc, char** argv) {
    if (argc == 3 && QByteArray(argv[1]) == "--save-loop")
        return save_loop(QString::fromLocal8Bit(argv[2]));
    if (argc == 3 && QByteArray(argv[1]) == "--type-then-stop") {
        QGuiApplication application(argc, argv);
        return type_then_stop(QString::fromLocal8Bit(argv[2]));
    }
    if (argc == 4 && QByteArray(argv[1]) == "--stream-until-saved") {
        QGuiApplication application(argc, argv);
        return stream_until_saved(QString::fromLocal8Bit(argv[2]), QString::fromLocal8Bit(argv[3]));
    }
    QGuiApplication application(argc, argv);
    PersistenceTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_app_persistence.moc"
