// The window's C++ side against the real engine on stories260K: signal order, Stop, occupancy
// of new and switched conversations, a failed load, and how long the GUI thread ever stalls.
#include <QElapsedTimer>
#include <QDir>
#include <QFile>
#include <QUrl>
#include <QTimer>
#include <QtTest>

#include "app_fixture.h"
#include "conversations/conversation_export.h"
#include "conversations/conversation_store.h"
#include "test_support.h"

using namespace llamadesk;

namespace {

// Nanoseconds this thread has spent runnable but waiting for a CPU (0 where not available).
qint64 run_queue_wait_ns() {
    QFile file("/proc/thread-self/schedstat");
    if (!file.open(QIODevice::ReadOnly))
        return 0;
    const QList<QByteArray> fields = file.readAll().simplified().split(' ');
    return fields.size() >= 2 ? fields[1].toLongLong() : 0;
}

}  // namespace

// Holds the first piece of one conversation's answer on the worker thread until open(), so a test
// can ask for more while that answer streams (the small model answers in milliseconds).
class AnswerGate {
public:
    explicit AnswerGate(InferenceWorker* worker) {
        QObject::connect(worker, &InferenceWorker::tokenGenerated, &context_,
                         [this](const QString& key) {
                             QElapsedTimer waited;
                             waited.start();
                             while (key == held_ && !open_ && waited.elapsed() < 10000)
                                 QThread::msleep(1);
                         },
                         Qt::DirectConnection);
    }
    // Call before the answer is asked for: the worker reads held_ only after that request.
    void hold(const QString& key) {
        open_ = false;
        held_ = key;
    }
    void open() { open_ = true; }

private:
    QObject context_;
    QString held_;
    std::atomic<bool> open_{true};
};

class AppChatTest : public QObject {
    Q_OBJECT
    std::unique_ptr<AppFixture> f_;
    QString model_;

