#include "server/local_server.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QRandomGenerator>

#include "server/http_listener.h"
#include "settings/api_key_store.h"
#include "settings/app_settings.h"

using llamadesk::server::ApiService;
using llamadesk::server::HttpListener;
using llamadesk::server::ServedRequest;

namespace {
// The key's entry in the API key store: an origin of its own, never a server's.
const QUrl kKeyOrigin(QStringLiteral("http://local-server.llamadesk.invalid"));
}

ServedRequestModel::ServedRequestModel(const ApiService* service, QObject* parent)
    : QAbstractListModel(parent), service_(service) {}

int ServedRequestModel::rowCount(const QModelIndex& parent) const { return parent.isValid() ? 0 : rows_; }

QVariant ServedRequestModel::data(const QModelIndex& index, int role) const {
    const std::deque<ServedRequest>& recent = service_->recent();
    if (!index.isValid() || index.row() >= int(recent.size())) return {};
    const ServedRequest& r = recent[recent.size() - 1 - size_t(index.row())];  // newest first
    switch (role) {
    case Client: return r.client;
    case Endpoint: return r.endpoint;
    case PromptTokens: return r.prompt_tokens;
    case CachedTokens: return r.cached_tokens;
    case CompletionTokens: return r.completion_tokens;
    case TokensPerSecond: return r.tokens_per_s;
    case Finished: return r.finished;
    case Outcome: return r.outcome;
    default: return {};
    }
}

QHash<int, QByteArray> ServedRequestModel::roleNames() const {
    return {{Client, "client"},
            {Endpoint, "endpoint"},
            {PromptTokens, "promptTokens"},
            {CachedTokens, "cachedTokens"},
            {CompletionTokens, "completionTokens"},
            {TokensPerSecond, "tokensPerSecond"},
            {Finished, "finished"},
            {Outcome, "outcome"}};
}

void ServedRequestModel::refresh() {
    // Figures change with every piece of every answer: the rows are told, not made again.
    const int rows = int(service_->recent().size());
    if (rows == rows_) {
        if (rows > 0)
            emit dataChanged(index(0), index(rows - 1));
        return;
    }
    beginResetModel();
    rows_ = rows;
    endResetModel();
}

LocalServer::LocalServer(InferenceWorker* worker, CancelFlags* cancel, AppSettings* settings, ApiKeyStore* keys,
                         QObject* parent)
    : QObject(parent), settings_(settings), keys_(keys), service_(worker, cancel, ApiService::Limits{}),
      requests_(&service_) {
    connect(&service_, &ApiService::requestsChanged, &requests_, &ServedRequestModel::refresh);
}

LocalServer::~LocalServer() {
    retire();
    for (std::thread& t : retiring_) t.join();
}

void LocalServer::retire() {
    if (!listener_) return;
    listener_->close();
    retiring_.emplace_back([listener = std::move(listener_)]() mutable { listener.reset(); });
}

bool LocalServer::enabled() const { return settings_->store().value("localServer/enabled", false).toBool(); }

void LocalServer::setEnabled(bool on) {
    if (on == enabled()) return;
    settings_->store().setValue("localServer/enabled", on);
    apply();
}

int LocalServer::port() const { return settings_->store().value("localServer/port", kDefaultPort).toInt(); }

void LocalServer::setPort(int port) {
    if (port == this->port() || port < 0 || port > 65535) return;  // 0: any free port (tests)
    settings_->store().setValue("localServer/port", port);
    apply();
}

bool LocalServer::allowNetwork() const { return settings_->store().value("localServer/allowNetwork", false).toBool(); }

void LocalServer::setAllowNetwork(bool on) {
    if (on == allowNetwork()) return;
    settings_->store().setValue("localServer/allowNetwork", on);
    apply();
}

QString LocalServer::address() const { return listener_ ? listener_->address() : QString(); }

void LocalServer::newKey() {
    QByteArray bytes(24, Qt::Uninitialized);
    QRandomGenerator::system()->generate(reinterpret_cast<quint32*>(bytes.data()),
                                         reinterpret_cast<quint32*>(bytes.data() + bytes.size()));
    const QString key = QStringLiteral("ld-") + QString::fromLatin1(bytes.toBase64(QByteArray::Base64UrlEncoding));
    if (const QString failure = keys_->setKey(kKeyOrigin, key); !failure.isEmpty()) {
        status_ = tr("The new key could not be kept (%1), so the server goes on with the one before.").arg(failure);
        emit changed();
        return;
    }
    key_ = key;
    apply();
}

void LocalServer::copyAddress() const { QGuiApplication::clipboard()->setText(address()); }

void LocalServer::copyKey() const { QGuiApplication::clipboard()->setText(key_); }

void LocalServer::apply() {
    retire();  // connections waiting on an answer end with 503 "stopping"
    status_.clear();
    if (!enabled()) {
        emit changed();
        return;
    }
    if (key_.isEmpty()) key_ = keys_->keyFor(kKeyOrigin);
    if (allowNetwork() && key_.isEmpty()) return newKey();  // comes back here with one

    HttpListener::Options options;
    options.port = port();
    if (allowNetwork()) {
        options.host = QStringLiteral("0.0.0.0");
        options.api_key = key_;
    }
    auto listener = std::make_unique<HttpListener>(&service_, options);
    QString error;
    if (!listener->start(&error)) {
        status_ = tr("Not serving: %1.").arg(error);
    } else {
        listener_ = std::move(listener);
        status_ = allowNetwork() ? tr("Serving this computer and the network; clients send the key below.")
                                 : tr("Serving programs on this computer only.");
    }
    emit changed();
}
