#include "http_errors.h"

#include "endpoint.h"
#include "openai_protocol.h"

namespace llamadesk::remote {

namespace {

QString http_advice(int status) {
    switch (status) {
    case 400: case 422: return QStringLiteral("the server refused a field of the request; check the sampling settings");
    case 401: case 403: return QStringLiteral("the server refused the API key; check the key entered for this server");
    case 404: return QStringLiteral("check the base URL (e.g. http://host:8000/v1) and the model name");
    case 413: return QStringLiteral("the conversation is too long for the server");
    case 429: return QStringLiteral("the server is busy or rate-limited; try again in a moment");
    default: return status >= 500 ? QStringLiteral("the server failed; its log says more") : QString();
    }
}

}  // namespace

QString request_error(const QUrl& url, QNetworkReply::NetworkError error, const QString& qt_message, int status,
                      const QByteArray& body) {
    const QString host = host_and_port(url);
    if (status >= 300) {
        QString message = QStringLiteral("%1 answered HTTP %2 to %3").arg(host).arg(status).arg(url.path());
        if (status < 400)
            return message + QStringLiteral(": a redirect, which LlamaDesk does not follow so that the API key "
                                            "stays with the address it was entered for; enter the final address");
        QString said = server_message(body);
        if (said.size() > 300) said = said.left(300) + QStringLiteral("…");
        if (!said.isEmpty()) message += QStringLiteral(": \"%1\"").arg(said);
        const QString advice = http_advice(status);
        return advice.isEmpty() ? message : message + QStringLiteral(" (") + advice + QStringLiteral(")");
    }
    switch (error) {
    case QNetworkReply::ConnectionRefusedError:
        return QStringLiteral("nothing answers at %1 (connection refused): is the server running on that port?").arg(host);
    case QNetworkReply::HostNotFoundError:
        return QStringLiteral("the host %1 was not found (DNS): check the server address").arg(url.host());
    case QNetworkReply::RemoteHostClosedError:
        return QStringLiteral("%1 closed the connection before the answer was complete").arg(host);
    case QNetworkReply::SslHandshakeFailedError:
        return QStringLiteral("the TLS connection to %1 failed: %2").arg(host, qt_message);
    default:
        return QStringLiteral("the request to %1 failed: %2").arg(host, qt_message);
    }
}

QString stall_error(const QUrl& url, int timeout_ms, bool answer_started) {
    return QStringLiteral("%1 sent nothing for %2 s %3 (timeout); the server may be overloaded or stuck")
        .arg(host_and_port(url))
        .arg(timeout_ms / 1000.0, 0, 'g', 3)
        .arg(answer_started ? QStringLiteral("in the middle of the answer") : QStringLiteral("after the request"));
}

QString too_large_error(const QUrl& url, qint64 limit_bytes) {
    return QStringLiteral("%1 sent more than %2 MiB for one request; LlamaDesk stopped reading")
        .arg(host_and_port(url))
        .arg(limit_bytes / (1024 * 1024));
}

}  // namespace llamadesk::remote
