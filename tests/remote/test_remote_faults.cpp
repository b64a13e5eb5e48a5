// The remote client against a scripted fake server on 127.0.0.1: a good stream first, then every
// fault the issue lists. Each fault must end in a message a person can act on (host, HTTP status,
// the server's words), keep the text that arrived, never quote the API key, and never hang.
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QTcpServer>
#include <QTest>

#include "fake_server.h"
#include "remote_session.h"
#include "sse_decoder.h"

using namespace llamadesk;
using namespace llamadesk::remote;
using llamadesk::test::FakeServer;
using llamadesk::test::Script;

namespace {

const QString kKey = QStringLiteral("sk-test-5ecret-key");
const QString kChatPath = QStringLiteral("/v1/chat/completions");

Endpoint endpoint_of(const FakeServer& server) { return {server.base_url(), kKey, QStringLiteral("tiny")}; }

std::vector<Message> one_question() { return {{"user", "Once upon a time"}}; }

QByteArray usage_chunk(int prompt, int completion, int cached) {
    const QJsonObject usage{{"prompt_tokens", prompt},
                            {"completion_tokens", completion},
                            {"prompt_tokens_details", QJsonObject{{"cached_tokens", cached}}}};
    return QJsonDocument(QJsonObject{{"choices", QJsonArray{}}, {"usage", usage}}).toJson(QJsonDocument::Compact);
}

// Streams "Hello" + " world" and then whatever `then` adds.
Script two_pieces_then(std::vector<test::Step> then, bool close = true) {
    Script script{{{test::sse_head()},
                   {test::sse_event(test::chat_chunk("Hello"))},
                   {test::sse_event(test::chat_chunk(" world")), 20}},
                  close};
    script.steps.insert(script.steps.end(), then.begin(), then.end());
    return script;
}

StreamResult ask(FakeServer& server, int stall_timeout_ms = 5000, const std::atomic<bool>* cancel = nullptr) {
    RemoteSession session(endpoint_of(server), stall_timeout_ms);
    return session.chat(one_question(), GenerateParams{}, {}, cancel);
}

}  // namespace

