// One window per profile. The data folder is locked (QLockFile) while LlamaDesk runs; a second
// start finds the lock, asks the running window to come to the front over a local socket, and
// ends before anything of the profile is read or written.
#pragma once

#include <QLocalServer>
#include <QLockFile>
#include <QObject>

class ProfileLock : public QObject {
    Q_OBJECT
public:
    explicit ProfileLock(const QString& dataDir, QObject* parent = nullptr);

    // True when this process now owns the profile (it then listens for activation requests).
    bool acquire();
    // Another process owns it: asks it to show its window. True when it answered.
    bool activateOwner();
    qint64 ownerPid() const;
    QString lockPath() const { return path_; }

signals:
    void activationRequested();

private:
    QString path_;
    QString server_name_;  // derived from the data folder, so each profile has its own
    QLockFile lock_;
    QLocalServer server_;
};
