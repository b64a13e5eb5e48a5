#include "conversation.h"

int Conversation::user_message_count() const {
    int n = 0;
    for (const Message& m : messages)
        n += m.role == Message::Role::User ? 1 : 0;
    return n;
}

std::vector<llamadesk::ChatTurn> Conversation::turns() const {
    std::vector<llamadesk::ChatTurn> out;
    for (const Message& m : messages) {
        if (m.role == Message::Role::User)
            out.push_back({m.text.toStdString(), {}});
        else if (!out.empty())
            out.back().answer = m.text.toStdString();
    }
    return out;
}
