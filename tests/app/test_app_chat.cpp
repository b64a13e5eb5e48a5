// The window's C++ side against the real engine on stories260K: signal order, Stop, occupancy
// of new and switched conversations, a failed load, and how long the GUI thread ever stalls.
#include <QElapsedTimer>
#include <QFile>
#include <QTimer>
#include <QtTest>

#include "app_fixture.h"
#include "test_support.h"

using namespace llamadesk;

class AppChatTest : public QObject {
    Q_OBJECT
    std::unique_ptr<AppFixture> f_;
    QString model_;

    ChatController* chat() { return f_->app->chat(); }
    Figures* figures() { return f_->app->figures(); }

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K");
        model_ = model;
        f_ = std::make_unique<AppFixture>();
        f_->app->start(QString());
        QVERIFY(f_->load(model_));
        QVERIFY2(f_->app->model()->hasModel(), qPrintable(f_->app->errorMessage()));
        ConversationSettings* s = chat()->settings();
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

        chat()->newConversation();
        order.clear();
        const AppFixture::Finished* done = f_->sendAndWait("Tell me a story.");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        QTRY_VERIFY(order.contains("stats"));
        QVERIFY(done->result.stats.generated_tokens > 0);
        QCOMPARE(order.first(), QString("started"));
        QVERIFY(order.count("token") >= 1);
        const qsizetype finished_at = order.indexOf("finished");
        QCOMPARE(order.lastIndexOf("token"), finished_at - 1);  // no piece after the end
        QVERIFY(order.indexOf("stats") > finished_at);
        QVERIFY(monotonic);
        QCOMPARE(pieces, QString::fromStdString(done->result.text));
        // The message list shows exactly that answer, finished.
        MessageListModel* messages = chat()->messages();
        QCOMPARE(messages->rowCount(), 2);
        const QModelIndex answer = messages->index(1);
        QCOMPARE(answer.data(MessageListModel::TextRole).toString(), pieces);
        QCOMPARE(answer.data(MessageListModel::StreamingRole).toBool(), false);
    }

    void stopEndsWithinOneToken() {
        chat()->newConversation();
        chat()->settings()->setMaxNewTokens(400);
        // The stop flag is set from inside the engine's token callback (a direct connection on
        // the worker thread), so we know exactly how many tokens existed when it was raised.
        std::atomic<int> generated_at_stop{-1};
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::tokenGenerated, &context,
                [&](const QString&, const QString&, const GenerationStats& stats) {
                    if (generated_at_stop.load() < 0) {
                        generated_at_stop = stats.generated_tokens;
                        f_->app->cancelFlag()->store(true);
                    }
                },
                Qt::DirectConnection);
        const AppFixture::Finished* done = f_->sendAndWait("Once upon a time");
        chat()->settings()->setMaxNewTokens(64);
        QVERIFY(done);
        QCOMPARE(int(done->result.stop_reason), int(StopReason::Cancelled));
        QVERIFY(generated_at_stop.load() >= 0);
        QVERIFY2(done->result.stats.generated_tokens <= generated_at_stop.load() + 1,
                 qPrintable(QString("stopped at %1, ended at %2").arg(generated_at_stop.load())
                                .arg(done->result.stats.generated_tokens)));
        // The partial answer stays, marked as stopped.
        const QModelIndex answer = chat()->messages()->index(1);
        QCOMPARE(answer.data(MessageListModel::StopReasonRole).toString(), QString("cancelled"));
        QCOMPARE(answer.data(MessageListModel::TextRole).toString(), QString::fromStdString(done->result.text));
    }

    void stopFromTheWindowKeepsThePartialAnswer() {
        chat()->newConversation();
        chat()->settings()->setMaxNewTokens(400);
        QObject context;
        connect(f_->app->worker(), &InferenceWorker::tokenGenerated, &context, [&] { chat()->stop(); });
        const AppFixture::Finished* done = f_->sendAndWait("Once upon a time");
        chat()->settings()->setMaxNewTokens(64);
        QVERIFY(done);
        QVERIFY(!chat()->generating());
        QVERIFY(done->result.stop_reason == StopReason::Cancelled || done->result.stop_reason == StopReason::Eos);
        QCOMPARE(chat()->messages()->rowCount(), 2);
    }

    void newConversationStartsAtZero() {
        chat()->newConversation();
        QVERIFY(f_->sendAndWait("Hello there."));
        QTRY_VERIFY(figures()->cachedTokens() > 0);
        const int pool_used = figures()->poolBlocksUsed();
        QVERIFY(pool_used > 0);
        const QString first = chat()->currentId();

        chat()->newConversation();
        QVERIFY(chat()->currentId() != first);
        QTRY_COMPARE(figures()->contextLength(), f_->app->model()->contextLength());  // the worker answered
        QCOMPARE(figures()->cachedTokens(), 0);
        QCOMPARE(figures()->poolBlocksUsed(), pool_used);  // the other conversation keeps its cache

        // Clearing a conversation frees its blocks in the engine.
        chat()->selectConversation(chat()->conversations()->rowOf(first));
        QTRY_VERIFY(figures()->cachedTokens() > 0);
        chat()->clearConversation();
        QTRY_COMPARE(figures()->cachedTokens(), 0);
        QTRY_VERIFY(figures()->poolBlocksUsed() < pool_used);
    }

    void switchingKeepsEachCache() {
        chat()->newConversation();
        const QString a = chat()->currentId();
        const AppFixture::Finished* first_a = f_->sendAndWait("Tell me about a cat.");
        QVERIFY(first_a);
        const int cached_a = first_a->result.stats.conversation.cached_tokens;
        QVERIFY(cached_a > 0);

        chat()->newConversation();
        QVERIFY(f_->sendAndWait("Tell me about a dog."));

        chat()->selectConversation(chat()->conversations()->rowOf(a));
        QTRY_COMPARE(figures()->cachedTokens(), cached_a);  // its own occupancy, still cached

        const AppFixture::Finished* follow_up = f_->sendAndWait("What was its name?");
        QVERIFY(follow_up);
        const GenerationStats& s = follow_up->result.stats;
        // Only the new message (with its template tokens) is prefilled, not the history.
        QVERIFY(s.prompt_tokens > 0);
        QCOMPARE(s.prefilled_tokens, s.prompt_tokens);
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

        chat()->newConversation();
        const AppFixture::Finished* done = f_->sendAndWait("Are you still there?");
        QVERIFY(done);
        QVERIFY2(done->result.status.ok(), done->result.status.message.c_str());
        QVERIFY(done->result.stats.generated_tokens > 0);
    }

    // A 1 ms timer on the GUI thread records the longest gap between its ticks.
    void guiThreadNeverStalls() {
        QElapsedTimer clock;
        qint64 last = 0, longest = 0;
        QTimer tick;
        tick.setTimerType(Qt::PreciseTimer);
        tick.setInterval(1);
        connect(&tick, &QTimer::timeout, this, [&] {
            const qint64 now = clock.nsecsElapsed();
            longest = std::max(longest, now - last);
            last = now;
        });
        const auto measure = [&](const std::function<bool()>& work) {
            clock.start();
            last = 0;
            longest = 0;
            tick.start();
            const bool ok = work();
            tick.stop();
            return std::pair<bool, double>(ok, longest / 1e6);
        };

        chat()->newConversation();
        chat()->settings()->setMaxNewTokens(400);
        const auto [generated, generation_ms] = measure([&] { return f_->sendAndWait("Once upon a time") != nullptr; });
        chat()->settings()->setMaxNewTokens(64);
        const auto [loaded, load_ms] = measure([&] { return f_->load(model_); });
        qInfo("longest GUI-thread stall: %.1f ms during a generation of %d tokens, %.1f ms during a model load",
              generation_ms, f_->finished.last().result.stats.generated_tokens, load_ms);
        QVERIFY(generated && loaded);
        QVERIFY2(generation_ms < 50, qPrintable(QString::number(generation_ms)));
        QVERIFY2(load_ms < 50, qPrintable(QString::number(load_ms)));
    }

    void cleanupTestCase() { f_.reset(); }
};

QTEST_MAIN(AppChatTest)
#include "test_app_chat.moc"
