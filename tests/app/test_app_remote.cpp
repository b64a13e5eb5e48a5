// The window's C++ side with a remote engine: a scripted fake server for what a failure does to the
// conversation (the partial answer kept and marked, a question that got nothing back in the
// composer, a failed connection keeping the model in use, the API key kept out of every file but
// its own), then llama.cpp's real server (skipped without it) for a chat that moves between this
// machine's engine and the server, with Stop and the server's figures.
#include <QFile>
#include <QDirIterator>

#include "app_fixture.h"
#include "fake_server.h"
#include "llama_server.h"
#include "remote_client.h"
#include "test_support.h"

using namespace llamadesk;
using llamadesk::test::FakeServer;

namespace {

const QString kKey = QStringLiteral("sk-app-test-5ecret");

const ConversationItem* current(AppFixture& f) { return f.app->conversations()->model()->find(f.app->conversations()->currentId()); }

// Every file under dir except the key store, concatenated.
QByteArray everything_but_keys(const QString& dir) {
    QByteArray all;
    QDirIterator it(dir, QDir::Files, QDirIterator::Subdirectories);
    while (it.hasNext()) {
        const QString path = it.next();
        QFile file(path);
        if (!path.endsWith("api-keys.json") && file.open(QIODevice::ReadOnly)) all += file.readAll();
    }
    return all;
}

bool open_remote(AppFixture& f, const QUrl& base, const QString& key, const QString& model) {
    f.app->model()->openRemote(base.toString(), key, model);
    return wait_until([&] { return !f.app->model()->loading(); }, 30000);
}

}  // namespace

class AppRemoteTest : public QObject {
    Q_OBJECT

private slots:
    void failuresKeepWhatWasTypedAndWhatArrived() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        server.route("/v1/chat/completions",
                     {{{test::sse_head()},
                       {test::sse_event(test::chat_chunk("Once"))},
                       {test::sse_event(test::chat_chunk(" upon")), 20},
                       {test::sse_event(R"({"error":{"message":"scripted overload"}})")}}});
        AppFixture f;
        f.app->start(QString());
        QVERIFY(open_remote(f, server.base_url(), kKey, "tiny"));
        QVERIFY2(f.app->model()->remote(), qPrintable(f.app->errorMessage()));
        QCOMPARE(f.app->model()->name(), QStringLiteral("tiny"));

        const AppFixture::Finished* done = f.sendAndWait("Tell me a story");
        QVERIFY(done);
        const ConversationItem* c = current(f);
        QCOMPARE(c->messages.size(), 2);
        QCOMPARE(c->messages[1].text, QStringLiteral("Once upon"));  // kept
        QCOMPARE(c->messages[1].stop_reason, AnswerEnd::Error);  // and marked
        QVERIFY2(f.app->errorMessage().contains("scripted overload"), qPrintable(f.app->errorMessage()));
        QVERIFY(f.app->figures()->fromServer());
        QCOMPARE(f.app->figures()->serverPieces(), 2);
        QCOMPARE(f.app->figures()->serverCompletionTokens(), -1);  // not reported, not zero
        QCOMPARE(f.app->figures()->serverCacheUsage(), -1.0);

        // Nothing at all comes back: the question returns to the composer.
        server.route("/v1/chat/completions", {{{test::http_response(401, R"({"error":{"message":"bad key"}})")}}});
        QVERIFY(f.sendAndWait("And then?"));
        QCOMPARE(current(f)->messages.size(), 2);
        QCOMPARE(f.app->composer()->draft(), QStringLiteral("And then?"));
        QVERIFY2(f.app->errorMessage().contains("HTTP 401") && f.app->errorMessage().contains("bad key"),
                 qPrintable(f.app->errorMessage()));
        QVERIFY(!f.app->figures()->hasAnswer());  // nothing arrived: no figure, not a zero
        QVERIFY(!f.app->errorMessage().contains(kKey));

        // The key went to its server, and is kept only in the keyring (on a private keyring session,
        // keyring-session.sh) or else in the key file, readable by the user alone.
        QVERIFY(server.requests().last().contains("Authorization: Bearer " + kKey.toUtf8()));
        const QString key_file = f.app->model()->apiKeyFile();
        f.app->composer()->setDraft(QString());
        wait_until([] { return false; }, 1500);  // the draft's deferred save
        if (qEnvironmentVariable("LLAMADESK_TEST_KEYRING") == "unlocked") {
            QCOMPARE(f.app->model()->apiKeyStorage(), QStringLiteral("the system keyring"));
            QVERIFY(!QFile::exists(key_file));
        } else {
            QVERIFY2(f.app->model()->apiKeyStorage().contains(key_file), qPrintable(f.app->model()->apiKeyStorage()));
            QCOMPARE(QFile::permissions(key_file) & ~(QFile::ReadUser | QFile::WriteUser | QFile::ReadOwner |
                                                      QFile::WriteOwner),
                     QFile::Permissions());
        }
        QVERIFY(!everything_but_keys(f.dir.path()).contains(kKey.toUtf8()));
        QVERIFY(f.app->model()->recentCheckpoints().value(0).startsWith(server.base_url().toString()));

