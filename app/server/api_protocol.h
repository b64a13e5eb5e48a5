// The local server's side of the OpenAI-compatible API: a request body read into what the engine
// takes (every field checked, with the field named when it is wrong; fields of no use here are
// ignored, as OpenAI's own server ignores unknown ones), and the JSON that goes back: answers,
// stream chunks, usage, the model list and errors, all in OpenAI's shapes and names.
#pragma once

#include <QByteArray>
#include <QString>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include <llamadesk/engine.h>

namespace llamadesk::server {

enum class Endpoint { Chat, Completion };  // POST /v1/chat/completions, POST /v1/completions

// OpenAI's error: {"error": {"message", "type", "param", "code"}} with its HTTP status.
struct ApiError {
    int status = 400;
    QString message;
    QString type;           // OpenAI's name for the status's kind (api_error() chooses it)
    QString param;          // the request field at fault; empty: null
    QString code;           // e.g. "context_length_exceeded"; empty: null
    int retry_after_s = 0;  // > 0: a Retry-After header (429, 503)
};
// An error of this status, typed as OpenAI types it (401 authentication_error, 404 not_found_error,
// 429 rate_limit_error, 5xx server_error, other 4xx invalid_request_error).
ApiError api_error(int status, const QString& message, const QString& param = {}, const QString& code = {},
                   int retry_after_s = 0);
QByteArray error_body(const ApiError& error);

struct ApiRequest {
    Endpoint endpoint = Endpoint::Chat;
    QString model;                // as the client named it (answers name the model loaded)
    std::string system_prompt;    // chat: the system (and developer) messages, joined
    std::vector<ChatTurn> history;  // chat: the exchanges before the last user message
    std::string user_text;        // chat: the last user message; completion: the prompt
    GenerateParams params;
    bool stream = false;
    bool include_usage = false;   // stream_options.include_usage: a last chunk with usage
};

// Reads a request body. defaults: the sampling a field left out takes (the engine's own).
std::variant<ApiRequest, ApiError> parse_request(Endpoint endpoint, const QByteArray& body,
                                                 const SamplingParams& defaults);

// What an answer counted, as OpenAI reports it: every token of the prompt (history and template
// included), and of those the ones that came out of the KV cache rather than a prefill.
struct Usage {
    int prompt_tokens = 0;
    int completion_tokens = 0;
    int cached_tokens = 0;  // usage.prompt_tokens_details.cached_tokens
};
Usage usage_of(const GenerationStats& stats);

// An answer that could not start: a prompt longer than the context or bad sampling is the
// client's (400, with the engine's numbers), no model is 503, the rest is the server's (500).
ApiError error_of(const Status& status);

// "stop" (end of answer, stop string) or "length" (max_tokens, the context).
QString finish_reason(StopReason reason);

struct AnswerHeader {
    Endpoint endpoint = Endpoint::Chat;
    QString id;        // "chatcmpl-..." or "cmpl-..."
    qint64 created = 0;
    QString model;
};
QByteArray answer_body(const AnswerHeader& header, const std::string& text, const QString& finish, const Usage& usage);
// One "data:" payload of a stream: a piece of text, or (finish non-empty) the last one, or (usage
// set) the usage chunk that follows it when the client asked for one.
QByteArray chunk_body(const AnswerHeader& header, const std::string& text, const QString& finish,
                      bool first = false);
QByteArray usage_chunk_body(const AnswerHeader& header, const Usage& usage);
QByteArray models_body(const QString& model, qint64 created);

}  // namespace llamadesk::server
