// A conversation as the window keeps it: its messages, alternating user / assistant.
#pragma once

#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <vector>

#include <llamadesk/engine.h>

struct Message {
    enum class Role { User, Assistant };
    Role role = Role::User;
    QString text;
    bool streaming = false;  // the answer is still being generated (never persisted as such)
    QString stop_reason;     // "eos", "cancelled", ... for a finished answer
};

struct Conversation {
    QString id;              // a UUID; also the file name under the data folder
    QString title;
    QDateTime created;
    QList<Message> messages;
    int cached_tokens = 0;   // as the engine last reported it

    int user_message_count() const;
    // The messages as engine turns (user, answer); an unanswered last question has an empty answer.
    std::vector<llamadesk::ChatTurn> turns() const;
};

Q_DECLARE_METATYPE(Conversation)
