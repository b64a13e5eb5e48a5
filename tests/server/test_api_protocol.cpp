// The local server's JSON (app/server/api_protocol): requests read into what the engine takes,
// every wrong field refused with its name, and OpenAI's shapes for answers, chunks and errors.
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QtTest>

#include "server/api_protocol.h"

using namespace llamadesk;
using namespace llamadesk::server;

namespace {

std::variant<ApiRequest, ApiError> parse(Endpoint endpoint, const QByteArray& body) {
    return parse_request(endpoint, body, SamplingParams{});
}

ApiRequest accepted(Endpoint endpoint, const QByteArray& body) {
    auto parsed = parse(endpoint, body);
    if (const ApiError* e = std::get_if<ApiError>(&parsed)) qFatal("refused: %s", qPrintable(e->message));
    return std::get<ApiRequest>(parsed);
}

ApiError refused(Endpoint endpoint, const QByteArray& body) {
    auto parsed = parse(endpoint, body);
    if (!std::holds_alternative<ApiError>(parsed)) qFatal("accepted: %s", body.constData());
    return std::get<ApiError>(parsed);
}

QJsonObject json(const QByteArray& body) { return QJsonDocument::fromJson(body).object(); }

}  // namespace

class TestApiProtocol : public QObject {
    Q_OBJECT
private slots:
    void messages_become_system_history_and_question() {
        const ApiRequest r = accepted(Endpoint::Chat, R"({"messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Hi"},
            {"role": "assistant", "content": "Hello."},
            {"role": "user", "content": [{"type": "text", "text": "And "}, {"type": "text", "text": "you?"}]},
            {"role": "user", "content": "Tell me."}]})");
        QCOMPARE(r.system_prompt, std::string("Be brief."));
        QCOMPARE(r.history.size(), size_t(1));
        QCOMPARE(r.history[0].user, std::string("Hi"));
        QCOMPARE(r.history[0].answer, std::string("Hello."));
        QCOMPARE(r.user_text, std::string("And you?\n\nTell me."));  // one turn: joined
        QVERIFY(!r.stream);
        QCOMPARE(r.params.max_new_tokens, 0);  // absent: until the answer ends
        QCOMPARE(r.params.sampling.temperature, SamplingParams{}.temperature);
    }

    void sampling_fields_by_openai_and_llama_cpp_names() {
        const ApiRequest r = accepted(Endpoint::Chat, R"({"messages": [{"role": "user", "content": "x"}],
            "temperature": 0, "top_p": 0.5, "top_k": 7, "min_p": 0.1, "repeat_penalty": 1.2, "seed": 42,
            "max_tokens": 9, "max_completion_tokens": 5, "stop": ["a", "b"], "stream": true,
            "stream_options": {"include_usage": true}, "n": 1, "presence_penalty": 0.3, "user": "ignored"})");
        QCOMPARE(r.params.sampling.temperature, 0.0f);
        QCOMPARE(r.params.sampling.top_p, 0.5f);
        QCOMPARE(r.params.sampling.top_k, 7);
        QCOMPARE(r.params.sampling.min_p, 0.1f);
        QCOMPARE(r.params.sampling.repeat_penalty, 1.2f);
        QCOMPARE(r.params.sampling.seed, int64_t(42));
        QCOMPARE(r.params.max_new_tokens, 5);  // max_completion_tokens wins
        QCOMPARE(r.params.stop_strings, (std::vector<std::string>{"a", "b"}));
        QVERIFY(r.stream);
        QVERIFY(r.include_usage);
        QCOMPARE(accepted(Endpoint::Chat, R"({"messages": [{"role": "user", "content": "x"}], "stop": "end"})")
                     .params.stop_strings,
                 std::vector<std::string>{"end"});
    }

    void completion_prompt() {
        QCOMPARE(accepted(Endpoint::Completion, R"({"prompt": "Once"})").user_text, std::string("Once"));
        QCOMPARE(accepted(Endpoint::Completion, R"({"prompt": ["Once"]})").user_text, std::string("Once"));
        QCOMPARE(refused(Endpoint::Completion, R"({"prompt": ["a", "b"]})").param, QString("prompt"));
        QCOMPARE(refused(Endpoint::Completion, R"({"prompt": ""})").param, QString("prompt"));
    }

    void every_wrong_field_is_named() {
        const struct {
            const char* body;
            const char* param;
        } cases[] = {
            {R"({"messages": "hi"})", "messages"},
            {R"({"messages": []})", "messages"},
            {R"({"messages": [7]})", "messages[0]"},
            {R"({"messages": [{"role": "tool", "content": "x"}]})", "messages[0].role"},
            {R"({"messages": [{"role": "user", "content": 5}]})", "messages[0].content"},
            {R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})", "messages[0].content"},
            {R"({"messages": [{"role": "user", "content": "x"}, {"role": "assistant", "content": "y"}]})", "messages"},
            {R"({"messages": [{"role": "user", "content": "x"}], "temperature": "hot"})", "temperature"},
            {R"({"messages": [{"role": "user", "content": "x"}], "top_k": 1.5})", "top_k"},
            {R"({"messages": [{"role": "user", "content": "x"}], "max_tokens": 0})", "max_tokens"},
            {R"({"messages": [{"role": "user", "content": "x"}], "max_completion_tokens": -3})", "max_completion_tokens"},
            {R"({"messages": [{"role": "user", "content": "x"}], "stop": 3})", "stop"},
            {R"({"messages": [{"role": "user", "content": "x"}], "stop": ["a", 1]})", "stop"},
            {R"({"messages": [{"role": "user", "content": "x"}], "n": 2})", "n"},
            {R"({"messages": [{"role": "user", "content": "x"}], "stream": "yes"})", "stream"},
            {R"({"messages": [{"role": "user", "content": "x"}], "stream_options": 1})", "stream_options"},
            {R"({"messages": [{"role": "user", "content": "x"}], "model": 3})", "model"},
        };
        for (const auto& c : cases) {
            const ApiError e = refused(Endpoint::Chat, c.body);
            QCOMPARE(e.status, 400);
            QCOMPARE(e.type, QString("invalid_request_error"));
            QVERIFY2(e.param == QLatin1String(c.param), qPrintable(e.param + " for " + c.body));
            QVERIFY(!e.message.isEmpty());
        }
        // Out of range: the engine's own statement of the ranges says which and why.
        const ApiError range = refused(Endpoint::Chat, R"({"messages": [{"role": "user", "content": "x"}], "top_p": 7})");
        QVERIFY2(range.message.contains("top-p") && range.message.contains('7'), qPrintable(range.message));
        QVERIFY(refused(Endpoint::Chat, "{\"messages\": [").message.contains("not valid JSON"));
        QVERIFY(refused(Endpoint::Chat, "[1]").message.contains("object"));
    }

    void error_shape_is_openais() {
        const QJsonObject e = json(error_body(api_error(400, "bad", "temperature")))["error"].toObject();
        QCOMPARE(e.keys(), (QStringList{"code", "message", "param", "type"}));
        QCOMPARE(e["param"].toString(), QString("temperature"));
        QVERIFY(e["code"].isNull());
        const ApiError full = error_of(Status{ErrorCode::ContextFull, "the conversation holds 10 tokens"});
        QCOMPARE(full.status, 400);
        QCOMPARE(full.code, QString("context_length_exceeded"));
        QCOMPARE(error_of(Status{ErrorCode::NoModel, "none"}).status, 503);
        QCOMPARE(error_of(Status{ErrorCode::Internal, "?"}).status, 500);
    }

    void usage_counts_the_whole_prompt_and_what_the_cache_gave() {
        GenerationStats stats;
        stats.generated_tokens = 10;
        stats.prefilled_tokens = 7;
        stats.context_tokens = 100;
        const Usage u = usage_of(stats);
        QCOMPARE(u.prompt_tokens, 100);
        QCOMPARE(u.completion_tokens, 10);
        QCOMPARE(u.cached_tokens, 93);
        QCOMPARE(finish_reason(StopReason::Eos), QString("stop"));
        QCOMPARE(finish_reason(StopReason::StopString), QString("stop"));
        QCOMPARE(finish_reason(StopReason::MaxTokens), QString("length"));
        QCOMPARE(finish_reason(StopReason::ContextFull), QString("length"));
    }

    void answers_and_chunks_in_openais_shapes() {
        const AnswerHeader chat{Endpoint::Chat, "chatcmpl-1", 1700000000, "guide"};
        const QJsonObject a = json(answer_body(chat, "Hello", "stop", Usage{12, 3, 8}));
        QCOMPARE(a["object"].toString(), QString("chat.completion"));
        QCOMPARE(a["model"].toString(), QString("guide"));
        QCOMPARE(a["choices"][0]["message"]["content"].toString(), QString("Hello"));
        QCOMPARE(a["choices"][0]["message"]["role"].toString(), QString("assistant"));
        QCOMPARE(a["choices"][0]["finish_reason"].toString(), QString("stop"));
        QCOMPARE(a["usage"]["total_tokens"].toInt(), 15);
        QCOMPARE(a["usage"]["prompt_tokens_details"]["cached_tokens"].toInt(), 8);

        const QJsonObject first = json(chunk_body(chat, "He", QString(), true));
        QCOMPARE(first["object"].toString(), QString("chat.completion.chunk"));
        QCOMPARE(first["choices"][0]["delta"]["role"].toString(), QString("assistant"));
        QVERIFY(first["choices"][0]["finish_reason"].isNull());
        const QJsonObject last = json(chunk_body(chat, std::string(), "length", false));
        QVERIFY(!last["choices"][0]["delta"].toObject().contains("content"));
        QCOMPARE(last["choices"][0]["finish_reason"].toString(), QString("length"));
        const QJsonObject usage = json(usage_chunk_body(chat, Usage{1, 2, 0}));
        QVERIFY(usage["choices"].toArray().isEmpty());
        QCOMPARE(usage["usage"]["completion_tokens"].toInt(), 2);

        const AnswerHeader completion{Endpoint::Completion, "cmpl-1", 1, "guide"};
        const QJsonObject c = json(chunk_body(completion, "text", QString(), true));
        QCOMPARE(c["object"].toString(), QString("text_completion"));
        QCOMPARE(c["choices"][0]["text"].toString(), QString("text"));
        const QJsonObject models = json(models_body("guide", 5));
        QCOMPARE(models["data"][0]["id"].toString(), QString("guide"));
        QVERIFY(json(models_body(QString(), 0))["data"].toArray().isEmpty());
    }

    // Random bytes and mutated bodies: every one is read or refused, none crashes.
    void mutated_bodies_are_read_or_refused() {
        const QByteArray base = R"({"model": "m", "messages": [{"role": "system", "content": "s"},
            {"role": "user", "content": "hi"}], "temperature": 0.5, "max_tokens": 5, "stop": ["x"],
            "stream": true, "stream_options": {"include_usage": true}})";
        QRandomGenerator random(7);
        int read = 0, refused_count = 0;
        for (int i = 0; i < 20000; ++i) {
            QByteArray body = base;
            const int edits = 1 + int(random.bounded(4));
            for (int e = 0; e < edits; ++e) {
                const int at = int(random.bounded(body.size()));
                switch (random.bounded(3)) {
                case 0: body[at] = char(random.bounded(256)); break;
                case 1: body.remove(at, 1 + int(random.bounded(8))); break;
                default: body.insert(at, "[{\"\":-1e308}]"); break;
                }
            }
            const auto parsed = parse(i % 2 ? Endpoint::Chat : Endpoint::Completion, body);
            if (const ApiError* e = std::get_if<ApiError>(&parsed)) {
                QCOMPARE(e->status, 400);
                QVERIFY(!e->message.isEmpty());
                ++refused_count;
            } else {
                ++read;
            }
        }
        qInfo("20000 mutated bodies: %d read, %d refused", read, refused_count);
    }
};

QTEST_GUILESS_MAIN(TestApiProtocol)
#include "test_api_protocol.moc"
