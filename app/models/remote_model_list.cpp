#include "models/remote_model_list.h"

#include "remote_client.h"

using llamadesk::remote::RemoteClient;

RemoteModelList::RemoteModelList(QObject* parent) : QObject(parent) {}

RemoteModelList::~RemoteModelList() = default;

void RemoteModelList::fetch(const QString& baseUrl, const QString& apiKey) {
    const QUrl url = QUrl::fromUserInput(baseUrl.trimmed());
    const QString invalid = llamadesk::remote::check_base_url(url);
    if (!invalid.isEmpty()) return finish({}, invalid);
    client_ = std::make_unique<RemoteClient>(llamadesk::remote::Endpoint{url, apiKey, QString()}, kTimeoutMs);
    connect(client_.get(), &RemoteClient::modelsListed, this, [this](const QStringList& ids) {
        finish(ids, ids.isEmpty() ? tr("the server lists no models") : QString());
    });
    connect(client_.get(), &RemoteClient::failed, this, [this](const QString& message) { finish({}, message); });
    models_.clear();
    error_.clear();
    emit changed();
    client_->listModels();
}

void RemoteModelList::finish(const QStringList& models, const QString& error) {
    // The client is inside its own signal here: it goes once that returns.
    if (client_) client_.release()->deleteLater();
    models_ = models;
    error_ = error;
    emit changed();
}
