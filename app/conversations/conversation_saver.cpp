#include "conversations/conversation_saver.h"

ConversationSaver::ConversationSaver(const QString& dataDir, int retryMs, QObject* parent)
    : QObject(parent), store_(dataDir), retry_(this) {
    retry_.setInterval(retryMs);
    connect(&retry_, &QTimer::timeout, this, &ConversationSaver::flush);
}

void ConversationSaver::save(const ConversationRecord& conversation) {
    pending_.insert(conversation.id, conversation);
    flush();
}

void ConversationSaver::remove(const QString& id) {
    pending_.remove(id);
    store_.remove(id);
    if (pending_.isEmpty())
        flush();  // the last unsaved conversation is gone: nothing is at risk any more
}

void ConversationSaver::flush() {
    QString first_error;
    for (auto it = pending_.begin(); it != pending_.end();) {
        QString error;
        if (store_.save(*it, &error)) {
            emit saved(it->id, it->draft);
            it = pending_.erase(it);
        } else {
            if (first_error.isEmpty())
                first_error = error;
            ++it;
        }
    }
    if (pending_.isEmpty()) {
        retry_.stop();
        if (!last_failure_.isEmpty()) {
            last_failure_.clear();
            emit recovered();
        }
        return;
    }
    retry_.start();
    const QString message =
        tr("Could not save %1 (%2). Retrying every %3 s; keep LlamaDesk open until it succeeds.")
            .arg(pending_.size() == 1 ? tr("a conversation") : tr("%1 conversations").arg(pending_.size()), first_error)
            .arg(retry_.interval() / 1000.0);
    if (message != last_failure_) {
        last_failure_ = message;
        emit failed(message);
    }
}

void ConversationSaver::finish() {
    flush();
    retry_.stop();
}
