// The OpenAI-compatible API's JSON: request bodies from LlamaDesk's settings, and what comes back
// (stream chunks, usage, the model list, a server's own error message).
#pragma once

#include <QByteArray>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

#include <llamadesk/engine.h>

namespace llamadesk::remote {

struct Message {
    QString role;  // "system", "user", "assistant"
    QString content;
};

// What the server counted; absent fields were not reported.
struct Usage {
    int prompt_tokens = 0;
    int completion_tokens = 0;
    std::optional<int> cached_tokens;  // usage.prompt_tokens_details.cached_tokens (vLLM, OpenAI)
};

// One "data:" payload of a stream.
struct StreamChunk {
    bool done = false;        // the "[DONE]" sentinel
    QString text;             // choices[0].delta.content (chat) or choices[0].text (completion)
    QString finish_reason;    // empty while the answer goes on
    std::optional<Usage> usage;
    QString error;            // a malformed payload, or the server's own error event
};

// POST /v1/chat/completions: the whole history as messages, streamed, usage asked for. Sampling
// fields go by the names llama.cpp's server and vLLM read (repeat_penalty / repetition_penalty:
// each ignores the other's); seed only when fixed, max_tokens only when limited.
QByteArray chat_body(const QString& model, const std::vector<Message>& messages, const GenerateParams& params);
// POST /v1/completions: the text to continue, with the same fields.
QByteArray completion_body(const QString& model, const QString& prompt, const GenerateParams& params);

StreamChunk parse_chunk(const QByteArray& payload, bool chat);
// GET /v1/models: the ids, or an error naming what was wrong.
std::optional<QStringList> parse_models(const QByteArray& body, QString* error);
// The message inside an error body ({"error": {"message": ...}}, {"error": "..."}, {"detail": ...}),
// else the body's start as text; empty for an empty body.
QString server_message(const QByteArray& body);

}  // namespace llamadesk::remote
