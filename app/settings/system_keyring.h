// The desktop's keyring (Secret Service, e.g. GNOME Keyring, or KWallet) through QtKeychain. Each call
// waits for the keyring's answer in a local event loop: the callers (connecting to a server, loading
// a server's model) are rare and already wait on the network. A build without QtKeychain has no
// keyring, and every call says so.
#pragma once

#include <QString>

namespace system_keyring {

struct Answer {
    bool ok = false;
    QString value;   // what read() found
    QString error;   // why not, in the keyring's words, when !ok
};

// Whether this build links QtKeychain.
bool built_in();
// not ok with an empty error: the keyring answered and holds no entry for key.
Answer read(const QString& key);
Answer write(const QString& key, const QString& value);
// ok when the entry is gone, including when there was none.
Answer remove(const QString& key);

}  // namespace system_keyring