class TestRemoteFaults : public QObject {
    Q_OBJECT

private slots:
    void streamsTextUsageAndSendsTheRequestAsAsked() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({{": keep-alive comment\n\n"},
                                                  {"event: ignored\n" + test::sse_event(test::chat_chunk("!", "stop"))},
                                                  {test::sse_event(usage_chunk(12, 3, 8)), 30},
                                                  {test::sse_event("[DONE]")}}));
        RemoteSession session(endpoint_of(server));
        GenerateParams params;
        params.max_new_tokens = 7;
        params.sampling.seed = 42;
        params.sampling.temperature = 0.5f;
        QStringList pieces;
        const StreamResult r = session.chat({{"system", "Be brief."}, {"user", "Hi"}}, params,
                                            [&](const QString& piece, const StreamFigures&) { pieces << piece; }, nullptr);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.text, QStringLiteral("Hello world!"));
        QCOMPARE(pieces, (QStringList{"Hello", " world", "!"}));
        QCOMPARE(r.finish_reason, QStringLiteral("stop"));
        QVERIFY(r.figures.usage.has_value());
        QCOMPARE(r.figures.usage->prompt_tokens, 12);
        QCOMPARE(r.figures.usage->completion_tokens, 3);
        QCOMPARE(r.figures.usage->cached_tokens.value_or(-1), 8);
        QCOMPARE(r.figures.pieces, 3);
        QVERIFY(r.figures.time_to_first_piece_ms >= 0);
        QVERIFY(r.figures.streaming_ms >= 15);  // the scripted 20 ms between the first two pieces
        QVERIFY(r.figures.tokens_per_second().has_value());

        const QList<QByteArray> requests = server.requests();
        QCOMPARE(requests.size(), 1);
        QVERIFY(requests[0].startsWith("POST /v1/chat/completions "));
        QVERIFY(requests[0].contains("Authorization: Bearer " + kKey.toUtf8()));
        const QJsonObject body = QJsonDocument::fromJson(requests[0].mid(requests[0].indexOf("\r\n\r\n") + 4)).object();
        QCOMPARE(body["model"].toString(), QStringLiteral("tiny"));
        QCOMPARE(body["stream"].toBool(), true);
        QCOMPARE(body["stream_options"].toObject()["include_usage"].toBool(), true);
        QCOMPARE(body["max_tokens"].toInt(), 7);
        QCOMPARE(body["seed"].toInt(), 42);
        QCOMPARE(body["temperature"].toDouble(), 0.5);
        QCOMPARE(body["messages"].toArray().size(), 2);
        QCOMPARE(body["messages"].toArray()[0].toObject()["role"].toString(), QStringLiteral("system"));
    }

    void completionUsesTheCompletionsEndpoint() {
        FakeServer server;
        const QByteArray chunk = R"({"choices":[{"index":0,"text":" there was","finish_reason":"length"}]})";
        server.route("/v1/completions", {{{test::sse_head()}, {test::sse_event(chunk)}, {test::sse_event("[DONE]")}}});
        RemoteSession session(endpoint_of(server));
        const StreamResult r = session.complete("Once upon a time,", GenerateParams{}, {}, nullptr);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.text, QStringLiteral(" there was"));
        QCOMPARE(r.finish_reason, QStringLiteral("length"));
        QVERIFY(!r.figures.usage.has_value());  // none sent: none invented
        QVERIFY(!r.figures.tokens_per_second().has_value());
        QVERIFY(server.requests().value(0).contains("\"prompt\":\"Once upon a time,\""));
    }

    void listsModels() {
        FakeServer server;
        server.route("/v1/models", {{{test::http_response(200, R"({"object":"list","data":[{"id":"a"},{"id":"b"}]})")}}});
        RemoteSession session(endpoint_of(server));
        QString error;
        const std::optional<QStringList> ids = session.models(&error);
        QVERIFY2(ids.has_value(), qPrintable(error));
        QCOMPARE(*ids, (QStringList{"a", "b"}));
    }

    void refusedConnectionNamesTheHostAndPort() {
        QTcpServer probe;
        QVERIFY(probe.listen(QHostAddress::LocalHost, 0));
        const quint16 port = probe.serverPort();
        probe.close();  // nothing listens there now
        RemoteSession session({QUrl(QStringLiteral("http://127.0.0.1:%1/v1").arg(port)), kKey, "tiny"});
        const StreamResult r = session.chat(one_question(), GenerateParams{}, {}, nullptr);
        QVERIFY2(r.error.contains("connection refused"), qPrintable(r.error));
        QVERIFY2(r.error.contains(QStringLiteral("127.0.0.1:%1").arg(port)), qPrintable(r.error));
        QVERIFY(!r.error.contains(kKey));
    }

    void anUntrustedCertificateIsRefusedBeforeAnythingIsSent() {
        FakeServer server(FakeServer::Transport::Tls);  // self-signed, so no CA of this machine vouches for it
        server.route(kChatPath, two_pieces_then({{test::sse_event("[DONE]")}}));
        const StreamResult r = ask(server);
        const QString host = QStringLiteral("127.0.0.1:%1").arg(server.base_url().port());
        QVERIFY2(r.error.contains("the TLS connection to " + host + " failed"), qPrintable(r.error));
        QVERIFY(r.text.isEmpty());
        QVERIFY(server.requests().isEmpty());  // neither the question nor the key left this process
    }

    void httpsCarriesTheStreamWhenTheCertificateIsTrusted() {
        const QSslConfiguration before = QSslConfiguration::defaultConfiguration();
        QSslConfiguration trusting = before;
        trusting.addCaCertificate(QSslCertificate(FakeServer::certificate_pem()));
        QSslConfiguration::setDefaultConfiguration(trusting);
        FakeServer server(FakeServer::Transport::Tls);
        server.route(kChatPath, two_pieces_then({{test::sse_event("[DONE]")}}));
        const StreamResult r = ask(server);
        QSslConfiguration::setDefaultConfiguration(before);
        QVERIFY2(r.error.isEmpty(), qPrintable(r.error));
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QCOMPARE(server.requests().size(), 1);
        QVERIFY(server.requests()[0].contains("Authorization: Bearer " + kKey.toUtf8()));
    }

    void unknownHostIsNamedAsADnsFailure() {
        // .invalid never resolves (RFC 6761): the resolver answers, or fails, without any server.
        RemoteSession session({QUrl("http://llamadesk-test.invalid:8000/v1"), kKey, "tiny"}, 60000);
        const StreamResult r = session.chat(one_question(), GenerateParams{}, {}, nullptr);
        QVERIFY2(r.error.contains("the host llamadesk-test.invalid was not found (DNS)"), qPrintable(r.error));
        QVERIFY(!r.error.contains(kKey));
    }

    void httpErrorsCarryStatusServerMessageAndAdvice_data() {
        QTest::addColumn<int>("status");
        QTest::addColumn<QString>("advice");
        QTest::newRow("401") << 401 << "API key";
        QTest::newRow("403") << 403 << "API key";
        QTest::newRow("404") << 404 << "base URL";
        QTest::newRow("422") << 422 << "sampling settings";
        QTest::newRow("429") << 429 << "rate-limited";
        QTest::newRow("500") << 500 << "server failed";
    }
    void httpErrorsCarryStatusServerMessageAndAdvice() {
        QFETCH(int, status);
        QFETCH(QString, advice);
        FakeServer server;
        server.route(kChatPath, {{{test::http_response(status, R"({"error":{"message":"scripted failure 7"}})")}}});
        const StreamResult r = ask(server);
        QVERIFY2(r.error.contains(QStringLiteral("HTTP %1").arg(status)), qPrintable(r.error));
        QVERIFY2(r.error.contains("scripted failure 7"), qPrintable(r.error));
        QVERIFY2(r.error.contains(advice), qPrintable(r.error));
        QVERIFY2(r.error.contains("127.0.0.1"), qPrintable(r.error));
        QVERIFY(!r.error.contains(kKey));
        QVERIFY(r.text.isEmpty());
    }

    void errorEventMidStreamKeepsThePartialAnswer() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({{test::sse_event(R"({"error":{"message":"CUDA out of memory","code":500}})")}}));
        const StreamResult r = ask(server);
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QVERIFY2(r.error.contains("CUDA out of memory"), qPrintable(r.error));
        QVERIFY(r.finish_reason.isEmpty());
    }

    void connectionDroppedMidStreamKeepsThePartialAnswer() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({}));  // closes without finish_reason or [DONE]
        const StreamResult r = ask(server);
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QVERIFY2(r.error.contains("before the answer was complete"), qPrintable(r.error));
    }

    void malformedEventIsAnError() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({{"data: {\"choices\": [\n\n"}, {test::sse_event(test::chat_chunk("late"))}}));
        const StreamResult r = ask(server);
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QVERIFY2(r.error.contains("malformed event"), qPrintable(r.error));
    }

    void stallBetweenEventsTimesOut() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({}, false));  // then silence, the connection open
        QElapsedTimer clock;
        clock.start();
        const StreamResult r = ask(server, 300);
        QVERIFY(clock.elapsed() < 3000);
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QVERIFY2(r.error.contains("sent nothing for 0.3 s in the middle of the answer"), qPrintable(r.error));
    }

    void silentServerTimesOutBeforeAnyAnswer() {
        FakeServer server;
        server.route(kChatPath, {{}, false});  // accepts, reads, never answers
        const StreamResult r = ask(server, 300);
        QVERIFY2(r.error.contains("after the request"), qPrintable(r.error));
        QVERIFY(r.text.isEmpty());
    }

    void stopEndsTheStreamAtOnce() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({{test::sse_event(test::chat_chunk("never")), 10000}}));
        std::atomic<bool> cancel{false};
        RemoteSession session(endpoint_of(server), 30000);
        QElapsedTimer clock;
        clock.start();
        const StreamResult r = session.chat(one_question(), GenerateParams{}, [&](const QString&, const StreamFigures& f) {
            if (f.pieces == 2) cancel = true;
        }, &cancel);
        QVERIFY(clock.elapsed() < 3000);
        QVERIFY(r.cancelled);
        QVERIFY(r.error.isEmpty());
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        // The session is usable again right after.
        server.route("/v1/models", {{{test::http_response(200, R"({"data":[{"id":"tiny"}]})")}}});
        QString error;
        QVERIFY2(session.models(&error).has_value(), qPrintable(error));
    }

    void hugeEventLineIsRefused() {
        FakeServer server;
        server.route(kChatPath, two_pieces_then({{"data: " + QByteArray(SseDecoder::kMaxLineBytes + 1024, 'a')}}, false));
        const StreamResult r = ask(server);
        QCOMPARE(r.text, QStringLiteral("Hello world"));
        QVERIFY2(r.error.contains("longer than 4 MiB"), qPrintable(r.error));
    }

    void redirectIsReportedNotFollowed() {
        FakeServer server;
        server.route(kChatPath, {{{test::http_response(302, "", "text/plain", "Location: http://198.51.100.7/v1/chat/completions\r\n")}}});
        const StreamResult r = ask(server);
        QVERIFY2(r.error.contains("HTTP 302") && r.error.contains("does not follow"), qPrintable(r.error));
        QCOMPARE(server.requests().size(), 1);
    }

    void metricsGiveTheServersCacheUsageOrNothing() {
        FakeServer server;
        RemoteSession session(endpoint_of(server));
        QVERIFY(!session.kv_cache_usage().has_value());  // 404: not reported
        server.route("/metrics", {{{test::http_response(200, "# HELP vllm:kv_cache_usage_perc KV-cache usage.\n"
                                                             "vllm:kv_cache_usage_perc{engine=\"0\",model_name=\"m\"} 0.25\n",
                                                        "text/plain")}}});
        QCOMPARE(session.kv_cache_usage().value_or(-1), 0.25);
    }
};

QTEST_GUILESS_MAIN(TestRemoteFaults)
#include "test_remote_faults.moc"
