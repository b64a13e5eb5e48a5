// The window's Local server (Settings -> Local server): llamadesk-server's service and listener on
// the window's own worker, so API requests and the window's conversations decode in one batch and
// share one KV pool. On or off, its port and whether other computers may connect are remembered in
// AppSettings; the key other computers need is kept in the API key store (the system keyring).
#pragma once

#include <QAbstractListModel>
#include <QObject>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <thread>
#include <vector>

#include "server/api_service.h"

class ApiKeyStore;
class AppSettings;
class CancelFlags;
class InferenceWorker;
namespace llamadesk::server {
class HttpListener;
}

// The requests served this session, newest first, with their figures as they come.
class ServedRequestModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by LocalServer")
public:
    enum Role { Client = Qt::UserRole + 1, Endpoint, PromptTokens, CachedTokens, CompletionTokens, TokensPerSecond,
                Finished, Outcome };
    explicit ServedRequestModel(const llamadesk::server::ApiService* service, QObject* parent = nullptr);
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;
    void refresh();

private:
    const llamadesk::server::ApiService* service_;
    int rows_ = 0;
};

class LocalServer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(bool enabled READ enabled WRITE setEnabled NOTIFY changed)
    Q_PROPERTY(int port READ port WRITE setPort NOTIFY changed)
    Q_PROPERTY(bool allowNetwork READ allowNetwork WRITE setAllowNetwork NOTIFY changed)
    Q_PROPERTY(bool running READ running NOTIFY changed)
    Q_PROPERTY(QString address READ address NOTIFY changed)
    Q_PROPERTY(QString apiKey READ apiKey NOTIFY changed)
    Q_PROPERTY(QString status READ status NOTIFY changed)
    Q_PROPERTY(ServedRequestModel* requests READ requests CONSTANT)
public:
    static constexpr int kDefaultPort = 8080;

    LocalServer(InferenceWorker* worker, CancelFlags* cancel, AppSettings* settings, ApiKeyStore* keys,
                QObject* parent = nullptr);
    ~LocalServer() override;

    bool enabled() const;
    void setEnabled(bool on);
    int port() const;
    void setPort(int port);
    bool allowNetwork() const;
    // On: listens on every address of this computer, with a key (one is made when none is kept).
    void setAllowNetwork(bool on);
    bool running() const { return listener_ != nullptr; }
    // The base URL to give clients (http://127.0.0.1:PORT/v1); empty while off.
    QString address() const;
    QString apiKey() const { return key_; }
    // "Serving llamadesk-guide at ...", or why it is not serving (the port taken, the key not kept).
    QString status() const { return status_; }
    ServedRequestModel* requests() { return &requests_; }
    llamadesk::server::ApiService* service() { return &service_; }

    Q_INVOKABLE void newKey();
    Q_INVOKABLE void copyAddress() const;
    Q_INVOKABLE void copyKey() const;
    // Starts, restarts or stops the listener to match the settings (and at start).
    void apply();

signals:
    void changed();

private:
    AppSettings* settings_;
    ApiKeyStore* keys_;
    llamadesk::server::ApiService service_;
    ServedRequestModel requests_;
    // Stops the listener without waiting on the GUI thread: the port is free at once, its
    // connections end on a thread of their own, joined when this object goes.
    void retire();

    std::unique_ptr<llamadesk::server::HttpListener> listener_;
    std::vector<std::thread> retiring_;
    QString key_;
    QString status_;
};
