// The remote dialog's model list: GET /v1/models from the address and key typed so far, on the
// GUI thread without blocking it (the client's own timeout ends a silent server).
#pragma once

#include <QObject>
#include <QStringList>
#include <QtQml/qqmlregistration.h>
#include <memory>

namespace llamadesk::remote {
class RemoteClient;
}

class RemoteModelList : public QObject {
    Q_OBJECT
    QML_ELEMENT
    Q_PROPERTY(QStringList models READ models NOTIFY changed)
    Q_PROPERTY(QString error READ error NOTIFY changed)
    Q_PROPERTY(bool busy READ busy NOTIFY changed)
public:
    static constexpr int kTimeoutMs = 15000;

    explicit RemoteModelList(QObject* parent = nullptr);
    ~RemoteModelList() override;

    QStringList models() const { return models_; }
    QString error() const { return error_; }
    bool busy() const { return client_ != nullptr; }
    // Asks baseUrl for its models, sending apiKey (when not empty) to that address only.
    Q_INVOKABLE void fetch(const QString& baseUrl, const QString& apiKey);

signals:
    void changed();

private:
    void finish(const QStringList& models, const QString& error);

    std::unique_ptr<llamadesk::remote::RemoteClient> client_;
    QStringList models_;
    QString error_;
};
