#include "settings/api_key_store.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>

#include "settings/system_keyring.h"

namespace {

QString origin_of(const QUrl& url) { return url.adjusted(QUrl::RemovePath | QUrl::RemoveQuery | QUrl::RemoveFragment | QUrl::RemoveUserInfo).toString(); }

bool keyring_wanted() { return system_keyring::built_in() && qgetenv("LLAMADESK_KEYRING") != "off"; }

QJsonObject read_keys(const QString& path) {
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly)) return QJsonObject();
    return QJsonDocument::fromJson(file.readAll()).object();
}

}  // namespace

QString ApiKeyStore::keyFor(const QUrl& base_url) {
    const QString origin = origin_of(base_url);
    const QString in_file = read_keys(file_).value(origin).toString();
    if (!in_file.isEmpty() || !keyring_wanted()) return in_file;
    const system_keyring::Answer answer = system_keyring::read(origin);
    if (answer.ok) last_ = Last::Keyring;
    return answer.value;
}

QString ApiKeyStore::setKey(const QUrl& base_url, const QString& key) {
    const QString origin = origin_of(base_url);
    if (keyring_wanted()) {
        const system_keyring::Answer answer =
            key.isEmpty() ? system_keyring::remove(origin) : system_keyring::write(origin, key);
        if (answer.ok) {
            last_ = Last::Keyring;
            // An older key the keyring once refused must not linger in the file, nor shadow this one.
            return read_keys(file_).contains(origin) ? writeFile(origin, QString()) : QString();
        }
        keyring_refusal_ = answer.error;
    }
    last_ = Last::File;
    return writeFile(origin, key);
}

QString ApiKeyStore::writeFile(const QString& origin, const QString& key) const {
    QJsonObject keys = read_keys(file_);
    if (key.isEmpty())
        keys.remove(origin);
    else
        keys.insert(origin, key);
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

QString ApiKeyStore::whereKept() const {
    const QString in_file = QStringLiteral("%1, a file only you can read").arg(file_);
    if (!system_keyring::built_in()) return in_file + QStringLiteral(" (this build has no system keyring support)");
    if (!keyring_wanted()) return in_file + QStringLiteral(" (LLAMADESK_KEYRING=off)");
    switch (last_) {
    case Last::Keyring: return QStringLiteral("the system keyring");
    case Last::File: return in_file + QStringLiteral(", because the system keyring refused: %1").arg(keyring_refusal_);
    case Last::Nothing: break;
    }
    return QStringLiteral("the system keyring when it answers, else %1").arg(in_file);
}
