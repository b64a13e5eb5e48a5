// What a failed request says to a person: what happened, at which host, the HTTP status and the
// server's own message, and what to try. Never the API key (no header is ever quoted).
#pragma once

#include <QByteArray>
#include <QNetworkReply>
#include <QString>
#include <QUrl>

namespace llamadesk::remote {

// status: the HTTP status, 0 when no response came. body: what the server sent with it.
QString request_error(const QUrl& url, QNetworkReply::NetworkError error, const QString& qt_message, int status,
                      const QByteArray& body);
QString stall_error(const QUrl& url, int timeout_ms, bool answer_started);
QString too_large_error(const QUrl& url, qint64 limit_bytes);

}  // namespace llamadesk::remote
