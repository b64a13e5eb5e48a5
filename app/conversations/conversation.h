// A conversation's messages (alternating user / assistant) and its two forms: what the store
// writes (ConversationRecord) and what the window's lists show (ConversationItem).
#pragma once

#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>
#include <utility>
#include <vector>

#include <llamadesk/engine.h>

#include "models/answer_end.h"

struct Message {
    enum class Role { User, Assistant };
    Role role = Role::User;
    QString text;
    bool streaming = false;  // the answer is still being generated (saved as interrupted)
    AnswerEnd::Reason stop_reason = AnswerEnd::None;  // for a finished answer
    bool forgotten = false;  // dropped from the model's view to make room; still shown
    QDateTime time;          // when it was sent, or when its answer began (UTC); null in old files
    // Branches: the other versions of this message and of everything after it (an answer
    // regenerated, a question edited and sent again), each as it was left, in the order they were
    // made; this one is number `version` among all of them.
    std::vector<std::vector<Message>> other_versions;
    int version = 0;
};

// An answer cut short (stopped, at its token limit, or interrupted) that the model can go on with.
bool can_continue(const Message& m);

// The versions at a message (1 when it was never branched).
inline int version_count(const Message& m) { return int(m.other_versions.size()) + 1; }

// What a new version at a row must carry: the versions there, the one shown now among them.
struct Versions {
    std::vector<std::vector<Message>> others;
    int version = 0;
};
// Keeps messages[row..] as one of the versions at row, for a new version to take the row: the
// new one is the last.
Versions keep_as_version(const QList<Message>& messages, int row);
// Shows version k at row: the messages from row on swap places with it. False when k is not one
// of the other versions there.
bool show_version(QList<Message>& messages, int row, int k);

// A conversation as the store writes it (and export carries it): its messages, its chat format,
// the text typed and not sent yet, and the model that wrote its last answer.
struct ConversationRecord {
    QString id;              // a UUID; also the file name under the data folder
    QString title;
    QDateTime created;
    QList<Message> messages;
    llamadesk::ChatFormat format = llamadesk::ChatFormat::Llama2Chat;
    QString draft;           // typed in the composer, not sent yet
    QString model;           // the model that wrote the last answer, as the window names it
    bool pinned = false;     // kept at the top of the list, above the others
    QStringList tags;        // the person's own words for it; searched with its text

    // User messages the model still sees (forgotten ones excluded): the engine's turn count.
    int remembered_turns() const;
    // The engine's turns before message row: the remembered questions above it.
    int turns_before(int row) const;
    // The remembered messages as engine turns; an unanswered last question has an empty answer.
    std::vector<llamadesk::ChatTurn> turns() const;
};

// A conversation as the window shows it: its record, and its figures as the engine last reported
// them (not saved).
struct ConversationItem : ConversationRecord {
    ConversationItem() = default;
    explicit ConversationItem(ConversationRecord record) : ConversationRecord(std::move(record)) {}
    llamadesk::ConversationStats stats;
};

// "chat" / "completion" (chat_formats()' keys): the saved files' name of a format.
QString format_key(llamadesk::ChatFormat format);
// The day the conversation was created, as Llama 3.1's system header writes a date ("03 Dec 2026"),
// so its first turn's tokens stay the same across restarts.
QString conversation_date(const ConversationRecord& conversation);
llamadesk::ChatFormat format_from_key(const QString& key, llamadesk::ChatFormat fallback);
