// Conversations on disk: one JSON file per conversation under <data folder>/conversations.
// Each save writes a temporary file and renames it over the old one (QSaveFile), so a crash or a
// kill at any moment leaves either the previous file or the new one, never a torn one.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <optional>

#include "conversation.h"

class ConversationStore {
public:
    explicit ConversationStore(const QString& dataDir);

    // Every readable conversation, oldest first; unreadable files are skipped and named in *errors.
    QList<Conversation> loadAll(QStringList* errors = nullptr) const;
    bool save(const Conversation& conversation, QString* error = nullptr) const;
    bool remove(const QString& id) const;
    QString pathOf(const QString& id) const;

    // Answers still streaming are left out: a restart must not show half an answer as finished.
    static QByteArray toJson(const Conversation& conversation);
    static std::optional<Conversation> fromJson(const QByteArray& json, QString* error = nullptr);

private:
    QString dir_;
};
