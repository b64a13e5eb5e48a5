// One OpenAI-compatible server, asynchronously, on the thread it lives in: the model list, one
// streamed answer, the /metrics page. One request at a time; a new one or abort() ends the last.
// Every wait has a limit: a request that receives nothing for stall_timeout_ms fails.
#pragma once

#include <QNetworkAccessManager>
#include <QNetworkReply>
#include <QObject>
#include <QPointer>
#include <QTimer>

#include "endpoint.h"
#include "openai_protocol.h"
#include "sse_decoder.h"

namespace llamadesk::remote {

class RemoteClient : public QObject {
    Q_OBJECT
public:
    // What one request may send back before it is refused as a hostile or broken server.
    static constexpr qint64 kMaxStreamBytes = 256LL * 1024 * 1024;
    static constexpr qint64 kMaxBodyBytes = 16LL * 1024 * 1024;
    // /metrics is a side figure: a server slow to serve it must not hold the next answer back.
    static constexpr int kMetricsTimeoutMs = 3000;

    RemoteClient(const Endpoint& endpoint, int stall_timeout_ms, QObject* parent = nullptr);

public slots:
    void listModels();  // modelsListed or failed
    // chat: POST /v1/chat/completions, else /v1/completions; body from openai_protocol.h.
    // piece and usageReported as the stream arrives, then streamFinished or failed.
    void startStream(bool chat, const QByteArray& body);
    void fetchMetrics();  // metricsRead, never failed: a server without the page reports none
    void abort();         // the request in flight ends and says nothing more

signals:
    void modelsListed(const QStringList& ids);
    void piece(const QString& text);
    void usageReported(const llamadesk::remote::Usage& usage);
    void streamFinished(const QString& finish_reason);
    void metricsRead(double kv_cache_usage);  // a fraction in [0, 1]; -1: not reported
    void failed(const QString& message);

private:
    enum class Kind { Models, Stream, Metrics };
    int timeout_ms() const;
    void send(Kind kind, const QUrl& url, const QByteArray& body);
    void onReadyRead();
    void onFinished();
    void onStall();
    void fail(const QString& message);
    void consume(const QByteArray& payload);

    Endpoint endpoint_;
    int stall_timeout_ms_;
    QNetworkAccessManager network_;
    QTimer stall_timer_;
    QPointer<QNetworkReply> reply_;
    Kind kind_ = Kind::Models;
    bool chat_ = true;
    QByteArray body_;        // a non-stream reply, or an error reply's body
    qint64 received_ = 0;
    SseDecoder sse_;
    bool answer_started_ = false;
    bool stream_done_ = false;
    QString finish_reason_;
    bool stalled_ = false;
};

}  // namespace llamadesk::remote
