#include "hub_api.h"

#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonObject>
#include <QNetworkAccessManager>
#include <QNetworkRequest>
#include <QProcessEnvironment>
#include <QRegularExpression>
#include <QUrlQuery>

#include "llamadesk/engine.h"

namespace llamadesk::library {

namespace {

QString env(const char* name) { return QProcessEnvironment::systemEnvironment().value(name); }

}  // namespace

QUrl hub_endpoint() {
    QString endpoint = env("HF_ENDPOINT");
    while (endpoint.endsWith('/')) endpoint.chop(1);
    return QUrl(endpoint.isEmpty() ? QStringLiteral("https://huggingface.co") : endpoint);
}

QString hub_token_from_environment() {
    if (const QString token = env("HF_TOKEN").trimmed(); !token.isEmpty()) return token;
    QString path = env("HF_TOKEN_PATH");
    if (path.isEmpty()) {
        const QString home = env("HF_HOME");
        const QString cache = env("XDG_CACHE_HOME");
        path = !home.isEmpty() ? home + "/token"
                               : (cache.isEmpty() ? QDir::homePath() + "/.cache" : cache) + "/huggingface/token";
    }
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly) || f.size() > 4096) return {};
    return QString::fromUtf8(f.readAll()).trimmed();
}

QList<HubRepo> parse_search(const QJsonDocument& doc) {
    QList<HubRepo> repos;
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        HubRepo r;
        r.id = o.value("id").toString(o.value("modelId").toString());
        if (r.id.isEmpty()) continue;
        r.downloads = qint64(o.value("downloads").toDouble());
        r.likes = o.value("likes").toInt();
        // "gated" is false, or the kind of approval: "auto" or "manual".
        r.gated = o.value("gated").isString() || o.value("gated").toBool();
        for (const QJsonValue& t : o.value("tags").toArray()) r.tags.append(t.toString());
        repos.append(r);
    }
    return repos;
}

QString quant_of_file(const QString& name) {
    static const QRegularExpression quant(
        R"((?:^|[-_.])((?:I?Q\d_[A-Z0-9]+(?:_[A-Z0-9]+)?)|BF16|F16|F32)(?=[-_.]|$))",
        QRegularExpression::CaseInsensitiveOption);
    QString stem = name.section('/', -1);
    if (stem.endsWith(".gguf", Qt::CaseInsensitive)) stem.chop(5);
    QRegularExpressionMatchIterator it = quant.globalMatch(stem);
    QString last;
    while (it.hasNext()) last = it.next().captured(1).toUpper();
    return last;
}

bool opens_architecture(const QString& architecture) { return architecture == "llama"; }

QList<HubFile> parse_tree(const QJsonDocument& doc) {
    static const QRegularExpression split(R"(-(\d{5})-of-(\d{5})\.gguf$)", QRegularExpression::CaseInsensitiveOption);
    QList<HubFile> files;
    for (const QJsonValue& v : doc.array()) {
        const QJsonObject o = v.toObject();
        HubFile f;
        f.path = o.value("path").toString();
        if (o.value("type").toString() != "file" || !f.path.endsWith(".gguf", Qt::CaseInsensitive)) continue;
        f.size = qint64(o.value("size").toDouble());
        f.sha256 = o.value("lfs").toObject().value("oid").toString();
        f.quant = quant_of_file(f.path);
        std::string why;
        if (const auto m = split.match(f.path); m.hasMatch()) {
            f.reason = "one of " + QString::number(m.captured(2).toInt()) +
                       " parts of a split file, which LlamaDesk does not open";
        } else if (f.path.section('/', -1).startsWith("mmproj", Qt::CaseInsensitive)) {
            f.reason = "an image projector for a vision model, not a language model";
        } else if (!f.quant.isEmpty() && !reads_gguf_file_type(f.quant.toStdString(), &why)) {
            f.reason = QString::fromStdString(why);
        } else {
            f.readable = true;
        }
        files.append(f);
    }
    return files;
}

bool is_offline_error(QNetworkReply::NetworkError error) {
    switch (error) {
    case QNetworkReply::HostNotFoundError:
    case QNetworkReply::ConnectionRefusedError:
    case QNetworkReply::TimeoutError:
    case QNetworkReply::TemporaryNetworkFailureError:
    case QNetworkReply::NetworkSessionFailedError:
    case QNetworkReply::UnknownNetworkError:
    case QNetworkReply::ProxyConnectionRefusedError:
    case QNetworkReply::ProxyNotFoundError:
        return true;
    default:
        return false;
    }
}

