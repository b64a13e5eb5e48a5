// Where a remote engine is: the server's base URL, the API key entered for it, the model to use.
#pragma once

#include <QString>
#include <QUrl>

namespace llamadesk::remote {

struct Endpoint {
    QUrl base_url;    // as entered: "http://host:8000" or "http://host:8000/v1"
    QString api_key;  // empty: none is sent
    QString model;    // an id from GET /v1/models
};

// How a remote model is named where a checkpoint's path would be (Recent, the last model used):
// the base URL with the model id as its fragment, "http://host:8000/v1#model". Never the key.
QString remote_location(const Endpoint& endpoint);
bool is_remote_location(const QString& location);  // http:// or https://
// The base URL and model of a location (api_key left empty).
Endpoint endpoint_from_location(const QString& location);

// base_url + "/v1/" + path; a base that already ends in /v1 is not given a second one.
QUrl api_url(const QUrl& base_url, const QString& path);
// The Prometheus page vLLM serves at the server's root: base_url's origin + "/metrics".
QUrl metrics_url(const QUrl& base_url);
// The key goes only where it was entered for: same scheme, host and port as the base URL.
bool same_origin(const QUrl& a, const QUrl& b);
// "host:port" (the host alone without an explicit port), as messages and the window name a server;
// never the URL's user info or path.
QString host_and_port(const QUrl& url);
// "localhost", 127.0.0.0/8 and ::1.
bool is_loopback_host(const QString& host);
// Empty for https or a loopback host; otherwise a warning that what is sent (the API key and the
// conversation) crosses the network unencrypted.
QString plain_http_warning(const QUrl& base_url);
// An error when the URL cannot be a server's base (no http/https scheme, no host).
QString check_base_url(const QUrl& base_url);

}  // namespace llamadesk::remote
