// Conversations on disk: one JSON file per conversation under <data folder>/conversations.
// Each save writes a temporary file and renames it over the old one (QSaveFile), so a crash or a
// kill at any moment leaves either the previous file or the new one, never a torn one.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

#include "conversations/conversation.h"

class ConversationStore {
public:
    explicit ConversationStore(const QString& dataDir);

    // Every readable conversation, newest first. An unreadable file is moved into unreadable/ beside
    // the others (under a name no file there has: never overwritten, never deleted), so no later
    // save can take its place, and named in *errors with why and where it now is.
    QList<ConversationRecord> loadAll(QStringList* errors = nullptr) const;
    QString unreadableDir() const { return dir_ + "/unreadable"; }
    bool save(const ConversationRecord& conversation, QString* error = nullptr) const;
    bool remove(const QString& id) const;
    QString pathOf(const QString& id) const;

    // An answer still streaming is saved as interrupted: a restart shows it as cut short, with
    // what had been written so far.
    static QByteArray toJson(const ConversationRecord& conversation);
    static std::optional<ConversationRecord> fromJson(const QByteArray& json, QString* error = nullptr);

private:
    QString dir_;
};
