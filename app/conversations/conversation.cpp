#include "conversations/conversation.h"

#include <QLocale>

bool can_continue(const Message& m) {
    return m.role == Message::Role::Assistant && !m.streaming &&
           (m.stop_reason == AnswerEnd::Interrupted || m.stop_reason == AnswerEnd::Cancelled ||
            m.stop_reason == AnswerEnd::MaxTokens);
}

int ConversationRecord::remembered_turns() const { return turns_before(int(messages.size())); }

int ConversationRecord::turns_before(int row) const {
    int n = 0;
    for (int i = 0; i < row && i < messages.size(); ++i)
        n += messages[i].role == Message::Role::User && !messages[i].forgotten ? 1 : 0;
    return n;
}

std::vector<llamadesk::ChatTurn> ConversationRecord::turns() const {
    std::vector<llamadesk::ChatTurn> out;
    for (const Message& m : messages) {
        if (m.forgotten)
            continue;
        if (m.role == Message::Role::User)
            out.push_back({m.text.toStdString(), {}});
        else if (!out.empty())
            out.back().answer = m.text.toStdString();
    }
    return out;
}

QString conversation_date(const ConversationRecord& conversation) {
    if (!conversation.created.isValid()) return {};
    return QLocale::c().toString(conversation.created.toLocalTime().date(), QStringLiteral("dd MMM yyyy"));
}

QString format_key(llamadesk::ChatFormat format) {
    for (const llamadesk::ChatFormatName& f : llamadesk::chat_formats())
        if (f.format == format) return QString::fromLatin1(f.key);
    return QStringLiteral("chat");
}

llamadesk::ChatFormat format_from_key(const QString& key, llamadesk::ChatFormat fallback) {
    for (const llamadesk::ChatFormatName& f : llamadesk::chat_formats())
        if (key == QLatin1String(f.key)) return f.format;
    return fallback;
}
