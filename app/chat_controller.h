// The window's conversations: sending, streaming answers into the message list, stop,
// regenerate, continue, edit and resend, drafts and their token counts, context-full recovery,
// delete with undo, and saving every change (an answer while it streams too).
// Lives on the GUI thread; talks to the worker and the saver only through the signals below.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>
#include <atomic>
#include <memory>

#include "cancel_flags.h"
#include "conversation_list_model.h"
#include "conversation_settings.h"
#include "conversation_store.h"
#include "engine_types.h"
#include "message_list_model.h"

class ChatController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(ConversationListModel* conversations READ conversations CONSTANT)
    Q_PROPERTY(MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(ConversationSettings* settings READ settings CONSTANT)
    Q_PROPERTY(int currentIndex READ currentIndex NOTIFY currentChanged)
    Q_PROPERTY(QString currentId READ currentId NOTIFY currentChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
    // The current conversation's answer is streaming (others may stream too: each has its own).
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool contextFull READ contextFull NOTIFY contextFullChanged)
    // A message is waiting (in the composer) for the context-full choice; else an answer filled it.
    Q_PROPERTY(bool messageWaiting READ messageWaiting NOTIFY contextFullChanged)
    // The current conversation's chat format ("chat" or "completion") and the model's own.
    Q_PROPERTY(QString chatFormat READ chatFormat WRITE setChatFormat NOTIFY currentChanged)
    Q_PROPERTY(QString suggestedFormat READ suggestedFormat NOTIFY currentChanged)
    // Why the model suggests it ("from its chat template", or that its template is of no family
    // LlamaDesk renders); suggestedFormatKnown is false in that last case.
    Q_PROPERTY(QString suggestedFormatReason READ suggestedFormatReason NOTIFY currentChanged)
    Q_PROPERTY(bool suggestedFormatKnown READ suggestedFormatKnown NOTIFY currentChanged)
    // Every chat format the selector lists: {key, name}, from the engine's one list.
    Q_PROPERTY(QVariantList formats READ formats CONSTANT)
    // What the composer holds for the current conversation, and what it would cost to send.
    Q_PROPERTY(QString draft READ draft WRITE setDraft NOTIFY draftChanged)
    // The figures below stay until the next count arrives, so they do not flicker while typing;
    // draftCounted says whether they describe the text as it is now.
    Q_PROPERTY(bool draftCounted READ draftCounted NOTIFY draftMeasured)
    Q_PROPERTY(int draftTokens READ draftTokens NOTIFY draftMeasured)      // -1: not measured yet
    Q_PROPERTY(int draftRoom READ draftRoom NOTIFY draftMeasured)          // tokens a message may have now
    Q_PROPERTY(int contextLength READ contextLength NOTIFY draftMeasured)
    Q_PROPERTY(bool draftTooLong READ draftTooLong NOTIFY draftMeasured)   // longer than the whole context
    Q_PROPERTY(bool draftNeedsRoom READ draftNeedsRoom NOTIFY draftMeasured)  // fits only after making room
    Q_PROPERTY(QString undoDeleteTitle READ undoDeleteTitle NOTIFY undoDeleteChanged)
public:
    // cancel: the conversations' Stop flags the worker's engine reads each token; only this
    // controller writes them.
    ChatController(const QString& dataDir, QSettings* settings, CancelFlags* cancel, QObject* parent = nullptr);
    ~ChatController() override;

    ConversationListModel* conversations() { return &conversations_; }
    MessageListModel* messages() { return &messages_; }
    ConversationSettings* settings() { return &settings_; }
    int currentIndex() const;
    QString currentId() const;
    QString currentTitle() const;
    bool generating() const { return current() && streams_.contains(current()->id); }
    bool contextFull() const { return context_full_; }
    bool messageWaiting() const { return !pending_text_.isEmpty(); }
    QString chatFormat() const;
    void setChatFormat(const QString& format);
    QString suggestedFormat() const { return format_key(model_format_); }
    QString suggestedFormatReason() const { return model_format_reason_; }
    bool suggestedFormatKnown() const { return model_format_known_; }
    static QVariantList formats();
    QString draft() const;
    void setDraft(const QString& text);
    bool draftCounted() const { return measured() && measure_text_ == draft(); }
    int draftTokens() const { return measured() ? measure_.message_tokens : -1; }
    int draftRoom() const;
    int contextLength() const { return context_length_; }
    bool draftTooLong() const { return measured() && !measure_.fits_alone(); }
    bool draftNeedsRoom() const { return measured() && measure_.fits_alone() && !measure_.fits(); }
    QString undoDeleteTitle() const { return deleted_ ? deleted_->conversation->title : QString(); }

    // Reads the saved conversations (once, at start) and hands their turns to the worker, which
    // computes nothing until a conversation is used.
    void loadSaved();
    // At exit, after the worker has stopped: a pending delete is carried out, drafts are saved.
    void shutdown();

    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void newConversation();
    // The context-full dialog's other way out: the refused message goes to a new conversation.
    Q_INVOKABLE void continueInNewConversation();
    Q_INVOKABLE void clearConversation();
    Q_INVOKABLE void selectConversation(int row);
    Q_INVOKABLE void renameConversation(int row, const QString& title);
    // Takes the conversation out of the list; it is gone for good after kUndoMs unless undone.
    Q_INVOKABLE void deleteConversation(int row);
    Q_INVOKABLE void undoDelete();
    Q_INVOKABLE void regenerate();
    Q_INVOKABLE void continueAnswer();
    Q_INVOKABLE void editAndResend(int messageRow, const QString& text);
    // Deletes a question and its answer (messageRow is either). The last exchange cuts the cache
    // back; an earlier one gives the engine the history without it, computed again when next used.
    Q_INVOKABLE void deleteExchange(int messageRow);
    Q_INVOKABLE void dropOldestTurnsAndContinue();
    Q_INVOKABLE void dismissContextFull();
    // When a message does not fit: drop the oldest turns and send it (on), or ask (off).
    void setDropOldestWhenFull(bool on) { drop_oldest_when_full_ = on; }
    Q_INVOKABLE void copyText(const QString& text);
    // An imported conversation, added at the top of the list and saved; its id must be new.
    void addConversation(ConversationRecord conversation);

public slots:
    void onTokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onGenerationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void onStatsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                        const llamadesk::PoolStats& pool);
    void onTurnMeasured(const QString& key, const QString& text, const llamadesk::TurnSize& size);
    void onModelLoaded(const QString& path, const QString& tokenizer, const llamadesk::ModelInfo& info);
    // The worker's backend was replaced and holds no conversation: give it every one again.
    void restoreAll();

