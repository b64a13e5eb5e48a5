#include "server/api_protocol.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <cmath>

namespace llamadesk::server {

namespace {

// A field of the wrong type or out of range: thrown inside parse_request, caught at its end.
struct FieldError {
    ApiError error;
};

[[noreturn]] void refuse(const QString& param, const QString& message) {
    throw FieldError{api_error(400, message, param)};
}

QString type_name(const QJsonValue& v) {
    switch (v.type()) {
    case QJsonValue::Null: return QStringLiteral("null");
    case QJsonValue::Bool: return QStringLiteral("a boolean");
    case QJsonValue::Double: return QStringLiteral("a number");
    case QJsonValue::String: return QStringLiteral("a string");
    case QJsonValue::Array: return QStringLiteral("an array");
    case QJsonValue::Object: return QStringLiteral("an object");
    default: return QStringLiteral("undefined");
    }
}

// Each reader returns nullopt for an absent or null field, the value otherwise, and refuses a
// value of another type.
std::optional<double> number(const QJsonObject& o, const QString& key) {
    const QJsonValue v = o.value(key);
    if (v.isUndefined() || v.isNull()) return std::nullopt;
    if (!v.isDouble() || !std::isfinite(v.toDouble()))
        refuse(key, QStringLiteral("'%1' must be a number, not %2").arg(key, type_name(v)));
    return v.toDouble();
}

std::optional<int64_t> integer(const QJsonObject& o, const QString& key) {
    const std::optional<double> d = number(o, key);
    if (!d) return std::nullopt;
    if (*d != std::floor(*d) || std::fabs(*d) > 9.0e15)
        refuse(key, QStringLiteral("'%1' must be an integer, not %2").arg(key).arg(*d));
    return int64_t(*d);
}

std::optional<bool> boolean(const QJsonObject& o, const QString& key) {
    const QJsonValue v = o.value(key);
    if (v.isUndefined() || v.isNull()) return std::nullopt;
    if (!v.isBool()) refuse(key, QStringLiteral("'%1' must be a boolean, not %2").arg(key, type_name(v)));
    return v.toBool();
}

// A message's content: a string, or OpenAI's list of parts of which only text parts are read here.
std::string content_text(const QJsonValue& v, const QString& param) {
    if (v.isString()) return v.toString().toStdString();
    if (v.isNull() || v.isUndefined()) return {};
    if (!v.isArray()) refuse(param, QStringLiteral("'%1' must be a string or an array of text parts, not %2").arg(param, type_name(v)));
    std::string text;
    for (const QJsonValue& part : v.toArray()) {
        const QJsonObject p = part.toObject();
        if (p.value("type").toString() != QLatin1String("text") || !p.value("text").isString())
            refuse(param, QStringLiteral("'%1' may hold only text parts ({\"type\": \"text\", \"text\": ...}): "
                                         "this model reads no images or audio").arg(param));
        text += p.value("text").toString().toStdString();
    }
    return text;
}

void append_paragraph(std::string& to, const std::string& text) {
    if (!to.empty() && !text.empty()) to += "\n\n";
    to += text;
}

// messages -> system prompt, the exchanges before the last user message, and that message.
// Consecutive messages of one role are joined, as one turn of the conversation.
void read_messages(const QJsonObject& body, ApiRequest& request) {
    const QJsonValue v = body.value("messages");
    if (!v.isArray()) refuse("messages", QStringLiteral("'messages' must be an array of messages, not %1").arg(type_name(v)));
    const QJsonArray messages = v.toArray();
    if (messages.isEmpty()) refuse("messages", QStringLiteral("'messages' is empty: send at least one user message"));
    std::optional<ChatTurn> turn;  // the exchange being read
    bool last_is_user = false;
    for (qsizetype i = 0; i < messages.size(); ++i) {
        const QString param = QStringLiteral("messages[%1]").arg(i);
        if (!messages[i].isObject()) refuse(param, QStringLiteral("'%1' must be an object, not %2").arg(param, type_name(messages[i])));
        const QJsonObject m = messages[i].toObject();
        const QString role = m.value("role").toString();
        const std::string text = content_text(m.value("content"), param + QStringLiteral(".content"));
        if (role == QLatin1String("system") || role == QLatin1String("developer")) {
            append_paragraph(request.system_prompt, text);
        } else if (role == QLatin1String("user")) {
            if (turn && !turn->answer.empty()) {
                request.history.push_back(*turn);
                turn.reset();
            }
            if (!turn) turn.emplace();
            append_paragraph(turn->user, text);
            last_is_user = true;
        } else if (role == QLatin1String("assistant")) {
            if (!turn) turn.emplace();
            append_paragraph(turn->answer, text);
            last_is_user = false;
        } else {
            refuse(param + QStringLiteral(".role"),
                   QStringLiteral("'%1.role' must be \"system\", \"developer\", \"user\" or \"assistant\", not \"%2\"")
                       .arg(param, role));
        }
    }
    if (!last_is_user)
        refuse("messages", QStringLiteral("the last message must be the user's: the model answers it"));
    request.user_text = turn->user;
}

void read_prompt(const QJsonObject& body, ApiRequest& request) {
    QJsonValue v = body.value("prompt");
    if (v.isArray() && v.toArray().size() == 1) v = v.toArray().first();
    if (!v.isString())
        refuse("prompt", QStringLiteral("'prompt' must be a string (or an array of one string), not %1").arg(type_name(v)));
    request.user_text = v.toString().toStdString();
    if (request.user_text.empty()) refuse("prompt", QStringLiteral("'prompt' is empty: there is no text to continue"));
}

void read_stop(const QJsonObject& body, GenerateParams& params) {
    const QJsonValue v = body.value("stop");
    if (v.isUndefined() || v.isNull()) return;
    QJsonArray list;
    if (v.isString())
        list.append(v);
    else if (v.isArray())
        list = v.toArray();
    else
        refuse("stop", QStringLiteral("'stop' must be a string or an array of strings, not %1").arg(type_name(v)));
    constexpr int kMaxStops = 16;
    if (list.size() > kMaxStops) refuse("stop", QStringLiteral("'stop' holds %1 strings; at most %2 are taken").arg(list.size()).arg(kMaxStops));
    for (const QJsonValue& s : list) {
        if (!s.isString()) refuse("stop", QStringLiteral("'stop' must hold strings, not %1").arg(type_name(s)));
        if (!s.toString().isEmpty()) params.stop_strings.push_back(s.toString().toStdString());
    }
}

void read_sampling(const QJsonObject& body, GenerateParams& params) {
    SamplingParams& s = params.sampling;
    if (const auto t = number(body, "temperature")) s.temperature = float(*t);
    if (const auto p = number(body, "top_p")) s.top_p = float(*p);
    if (const auto k = integer(body, "top_k")) s.top_k = int(std::clamp<int64_t>(*k, -1, 1 << 30));
    if (const auto m = number(body, "min_p")) s.min_p = float(*m);
    if (const auto r = number(body, "repeat_penalty")) s.repeat_penalty = float(*r);
    if (const auto seed = integer(body, "seed")) s.seed = *seed;
    const Status valid = validate_sampling(s);
    if (!valid.ok()) refuse(QString(), QString::fromStdString(valid.message));

    std::optional<int64_t> max = integer(body, "max_completion_tokens");
    const QString max_name = max ? QStringLiteral("max_completion_tokens") : QStringLiteral("max_tokens");
    if (!max) max = integer(body, "max_tokens");
    if (max && *max < 1) refuse(max_name, QStringLiteral("'%1' must be at least 1, not %2").arg(max_name).arg(*max));
    // Absent: until the answer ends or the context is full, as llama.cpp's server does.
    params.max_new_tokens = max ? int(std::min<int64_t>(*max, 1 << 30)) : 0;
    read_stop(body, params);
}

QJsonValue text_or_null(const QString& s) { return s.isEmpty() ? QJsonValue() : QJsonValue(s); }

QJsonObject usage_json(const Usage& usage) {
    return QJsonObject{{"prompt_tokens", usage.prompt_tokens},
                       {"completion_tokens", usage.completion_tokens},
                       {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
                       {"prompt_tokens_details", QJsonObject{{"cached_tokens", usage.cached_tokens}}}};
}

QJsonObject envelope(const AnswerHeader& header, bool chunk) {
    const bool chat = header.endpoint == Endpoint::Chat;
    return QJsonObject{{"id", header.id},
                       {"object", chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion"},
                       {"created", header.created},
                       {"model", header.model}};
}

QJsonObject choice(const AnswerHeader& header, const std::string& text, const QString& finish, bool chunk, bool first) {
    QJsonObject c{{"index", 0}, {"finish_reason", text_or_null(finish)}};
    const QString content = QString::fromStdString(text);
    if (header.endpoint == Endpoint::Completion) {
        c["text"] = content;
        c["logprobs"] = QJsonValue();
    } else if (chunk) {
        QJsonObject delta;
        if (first) delta["role"] = "assistant";
        if (!finish.isEmpty() && content.isEmpty()) {
            c["delta"] = delta;
            return c;
        }
        delta["content"] = content;
        c["delta"] = delta;
    } else {
        c["message"] = QJsonObject{{"role", "assistant"}, {"content", content}};
        c["logprobs"] = QJsonValue();
    }
    return c;
}

QByteArray compact(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact); }

}  // namespace

ApiError api_error(int status, const QString& message, const QString& param, const QString& code, int retry_after_s) {
    const QString type = status == 401   ? QStringLiteral("authentication_error")
                         : status == 404 ? QStringLiteral("not_found_error")
                         : status == 429 ? QStringLiteral("rate_limit_error")
                         : status >= 500 ? QStringLiteral("server_error")
                                         : QStringLiteral("invalid_request_error");
    return ApiError{status, message, type, param, code, retry_after_s};
}

QByteArray error_body(const ApiError& error) {
    return compact(QJsonObject{{"error", QJsonObject{{"message", error.message},
                                                     {"type", error.type},
                                                     {"param", text_or_null(error.param)},
                                                     {"code", text_or_null(error.code)}}}});
}

std::variant<ApiRequest, ApiError> parse_request(Endpoint endpoint, const QByteArray& body,
                                                 const SamplingParams& defaults) {
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(body, &parse_error);
    if (parse_error.error != QJsonParseError::NoError)
        return api_error(400, QStringLiteral("the body is not valid JSON: %1 at byte %2")
                                  .arg(parse_error.errorString()).arg(parse_error.offset));
    if (!doc.isObject()) return api_error(400, QStringLiteral("the body must be a JSON object"));
    const QJsonObject o = doc.object();
    ApiRequest request;
    request.endpoint = endpoint;
    request.params.sampling = defaults;
    try {
        const QJsonValue model = o.value("model");
        if (!model.isUndefined() && !model.isNull() && !model.isString())
            refuse("model", QStringLiteral("'model' must be a string, not %1").arg(type_name(model)));
        request.model = model.toString();
        if (endpoint == Endpoint::Chat)
            read_messages(o, request);
        else
            read_prompt(o, request);
        read_sampling(o, request.params);
        if (const auto n = integer(o, "n"); n && *n != 1)
            refuse("n", QStringLiteral("'n' must be 1: this server gives one answer per request, not %1").arg(*n));
        request.stream = boolean(o, "stream").value_or(false);
        const QJsonValue options = o.value("stream_options");
        if (options.isObject())
            request.include_usage = boolean(options.toObject(), "include_usage").value_or(false);
        else if (!options.isUndefined() && !options.isNull())
            refuse("stream_options", QStringLiteral("'stream_options' must be an object, not %1").arg(type_name(options)));
    } catch (const FieldError& e) {
        return e.error;
    }
    return request;
}

Usage usage_of(const GenerationStats& stats) {
    Usage usage;
    usage.completion_tokens = stats.generated_tokens;
    usage.prompt_tokens = stats.context_tokens;
    usage.cached_tokens = std::max(0, usage.prompt_tokens - stats.prefilled_tokens);
    return usage;
}

ApiError error_of(const Status& status) {
    const QString message = QString::fromStdString(status.message);
    switch (status.code) {
    case ErrorCode::ContextFull: return api_error(400, message, "messages", "context_length_exceeded");
    case ErrorCode::InvalidArgument: return api_error(400, message);
    case ErrorCode::NoModel: return api_error(503, message, {}, "no_model", 5);
    default: return api_error(500, message);
    }
}

QString finish_reason(StopReason reason) {
    switch (reason) {
    case StopReason::Eos:
    case StopReason::StopString: return QStringLiteral("stop");
    case StopReason::MaxTokens:
    case StopReason::ContextFull: return QStringLiteral("length");
    case StopReason::Cancelled:
    case StopReason::Error: break;
    }
    return QStringLiteral("stop");
}

QByteArray answer_body(const AnswerHeader& header, const std::string& text, const QString& finish, const Usage& usage) {
    QJsonObject o = envelope(header, false);
    o["choices"] = QJsonArray{choice(header, text, finish, false, false)};
    o["usage"] = usage_json(usage);
    return compact(o);
}

QByteArray chunk_body(const AnswerHeader& header, const std::string& text, const QString& finish, bool first) {
    QJsonObject o = envelope(header, true);
    o["choices"] = QJsonArray{choice(header, text, finish, true, first)};
    return compact(o);
}

QByteArray usage_chunk_body(const AnswerHeader& header, const Usage& usage) {
    QJsonObject o = envelope(header, true);
    o["choices"] = QJsonArray{};
    o["usage"] = usage_json(usage);
    return compact(o);
}

QByteArray models_body(const QString& model, qint64 created) {
    QJsonArray data;
    if (!model.isEmpty())
        data.append(QJsonObject{{"id", model}, {"object", "model"}, {"created", created}, {"owned_by", "llamadesk"}});
    return compact(QJsonObject{{"object", "list"}, {"data", data}});
}

}  // namespace llamadesk::server
