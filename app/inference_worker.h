// Hosts the inference backend on its own thread: the engine on this machine, or a server speaking
// the OpenAI-compatible API when the model's location is an http(s) address (RemoteBackend). Every request arrives as a queued slot call and every result
// leaves as a queued signal; nothing here is touched from the GUI thread except the cancel flag,
// an atomic the GUI sets and the engine reads once per token.
//
// Every change to a conversation's cache is published with the conversation's key (statsChanged
// and cacheLayoutReady), during an answer too, and for every conversation after an answer, since
// making room for one may have evicted others.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include "engine_types.h"
#include "inference_backend.h"

class LocalBackend;

class InferenceWorker : public QObject {
    Q_OBJECT
public:
    explicit InferenceWorker(const std::atomic<bool>* cancel, QObject* parent = nullptr);
    ~InferenceWorker() override;

public slots:
    // path: a checkpoint, or a remote location (remote_location() in remote/endpoint.h).
    // kvCacheType: a name AppSettings::kvCacheTypes() lists (this machine's engine only).
    // serverTimeoutMs: how long a server may stay silent, apiKey: what to send it (a remote location only).
    void loadModel(const QString& path, const QString& tokenizer, int threads, qint64 kvCacheBytes,
                   const QString& kvCacheType, int serverTimeoutMs, const QString& apiKey);
    // Keeps conversations' KV caches under folder, within budgetBytes (0: off); see
    // llamadesk::SnapshotSettings. What is restored or ignored goes to the log. A server keeps
    // its own cache.
    void setSnapshots(const QString& folder, qint64 budgetBytes);
    // Gives the engine a conversation's turns after a restart; nothing is computed until it is used.
    void restoreConversation(const QString& key, const std::vector<llamadesk::ChatTurn>& turns,
                             const QString& systemPrompt, llamadesk::ChatFormat format);
    void setChatFormat(const QString& key, llamadesk::ChatFormat format);
    void generate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void continueAnswer(const QString& key, const llamadesk::GenerateParams& params);
    void resetConversation(const QString& key);
    void deleteConversation(const QString& key);
    void truncateTurns(const QString& key, int nTurns);
    void dropOldestTurns(const QString& key, int n, const QString& systemPrompt);
    // How many tokens text would add as the conversation's next turn (answers turnMeasured).
    void measureTurn(const QString& key, const QString& text, const QString& systemPrompt);
    // Emits the conversation's figures and cache layout as they are now.
    void publish(const QString& key);

signals:
    void loadProgress(double fraction, const QString& stage);
    // The backend was replaced (this machine <-> a server): it holds no conversation, so every one
    // must be restored. Sent just before modelLoaded.
    void historiesCleared();
    void modelLoaded(const QString& path, const QString& tokenizer, const llamadesk::ModelInfo& info);
    void loadFailed(const QString& path, int code, const QString& message);
    void generationStarted(const QString& key);
    // Pieces are batched: at most one signal every kEmitIntervalMs, plus one with the remainder.
    void tokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    // nTurns: the turns the engine holds afterwards, so the window knows whether this one was kept.
    void generationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void statsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                      const llamadesk::PoolStats& pool);
    void cacheLayoutReady(const QString& key, const llamadesk::CacheLayout& layout);
    // A server's own figures for the conversation's answer, after each update of it.
    void serverFiguresChanged(const QString& key, const ServerFigures& figures);
    void turnMeasured(const QString& key, const QString& text, const llamadesk::TurnSize& size);
    void error(const QString& key, const QString& message);

private:
    // The window names conversations by key; the engine's own conversation is made on first use.
    struct Entry {
        llamadesk::ConversationId id = -1;
        std::vector<llamadesk::ChatTurn> pending_turns;
        std::string system_prompt;
        llamadesk::ChatFormat format = llamadesk::ChatFormat::Llama2Chat;
    };
    using Generation = std::function<llamadesk::GenerationResult(llamadesk::ConversationId,
                                                                 const llamadesk::TokenCallback&)>;
    void run(const QString& key, const Generation& generation);
    llamadesk::ConversationId ensure(const QString& key);
    llamadesk::ConversationStats stats_of(const QString& key) const;
    llamadesk::CacheLayout layout_of(const QString& key) const;
    void publishAll();
    void report(const QString& key, const llamadesk::Status& status);
    void connectRemote(const QString& location, int timeoutMs, const QString& apiKey);
    void replaceBackend(std::unique_ptr<InferenceBackend> backend);
    void publishServerFigures(const QString& key);

    static constexpr int kEmitIntervalMs = 50;
    std::unique_ptr<InferenceBackend> backend_;
    LocalBackend* local_ = nullptr;  // backend_ when it is this machine's engine
    llamadesk::SnapshotSettings snapshots_;  // for this machine's engine, whenever there is one
    const std::atomic<bool>* cancel_;
    QHash<QString, Entry> conversations_;
};