    ConversationList* conversations() { return f_->app->conversations(); }
    Generation* generation() { return f_->app->generation(); }
    MessageComposer* composer() { return f_->app->composer(); }
    ChatFormatChoice* format() { return f_->app->format(); }
    Figures* figures() { return f_->app->figures(); }

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K");
        model_ = model;
        f_ = std::make_unique<AppFixture>();
        f_->app->start(QString());
        QVERIFY(f_->load(model_));
        QVERIFY2(f_->app->model()->hasModel(), qPrintable(f_->app->errorMessage()));
        ConversationSettings* s = conversations()->settings();
        s->setTemperature(0);  // greedy: the same text every run
        s->setMaxNewTokens(64);
    }

    void signalsArriveInOrder() {
        QStringList order;
        QString pieces;
        int last_generated = -1;
        bool monotonic = true;
        InferenceWorker* w = f_->app->worker();
        QObject context;
        connect(w, &InferenceWorker::generationStarted, &context, [&] { order << "started"; });
        connect(w, &InferenceWorker::tokenGenerated, &context,
                [&](const QString&, const QString& piece, const GenerationStats& stats) {
                    order << "token";
                    pieces += piece;
                    monotonic = monotonic && stats.generated_tokens >= last_generated;
                    last_generated = stats.generated_tokens;
                });
        connect(w, &InferenceWorker::generationFinished, &context, [&] { order << "finished"; });
        connect(w, &InferenceWorker::statsChanged, &context, [&] { order << "stats"; });

        conversations()->newConversation();
        order.clear();
        const AppFixture::Finished* done = f_->sendAndWait("Tell me a story.");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        // Our own connections are served after the fixture's: wait until they have seen it all.
        QTRY_VERIFY(order.contains("finished") && order.lastIndexOf("stats") > order.indexOf("finished"));
        QVERIFY(done->result.stats.generated_tokens > 0);
        // Requests are served in order, so anything before "started" answers newConversation().
        QVERIFY(order.contains("started"));
        order = order.mid(order.indexOf("started"));
        QVERIFY(order.count("token") >= 1);
        const qsizetype finished_at = order.indexOf("finished");
        QCOMPARE(order.lastIndexOf("token"), finished_at - 1);  // no piece after the end
        QVERIFY(order.lastIndexOf("stats") > finished_at);
        QVERIFY(monotonic);
        QCOMPARE(pieces, QString::fromStdString(done->result.text));
        // The message list shows exactly that answer, finished.
        MessageListModel* messages = conversations()->messages();
        QCOMPARE(messages->rowCount(), 2);
        const QModelIndex answer = messages->index(1);
        QCOMPARE(answer.data(MessageListModel::TextRole).toString(), pieces);
        QCOMPARE(answer.data(MessageListModel::StreamingRole).toBool(), false);
        // What an export says of it: the model that wrote it and when each message began.
        const ConversationItem* c = conversations()->messages()->conversation();
        QCOMPARE(c->model, f_->app->model()->name());
        QVERIFY(c->messages[0].time.isValid() && c->messages[1].time >= c->messages[0].time);
    }

    void stopEndsWithinOneToken() {
        conversations()->newConversation();
        conversations()->settings()->setMaxNewTokens(400);
        // The stop flag is set from inside the engine's token callback (a direct connection on
        // the worker thread), so we know exactly how many tokens existed when it was raised.
        std::atomic<int> generated_at_stop{-1};
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::tokenGenerated, &context,
                [&](const QString& key, const QString&, const GenerationStats& stats) {
                    if (generated_at_stop.load() < 0) {
                        generated_at_stop = stats.generated_tokens;
                        f_->app->cancelFlags()->of(key)->store(true);
                    }
                },
                Qt::DirectConnection);
        const AppFixture::Finished* done = f_->sendAndWait("Once upon a time");
        conversations()->settings()->setMaxNewTokens(64);
        QVERIFY(done);
        QCOMPARE(int(done->result.stop_reason), int(StopReason::Cancelled));
        QVERIFY(generated_at_stop.load() >= 0);
        QVERIFY2(done->result.stats.generated_tokens <= generated_at_stop.load() + 1,
                 qPrintable(QString("stopped at %1, ended at %2").arg(generated_at_stop.load())
                                .arg(done->result.stats.generated_tokens)));
        // The partial answer stays, marked as stopped.
        const QModelIndex answer = conversations()->messages()->index(1);
        QCOMPARE(answer.data(MessageListModel::StopReasonRole).toInt(), int(AnswerEnd::Cancelled));
        QCOMPARE(answer.data(MessageListModel::TextRole).toString(), QString::fromStdString(done->result.text));
    }

    void stopFromTheWindowKeepsThePartialAnswer() {
        conversations()->newConversation();
        conversations()->settings()->setMaxNewTokens(400);
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::tokenGenerated, &context, [&] { generation()->stop(); });
        const AppFixture::Finished* done = f_->sendAndWait("Once upon a time");
        conversations()->settings()->setMaxNewTokens(64);
        QVERIFY(done);
        QVERIFY(!generation()->generating());
        QVERIFY(done->result.stop_reason == StopReason::Cancelled || done->result.stop_reason == StopReason::Eos);
        QCOMPARE(conversations()->messages()->rowCount(), 2);
    }

    void newConversationStartsAtZero() {
        conversations()->newConversation();
        QVERIFY(f_->sendAndWait("Hello there."));
        QTRY_VERIFY(figures()->cachedTokens() > 0);
        const int pool_used = figures()->poolBlocksUsed();
        QVERIFY(pool_used > 0);
        const QString first = conversations()->currentId();

        conversations()->newConversation();
        QVERIFY(conversations()->currentId() != first);
        QTRY_COMPARE(figures()->contextLength(), f_->app->model()->contextLength());  // the worker answered
        QCOMPARE(figures()->cachedTokens(), 0);
        QCOMPARE(figures()->poolBlocksUsed(), pool_used);  // the other conversation keeps its cache

        // Clearing a conversation frees its blocks in the engine.
        conversations()->selectConversation(conversations()->model()->rowOf(first));
        QTRY_VERIFY(figures()->cachedTokens() > 0);
        generation()->clearConversation();
        QTRY_COMPARE(figures()->cachedTokens(), 0);
        QTRY_VERIFY(figures()->poolBlocksUsed() < pool_used);
    }

    void switchingKeepsEachCache() {
        conversations()->newConversation();
        const QString a = conversations()->currentId();
        const AppFixture::Finished* first_a = f_->sendAndWait("Tell me about a cat.");
        QVERIFY(first_a);
        const int cached_a = first_a->result.stats.conversation.cached_tokens;
        // The last sampled token (and the end-of-turn marker) are in the history but not yet in
        // the cache: the follow-up runs them through the model together with its own tokens.
        const int uncached_a = first_a->result.stats.conversation.history_tokens - cached_a;
        QVERIFY(cached_a > 0);
        QVERIFY2(uncached_a >= 0 && uncached_a <= 2, qPrintable(QString::number(uncached_a)));

        conversations()->newConversation();
        QVERIFY(f_->sendAndWait("Tell me about a dog."));

        conversations()->selectConversation(conversations()->model()->rowOf(a));
        QTRY_COMPARE(figures()->cachedTokens(), cached_a);  // its own occupancy, still cached

        const AppFixture::Finished* follow_up = f_->sendAndWait("What was its name?");
        QVERIFY(follow_up);
        const GenerationStats& s = follow_up->result.stats;
        // Only the new message (with its template tokens) is prefilled, not the history.
        QVERIFY(s.prompt_tokens > 0);
        QCOMPARE(s.prefilled_tokens, s.prompt_tokens + uncached_a);
        QCOMPARE(s.reprefilled_tokens, 0);
        QVERIFY(s.conversation.history_tokens > s.prompt_tokens + s.generated_tokens);
    }

    void failedLoadKeepsTheOldModel() {
        const QString broken = f_->dir.path() + "/broken.gguf";
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("GGUF\x03\x00\x00\x00", 8) + QByteArray(64, '\xff'));
        file.close();
        const QString name = f_->app->model()->name();
        f_->app->dismissError();
        QVERIFY(f_->load(broken));
        QVERIFY(!f_->app->errorMessage().isEmpty());
        QVERIFY2(f_->app->errorMessage().contains("broken.gguf"), qPrintable(f_->app->errorMessage()));
        QVERIFY(f_->app->model()->hasModel());
        QCOMPARE(f_->app->model()->name(), name);

        conversations()->newConversation();
        const AppFixture::Finished* done = f_->sendAndWait("Are you still there?");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        QVERIFY(done->result.stats.generated_tokens > 0);
    }

    // A second conversation answers while the first still streams: the engine runs them in one
    // batch, each into its own conversation, each the answer it gives alone; Stop ends only the
    // conversation on screen.
    void twoConversationsAnswerAtOnce() {
        const auto fresh = [&] {
            conversations()->newConversation();
            conversations()->settings()->setSeed(7);
            conversations()->settings()->setMaxNewTokens(300);
            return conversations()->currentId();
        };
        QStringList events;
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::generationStarted, &context,
                [&](const QString& key) { events << "started " + key; });
        connect(f_->app->worker(), &InferenceWorker::generationFinished, &context,
                [&](const QString& key) { events << "finished " + key; });
        const auto answer_of = [&](const QString& key) -> const AppFixture::Finished* {
            for (const AppFixture::Finished& done : f_->finished)
                if (done.key == key) return &done;
            return nullptr;
        };

        AnswerGate gate(f_->app->worker());
        const QString a = fresh();
        gate.hold(a);
        composer()->send("Once upon a time");
        QVERIFY(generation()->generating());
        const QString b = fresh();
        QVERIFY2(!generation()->generating(), "a new conversation is free while the other streams");
        composer()->send("The little dog");
        gate.open();
        QVERIFY(wait_until([&] { return answer_of(a) && answer_of(b); }, 60000));
        QTRY_COMPARE(events.size(), 4);  // our own connection hears the ends after the fixture's
        QVERIFY2(events.indexOf("started " + b) < events.indexOf("finished " + a), qPrintable(events.join(", ")));
        const std::string text_a = answer_of(a)->result.text, text_b = answer_of(b)->result.text;
        QVERIFY(answer_of(a)->result.status.ok() && answer_of(b)->result.status.ok());
        const ConversationItem* shown_a = conversations()->model()->find(a);
        QCOMPARE(shown_a->messages.size(), 2);
        QCOMPARE(shown_a->messages[1].text, QString::fromStdString(text_a));
        QCOMPARE(conversations()->model()->find(b)->messages[1].text, QString::fromStdString(text_b));

        // Each alone, in a conversation of its own, with the same seed: the same answers.
        fresh();
        const AppFixture::Finished* alone_a = f_->sendAndWait("Once upon a time");
        QVERIFY(alone_a);
        QCOMPARE(alone_a->result.text, text_a);
        fresh();
        const AppFixture::Finished* alone_b = f_->sendAndWait("The little dog");
        QVERIFY(alone_b);
        QCOMPARE(alone_b->result.text, text_b);

        // Stop on screen stops that conversation's answer only.
        const QString c = fresh();
        gate.hold(c);
        composer()->send("Once upon a time");
        const QString d = fresh();
        composer()->send("The little dog");
        generation()->stop();
        gate.open();
        QVERIFY(wait_until([&] { return answer_of(c) && answer_of(d); }, 60000));
        QCOMPARE(int(answer_of(d)->result.stop_reason), int(StopReason::Cancelled));
        QVERIFY(answer_of(c)->result.stop_reason != StopReason::Cancelled);
        conversations()->settings()->setMaxNewTokens(64);
    }

    // Requests that come while answers stream keep their order: a model load waits for the batch
    // to end; deleting a conversation that answers stops it, and the other answer goes on.
    void requestsDuringABatchKeepTheirOrder() {
        AnswerGate gate(f_->app->worker());
        QStringList events;
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::generationFinished, &context,
                [&](const QString& key) { events << "finished " + key; });
        connect(f_->app->worker(), &InferenceWorker::modelLoaded, &context, [&] { events << "loaded"; });
        const auto answer_of = [&](const QString& key) -> const AppFixture::Finished* {
            for (const AppFixture::Finished& done : f_->finished)
                if (done.key == key) return &done;
            return nullptr;
        };

        conversations()->newConversation();
        const QString a = conversations()->currentId();
        gate.hold(a);
        composer()->send("Once upon a time");
        f_->app->model()->reload();  // asked for while a's answer streams
        gate.open();
        QVERIFY(wait_until([&] { return answer_of(a) && !f_->app->model()->loading(); }, 60000));
        QTRY_COMPARE(events.size(), 2);
        QCOMPARE(events, (QStringList{"finished " + a, "loaded"}));
        QVERIFY2(answer_of(a)->result.status.ok(), answer_of(a)->result.status.message.c_str());
        QVERIFY(answer_of(a)->result.stop_reason != StopReason::Cancelled);

        conversations()->newConversation();
        const QString b = conversations()->currentId();
        gate.hold(b);
        composer()->send("Once upon a time");
        conversations()->newConversation();
        const QString c = conversations()->currentId();
        composer()->send("The little dog");
        conversations()->deleteConversation(conversations()->model()->rowOf(b));  // while b answers
        gate.open();
        QVERIFY(wait_until([&] { return answer_of(b) && answer_of(c); }, 60000));
        QCOMPARE(int(answer_of(b)->result.stop_reason), int(StopReason::Cancelled));
        QVERIFY2(answer_of(c)->result.status.ok(), answer_of(c)->result.status.message.c_str());
        QVERIFY(answer_of(c)->result.stop_reason != StopReason::Cancelled);
        QVERIFY(!conversations()->model()->find(b));
        QCOMPARE(conversations()->model()->find(c)->messages.size(), 2);
        QCOMPARE(conversations()->model()->find(c)->messages[1].text, QString::fromStdString(answer_of(c)->result.text));
    }

    // Deleting an exchange (from a message's menu) takes the question and its answer out of the
    // window, the saved file and the engine: the next answer sees the history without them.
    void deleteExchangeTakesItOutOfTheHistory() {
        conversations()->newConversation();
        format()->setChatFormat(ChatFormatChoice::Llama2Chat);
        QVERIFY(f_->sendAndWait("Tell me about a bird."));
        QVERIFY(f_->sendAndWait("Where did it fly?"));
        QVERIFY(f_->sendAndWait("What did it eat?"));
        generation()->deleteExchange(3);  // the second answer: its question goes too
        QCOMPARE(conversations()->messages()->rowCount(), 4);
        QCOMPARE(conversations()->messages()->index(2).data(MessageListModel::TextRole).toString(), QString("What did it eat?"));
        QVERIFY(f_->sendAndWait("And then?"));
        QCOMPARE(f_->finished.last().n_turns, 3);
        generation()->deleteExchange(4);  // the last question: the cache is cut back
        QCOMPARE(conversations()->messages()->rowCount(), 4);
        QVERIFY(f_->sendAndWait("And then?"));
        const AppFixture::Finished& again = f_->finished.last();
        QCOMPARE(again.n_turns, 3);
        QCOMPARE(again.result.stats.prefilled_tokens, again.result.stats.prompt_tokens);  // its own turn only
        const QString saved = f_->dir.filePath("data/conversations/" + conversations()->currentId() + ".json");
        QTRY_VERIFY(QFile(saved).open(QIODevice::ReadOnly) &&
                    ConversationStore::fromJson([&] { QFile f(saved); f.open(QIODevice::ReadOnly); return f.readAll(); }())
                            ->messages.size() == 6);
    }

    // Regenerate and edit-and-resend cut the engine's cache back to where the turn began:
    // the new answer prefills only its own question, never the history before it.
    void regenerateAndEditCutTheCacheBack() {
        conversations()->newConversation();
        format()->setChatFormat(ChatFormatChoice::Llama2Chat);  // the history below counts the end-of-turn marker
        QVERIFY(f_->sendAndWait("Tell me about a bird."));
        QVERIFY(f_->sendAndWait("Where did it fly?"));
        const GenerationResult second = f_->finished.last().result;
        const QString answer = QString::fromStdString(second.text);

        generation()->regenerate();
        QVERIFY(f_->waitForAnswer(f_->finished.size()));
        const GenerationResult again = f_->finished.last().result;
        QVERIFY2(again.status.ok(), again.status.message.c_str());
        QCOMPARE(f_->finished.last().n_turns, 2);
        QCOMPARE(again.stats.prefilled_tokens, again.stats.prompt_tokens);
        QCOMPARE(QString::fromStdString(again.text), answer);  // greedy: the same answer
        QCOMPARE(conversations()->messages()->rowCount(), 4);
        // The answer it replaced is kept as the other version there.
        QCOMPARE(conversations()->messages()->index(3).data(MessageListModel::VersionCountRole).toInt(), 2);
        QCOMPARE(conversations()->messages()->index(3).data(MessageListModel::VersionRole).toInt(), 2);

        generation()->editAndResend(0, "Tell me about a fish.");
        QVERIFY(f_->waitForAnswer(f_->finished.size()));
        QCOMPARE(conversations()->messages()->index(0).data(MessageListModel::VersionCountRole).toInt(), 2);
        const AppFixture::Finished& edited = f_->finished.last();
        QCOMPARE(edited.n_turns, 1);
        // Its first block may come back from disk: the earlier first turn began with the same tokens.
        const GenerationStats& e = edited.result.stats;
        QCOMPARE(e.prefilled_tokens + e.restored_tokens + e.shared_tokens, e.prompt_tokens);
        // The history is now the edited turn alone: its prompt, its answer, the end-of-turn marker.
        QCOMPARE(edited.result.stats.conversation.history_tokens,
                 edited.result.stats.prompt_tokens + edited.result.stats.generated_tokens + 1);
        QCOMPARE(conversations()->messages()->rowCount(), 2);
        QCOMPARE(conversations()->messages()->index(0).data(MessageListModel::TextRole).toString(),
                 QString("Tell me about a fish."));
    }

    // Regenerate and edit keep what they replace as another version at that message, with all
    // that followed it; moving between versions gives the engine that history; the versions, nested
    // ones too, survive the conversation file and the JSON export.
    void versionsKeepEverything() {
        conversations()->newConversation();
        format()->setChatFormat(ChatFormatChoice::Llama2Chat);
        QVERIFY(f_->sendAndWait("Tell me about a bird."));
        const QString first_answer = QString::fromStdString(f_->finished.last().result.text);
        QVERIFY(f_->sendAndWait("Where did it fly?"));
        ConversationItem* c = conversations()->current();
        MessageListModel* messages = conversations()->messages();
        const auto version = [&](int row) {
            return QString("%1/%2").arg(messages->index(row).data(MessageListModel::VersionRole).toInt())
                .arg(messages->index(row).data(MessageListModel::VersionCountRole).toInt());
        };

        generation()->regenerateAt(1);  // an earlier answer
        const AppFixture::Finished* again = f_->waitForAnswer(f_->finished.size());
        QVERIFY(again && again->result.status.ok());
        QCOMPARE(c->messages.size(), 2);
        QCOMPARE(version(1), QString("2/2"));
        QCOMPARE(QString::fromStdString(again->result.text), first_answer);  // greedy: the same answer

        generation()->showVersion(1, 0);  // the first version, and what followed it
        QCOMPARE(c->messages.size(), 4);
        QCOMPARE(version(1), QString("1/2"));
        QCOMPARE(c->messages[2].text, QString("Where did it fly?"));
        const AppFixture::Finished* next = f_->sendAndWait("And then?");
        QVERIFY(next && next->result.status.ok());
        QCOMPARE(next->n_turns, 3);  // the engine holds the version shown

        generation()->editAndResend(2, "Where did it sleep?");
        QVERIFY(f_->waitForAnswer(f_->finished.size()));
        QCOMPARE(c->messages.size(), 4);
        QCOMPARE(version(2), QString("2/2"));
        QCOMPARE(version(1), QString("1/2"));  // the answer before keeps its own versions

        // Saved and read back; exported and imported: the same tree.
        const std::optional<ConversationRecord> read = ConversationStore::fromJson(ConversationStore::toJson(*c));
        QVERIFY(read);
        QCOMPARE(read->messages.size(), 4);
        QCOMPARE(read->messages[2].version, 1);
        QCOMPARE(read->messages[2].other_versions.size(), size_t(1));
        QCOMPARE(read->messages[2].other_versions[0].size(), size_t(4));  // where it flew, and after
        QCOMPARE(read->messages[1].other_versions.size(), size_t(1));
        QString error;
        const auto imported = import_json(export_json({ConversationExport{*c, {}, {}}}), &error);
        QVERIFY2(imported, qPrintable(error));
        const ConversationRecord& back = imported->first().conversation;
        QCOMPARE(back.messages[2].other_versions[0][0].text, QString("Where did it fly?"));
        QCOMPARE(back.messages[1].version, 0);

        generation()->showVersion(2, 0);
        QCOMPARE(c->messages.size(), 6);
        QCOMPARE(c->messages[4].text, QString("And then?"));
    }

    // Any message branches into a new conversation that starts from the other's cache; the one it
    // came from keeps every message.
    void branchIntoANewConversation() {
        conversations()->newConversation();
        format()->setChatFormat(ChatFormatChoice::Llama2Chat);
        QVERIFY(f_->sendAndWait("Tell me about a bird."));
        const QString first_answer = QString::fromStdString(f_->finished.last().result.text);
        QVERIFY(f_->sendAndWait("Where did it fly?"));
        const QString original = conversations()->currentId();
        ConversationItem* source = conversations()->find(original);

        conversations()->branchFromMessage(1);
        ConversationItem* branch = conversations()->current();
        QVERIFY(branch->id != original);
        QCOMPARE(branch->messages.size(), 2);
        QCOMPARE(branch->messages[1].text, first_answer);
        QCOMPARE(branch->format, source->format);
        const AppFixture::Finished* next = f_->sendAndWait("And then?");
        QVERIFY(next && next->result.status.ok());
        // The first exchange's full blocks came from the conversation branched from, not computed.
        const GenerationStats& s = next->result.stats;
        QVERIFY2(s.shared_tokens + s.restored_tokens >= 16,
                 qPrintable(QString("shared %1, restored %2").arg(s.shared_tokens).arg(s.restored_tokens)));
        QCOMPARE(source->messages.size(), 4);
    }

    // Filling the context offers the choice; dropping the oldest turns lets the conversation go on.
    void contextFullOffersToDropOldestTurns() {
        conversations()->newConversation();
        conversations()->settings()->setMaxNewTokens(600);
        for (int i = 0; i < 40 && !composer()->contextFull(); ++i)
            QVERIFY(f_->sendAndWait(QString("Tell me story number %1.").arg(i)));
        QVERIFY(composer()->contextFull());
        const int turns_before = conversations()->model()->find(conversations()->currentId())->remembered_turns();
        const qsizetype answers = f_->finished.size();
        composer()->dropOldestTurnsAndContinue();
        QVERIFY(!composer()->contextFull());
        const bool resent = generation()->generating();  // the refused message, sent again
        const int turns_after = conversations()->model()->find(conversations()->currentId())->remembered_turns();
        QCOMPARE(turns_after, turns_before - qMax(1, turns_before / 2) + (resent ? 1 : 0));
        // A refused message is sent again after the drop; otherwise the next one goes through.
        if (!generation()->generating())
            composer()->send("And one more.");
        QVERIFY(wait_until([&] { return f_->finished.size() > answers && !generation()->generating(); }, 60000));
        conversations()->settings()->setMaxNewTokens(64);
        const AppFixture::Finished& after = f_->finished.last();
        QVERIFY2(after.result.status.ok(), after.result.status.message.c_str());
        QCOMPARE(after.n_turns, conversations()->model()->find(conversations()->currentId())->remembered_turns());
    }

    // With the setting on, a message that does not fit drops the oldest turns and is sent, unasked.
    void contextFullDropsOldestTurnsWhenSetTo() {
        f_->app->settings()->setDropOldestWhenFull(true);
        const auto restore = qScopeGuard([&] {
            conversations()->settings()->setMaxNewTokens(64);
            f_->app->settings()->setDropOldestWhenFull(false);
        });
        conversations()->newConversation();
        conversations()->settings()->setMaxNewTokens(600);
        bool dropped = false;
        for (int i = 0; i < 40 && !dropped; ++i) {
            const int before = conversations()->model()->find(conversations()->currentId())->remembered_turns();
            QVERIFY(f_->sendAndWait(QString("Tell me story number %1.").arg(i)));
            QVERIFY(!composer()->contextFull());  // never asked
            dropped = conversations()->model()->find(conversations()->currentId())->remembered_turns() <= before;
        }
        QVERIFY(dropped);
        // The next message goes through, and the engine's turns are the window's.
        const AppFixture::Finished* next = f_->sendAndWait("And one more.");
        QVERIFY(next);
        QVERIFY2(next->result.status.ok(), next->result.status.message.c_str());
        QCOMPARE(next->n_turns, conversations()->model()->find(conversations()->currentId())->remembered_turns());
    }

    // A llama2.c checkpoint alone in its folder has no vocabulary: the window asks for one.
    void missingTokenizerIsAskedFor() {
        LLAMADESK_REQUIRE_SHARED(bin, "models/stories260K/stories260K.bin");
        LLAMADESK_REQUIRE_SHARED(tokenizer, "models/stories260K/tok512.model");
        const QString lonely = f_->dir.path() + "/lonely/stories260K.bin";
        QDir().mkpath(f_->dir.path() + "/lonely");
        QVERIFY(QFile::copy(bin, lonely));
        f_->app->model()->open(lonely);
        QVERIFY(wait_until([&] { return !f_->app->model()->loading(); }, 60000));
        QVERIFY(f_->app->model()->needsTokenizer());
        QVERIFY(!f_->app->model()->tokenizerMessage().isEmpty());

        f_->app->model()->openWithTokenizer(QUrl::fromLocalFile(tokenizer).toString());
        QVERIFY(!f_->app->model()->needsTokenizer());
        QVERIFY(wait_until([&] { return !f_->app->model()->loading(); }, 60000));
        QCOMPARE(f_->app->model()->path(), lonely);
        QCOMPARE(f_->app->settings()->tokenizerFor(lonely), tokenizer);  // remembered for next time
        conversations()->newConversation();
        const AppFixture::Finished* done = f_->sendAndWait("Hello");
        QVERIFY(done && done->result.status.ok());
    }

    // A 1 ms timer on the GUI thread records the longest gap between its ticks. On a machine
    // shared with other work the scheduler alone can hold a runnable thread back for tens of
    // ms, so each gap is also measured without the time the thread sat runnable in the run queue
    // (Linux schedstat): what remains is time spent blocked or busy in our own code.
    void guiThreadNeverStalls() {
        QElapsedTimer clock;
        qint64 last = 0, last_wait = 0;
        double longest = 0, longest_own = 0;
        QTimer tick;
        tick.setTimerType(Qt::PreciseTimer);
        tick.setInterval(1);
        connect(&tick, &QTimer::timeout, this, [&] {
            const qint64 now = clock.nsecsElapsed(), wait = run_queue_wait_ns();
            longest = std::max(longest, (now - last) / 1e6);
            longest_own = std::max(longest_own, (now - last - (wait - last_wait)) / 1e6);
            last = now;
            last_wait = wait;
        });
        struct Stall { bool ok; double wall_ms, own_ms; };
        const auto measure = [&](const std::function<bool()>& work) {
            longest = longest_own = 0;
            clock.start();
            last = 0;
            last_wait = run_queue_wait_ns();
            tick.start();
            const bool ok = work();
            tick.stop();
            return Stall{ok, longest, longest_own};
        };

        conversations()->newConversation();
        conversations()->settings()->setMaxNewTokens(400);
        f_->app->settings()->store().sync();  // not a deferred settings write inside the window
        const Stall generation = measure([&] { return f_->sendAndWait("Once upon a time") != nullptr; });
        conversations()->settings()->setMaxNewTokens(64);
        const int tokens = f_->finished.last().result.stats.generated_tokens;
        const Stall load = measure([&] { return f_->load(model_); });
        qInfo("longest GUI-thread stall during a generation of %d tokens: %.1f ms wall, %.1f ms without "
              "run-queue wait; during a model load: %.1f ms wall, %.1f ms without run-queue wait",
              tokens, generation.wall_ms, generation.own_ms, load.wall_ms, load.own_ms);
        QVERIFY(generation.ok && load.ok);
        QVERIFY2(generation.own_ms < 50, qPrintable(QString::number(generation.own_ms)));
        QVERIFY2(load.own_ms < 50, qPrintable(QString::number(load.own_ms)));
    }

    // Making room for one conversation can evict another: the sidebar's figures for the evicted one
    // follow at once, without it being opened.
    void evictionShowsInTheSidebarAtOnce() {
        AppFixture g;
        g.app->settings()->setKvCacheMiB(1);
        g.app->start(QString());
        QVERIFY(g.load(model_));
        g.app->conversations()->settings()->setTemperature(0);
        g.app->conversations()->settings()->setMaxNewTokens(300);
        for (int i = 0; i < 8 && g.app->figures()->evictions() == 0; ++i) {
            g.app->conversations()->newConversation();
            QVERIFY(g.sendAndWait(QString("Once upon a time, story %1").arg(i)));
        }
        QVERIFY2(g.app->figures()->evictions() > 0, "the pool never filled");
        // What the sidebar shows never adds up to more than the pool holds, and the evicted
        // conversations show an empty cache.
        ConversationListModel* list = g.app->conversations()->model();
        const int capacity = g.app->figures()->poolBlocksTotal() * LoadParams{}.block_size;
        int shown_cached = 0, evicted_shown = 0;
        const auto sidebar_agrees = [&] {
            shown_cached = evicted_shown = 0;
            for (int row = 0; row < list->rowCount(); ++row) {
                const int cached = list->index(row).data(ConversationListModel::CachedTokensRole).toInt();
                shown_cached += cached;
                evicted_shown += !list->at(row)->messages.isEmpty() && cached == 0 ? 1 : 0;
            }
            return shown_cached <= capacity && evicted_shown > 0;
        };
        QTRY_VERIFY2(sidebar_agrees(), qPrintable(QString("%1 cached tokens shown, the pool holds %2; %3 shown as evicted")
                                                      .arg(shown_cached).arg(capacity).arg(evicted_shown)));
    }

    // Whatever reacts to the window's "model changed" already sees the new model's chat format
    // (the --screenshot prompt is sent from there).
    void formatFollowsTheModelBeforeTheWindowHears() {
        conversations()->newConversation();
        format()->setChatFormat(ChatFormatChoice::Llama2Chat);  // not the story model's own; the conversation is unused
        ChatFormatChoice::Format seen = ChatFormatChoice::Llama2Chat;
        QObject context;
        connect(f_->app->model(), &ModelController::modelChanged, &context, [&] { seen = format()->chatFormat(); });
        QVERIFY(f_->load(model_));
        QCOMPARE(seen, ChatFormatChoice::Completion);
        QCOMPARE(format()->suggestedFormat(), ChatFormatChoice::Completion);
    }

    void cleanupTestCase() { f_.reset(); }
};

QTEST_MAIN(AppChatTest)
#include "test_app_chat.moc"
