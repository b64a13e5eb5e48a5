// Application-wide settings, kept with QSettings: CPU threads, KV cache budget, the last model and
// the recent checkpoints. Changes to threads and budget apply at the next load.
#pragma once

#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QtQml/qqmlregistration.h>
#include <memory>

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
    Q_PROPERTY(int kvCacheMiB READ kvCacheMiB WRITE setKvCacheMiB NOTIFY changed)
    Q_PROPERTY(QStringList recentCheckpoints READ recentCheckpoints NOTIFY changed)
public:
    // settingsFile empty: the platform's usual place for this organization and application.
    explicit AppSettings(const QString& settingsFile, QObject* parent = nullptr);

    QSettings& store() { return *settings_; }

    int threads() const;            // 0: all cores
    void setThreads(int threads);
    int kvCacheMiB() const;         // 0: the engine's default
    void setKvCacheMiB(int mib);
    QString lastModel() const;
    QString lastTokenizer() const;
    QStringList recentCheckpoints() const;
    // Remembers a model that loaded: last used, first in the recent list, and its tokenizer.
    void rememberModel(const QString& path, const QString& tokenizer);
    QString tokenizerFor(const QString& modelPath) const;

signals:
    void changed();

private:
    std::unique_ptr<QSettings> settings_;
};
