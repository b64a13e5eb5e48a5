// A scripted HTTP server on 127.0.0.1 for the remote client's fault tests, plain or over TLS with
// tests/data/tls/localhost.crt (self-signed for 127.0.0.1). It runs on a thread of
// its own, since the client under test blocks the test's thread while it waits. Each request path
// gets a script: byte strings sent after a delay, then the connection is closed or left open (a
// stalled server).
#pragma once

#include <QByteArray>
#include <QHash>
#include <QList>
#include <QMutex>
#include <QThread>
#include <QUrl>
#include <vector>

namespace llamadesk::test {

struct Step {
    QByteArray bytes;
    int delay_ms = 0;
};

struct Script {
    std::vector<Step> steps;
    bool close = true;  // false: the connection stays open and silent after the last step
};

// A complete response with a Content-Length.
QByteArray http_response(int status, const QByteArray& body, const QByteArray& content_type = "application/json",
                         const QByteArray& extra_headers = {});
// The head of a 200 event stream (the body ends when the connection closes).
QByteArray sse_head();
// "data: payload\n\n"
QByteArray sse_event(const QByteArray& payload);
// A chat stream chunk carrying text as choices[0].delta.content (finish_reason when not empty).
QByteArray chat_chunk(const QString& text, const QString& finish_reason = {});

class FakeServer {
public:
    enum class Transport { Plain, Tls };
    explicit FakeServer(Transport transport = Transport::Plain);
    ~FakeServer();

    // http://127.0.0.1:PORT/v1, https:// over TLS
    QUrl base_url() const;
    // The certificate a TLS server presents.
    static QByteArray certificate_pem();
    // The script played to every request for path ("/v1/chat/completions"); 404 for other paths.
    void route(const QString& path, const Script& script);
    // Every request received so far, head and body, in order.
    QList<QByteArray> requests() const;

private:
    friend class FakeServerCore;
    QThread thread_;
    class FakeServerCore* core_;
    quint16 port_ = 0;
    Transport transport_;
    mutable QMutex mutex_;
    QHash<QString, Script> routes_;
    QList<QByteArray> requests_;
};

}  // namespace llamadesk::test
