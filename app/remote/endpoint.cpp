#include "endpoint.h"

#include <QHostAddress>

namespace llamadesk::remote {

namespace {

QString origin_path(const QUrl& base_url) {
    QString path = base_url.path();
    while (path.endsWith('/')) path.chop(1);
    if (path.endsWith("/v1")) path.chop(3);
    return path;
}

}  // namespace

QString remote_location(const Endpoint& endpoint) {
    QUrl url = endpoint.base_url.adjusted(QUrl::RemoveUserInfo | QUrl::RemoveFragment);
    url.setFragment(endpoint.model, QUrl::DecodedMode);
    return url.toString();
}

bool is_remote_location(const QString& location) {
    return location.startsWith("http://", Qt::CaseInsensitive) || location.startsWith("https://", Qt::CaseInsensitive);
}

Endpoint endpoint_from_location(const QString& location) {
    const QUrl url(location);
    return {url.adjusted(QUrl::RemoveFragment), QString(), url.fragment(QUrl::FullyDecoded)};
}

QUrl api_url(const QUrl& base_url, const QString& path) {
    QUrl url = base_url;
    url.setPath(origin_path(base_url) + "/v1/" + path);
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

QUrl metrics_url(const QUrl& base_url) {
    QUrl url = base_url;
    url.setPath("/metrics");
    url.setQuery(QString());
    url.setFragment(QString());
    return url;
}

bool same_origin(const QUrl& a, const QUrl& b) {
    return a.scheme().compare(b.scheme(), Qt::CaseInsensitive) == 0 &&
           a.host().compare(b.host(), Qt::CaseInsensitive) == 0 &&
           a.port(a.scheme() == "https" ? 443 : 80) == b.port(b.scheme() == "https" ? 443 : 80);
}

QString host_and_port(const QUrl& url) {
    return url.port() >= 0 ? QStringLiteral("%1:%2").arg(url.host()).arg(url.port()) : url.host();
}

bool is_loopback_host(const QString& host) {
    if (host.compare("localhost", Qt::CaseInsensitive) == 0) return true;
    const QHostAddress address(host);
    return !address.isNull() && address.isLoopback();
}

QString plain_http_warning(const QUrl& base_url) {
    if (base_url.scheme() != "http" || is_loopback_host(base_url.host())) return QString();
    return QStringLiteral("%1 is reached over plain HTTP: the conversation and the API key would cross the "
                          "network unencrypted. Use https:// unless this network is trusted.")
        .arg(base_url.host());
}

QString check_base_url(const QUrl& base_url) {
    if (!base_url.isValid() || base_url.host().isEmpty())
        return QStringLiteral("'%1' is not a server address; enter one such as http://127.0.0.1:8000/v1")
            .arg(base_url.toString(QUrl::RemoveUserInfo));
    if (base_url.scheme() != "http" && base_url.scheme() != "https")
        return QStringLiteral("'%1': the address must begin with http:// or https://")
            .arg(base_url.toString(QUrl::RemoveUserInfo));
    return QString();
}

}  // namespace llamadesk::remote
