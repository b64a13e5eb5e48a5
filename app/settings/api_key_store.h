// The API keys entered for servers, one per origin (scheme, host, port). A key goes to the system
// keyring (system_keyring.h) when the build has QtKeychain and the keyring takes it; otherwise to a JSON
// file that only the user may read (created 0600), and the settings say why. LLAMADESK_KEYRING=off
// keeps keys in the file. Keys never go into settings, Recent, saved conversations or messages.
// Use it from the GUI thread only: QtKeychain runs its jobs one at a time through a queue of that
// thread, and a job from another thread crashes it (the worker gets its key with the load request).
#pragma once

#include <QString>
#include <QUrl>

class ApiKeyStore {
public:
    explicit ApiKeyStore(const QString& file) : file_(file) {}

    QString file() const { return file_; }
    // The key entered for base_url's origin; empty when none. The file's entry is the newer when
    // both hold one: a key reaches the file only when the keyring refused it.
    QString keyFor(const QUrl& base_url);
    // Stores key for base_url's origin (an empty key removes it). Empty, or what went wrong.
    QString setKey(const QUrl& base_url, const QString& key);
    // Where keys are kept, in words for the settings: "the system keyring", or the file and why
    // (learnt from the last key stored or found).
    QString whereKept() const;

private:
    QString writeFile(const QString& origin, const QString& key) const;

    QString file_;
    enum class Last { Nothing, Keyring, File } last_ = Last::Nothing;
    QString keyring_refusal_;  // why the last key went to the file
};
