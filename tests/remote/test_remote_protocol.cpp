// The remote client's pure parts: URLs and where the key may go, SSE framing, the API's JSON, the
// server's /metrics page and the wording of errors that need no server to provoke (DNS).
#include <QTest>

#include "endpoint.h"
#include "http_errors.h"
#include "openai_protocol.h"
#include "server_metrics.h"
#include "sse_decoder.h"

using namespace llamadesk::remote;

class TestRemoteProtocol : public QObject {
    Q_OBJECT

private slots:
    void apiUrlsAcceptABaseWithOrWithoutV1() {
        QCOMPARE(api_url(QUrl("http://h:8000"), "models"), QUrl("http://h:8000/v1/models"));
        QCOMPARE(api_url(QUrl("http://h:8000/v1/"), "chat/completions"), QUrl("http://h:8000/v1/chat/completions"));
        QCOMPARE(api_url(QUrl("https://h/proxy/v1"), "models"), QUrl("https://h/proxy/v1/models"));
        QCOMPARE(metrics_url(QUrl("http://h:8000/v1")), QUrl("http://h:8000/metrics"));
    }

    void theKeyGoesOnlyToTheOriginItWasEnteredFor() {
        const QUrl base("https://gpu.example.org/v1");
        QVERIFY(same_origin(QUrl("https://gpu.example.org:443/metrics"), base));
        QVERIFY(!same_origin(QUrl("http://gpu.example.org/v1/models"), base));
        QVERIFY(!same_origin(QUrl("https://gpu.example.org:8443/v1/models"), base));
        QVERIFY(!same_origin(QUrl("https://evil.example.org/v1/models"), base));
    }

    void plainHttpToAnotherHostIsWarnedAbout() {
        QVERIFY(plain_http_warning(QUrl("http://127.0.0.1:8000/v1")).isEmpty());
        QVERIFY(plain_http_warning(QUrl("http://localhost:8000")).isEmpty());
        QVERIFY(plain_http_warning(QUrl("http://[::1]:8000")).isEmpty());
        QVERIFY(plain_http_warning(QUrl("https://gpu.example.org/v1")).isEmpty());
        QVERIFY(plain_http_warning(QUrl("http://192.168.1.20:8000/v1")).contains("unencrypted"));
        QVERIFY(!check_base_url(QUrl("ftp://h/v1")).isEmpty());
        QVERIFY(!check_base_url(QUrl("h:8000")).isEmpty());
        QVERIFY(check_base_url(QUrl("http://h:8000/v1")).isEmpty());
    }

    void sseEventsSplitAnywhereAndCommentsAreSkipped() {
        SseDecoder decoder;
        QVERIFY(decoder.feed(": ping\r\nda").empty());
        std::vector<QByteArray> out = decoder.feed("ta: {\"a\":1}\r\n\r\nevent: x\ndata:[DONE]\n");
        QCOMPARE(out.size(), size_t(2));
        QCOMPARE(out[0], QByteArray("{\"a\":1}"));
        QCOMPARE(out[1], QByteArray("[DONE]"));
    }

    void aLineWithoutEndIsRefusedPastTheLimit() {
        SseDecoder decoder;
        decoder.feed("data: " + QByteArray(SseDecoder::kMaxLineBytes, 'x'));
        QVERIFY(decoder.overflowed());
        QVERIFY(decoder.feed("\n").empty());
    }

    void chunksGiveTextFinishAndUsage() {
        const StreamChunk chat = parse_chunk(R"({"choices":[{"delta":{"content":"Hi"},"finish_reason":null}]})", true);
        QCOMPARE(chat.text, QStringLiteral("Hi"));
        QVERIFY(chat.finish_reason.isEmpty() && chat.error.isEmpty() && !chat.usage);
        const StreamChunk role_only = parse_chunk(R"({"choices":[{"delta":{"role":"assistant"}}]})", true);
        QVERIFY(role_only.text.isEmpty() && role_only.error.isEmpty());
        const StreamChunk text = parse_chunk(R"({"choices":[{"text":" so","finish_reason":"length"}]})", false);
        QCOMPARE(text.text, QStringLiteral(" so"));
        QCOMPARE(text.finish_reason, QStringLiteral("length"));
        const StreamChunk usage = parse_chunk(R"({"choices":[],"usage":{"prompt_tokens":5,"completion_tokens":2}})", true);
        QVERIFY(usage.usage && usage.usage->prompt_tokens == 5 && usage.usage->completion_tokens == 2);
        QVERIFY(!usage.usage->cached_tokens);  // not reported is not zero
        QVERIFY(parse_chunk(" [DONE]", true).done);
        QVERIFY(parse_chunk("[1,2]", true).error.contains("not a JSON object"));
        QVERIFY(parse_chunk(R"({"error":{"message":"boom"}})", true).error.contains("boom"));
    }

    void serverMessagesInTheirUsualShapes() {
        QCOMPARE(server_message(R"({"error":{"message":"bad key","type":"auth"}})"), QStringLiteral("bad key"));
        QCOMPARE(server_message(R"({"error":"model not found"})"), QStringLiteral("model not found"));
        QCOMPARE(server_message(R"({"detail":"Not Found"})"), QStringLiteral("Not Found"));
        QCOMPARE(server_message("Bad Gateway"), QStringLiteral("Bad Gateway"));
        QVERIFY(server_message("").isEmpty());
    }

    void modelListNeedsTheOpenAiShape() {
        QString error;
        QCOMPARE(parse_models(R"({"data":[{"id":"m1"},{"id":"m2"}]})", &error).value_or(QStringList()),
                 (QStringList{"m1", "m2"}));
        QVERIFY(!parse_models("<html>", &error).has_value());
        QVERIFY(error.contains("not the OpenAI format"));
    }

    void kvCacheUsageFromEitherVllmName() {
        QCOMPARE(kv_cache_usage("vllm:gpu_cache_usage_perc{model_name=\"m\"} 0.5\n").value_or(-1), 0.5);
        QCOMPARE(kv_cache_usage("vllm:kv_cache_usage_perc{engine=\"0\"} 0.1\n"
                                "vllm:kv_cache_usage_perc{engine=\"1\"} 0.3 1700000000\n")
                     .value_or(-1),
                 0.3);
        QVERIFY(!kv_cache_usage("vllm:kv_cache_usage_perc_total 0.9\nllamacpp:tokens_predicted_total 4\n"));
        QVERIFY(!kv_cache_usage(""));
    }

    void dnsFailureNamesTheHost() {
        const QString message = request_error(QUrl("http://gpu.nowhere.invalid:8000/v1/models"),
                                              QNetworkReply::HostNotFoundError, "Host not found", 0, {});
        QVERIFY(message.contains("gpu.nowhere.invalid") && message.contains("DNS"));
    }

    void sentFieldsUseTheServersNames() {
        llamadesk::GenerateParams params;
        params.max_new_tokens = 0;  // unlimited: no max_tokens at all
        const QByteArray body = completion_body("m", "x", params);
        QVERIFY(!body.contains("max_tokens"));
        QVERIFY(!body.contains("\"seed\""));  // random seed: none sent
        QVERIFY(body.contains("\"repeat_penalty\"") && body.contains("\"repetition_penalty\""));
        QVERIFY(body.contains("\"top_k\":40"));
    }
};

QTEST_GUILESS_MAIN(TestRemoteProtocol)
#include "test_remote_protocol.moc"
