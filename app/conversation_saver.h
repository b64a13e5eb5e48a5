// Writes conversations on its own thread, in the order they were asked for, so the GUI thread
// never waits for the disk (each save ends with an fsync). Failures come back as a signal.
#pragma once

#include <QObject>

#include "conversation_store.h"

class ConversationSaver : public QObject {
    Q_OBJECT
public:
    explicit ConversationSaver(const QString& dataDir, QObject* parent = nullptr);

public slots:
    void save(const Conversation& conversation);
    void remove(const QString& id);

signals:
    void failed(const QString& message);

private:
    ConversationStore store_;
};