signals:
    void requestGenerate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void requestContinue(const QString& key, const llamadesk::GenerateParams& params);
    // date: the conversation's day (conversation_date()), which Llama 3.1's header writes.
    void requestRestore(const QString& key, const std::vector<llamadesk::ChatTurn>& turns,
                        const QString& systemPrompt, llamadesk::ChatFormat format, const QString& date);
    void requestFormat(const QString& key, llamadesk::ChatFormat format, const QString& date);
    void requestReset(const QString& key);
    void requestDelete(const QString& key);
    void requestTruncate(const QString& key, int nTurns);
    void requestDropOldest(const QString& key, int n, const QString& systemPrompt);
    void requestMeasure(const QString& key, const QString& text, const QString& systemPrompt);
    void requestPublish(const QString& key);

    void saveRequested(const ConversationRecord& conversation);
    void removeRequested(const QString& id);

    void currentChanged();
    void generatingChanged();
    void contextFullChanged();
    void draftChanged();
    void draftMeasured();
    void undoDeleteChanged();
    void errorOccurred(const QString& message);

private:
    // A conversation taken out of the list, kept until its undo time is over.
    struct Deleted {
        std::unique_ptr<ConversationItem> conversation;
        int row = 0;
    };
    static constexpr int kUndoMs = 6000;
    // A streaming answer is saved at least this often, so a kill loses at most this much.
    static constexpr int kStreamSaveMs = 1000;
    static constexpr int kStreamSaveTokens = 64;
    static constexpr int kMeasureDelayMs = 150;

    ConversationItem* current() const { return messages_.conversation(); }
    ConversationItem* find(const QString& key) const;
    void show(ConversationItem* conversation);
    ConversationItem* createConversation();
    void startGeneration(ConversationItem* c, const QString& text);
    void beginStreaming(ConversationItem* c, int row, const QString& titleBefore, const QString& answerBefore);
    bool streaming(const ConversationItem* c) const { return c && streams_.contains(c->id); }
    void refused(ConversationItem* c, const QString& question, const llamadesk::Status& status);
    void returnToDraft(ConversationItem* c, const QString& text);
    void save(ConversationItem* c);
    void setContextFull(bool on);
    bool measured() const;
    void measureDraft();
    void commitDelete();

    ConversationStore store_;
    ConversationListModel conversations_;
    MessageListModel messages_;
    ConversationSettings settings_;
    CancelFlags* cancel_;
    // An answer streaming into its conversation; several conversations may stream at once.
    struct Stream {
        int row = -1;            // the answer's row in its conversation
        QString answer_before;   // continueAnswer(): the text the answer had already
        QString title_before;    // the title before this send named the conversation
        QElapsedTimer since_save;
        int tokens_at_save = 0;
    };
    QHash<QString, Stream> streams_;
    bool context_full_ = false;
    bool drop_oldest_when_full_ = false;
    QString pending_text_;     // a message refused because the context was full
    llamadesk::ChatFormat model_format_ = llamadesk::ChatFormat::Llama2Chat;
    QString model_name_;  // the loaded model's, given to each answer it writes
    QString model_format_reason_;
    bool model_format_known_ = true;
    int context_length_ = 0;
    QTimer measure_timer_;
    QString measure_key_, measure_text_;  // what measure_ describes
    llamadesk::TurnSize measure_;
    QTimer draft_save_timer_;
    std::unique_ptr<Deleted> deleted_;
    QTimer undo_timer_;
};
