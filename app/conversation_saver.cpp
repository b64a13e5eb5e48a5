#include "conversation_saver.h"

ConversationSaver::ConversationSaver(const QString& dataDir, QObject* parent)
    : QObject(parent), store_(dataDir) {
    qRegisterMetaType<Conversation>();
}

void ConversationSaver::save(const Conversation& conversation) {
    QString error;
    if (!store_.save(conversation, &error))
        emit failed("Could not save the conversation: " + error);
}

void ConversationSaver::remove(const QString& id) { store_.remove(id); }