QString hub_error_text(QNetworkReply* reply, const QByteArray& body, const QString& repo, const QString& file) {
    const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
    // The Hub names its refusals (huggingface_hub's hf_raise_for_status reads the same header).
    const QByteArray code = reply->rawHeader("X-Error-Code");
    const QString page = hub_endpoint().toString() + "/" + repo;
    if (status == 401 || status == 403 || code == "GatedRepo")
        return repo + " is gated: accept the licence on the model's page, " + page +
               ", then paste an access token (" + hub_endpoint().toString() + "/settings/tokens)" +
               (status == 403 ? ". The Hub refused the token given: its account may not have accepted the licence yet"
                              : QString());
    if (status == 404 && code == "EntryNotFound") return repo + " has no file " + file + " (404)";
    if (status == 404)
        return "the Hub has no repository " + repo + " (404); a private one needs an access token";
    if (status == 429) return "the Hub says too many requests (429); try again in a minute";
    if (status >= 400) {
        const QString message = QJsonDocument::fromJson(body).object().value("error").toString();
        return "the Hub answered " + QString::number(status) + (message.isEmpty() ? QString() : ": " + message);
    }
    if (is_offline_error(reply->error()))
        return "offline: could not reach " + reply->url().host() + " (" + reply->errorString() + ")";
    return reply->errorString();
}

HubClient::HubClient(QNetworkAccessManager* network, QObject* parent)
    : QObject(parent), network_(network), endpoint_(hub_endpoint()), token_(hub_token_from_environment()) {}

void HubClient::getJson(const QUrl& url, const QString& repo,
                        std::function<void(const QJsonDocument&, const QString&, bool)> done) {
    QNetworkRequest request(url);
    request.setRawHeader("Accept", "application/json");
    if (!token_.isEmpty()) request.setRawHeader("Authorization", "Bearer " + token_.toUtf8());
    request.setTransferTimeout(30000);
    QNetworkReply* reply = network_->get(request);
    connect(reply, &QNetworkReply::finished, this, [reply, repo, done = std::move(done)] {
        reply->deleteLater();
        const int status = reply->attribute(QNetworkRequest::HttpStatusCodeAttribute).toInt();
        const QByteArray body = reply->readAll();
        if (reply->error() != QNetworkReply::NoError || status >= 400) {
            done({}, hub_error_text(reply, body, repo), status == 0 && is_offline_error(reply->error()));
            return;
        }
        QJsonParseError parse;
        const QJsonDocument doc = QJsonDocument::fromJson(body, &parse);
        if (parse.error != QJsonParseError::NoError) {
            done({}, "the Hub's answer is not JSON: " + parse.errorString(), false);
            return;
        }
        done(doc, {}, false);
    });
}

void HubClient::search(const QString& query, int limit,
                       std::function<void(const QList<HubRepo>&, const QString&, bool)> done) {
    QUrl url = endpoint_;
    url.setPath(url.path() + "/api/models");
    QUrlQuery q;
    // "+" stays literal in a query (servers read it as a space): "c++" must reach the Hub as itself.
    q.addQueryItem("search", QString::fromLatin1(QUrl::toPercentEncoding(query)));
    q.addQueryItem("filter", "gguf");
    q.addQueryItem("sort", "downloads");
    q.addQueryItem("direction", "-1");
    q.addQueryItem("limit", QString::number(limit));
    url.setQuery(q);
    getJson(url, {}, [done = std::move(done)](const QJsonDocument& doc, const QString& error, bool offline) {
        done(error.isEmpty() ? parse_search(doc) : QList<HubRepo>{}, error, offline);
    });
}

void HubClient::files(const QString& repo,
                      std::function<void(const QList<HubFile>&, const QString&, bool)> done) {
    QUrl info = endpoint_;
    info.setPath(info.path() + "/api/models/" + repo);
    getJson(info, repo, [this, repo, done = std::move(done)](const QJsonDocument& doc, const QString& error, bool offline) {
        if (!error.isEmpty()) return done({}, error, offline);
        const QString architecture = doc.object().value("gguf").toObject().value("architecture").toString();
        if (!architecture.isEmpty() && !opens_architecture(architecture))
            return done({}, repo + " holds a " + architecture + " model: LlamaDesk opens Llama-family models (llama)",
                        false);
        QUrl tree = endpoint_;
        tree.setPath(tree.path() + "/api/models/" + repo + "/tree/main");
        tree.setQuery("recursive=true");
        getJson(tree, repo, [done](const QJsonDocument& listing, const QString& error, bool offline) {
            done(error.isEmpty() ? parse_tree(listing) : QList<HubFile>{}, error, offline);
        });
    });
}

}  // namespace llamadesk::library
