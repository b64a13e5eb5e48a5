// Writes conversations on its own thread, in the order they were asked for, so the GUI thread
// never waits for the disk (each save ends with an fsync). A save that fails is kept (the newest
// version of each conversation) and tried again every retry interval and before each later save,
// until the disk takes it: a folder that is read-only or full for a while loses nothing.
#pragma once

#include <QMap>
#include <QObject>
#include <QTimer>

#include "conversations/conversation_store.h"

class ConversationSaver : public QObject {
    Q_OBJECT
public:
    static constexpr int kRetryMs = 5000;
    explicit ConversationSaver(const QString& dataDir, int retryMs = kRetryMs, QObject* parent = nullptr);

public slots:
    void save(const ConversationRecord& conversation);
    void remove(const QString& id);
    // Tries every pending save now.
    void flush();
    // The last try before the app exits, on the saver's thread: flush, then no more retries (the
    // timer must stop on its own thread, which ends after this).
    void finish();

signals:
    // Saving failed; the message says what and that it is retried. Sent again only when it changes.
    void failed(const QString& message);
    // Every save that had failed is now on disk.
    void recovered();
    // This conversation's file now holds this draft (what the draft journal waits for).
    void saved(const QString& id, const QString& draft);

private:
    ConversationStore store_;
    QMap<QString, ConversationRecord> pending_;  // by id: the newest version not yet on disk
    QTimer retry_;
    QString last_failure_;
};
