#include "openai_protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace llamadesk::remote {

namespace {

QJsonObject sampling_fields(const QString& model, const GenerateParams& params) {
    const SamplingParams& s = params.sampling;
    QJsonObject body{
        {"model", model},
        {"stream", true},
        {"stream_options", QJsonObject{{"include_usage", true}}},
        {"temperature", s.temperature},
        {"top_p", s.top_p},
        {"top_k", s.top_k},
        {"min_p", s.min_p},
        {"repeat_penalty", s.repeat_penalty},
        {"repetition_penalty", s.repeat_penalty},
    };
    if (s.seed >= 0) body["seed"] = double(s.seed);
    if (params.max_new_tokens > 0) body["max_tokens"] = params.max_new_tokens;
    if (!params.stop_strings.empty()) {
        QJsonArray stop;
        for (const std::string& s : params.stop_strings) stop.append(QString::fromStdString(s));
        body["stop"] = stop;
    }
    return body;
}

QByteArray compact(const QJsonObject& object) { return QJsonDocument(object).toJson(QJsonDocument::Compact); }

}  // namespace

QByteArray chat_body(const QString& model, const std::vector<Message>& messages, const GenerateParams& params) {
    QJsonObject body = sampling_fields(model, params);
    QJsonArray list;
    for (const Message& m : messages) list.append(QJsonObject{{"role", m.role}, {"content", m.content}});
    body["messages"] = list;
    return compact(body);
}

QByteArray completion_body(const QString& model, const QString& prompt, const GenerateParams& params) {
    QJsonObject body = sampling_fields(model, params);
    body["prompt"] = prompt;
    return compact(body);
}

StreamChunk parse_chunk(const QByteArray& payload, bool chat) {
    StreamChunk chunk;
    if (payload.trimmed() == "[DONE]") {
        chunk.done = true;
        return chunk;
    }
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(payload, &parse_error);
    if (!doc.isObject()) {
        chunk.error = QStringLiteral("the server sent a malformed event (%1): %2")
                          .arg(parse_error.error == QJsonParseError::NoError ? QStringLiteral("not a JSON object")
                                                                            : parse_error.errorString(),
                               QString::fromUtf8(payload.left(120)));
        return chunk;
    }
    const QJsonObject object = doc.object();
    if (object.contains("error")) {
        chunk.error = QStringLiteral("the server stopped with an error: %1").arg(server_message(payload));
        return chunk;
    }
    const QJsonArray choices = object.value("choices").toArray();
    if (!choices.isEmpty()) {
        const QJsonObject choice = choices.first().toObject();
        chunk.text = chat ? choice.value("delta").toObject().value("content").toString()
                          : choice.value("text").toString();
        chunk.finish_reason = choice.value("finish_reason").toString();
    }
    const QJsonValue usage = object.value("usage");
    if (usage.isObject()) {
        const QJsonObject u = usage.toObject();
        Usage figures;
        figures.prompt_tokens = u.value("prompt_tokens").toInt();
        figures.completion_tokens = u.value("completion_tokens").toInt();
        const QJsonValue cached = u.value("prompt_tokens_details").toObject().value("cached_tokens");
        if (cached.isDouble()) figures.cached_tokens = cached.toInt();
        chunk.usage = figures;
    }
    return chunk;
}

std::optional<QStringList> parse_models(const QByteArray& body, QString* error) {
    const QJsonDocument doc = QJsonDocument::fromJson(body);
    const QJsonValue data = doc.object().value("data");
    if (!data.isArray()) {
        *error = QStringLiteral("the server's model list is not the OpenAI format ({\"data\": [...]}): %1")
                     .arg(QString::fromUtf8(body.left(120)));
        return std::nullopt;
    }
    QStringList ids;
    for (const QJsonValue& model : data.toArray()) {
        const QString id = model.toObject().value("id").toString();
        if (!id.isEmpty()) ids.append(id);
    }
    return ids;
}

QString server_message(const QByteArray& body) {
    const QJsonObject object = QJsonDocument::fromJson(body).object();
    const QJsonValue error = object.value("error");
    if (error.isObject() && error.toObject().value("message").isString())
        return error.toObject().value("message").toString().trimmed();
    if (error.isString()) return error.toString().trimmed();
    const QJsonValue detail = object.value("detail");
    if (detail.isString()) return detail.toString();
    if (!detail.isUndefined()) return QString::fromUtf8(QJsonDocument(QJsonObject{{"detail", detail}}).toJson(QJsonDocument::Compact));
    return QString::fromUtf8(body.left(300)).trimmed();
}

}  // namespace llamadesk::remote
