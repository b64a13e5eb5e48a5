#include "conversations/conversation.h"

#include <QLocale>

bool can_continue(const Message& m) {
    return m.role == Message::Role::Assistant && !m.streaming &&
           (m.stop_reason == AnswerEnd::Interrupted || m.stop_reason == AnswerEnd::Cancelled ||
            m.stop_reason == AnswerEnd::MaxTokens);
}

namespace {

// messages[row..] as a stored version: its head carries no versions (the row keeps them).
std::vector<Message> tail_from(const QList<Message>& messages, int row) {
    std::vector<Message> tail(messages.begin() + row, messages.end());
    tail.front().other_versions.clear();
    tail.front().version = 0;
    return tail;
}

}  // namespace

Versions keep_as_version(const QList<Message>& messages, int row) {
    const Message& head = messages[row];
    Versions v{head.other_versions, 0};
    v.others.insert(v.others.begin() + head.version, tail_from(messages, row));
    v.version = int(v.others.size());
    return v;
}

bool show_version(QList<Message>& messages, int row, int k) {
    if (row < 0 || row >= messages.size()) return false;
    const Message& head = messages[row];
    if (k < 0 || k >= version_count(head) || k == head.version) return false;
    std::vector<std::vector<Message>> all = head.other_versions;
    all.insert(all.begin() + head.version, tail_from(messages, row));
    std::vector<Message> shown = std::move(all[size_t(k)]);
    all.erase(all.begin() + k);
    messages.resize(row);
    for (Message& m : shown) messages.append(std::move(m));
    messages[row].other_versions = std::move(all);
    messages[row].version = k;
    return true;
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
