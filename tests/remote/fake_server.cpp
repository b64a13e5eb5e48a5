#include "fake_server.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QMutexLocker>
#include <QFile>
#include <QPointer>
#include <QSslCertificate>
#include <QSslConfiguration>
#include <QSslKey>
#include <QSslServer>
#include <QTcpServer>
#include <QTcpSocket>
#include <QTimer>

namespace llamadesk::test {

QByteArray http_response(int status, const QByteArray& body, const QByteArray& content_type,
                         const QByteArray& extra_headers) {
    return "HTTP/1.1 " + QByteArray::number(status) + " Status\r\nContent-Type: " + content_type +
           "\r\nContent-Length: " + QByteArray::number(body.size()) + "\r\nConnection: close\r\n" + extra_headers +
           "\r\n" + body;
}

QByteArray sse_head() {
    return "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nCache-Control: no-cache\r\nConnection: close\r\n\r\n";
}

QByteArray sse_event(const QByteArray& payload) { return "data: " + payload + "\n\n"; }

QByteArray chat_chunk(const QString& text, const QString& finish_reason) {
    QJsonObject choice{{"index", 0}, {"delta", QJsonObject{{"content", text}}}};
    choice["finish_reason"] = finish_reason.isEmpty() ? QJsonValue() : QJsonValue(finish_reason);
    return QJsonDocument(QJsonObject{{"object", "chat.completion.chunk"}, {"choices", QJsonArray{choice}}})
        .toJson(QJsonDocument::Compact);
}

namespace {

QByteArray read_tls_file(const char* name) {
    QFile file(QStringLiteral(LLAMADESK_TEST_DATA_DIR "/tls/") + name);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

}  // namespace

QByteArray FakeServer::certificate_pem() { return read_tls_file("localhost.crt"); }

// Lives on the server's thread: accepts, reads one request per connection, plays its script.
class FakeServerCore : public QObject {
public:
    FakeServerCore(FakeServer* owner, FakeServer::Transport transport) : owner_(owner) {
        if (transport == FakeServer::Transport::Tls) {
            auto* tls = new QSslServer(this);
            QSslConfiguration config = QSslConfiguration::defaultConfiguration();
            config.setLocalCertificate(QSslCertificate(FakeServer::certificate_pem()));
            config.setPrivateKey(QSslKey(read_tls_file("localhost.key"), QSsl::Rsa));
            tls->setSslConfiguration(config);
            server_ = tls;
        } else {
            server_ = new QTcpServer(this);
        }
        // Over TLS a connection is pending once its handshake is done.
        connect(server_, &QTcpServer::pendingConnectionAvailable, this, [this] {
            while (QTcpSocket* socket = server_->nextPendingConnection()) {
                socket->setParent(this);
                connect(socket, &QTcpSocket::readyRead, this, [this, socket] { onRead(socket); });
                if (socket->bytesAvailable() > 0) onRead(socket);
            }
        });
    }
    quint16 listen() {
        server_->listen(QHostAddress::LocalHost, 0);
        return server_->serverPort();
    }

private:
    void onRead(QTcpSocket* socket) {
        QByteArray& buffer = buffers_[socket];
        buffer += socket->readAll();
        const qsizetype head_end = buffer.indexOf("\r\n\r\n");
        if (head_end < 0) return;
        qsizetype length = 0;
        for (const QByteArray& line : buffer.left(head_end).split('\n'))
            if (line.toLower().startsWith("content-length:")) length = line.mid(15).trimmed().toLongLong();
        if (buffer.size() < head_end + 4 + length) return;
        const QByteArray request = buffer;
        buffers_.remove(socket);
        disconnect(socket, &QTcpSocket::readyRead, this, nullptr);
        const QString path = QString::fromLatin1(request.split(' ').value(1)).section('?', 0, 0);
        Script script{{{http_response(404, R"({"detail":"Not Found"})")}}, true};
        {
            QMutexLocker lock(&owner_->mutex_);
            owner_->requests_.append(request);
            if (owner_->routes_.contains(path)) script = owner_->routes_.value(path);
        }
        play(socket, script, 0);
    }

    void play(QPointer<QTcpSocket> socket, const Script& script, size_t i) {
        if (!socket) return;
        if (i == script.steps.size()) {
            if (script.close) socket->disconnectFromHost();
            return;
        }
        QTimer::singleShot(script.steps[i].delay_ms, this, [this, socket, script, i] {
            if (!socket) return;
            socket->write(script.steps[i].bytes);
            socket->flush();
            play(socket, script, i + 1);
        });
    }

    FakeServer* owner_;
    QTcpServer* server_;
    QHash<QTcpSocket*, QByteArray> buffers_;
};

FakeServer::FakeServer(Transport transport) : core_(new FakeServerCore(this, transport)), transport_(transport) {
    core_->moveToThread(&thread_);
    thread_.start();
    QMetaObject::invokeMethod(core_, [this] { port_ = core_->listen(); }, Qt::BlockingQueuedConnection);
}

FakeServer::~FakeServer() {
    QMetaObject::invokeMethod(core_, [this] { delete core_; }, Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
}

QUrl FakeServer::base_url() const {
    return QUrl(QStringLiteral("%1://127.0.0.1:%2/v1").arg(transport_ == Transport::Tls ? "https" : "http").arg(port_));
}

void FakeServer::route(const QString& path, const Script& script) {
    QMutexLocker lock(&mutex_);
    routes_.insert(path, script);
}

QList<QByteArray> FakeServer::requests() const {
    QMutexLocker lock(&mutex_);
    return requests_;
}

}  // namespace llamadesk::test
