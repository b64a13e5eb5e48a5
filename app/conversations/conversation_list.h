// The window's conversations: which there are (newest first) and which one is shown; making,
// selecting, renaming, deleting with undo and importing them; reading the saved ones at start and
// giving each one's turns to the worker; and saving every change through the storage thread.
// What conversations take from the loaded model (its format, context length and name) is kept here.
#pragma once

#include <QObject>
#include <QTimer>
#include <QtQml/qqmlregistration.h>
#include <memory>

#include <llamadesk/engine.h>

#include "conversations/conversation_list_model.h"
#include "conversations/conversation_settings.h"
#include "conversations/presets.h"
#include "conversations/conversation_store.h"
#include "conversations/draft_journal.h"
#include "models/message_list_model.h"

// What the loaded model gives conversations: new ones its format and context, answers its name.
struct ModelDefaults {
    QString name;
    llamadesk::ChatFormat format = llamadesk::ChatFormat::Llama2Chat;
    QString format_reason;     // why this format ("from its chat template", ...)
    bool format_known = true;  // false: its template is of no family LlamaDesk renders
    int context_length = 0;
};

class ConversationList : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(ConversationListModel* model READ model CONSTANT)
    Q_PROPERTY(MessageListModel* messages READ messages CONSTANT)
    Q_PROPERTY(ConversationSettings* settings READ settings CONSTANT)
    Q_PROPERTY(Presets* presets READ presets CONSTANT)
    Q_PROPERTY(int currentIndex READ currentIndex NOTIFY currentChanged)
    Q_PROPERTY(QString currentId READ currentId NOTIFY currentChanged)
    Q_PROPERTY(QString currentTitle READ currentTitle NOTIFY currentChanged)
    Q_PROPERTY(QString undoDeleteTitle READ undoDeleteTitle NOTIFY undoDeleteChanged)
public:
    ConversationList(const QString& dataDir, QSettings* settings, QObject* parent = nullptr);
    ~ConversationList() override;

    ConversationListModel* model() { return &model_; }
    MessageListModel* messages() { return &messages_; }
    ConversationSettings* settings() { return &settings_; }
    Presets* presets() { return &presets_; }
    // The current conversation's system prompt, format and sampling kept as preset `name`
    // (replacing one of that name). Empty, or why not.
    Q_INVOKABLE QString savePreset(const QString& name);
    // Preset `name` given to the current conversation: its system prompt, format and sampling.
    Q_INVOKABLE void applyPreset(const QString& name);
    int currentIndex() const;
    QString currentId() const;
    QString currentTitle() const;
    QString undoDeleteTitle() const { return deleted_ ? deleted_->conversation->title : QString(); }
    const ModelDefaults& modelDefaults() const { return model_defaults_; }

    ConversationItem* current() const { return messages_.conversation(); }
    // By id, the one deleted and still undoable included.
    ConversationItem* find(const QString& id) const;

    // Reads the saved conversations (once, at start) and hands their turns to the worker, which
    // computes nothing until a conversation is used.
    void loadSaved();
    // At exit: a pending delete is carried out.
    void shutdown() { commitDelete(); }
    // A copy goes to the storage thread (the saver never sees the live object); views are told.
    void save(ConversationItem* c);
    // A conversation still untitled takes its first message's words as its title.
    void nameAfter(ConversationItem* c, const QString& text);
    void setTitle(ConversationItem* c, const QString& title);
    // The one way a draft changes: the journal has the change before this returns (draft_journal.h).
    void setDraft(ConversationItem* c, const QString& text);
    void setFormat(ConversationItem* c, llamadesk::ChatFormat format);
    // Gives the worker c's remembered turns again (its history changed before its end).
    void restore(const ConversationItem* c);
    // An imported conversation, added at the top of the list and saved; its id must be new.
    void addConversation(ConversationRecord conversation);

    Q_INVOKABLE void newConversation();
    // A new conversation, shown, holding the current one's messages up to and including `row`,
    // with its format, day, system prompt and sampling; the current one stays as it is. Its
    // cache is the other's blocks for those turns (shared prefixes), so nothing is computed again.
    Q_INVOKABLE void branchFromMessage(int row);
    // The same for any conversation: its first `keep` messages. Returns the new one.
    ConversationItem* branch(ConversationItem* source, int keep);
    Q_INVOKABLE void selectConversation(int row);
    Q_INVOKABLE void renameConversation(int row, const QString& title);
    // Pinned: at the top of the list, above the others, until unpinned; saved with it.
    Q_INVOKABLE void setPinned(int row, bool pinned);
    Q_INVOKABLE bool isPinned(int row) const { return model_.at(row) && model_.at(row)->pinned; }
    // Tags as the person types them, separated by commas; empty ones and repeats dropped.
    Q_INVOKABLE void setTags(int row, const QString& commaSeparated);
    Q_INVOKABLE QString tagsOf(int row) const { return model_.at(row) ? model_.at(row)->tags.join(", ") : QString(); }
    // Takes the conversation out of the list; it is gone for good after kUndoMs unless undone.
    Q_INVOKABLE void deleteConversation(int row);
    Q_INVOKABLE void undoDelete();

public slots:
    // The worker's backend was replaced and holds no conversation: give it every one again.
    void restoreAll();
    void onModelLoaded(const QString& path, const QString& tokenizer, const llamadesk::ModelInfo& info);
    void onStatsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                        const llamadesk::PoolStats& pool);
    // The saver wrote this conversation with this draft.
    void onSaved(const QString& id, const QString& draft) { journal_.saved(id, draft); }

signals:
    // date: the conversation's day (conversation_date()), which Llama 3.1's header writes.
    void requestRestore(const QString& key, const std::vector<llamadesk::ChatTurn>& turns,
                        const QString& systemPrompt, llamadesk::ChatFormat format, const QString& date);
    void requestFormat(const QString& key, llamadesk::ChatFormat format, const QString& date);
    void requestDelete(const QString& key);
    void requestPublish(const QString& key);
    void saveRequested(const ConversationRecord& conversation);
    void removeRequested(const QString& id);

    // The current conversation, its title or its row changed.
    void currentChanged();
    // Another conversation is shown: what was tied to the one before (a choice, a count) goes.
    void shown();
    // A conversation's format changed: what it would cost to send changed with it.
    void formatChanged(ConversationItem* c);
    // Another model loaded (modelDefaults()).
    void modelChanged();
    // A conversation left the list (Undo may still bring it back): its answer must stop.
    void removing(const QString& id);
    void undoDeleteChanged();
    void errorOccurred(const QString& message);

private:
    // A conversation taken out of the list, kept until its undo time is over.
    struct Deleted {
        std::unique_ptr<ConversationItem> conversation;
        int row = 0;
    };
    static constexpr int kUndoMs = 6000;

    void show(ConversationItem* conversation);
    ConversationItem* createConversation();
    void commitDelete();

    ConversationStore store_;
    DraftJournal journal_;
    ConversationListModel model_;
    MessageListModel messages_;
    ConversationSettings settings_;
    Presets presets_;
    ModelDefaults model_defaults_;
    std::unique_ptr<Deleted> deleted_;
    QTimer undo_timer_;
};
