// A message's other versions (branches) in JSON, for the conversation files and the export,
// which each write a message their own way (`to` and `from`): "other_versions" is an array of
// versions, each an array of messages; "version" says which one the message itself is.
#pragma once

#include <QJsonArray>
#include <QJsonObject>
#include <vector>

#include "conversations/conversation.h"

template <class To>
QJsonArray versions_json(const std::vector<std::vector<Message>>& versions, To to) {
    QJsonArray out;
    for (const std::vector<Message>& tail : versions) {
        QJsonArray messages;
        for (const Message& m : tail)
            messages.append(to(m));
        out.append(messages);
    }
    return out;
}

// Reads them into m; a version that is empty or whose first message is not of m's role (questions
// and answers alternate from there) is left out, and a "version" out of range shows the first.
template <class From>
void versions_from(const QJsonObject& o, Message& m, From from) {
    for (const QJsonValue& v : o.value("other_versions").toArray()) {
        std::vector<Message> tail;
        for (const QJsonValue& message : v.toArray()) {
            tail.push_back(from(message.toObject()));
            const bool user = (tail.size() % 2 == 1) == (m.role == Message::Role::User);
            if ((tail.back().role == Message::Role::User) != user) {
                tail.clear();
                break;
            }
        }
        if (!tail.empty())
            m.other_versions.push_back(std::move(tail));
    }
    m.version = o.value("version").toInt();
    if (m.version < 0 || m.version > int(m.other_versions.size()))
        m.version = 0;
}
