// Conversations as files a person keeps or shares: Markdown to read, and a JSON file that holds
// everything (messages with roles and times, the model, the chat format, the system prompt and
// the sampling) and imports back. One JSON shape serves one conversation and all of them.
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>
#include <QVariantMap>
#include <optional>

#include "conversations/conversation.h"
#include "conversations/presets.h"

// A conversation with what belongs to it outside its saved record.
struct ConversationExport {
    ConversationRecord conversation;
    QString system_prompt;
    QVariantMap sampling;  // ConversationSettings::samplingOf's keys
};

QString export_markdown(const ConversationExport& e);
// presets: carried beside the conversations (an export of all of them takes every preset).
QByteArray export_json(const QList<ConversationExport>& conversations, const QList<Preset>& presets = {});
// Every conversation in an export_json file, or nullopt and *error naming what is wrong (and,
// for a bad conversation, which one); its presets into *presets when asked (files without any
// give none).
std::optional<QList<ConversationExport>> import_json(const QByteArray& json, QString* error,
                                                     QList<Preset>* presets = nullptr);
