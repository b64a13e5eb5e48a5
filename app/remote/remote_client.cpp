#include "remote_client.h"

#include <QNetworkRequest>

#include "http_errors.h"
#include "server_metrics.h"

namespace llamadesk::remote {

RemoteClient::RemoteClient(const Endpoint& endpoint, int stall_timeout_ms, QObject* parent)
    : QObject(parent), endpoint_(endpoint), stall_timeout_ms_(stall_timeout_ms), network_(this), stall_timer_(this) {
    stall_timer_.setSingleShot(true);
    connect(&stall_timer_, &QTimer::timeout, this, &RemoteClient::onStall);
}

void RemoteClient::listModels() { send(Kind::Models, api_url(endpoint_.base_url, "models"), {}); }

void RemoteClient::startStream(bool chat, const QByteArray& body) {
    chat_ = chat;
    send(Kind::Stream, api_url(endpoint_.base_url, chat ? "chat/completions" : "completions"), body);
}

void RemoteClient::fetchMetrics() { send(Kind::Metrics, metrics_url(endpoint_.base_url), {}); }

void RemoteClient::abort() {
    stall_timer_.stop();
    if (!reply_) return;
    QNetworkReply* reply = reply_;
    reply_ = nullptr;
    reply->disconnect(this);
    reply->abort();
    reply->deleteLater();
}

void RemoteClient::send(Kind kind, const QUrl& url, const QByteArray& body) {
    abort();
    kind_ = kind;
    body_.clear();
    received_ = 0;
    sse_ = SseDecoder();
    answer_started_ = stream_done_ = stalled_ = false;
    finish_reason_.clear();

    QNetworkRequest request(url);
    // A redirect could carry the key to another host: it is reported, not followed.
    request.setAttribute(QNetworkRequest::RedirectPolicyAttribute, QNetworkRequest::ManualRedirectPolicy);
    if (!endpoint_.api_key.isEmpty() && same_origin(url, endpoint_.base_url))
        request.setRawHeader("Authorization", "Bearer " + endpoint_.api_key.toUtf8());
    if (kind == Kind::Stream) {
        request.setHeader(QNetworkRequest::ContentTypeHeader, "application/json");
        request.setRawHeader("Accept", "text/event-stream");
        reply_ = network_.post(request, body);
    } else {
        reply_ = network_.get(request);
    }
    connect(reply_, &QNetworkReply::readyRead, this, &RemoteClient::onReadyRead);
    connect(reply_, &QNetworkReply::finished, this, &RemoteClient::onFinished);
    stall_timer_.start(timeout_ms());
}

int RemoteClient::timeout_ms() const {
    return kind_ == Kind::Metrics ? std::min(stall_timeout_ms_, kMetricsTimeoutMs) : stall_timeout_ms_;
}

void RemoteClient::onReadyRead() {
    stall_timer_.start(timeout_ms());
    const QByteArray bytes = reply_->readAll();
    received_ += bytes.size();
    const qint64 limit = kind_ == Kind::Stream ? kMaxStreamBytes : kMaxBodyBytes;
    if (received_ > limit) return fail(too_large_error(reply_->url(), limit));
    const int status = reply_->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (kind_ != Kind::Stream || status >= 300) {
        body_ += bytes;
        return;
    }
    for (const QByteArray& payload : sse_.feed(bytes)) {
        consume(payload);
        if (!reply_) return;  // the payload ended the request
    }
    if (sse_.overflowed())
        fail(QStringLiteral("%1 sent an event line longer than %2 MiB; LlamaDesk stopped reading")
                 .arg(reply_->url().host())
                 .arg(SseDecoder::kMaxLineBytes / (1024 * 1024)));
}

void RemoteClient::consume(const QByteArray& payload) {
    const StreamChunk chunk = parse_chunk(payload, chat_);
    if (!chunk.error.isEmpty()) return fail(chunk.error);
    if (chunk.done) {
        stream_done_ = true;
        return;
    }
    if (!chunk.text.isEmpty()) {
        answer_started_ = true;
        emit piece(chunk.text);
    }
    if (!chunk.finish_reason.isEmpty()) finish_reason_ = chunk.finish_reason;
    if (chunk.usage) emit usageReported(*chunk.usage);
}

void RemoteClient::onFinished() {
    stall_timer_.stop();
    QNetworkReply* reply = reply_;
    reply_ = nullptr;
    reply->deleteLater();
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    if (kind_ == Kind::Metrics) {
        const std::optional<double> usage = reply->error() == QNetworkReply::NoError && status == 200
                                                ? kv_cache_usage(body_) : std::nullopt;
        emit metricsRead(usage.value_or(-1.0));
        return;
    }
    if (stalled_) return emit failed(stall_error(reply->url(), stall_timeout_ms_, answer_started_));
    if (status >= 300 || reply->error() != QNetworkReply::NoError)
        return emit failed(request_error(reply->url(), reply->error(), reply->errorString(), status, body_));
    if (kind_ == Kind::Models) {
        QString error;
        const std::optional<QStringList> ids = parse_models(body_, &error);
        return ids ? emit modelsListed(*ids) : emit failed(error);
    }
    if (!stream_done_ && finish_reason_.isEmpty())
        return emit failed(QStringLiteral("%1 ended the stream before the answer was complete (no [DONE])")
                               .arg(reply->url().host()));
    emit streamFinished(finish_reason_);
}

void RemoteClient::onStall() {
    if (!reply_) return;
    stalled_ = true;
    reply_->abort();  // finished follows, and reports the stall
}

void RemoteClient::fail(const QString& message) {
    abort();
    if (kind_ == Kind::Metrics)
        emit metricsRead(-1.0);
    else
        emit failed(message);
}

}  // namespace llamadesk::remote
