// llamadesk-cli --remote as a script uses it: against the scripted fake server (exact output, what
// is sent, /new, the key file, errors) and against llama.cpp's real server (skipped without it).
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include "fake_server.h"
#include "llama_server.h"
#include "test_support.h"

using llamadesk::test::FakeServer;

namespace {

struct Run {
    int code = -1;
    QString out, err;
};

Run cli(const QStringList& args, const QByteArray& input = {}) {
    const llamadesk::test::ProgramRun r = llamadesk::test::run_program(LLAMADESK_CLI_BINARY, args, input);
    return {r.exit_code, QString::fromUtf8(r.out), QString::fromUtf8(r.err)};
}

QJsonObject body_of(const QByteArray& request) {
    return QJsonDocument::fromJson(request.mid(request.indexOf("\r\n\r\n") + 4)).object();
}

}  // namespace

class TestCliRemote : public QObject {
    Q_OBJECT

private slots:
    void promptPrintsExactlyPromptAndAnswer() {
        FakeServer server;
        const QByteArray chunk = R"({"choices":[{"text":" there was","finish_reason":null}]})";
        const QByteArray last = R"({"choices":[{"text":" a cat","finish_reason":"length"}],)"
                                R"("usage":{"prompt_tokens":5,"completion_tokens":2,"prompt_tokens_details":{"cached_tokens":4}}})";
        server.route("/v1/completions", {{{llamadesk::test::sse_head()}, {llamadesk::test::sse_event(chunk)},
                                          {llamadesk::test::sse_event(last)}, {llamadesk::test::sse_event("[DONE]")}}});
        QTemporaryDir dir;
        QFile key(dir.filePath("key"));
        QVERIFY(key.open(QIODevice::WriteOnly));
        key.write("sk-cli-secret\n");
        key.close();
        const Run r = cli({"--remote", server.base_url().toString(), "--api-key-file", key.fileName(), "--model", "tiny",
                           "--prompt", "Once upon a time", "-n", "9", "--seed", "3", "--stats"});
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("Once upon a time there was a cat"));
        QVERIFY2(r.err.contains("prompt tokens: 5") && r.err.contains("completion tokens: 2") &&
                     r.err.contains("prompt tokens its cache held: 4") && r.err.contains("its KV cache in use: not reported by the server"),
                 qPrintable(r.err));
        QVERIFY(!r.err.contains("sk-cli-secret"));
        const QByteArray request = server.requests().value(0);
        QVERIFY(request.contains("Authorization: Bearer sk-cli-secret\r\n"));
        const QJsonObject body = body_of(request);
        QCOMPARE(body["prompt"].toString(), QStringLiteral("Once upon a time"));
        QCOMPARE(body["max_tokens"].toInt(), 9);
        QCOMPARE(body["seed"].toInt(), 3);
        QCOMPARE(body["model"].toString(), QStringLiteral("tiny"));
    }

    void chatSendsTheHistoryUntilNew() {
        FakeServer server;
        server.route("/v1/models", {{{llamadesk::test::http_response(200, R"({"data":[{"id":"only"}]})")}}});
        server.route("/v1/chat/completions", {{{llamadesk::test::sse_head()},
                                               {llamadesk::test::sse_event(llamadesk::test::chat_chunk("Hi!", "stop"))},
                                               {llamadesk::test::sse_event("[DONE]")}}});
        const Run r = cli({"--remote", server.base_url().toString(), "--chat"}, "one\ntwo\n/new\nthree\n");
        QCOMPARE(r.code, 0);
        QCOMPARE(r.out, QStringLiteral("Hi!\nHi!\nHi!\n"));
        QList<QJsonArray> sent;
        for (const QByteArray& request : server.requests())
            if (request.startsWith("POST")) sent << body_of(request)["messages"].toArray();
        QCOMPARE(sent.size(), 3);
        QCOMPARE(sent[0].size(), 1);
        QCOMPARE(sent[1].size(), 3);  // one, its answer, two
        QCOMPARE(sent[1][1].toObject()["content"].toString(), QStringLiteral("Hi!"));
        QCOMPARE(sent[2].size(), 1);  // after /new: three alone
        QCOMPARE(body_of(server.requests().last())["model"].toString(), QStringLiteral("only"));  // the server's only model
    }

    void errorsAreClearAndExitNonZero() {
        FakeServer server;
        server.route("/v1/completions", {{{llamadesk::test::http_response(503, R"({"error":{"message":"warming up"}})")}}});
        const Run r = cli({"--remote", server.base_url().toString(), "--model", "m", "--prompt", "x"});
        QCOMPARE(r.code, 1);
        QVERIFY2(r.err.contains("HTTP 503") && r.err.contains("warming up"), qPrintable(r.err));
        server.route("/v1/completions", {{{llamadesk::test::sse_head()}}, false});  // then silence
        const Run stalled = cli({"--remote", server.base_url().toString(), "--model", "m", "--prompt", "x", "--timeout", "1"});
        QCOMPARE(stalled.code, 1);
        QVERIFY2(stalled.err.contains("sent nothing for 1 s"), qPrintable(stalled.err));
        // 0.0.0.0 is not a loopback address, yet Linux connects it to this machine: nothing leaves it.
        const Run plain = cli({"--remote", "http://0.0.0.0:9/v1", "--model", "m", "--prompt", "x"});
        QVERIFY2(plain.err.contains("plain HTTP"), qPrintable(plain.err));  // warned before anything was sent
        QVERIFY(plain.code != 0);
    }

    void realServerAnswersPromptAndChat() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.gguf");
        llamadesk::test::LlamaServer server;
        QString failure;
        const QString missing = server.start(model, &failure);
        if (!missing.isEmpty()) QSKIP(qPrintable(missing));
        QVERIFY2(failure.isEmpty(), qPrintable(failure));
        const Run prompt = cli({"--remote", server.base_url().toString(), "--prompt", "Once upon a time", "-n", "16",
                                "--temperature", "0", "--stats"});
        QCOMPARE(prompt.code, 0);
        QVERIFY(prompt.out.startsWith("Once upon a time") && prompt.out.size() > QString("Once upon a time").size());
        QVERIFY2(prompt.err.contains("finish: length"), qPrintable(prompt.err));
        const Run chat = cli({"--remote", server.base_url().toString(), "--chat", "-n", "8"}, "Hello\n/new\nHi\n");
        QCOMPARE(chat.code, 0);
        QCOMPARE(chat.out.count('\n'), 2);
        QVERIFY2(chat.err.contains("new conversation"), qPrintable(chat.err));
    }
};

QTEST_GUILESS_MAIN(TestCliRemote)
#include "test_cli_remote.moc"
