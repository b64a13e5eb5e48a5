// The remote client against llama.cpp's real OpenAI-compatible server (PyPI llama-cpp-python) with
// stories260K on loopback: streaming, a follow-up, Stop, the sampling fields, and figures that are
// either the server's own or absent. Skipped when python's server or the model is missing.
#include <QTest>

#include "llama_server.h"
#include "remote_session.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::remote;

class TestRemoteServer : public QObject {
    Q_OBJECT

    test::LlamaServer server_;
    Endpoint endpoint_;

    static GenerateParams greedy(int max_tokens) {
        GenerateParams params;
        params.sampling.temperature = 0;
        params.sampling.seed = 1;
        params.max_new_tokens = max_tokens;
        return params;
    }

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.gguf");
        QString failure;
        const QString missing = server_.start(model, &failure);
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        RemoteSession session({server_.base_url(), {}, {}});
        QString error;
        const std::optional<QStringList> ids = session.models(&error);
        QVERIFY2(ids && !ids->isEmpty(), qPrintable(error));
        endpoint_ = {server_.base_url(), {}, ids->first()};
    }

    void chatStreamsPiecesAndFollowsUp() {
        RemoteSession session(endpoint_);
        int pieces = 0;
        std::vector<Message> history{{"user", "Once upon a time"}};
        const StreamResult first = session.chat(history, greedy(24), [&](const QString&, const StreamFigures&) { ++pieces; }, nullptr);
        QVERIFY2(first.error.isEmpty(), qPrintable(first.error));
        QVERIFY(pieces > 1);
        QCOMPARE(first.figures.pieces, pieces);
        QVERIFY(!first.text.isEmpty());
        QCOMPARE(first.finish_reason, QStringLiteral("length"));
        QVERIFY(first.figures.time_to_first_piece_ms > 0);
        // Usage is the server's or nothing: never a made-up zero.
        if (first.figures.usage) QVERIFY(first.figures.usage->completion_tokens > 0);

        history.push_back({"assistant", first.text});
        history.push_back({"user", "And then?"});
        const StreamResult follow_up = session.chat(history, greedy(16), {}, nullptr);
        QVERIFY2(follow_up.error.isEmpty(), qPrintable(follow_up.error));
        QVERIFY(!follow_up.text.isEmpty());
    }

    void samplingFieldsReachTheServer() {
        RemoteSession session(endpoint_);
        const StreamResult a = session.complete("Once upon a time", greedy(20), {}, nullptr);
        const StreamResult b = session.complete("Once upon a time", greedy(20), {}, nullptr);
        QVERIFY2(a.error.isEmpty(), qPrintable(a.error));
        QCOMPARE(a.text, b.text);  // greedy: the same text twice
        const StreamResult short_one = session.complete("Once upon a time", greedy(3), {}, nullptr);
        QVERIFY(short_one.figures.pieces <= 3);  // max_tokens was honoured
        GenerateParams hot = greedy(20);
        hot.sampling.temperature = 1.5f;
        hot.sampling.top_k = 0;
        hot.sampling.top_p = 1.0f;
        hot.sampling.min_p = 0;
        QStringList texts;
        for (int seed = 1; seed <= 3; ++seed) {
            hot.sampling.seed = seed;
            texts << session.complete("Once upon a time", hot, {}, nullptr).text;
        }
        texts.removeDuplicates();
        QVERIFY2(texts.size() > 1, "three seeds at temperature 1.5 gave the same text: the seed was not sent");
    }

    void stopEndsTheAnswerAndTheServerAnswersAgain() {
        RemoteSession session(endpoint_);
        std::atomic<bool> cancel{false};
        const StreamResult stopped = session.chat({{"user", "Tell me a long story"}}, greedy(2000),
                                                  [&](const QString&, const StreamFigures& f) {
                                                      if (f.pieces == 3) cancel = true;
                                                  }, &cancel);
        QVERIFY(stopped.cancelled);
        QVERIFY(stopped.figures.pieces >= 3 && stopped.figures.pieces < 2000);
        const StreamResult again = session.chat({{"user", "Once upon a time"}}, greedy(8), {}, nullptr);
        QVERIFY2(again.error.isEmpty(), qPrintable(again.error));
        QVERIFY(!again.text.isEmpty());
    }

    void aRejectedFieldIsNamed() {
        RemoteSession session(endpoint_);
        GenerateParams params = greedy(4);
        params.sampling.top_p = 7;  // out of the server's range (the window never sends this)
        const StreamResult r = session.chat({{"user", "x"}}, params, {}, nullptr);
        QVERIFY2(r.error.contains("top_p") && r.error.contains("HTTP 500"), qPrintable(r.error));
        RemoteSession wrong({QUrl(endpoint_.base_url.toString() + "/nowhere"), {}, endpoint_.model});
        QString error;
        QVERIFY(!wrong.models(&error));
        QVERIFY2(error.contains("HTTP 404") && error.contains("base URL"), qPrintable(error));
    }

    void noCacheMetricIsReportedAsNone() {
        RemoteSession session(endpoint_);
        QVERIFY(!session.kv_cache_usage().has_value());  // llama.cpp's server has no KV usage metric
    }
};

QTEST_GUILESS_MAIN(TestRemoteServer)
#include "test_remote_server.moc"
