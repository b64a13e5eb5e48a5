// The composer: what it holds for the current conversation (the conversation's draft, journaled as
// it is typed and saved in its conversation a second after the last key), what sending it would cost in tokens, sending it, and what happens to a message that
// does not fit: it stays in the composer and waits for the context-full choice (drop the oldest
// turns, or a new conversation). A question the engine refuses comes back here too.
#pragma once

#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

#include "conversations/conversation_list.h"
#include "conversations/generation.h"

class MessageComposer : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(QString draft READ draft WRITE setDraft NOTIFY draftChanged)
    // The figures below stay until the next count arrives, so they do not flicker while typing;
    // draftCounted says whether they describe the text as it is now.
    Q_PROPERTY(bool draftCounted READ draftCounted NOTIFY draftMeasured)
    Q_PROPERTY(int draftTokens READ draftTokens NOTIFY draftMeasured)      // -1: not measured yet
    Q_PROPERTY(int draftRoom READ draftRoom NOTIFY draftMeasured)          // tokens a message may have now
    Q_PROPERTY(int contextLength READ contextLength NOTIFY draftMeasured)
    Q_PROPERTY(bool draftTooLong READ draftTooLong NOTIFY draftMeasured)   // longer than the whole context
    Q_PROPERTY(bool draftNeedsRoom READ draftNeedsRoom NOTIFY draftMeasured)  // fits only after making room
    Q_PROPERTY(bool contextFull READ contextFull NOTIFY contextFullChanged)
    // A message is waiting (in the composer) for the context-full choice; else an answer filled it.
    Q_PROPERTY(bool messageWaiting READ messageWaiting NOTIFY contextFullChanged)
public:
    MessageComposer(ConversationList* list, Generation* generation, QObject* parent = nullptr);

    QString draft() const;
    void setDraft(const QString& text);
    bool draftCounted() const { return measured() && measure_text_ == draft(); }
    int draftTokens() const { return measured() ? measure_.message_tokens : -1; }
    int draftRoom() const;
    int contextLength() const { return list_->modelDefaults().context_length; }
    bool draftTooLong() const { return measured() && !measure_.fits_alone(); }
    bool draftNeedsRoom() const { return measured() && measure_.fits_alone() && !measure_.fits(); }
    bool contextFull() const { return context_full_; }
    bool messageWaiting() const { return !pending_text_.isEmpty(); }
    // When a message does not fit: drop the oldest turns and send it (on), or ask (off).
    void setDropOldestWhenFull(bool on) { drop_oldest_when_full_ = on; }
    // At exit: a draft typed since its last save is saved.
    void shutdown() { saveDraft(); }

    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void dropOldestTurnsAndContinue();
    // The context-full dialog's other way out: the refused message goes to a new conversation.
    Q_INVOKABLE void continueInNewConversation();
    Q_INVOKABLE void dismissContextFull();

public slots:
    void onTurnMeasured(const QString& key, const QString& text, const llamadesk::TurnSize& size);

signals:
    void requestMeasure(const QString& key, const QString& text, const QString& systemPrompt);
    void draftChanged();
    void draftMeasured();
    void contextFullChanged();
    void errorOccurred(const QString& message);

private:
    static constexpr int kMeasureDelayMs = 150;
    static constexpr int kDraftSaveMs = 1000;  // the journal holds the keys in between

    void onShown();
    void onRefused(ConversationItem* c, const QString& question, const llamadesk::Status& status);
    void onContextFilled(ConversationItem* c);
    // What the model sees changed: the count shown is of an older history.
    void remeasure();
    void returnToDraft(ConversationItem* c, const QString& text);
    void setContextFull(bool on);
    bool measured() const;
    void measureDraft();
    void saveDraft();

    ConversationList* list_;
    Generation* generation_;
    bool context_full_ = false;
    bool drop_oldest_when_full_ = false;
    QString pending_text_;     // a message refused because the context was full
    QTimer measure_timer_;
    QString measure_key_, measure_text_;  // what measure_ describes
    llamadesk::TurnSize measure_;
    QTimer draft_save_timer_;
    QString unsaved_draft_;  // the conversation whose draft was typed since its last save
};
