// The API keys entered for servers, one per origin (scheme, host, port), in a JSON file that only
// the user may read (created 0600). The system keyring is not used: QtKeychain is not built in.
// Keys never go into settings, Recent, saved conversations or messages.
#pragma once

#include <QString>
#include <QUrl>

class ApiKeyStore {
public:
    explicit ApiKeyStore(const QString& file) : file_(file) {}

    QString file() const { return file_; }
    // The key entered for base_url's origin; empty when none.
    QString keyFor(const QUrl& base_url) const;
    // Stores key for base_url's origin (an empty key removes it). Empty, or what went wrong.
    QString setKey(const QUrl& base_url, const QString& key) const;

private:
    QString file_;
};
