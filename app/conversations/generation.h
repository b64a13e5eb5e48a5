// The answers: starting one, streaming it into its conversation's messages (saved while it
// streams, so a kill loses at most a second of it), Stop, and the edits of a history that ask for
// a new answer (regenerate, continue, edit and resend) or cut it (delete an exchange, clear, drop
// the oldest turns). Several conversations may answer at once; each has its own stream.
// What the composer must hear of an answer (a refused question, a full context) leaves as signals.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

#include "conversations/conversation_list.h"
#include "worker/cancel_flags.h"

class Generation : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    // The current conversation's answer is streaming (others may stream too).
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
public:
    // cancel: the conversations' Stop flags the worker's engine reads each token; only this
    // object writes them.
    Generation(ConversationList* list, CancelFlags* cancel, QObject* parent = nullptr);

    bool generating() const { return answering(list_->current()); }
    bool answering(const ConversationItem* c) const { return c && streams_.contains(c->id); }

    // Appends the question and an empty answer to c, saves, and asks the worker for the answer.
    void start(ConversationItem* c, const QString& text);
    // Asks question again in place of messages[row..] (row: the question's row), which stay as
    // one version at versionRow; the question keeps the versions it had.
    void askAgain(ConversationItem* c, int row, QString question, int versionRow);  // question: a copy, the row goes
    // The oldest remembered half of c's turns leaves the model's view (the window still shows
    // them); false when c has no turn to drop.
    bool dropOldestTurns(ConversationItem* c);
    // At exit, after the worker has stopped: answers whose end never arrived are saved as interrupted.
    void shutdown();

    Q_INVOKABLE void stop();
    // Every way of answering or asking again keeps what it replaces as another version at that
    // message ("‹ 1/2 ›"), with everything after it: nothing is lost.
    Q_INVOKABLE void regenerate();  // the last answer
    Q_INVOKABLE void regenerateAt(int messageRow);  // any answer
    Q_INVOKABLE void continueAnswer();
    Q_INVOKABLE void editAndResend(int messageRow, const QString& text);
    // Shows version `version` (from 0) at messageRow and what followed it; the engine is given
    // that history (its full blocks come back from the cache on disk where they were saved).
    Q_INVOKABLE void showVersion(int messageRow, int version);
    // Deletes a question and its answer (messageRow is either). The last exchange cuts the cache
    // back; an earlier one gives the engine the history without it, computed again when next used.
    Q_INVOKABLE void deleteExchange(int messageRow);
    Q_INVOKABLE void clearConversation();

public slots:
    void onTokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onGenerationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);

signals:
    void requestGenerate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void requestContinue(const QString& key, const llamadesk::GenerateParams& params);
    void requestReset(const QString& key);
    void requestTruncate(const QString& key, int nTurns);
    void requestDropOldest(const QString& key, int n, const QString& systemPrompt);

    void generatingChanged();
    // The engine did not keep question (status says why): it is out of c's messages again.
    void refused(ConversationItem* c, const QString& question, const llamadesk::Status& status);
    // c's answer stopped because its context is full.
    void contextFilled(ConversationItem* c);
    // An answer ended: the history it belongs to is longer.
    void answerEnded(ConversationItem* c);
    // Messages were taken out of c's history.
    void historyCut(ConversationItem* c);
    void errorOccurred(const QString& message);

private:
    // A streaming answer is saved at least this often, so a kill loses at most this much.
    static constexpr int kStreamSaveMs = 1000;
    static constexpr int kStreamSaveTokens = 64;

    void beginStreaming(ConversationItem* c, int row, const QString& titleBefore, const QString& answerBefore);
    // The current conversation when it is not answering.
    ConversationItem* idle() const;

    ConversationList* list_;
    CancelFlags* cancel_;
    // An answer streaming into its conversation.
    struct Stream {
        int row = -1;            // the answer's row in its conversation
        QString answer_before;   // continueAnswer(): the text the answer had already
        QString title_before;    // the title before this send named the conversation
        QElapsedTimer since_save;
        int tokens_at_save = 0;
        int version_row = -1;    // asked again in place of a version at this row (askAgain())
        int version_before = 0;  // that version's number
    };
    QHash<QString, Stream> streams_;
};
