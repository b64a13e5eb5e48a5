// The window's conversations: sending, streaming answers into the message list, stop,
// regenerate, edit and resend, context-full recovery, and saving every change.
// Lives on the GUI thread; talks to the worker and the saver only through the signals below.
#pragma once

#include <QObject>
#include <QtQml/qqmlregistration.h>
#include <atomic>

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
    Q_PROPERTY(bool generating READ generating NOTIFY generatingChanged)
    Q_PROPERTY(bool contextFull READ contextFull NOTIFY contextFullChanged)
public:
    // cancel: the flag the worker's engine reads each token; only this controller writes it.
    ChatController(const QString& dataDir, QSettings* settings, std::atomic<bool>* cancel,
                   QObject* parent = nullptr);

    ConversationListModel* conversations() { return &conversations_; }
    MessageListModel* messages() { return &messages_; }
    ConversationSettings* settings() { return &settings_; }
    int currentIndex() const;
    QString currentId() const;
    bool generating() const { return generating_; }
    bool contextFull() const { return context_full_; }

    // Reads the saved conversations (once, at start) and hands their turns to the worker, which
    // computes nothing until a conversation is used.
    void loadSaved();

    Q_INVOKABLE void send(const QString& text);
    Q_INVOKABLE void stop();
    Q_INVOKABLE void newConversation();
    Q_INVOKABLE void clearConversation();
    Q_INVOKABLE void selectConversation(int row);
    Q_INVOKABLE void renameConversation(int row, const QString& title);
    Q_INVOKABLE void deleteConversation(int row);
    Q_INVOKABLE void regenerate();
    Q_INVOKABLE void editAndResend(int messageRow, const QString& text);
    Q_INVOKABLE void dropOldestTurnsAndContinue();
    Q_INVOKABLE void dismissContextFull();
    Q_INVOKABLE void copyText(const QString& text);

public slots:
    void onTokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onGenerationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void onStatsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                        const llamadesk::PoolStats& pool);
    void onModelLoaded();

signals:
    void requestGenerate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void requestRestore(const QString& key, const std::vector<llamadesk::ChatTurn>& turns,
                        const QString& systemPrompt);
    void requestReset(const QString& key);
    void requestDelete(const QString& key);
    void requestTruncate(const QString& key, int nTurns);
    void requestDropOldest(const QString& key, int n, const QString& systemPrompt);
    void requestInspect(const QString& key);
    void requestStats(const QString& key);

    void saveRequested(const Conversation& conversation);
    void removeRequested(const QString& id);

    void currentChanged();
    void generatingChanged();
    void contextFullChanged();
    void errorOccurred(const QString& message);

private:
    Conversation* current() const { return messages_.conversation(); }
    void show(Conversation* conversation);
    void startGeneration(Conversation* c, const QString& text);
    void save(Conversation* c);
    void setGenerating(bool on);
    void setContextFull(bool on);

    ConversationStore store_;
    ConversationListModel conversations_;
    MessageListModel messages_;
    ConversationSettings settings_;
    std::atomic<bool>* cancel_;
    bool generating_ = false;
    QString generating_key_;
    int generating_row_ = -1;  // the streaming answer's row in that conversation
    bool context_full_ = false;
    QString pending_text_;     // a message refused because the context was full, sent after dropping
};
