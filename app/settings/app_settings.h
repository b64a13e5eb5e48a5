// Application-wide settings, kept with QSettings: CPU threads, KV cache budget and type, the disk
// budget of KV snapshots, the last model and the recent checkpoints, the folder the open dialogs
// start in, the window's geometry, and how long a server may stay silent. Changes to threads,
// cache budget and type and that timeout apply at the next load; the snapshot budget at once.
#pragma once

#include <QObject>
#include <QRect>
#include <QSettings>
#include <QStringList>
#include <QUrl>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include "llamadesk/engine.h"

class AppSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(int threads READ threads WRITE setThreads NOTIFY changed)
    Q_PROPERTY(int kvCacheMiB READ kvCacheMiB WRITE setKvCacheMiB NOTIFY changed)
    Q_PROPERTY(int contextLimit READ contextLimit WRITE setContextLimit NOTIFY changed)
    Q_PROPERTY(int kvSnapshotMiB READ kvSnapshotMiB WRITE setKvSnapshotMiB NOTIFY changed)
    Q_PROPERTY(QString kvCacheType READ kvCacheType WRITE setKvCacheType NOTIFY changed)
    Q_PROPERTY(QStringList kvCacheTypes READ kvCacheTypes CONSTANT)
    Q_PROPERTY(int serverTimeoutSeconds READ serverTimeoutSeconds WRITE setServerTimeoutSeconds NOTIFY changed)
    // A conversation too full for the next message drops its oldest turns and goes on, instead of
    // asking (the engine keeps the rest's cache where it can: a context shift).
    Q_PROPERTY(bool dropOldestWhenFull READ dropOldestWhenFull WRITE setDropOldestWhenFull NOTIFY changed)
    Q_PROPERTY(QStringList recentCheckpoints READ recentCheckpoints NOTIFY changed)
    Q_PROPERTY(QUrl lastFolder READ lastFolder NOTIFY changed)
    Q_PROPERTY(QRect windowGeometry READ windowGeometry WRITE setWindowGeometry NOTIFY changed)
public:
    // settingsFile empty: the platform's usual place for this organization and application.
    explicit AppSettings(const QString& settingsFile, QObject* parent = nullptr);

    QSettings& store() { return *settings_; }

    int threads() const;            // 0: one per physical core
    void setThreads(int threads);
    int kvCacheMiB() const;         // 0: the engine's default
    void setKvCacheMiB(int mib);
    int contextLimit() const;       // at most this many tokens per conversation; 0: the engine's choice
    void setContextLimit(int tokens);
    int kvSnapshotMiB() const;      // disk kept for conversations' KV caches between runs; 0: off
    void setKvSnapshotMiB(int mib);
    // The KV cache's element type, read from its saved name here and nowhere else: f16 when the
    // name is unset or unknown. kvCacheType() is its name, for the settings' selector.
    llamadesk::KvCacheType kvCache() const;
    QString kvCacheType() const;
    void setKvCacheType(const QString& name);  // a name the engine does not know is ignored
    static QStringList kvCacheTypes();
    // A server that sends nothing for this long (before the answer or between its pieces) fails.
    int serverTimeoutSeconds() const;
    void setServerTimeoutSeconds(int seconds);
    bool dropOldestWhenFull() const;
    void setDropOldestWhenFull(bool on);
    QString lastModel() const;
    QString lastTokenizer() const;
    QStringList recentCheckpoints() const;
    // Remembers a model that loaded: last used, first in the recent list, and its tokenizer.
    void rememberModel(const QString& path, const QString& tokenizer);
    // Puts a checkpoint first in the recent list without loading it (a finished download).
    void addRecent(const QString& path);
    QString tokenizerFor(const QString& modelPath) const;

    // The folder the open dialogs start in: the one that held the last path opened from a dialog,
    // else (never used, or since removed) the home folder.
    QUrl lastFolder() const;
    // pathOrUrl: a file or folder picked or typed (a local path or a file:// URL).
    Q_INVOKABLE void rememberFolderOf(const QString& pathOrUrl);

    // The window's last size and position; null before the first close. The window checks it
    // against the screens it has now.
    QRect windowGeometry() const;
    void setWindowGeometry(const QRect& geometry);

signals:
    void changed();

private:
    void prependRecent(const QString& path);
    std::unique_ptr<QSettings> settings_;
};