        // The chat API cannot resume inside an answer: Continue says so and changes nothing.
        server.route("/v1/chat/completions", {{{test::sse_head()},
                                               {test::sse_event(test::chat_chunk("Once more", "length"))},
                                               {test::sse_event("[DONE]")}}});
        QVERIFY(f.sendAndWait("Again"));
        QCOMPARE(current(f)->messages[3].stop_reason, AnswerEnd::MaxTokens);
        const qsizetype before = f.finished.size();
        f.app->generation()->continueAnswer();
        QVERIFY(f.waitForAnswer(before));
        QCOMPARE(current(f)->messages[3].text, QStringLiteral("Once more"));
        QVERIFY2(f.app->errorMessage().contains("cannot continue a chat answer"), qPrintable(f.app->errorMessage()));
    }

    void theServersOwnFiguresAreShown() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        server.route("/v1/chat/completions",
                     {{{test::sse_head()},
                       {test::sse_event(test::chat_chunk("Once"))},
                       {test::sse_event(test::chat_chunk(" upon", "stop")), 30},
                       {test::sse_event(R"({"choices":[],"usage":{"prompt_tokens":40,"completion_tokens":3,)"
                                        R"("prompt_tokens_details":{"cached_tokens":32}}})")},
                       {test::sse_event("[DONE]")}}});
        server.route("/metrics", {{{test::http_response(200, "vllm:kv_cache_usage_perc{engine=\"0\"} 0.125\n",
                                                        "text/plain")}}});
        AppFixture f;
        f.app->start(QString());
        QVERIFY(open_remote(f, server.base_url(), QString(), "tiny"));
        QVERIFY(f.sendAndWait("Tell me a story"));
        Figures* figures = f.app->figures();
        QVERIFY(figures->fromServer());
        QCOMPARE(figures->serverPromptTokens(), 40);
        QCOMPARE(figures->serverCompletionTokens(), 3);
        QCOMPARE(figures->serverCachedTokens(), 32);
        QCOMPARE(figures->serverCacheUsage(), 0.125);
        QVERIFY(figures->serverTokensPerSecond() > 0);  // 2 tokens over the >= 30 ms they took to arrive
        QVERIFY(figures->serverTokensPerSecond() < 2 / 0.025);
        QCOMPARE(current(f)->messages[1].stop_reason, AnswerEnd::Eos);
    }

    // A server answers one conversation at a time behind the same batch as this machine's engine:
    // a message sent in another conversation while one answers waits for that answer, then gets its own.
    void aServerAnswersConversationsInTurn() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        server.route("/v1/chat/completions",
                     {{{test::sse_head()},
                       {test::sse_event(test::chat_chunk("Hello")), 300},
                       {test::sse_event(test::chat_chunk(" there", "stop"))},
                       {test::sse_event("[DONE]")}}});
        AppFixture f;
        f.app->start(QString());
        QVERIFY(open_remote(f, server.base_url(), QString(), "tiny"));
        const qsizetype before = f.finished.size();
        f.app->composer()->send("First question");
        const QString first = f.app->conversations()->currentId();
        f.app->conversations()->newConversation();
        f.app->composer()->send("Second question");
        const QString second = f.app->conversations()->currentId();
        QVERIFY(first != second);
        QVERIFY(wait_until([&] { return f.finished.size() >= before + 2; }, 30000));
        QCOMPARE(f.finished[before].key, first);
        QCOMPARE(f.finished[before + 1].key, second);
        for (const QString& id : {first, second}) {
            const ConversationItem* c = f.app->conversations()->find(id);
            QVERIFY(c);
            QCOMPARE(c->messages.size(), 2);
            QCOMPARE(c->messages[1].text, QStringLiteral("Hello there"));
            QCOMPARE(c->messages[1].stop_reason, AnswerEnd::Eos);
        }
        QList<QByteArray> asked;  // each conversation's own history only, in turn
        for (const QByteArray& request : server.requests())
            if (request.contains("/chat/completions"))
                asked.append(request);
        QCOMPARE(asked.size(), 2);
        QVERIFY(asked[0].contains("First question") && !asked[0].contains("Second question"));
        QVERIFY(asked[1].contains("Second question") && !asked[1].contains("First question"));
    }

    void theServerTimeoutIsASetting() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        server.route("/v1/chat/completions",
                     {{{test::sse_head()}, {test::sse_event(test::chat_chunk("Once"))}}, false});  // then silence
        AppFixture f;
        f.app->start(QString());
        f.app->settings()->setServerTimeoutSeconds(1);
        QVERIFY(open_remote(f, server.base_url(), QString(), "tiny"));
        const AppFixture::Finished* done = f.sendAndWait("Tell me a story", 10000);
        QVERIFY(done);
        QCOMPARE(current(f)->messages[1].text, QStringLiteral("Once"));
        QVERIFY2(f.app->errorMessage().contains("sent nothing for 1 s in the middle of the answer"),
                 qPrintable(f.app->errorMessage()));
    }

    void aServerThatCannotBeReachedKeepsTheModelInUse() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        AppFixture f;
        f.app->start(QString());
        QVERIFY(open_remote(f, server.base_url(), QString(), "tiny"));
        QVERIFY(f.app->model()->remote());
        QVERIFY(open_remote(f, server.base_url(), QString(), "huge"));  // not served there
        QVERIFY2(f.app->errorMessage().contains("does not serve the model 'huge'") &&
                     f.app->errorMessage().contains("Still using tiny"),
                 qPrintable(f.app->errorMessage()));
        QCOMPARE(f.app->model()->name(), QStringLiteral("tiny"));
    }

    void chatMovesBetweenThisMachineAndTheServer() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.gguf");
        test::LlamaServer server;
        QString failure;
        const QString missing = server.start(model, &failure);
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        QVERIFY2(failure.isEmpty(), qPrintable(failure));

        AppFixture f;
        f.app->start(QString());
        f.app->conversations()->settings()->setTemperature(0);
        f.app->conversations()->settings()->setMaxNewTokens(32);
        QVERIFY(f.load(model));
        QVERIFY(f.sendAndWait("Once upon a time"));
        QVERIFY(!f.app->figures()->fromServer());

        QVERIFY(open_remote(f, server.base_url(), QString(), model));  // llama.cpp names it by its path
        QVERIFY2(f.app->model()->remote(), qPrintable(f.app->errorMessage()));
        const AppFixture::Finished* remote = f.sendAndWait("And then?");
        QVERIFY(remote);
        QVERIFY2(remote->result.status.ok(), remote->result.status.message.c_str());
        QCOMPARE(remote->n_turns, 2);  // the history from this machine went with the message
        QVERIFY(!current(f)->messages[3].text.isEmpty());
        QVERIFY(f.app->figures()->fromServer());
        QVERIFY(f.app->figures()->server().startsWith("127.0.0.1:"));
        QVERIFY(f.app->figures()->serverPieces() > 1);
        QVERIFY(f.app->figures()->timeToFirstTokenMs() > 0);
        QVERIFY(f.app->figures()->serverPiecesPerSecond() > 0);
        QCOMPARE(f.app->figures()->serverCacheUsage(), -1.0);  // llama.cpp's server publishes none

        // Stop ends a long answer; what came is kept and marked as stopped.
        f.app->conversations()->settings()->setMaxNewTokens(4000);
        const qsizetype before = f.finished.size();
        f.app->composer()->send("Tell me more");
        QVERIFY(wait_until([&] { return current(f)->messages.size() == 6 && !current(f)->messages[5].text.isEmpty(); }, 30000));
        f.app->generation()->stop();
        const AppFixture::Finished* stopped = f.waitForAnswer(before, 30000);
        QVERIFY(stopped);
        QCOMPARE(stopped->result.stop_reason, StopReason::Cancelled);
        QCOMPARE(current(f)->messages[5].stop_reason, AnswerEnd::Cancelled);
        QVERIFY(!current(f)->messages[5].text.isEmpty());

        // A story model's conversations are plain completion: Continue goes on with the text.
        QCOMPARE(f.app->format()->chatFormat(), ChatFormatChoice::Completion);
        f.app->conversations()->settings()->setMaxNewTokens(16);
        const QString cut = current(f)->messages[5].text;
        const qsizetype before_continue = f.finished.size();
        f.app->generation()->continueAnswer();
        QVERIFY(f.waitForAnswer(before_continue, 30000));
        QVERIFY(current(f)->messages[5].text.startsWith(cut) && current(f)->messages[5].text.size() > cut.size());

        // Back on this machine, the engine is given the whole conversation again.
        QVERIFY(f.load(model));
        QVERIFY(!f.app->model()->remote());
        const AppFixture::Finished* local = f.sendAndWait("The end");
        QVERIFY(local);
        QVERIFY2(local->result.status.ok(), local->result.status.message.c_str());
        QCOMPARE(local->n_turns, 4);
    }
};

QTEST_MAIN(AppRemoteTest)
#include "test_app_remote.moc"
