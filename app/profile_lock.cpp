#include "profile_lock.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFileInfo>
#include <QLocalSocket>

namespace {

constexpr int kAnswerMs = 3000;

}  // namespace

ProfileLock::ProfileLock(const QString& dataDir, QObject* parent)
    : QObject(parent),
      path_(dataDir + "/llamadesk.lock"),
      server_name_("llamadesk-" + QCryptographicHash::hash(QFileInfo(dataDir).absoluteFilePath().toUtf8(),
                                                           QCryptographicHash::Sha1)
                                      .toHex()
                                      .left(16)),
      lock_(path_) {
    // Never stale by age: a window open for days still owns its profile. A lock left by a process
    // that died is still taken over (QLockFile checks whether its owner is alive).
    lock_.setStaleLockTime(0);
}

bool ProfileLock::acquire() {
    QDir().mkpath(QFileInfo(path_).absolutePath());
    if (!lock_.tryLock())
        return false;
    QLocalServer::removeServer(server_name_);  // a socket file left by a crashed owner
    connect(&server_, &QLocalServer::newConnection, this, [this] {
        while (QLocalSocket* socket = server_.nextPendingConnection()) {
            socket->write("ok\n");
            socket->disconnectFromServer();
            connect(socket, &QLocalSocket::disconnected, socket, &QObject::deleteLater);
            emit activationRequested();
        }
    });
    server_.listen(server_name_);
    return true;
}

bool ProfileLock::activateOwner() {
    QLocalSocket socket;
    socket.connectToServer(server_name_);
    return socket.waitForConnected(kAnswerMs) && socket.waitForReadyRead(kAnswerMs) &&
           socket.readLine().startsWith("ok");
}

qint64 ProfileLock::ownerPid() const {
    qint64 pid = 0;
    QString host, app;
    return lock_.getLockInfo(&pid, &host, &app) ? pid : 0;
}
