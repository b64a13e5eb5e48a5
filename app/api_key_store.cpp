#include "api_key_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

namespace {

QString origin_of(const QUrl& url) { return url.adjusted(QUrl::RemovePath | QUrl::RemoveQuery | QUrl::RemoveFragment | QUrl::RemoveUserInfo).toString(); }

}  // namespace

QString ApiKeyStore::keyFor(const QUrl& base_url) const {
    QFile file(file_);
    if (!file.open(QIODevice::ReadOnly)) return QString();
    return QJsonDocument::fromJson(file.readAll()).object().value(origin_of(base_url)).toString();
}

QString ApiKeyStore::setKey(const QUrl& base_url, const QString& key) const {
    QJsonObject keys;
    {
        QFile file(file_);
        if (file.open(QIODevice::ReadOnly)) keys = QJsonDocument::fromJson(file.readAll()).object();
    }
    if (key.isEmpty())
        keys.remove(origin_of(base_url));
    else
        keys.insert(origin_of(base_url), key);
    QDir().mkpath(QFileInfo(file_).absolutePath());
    QFile file(file_);
    // Created readable by the user alone; an older file is narrowed to that before it is written.
    const QFile::Permissions owner_only = QFile::ReadOwner | QFile::WriteOwner;
    if (file.exists() && !file.setPermissions(owner_only))
        return QStringLiteral("cannot make %1 private to you: %2").arg(file_, file.errorString());
    if (!file.open(QIODevice::WriteOnly | QIODevice::Truncate, owner_only))
        return QStringLiteral("cannot save the API key in %1: %2").arg(file_, file.errorString());
    if (file.write(QJsonDocument(keys).toJson()) < 0 || !file.flush())
        return QStringLiteral("cannot save the API key in %1: %2").arg(file_, file.errorString());
    return QString();
}
