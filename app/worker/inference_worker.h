// Hosts the inference backend on its own thread: the engine on this machine, or a server speaking
// the OpenAI-compatible API when the model's location is an http(s) address (RemoteBackend). Every
// request arrives as a queued slot call and every result leaves as a queued signal; nothing here
// is touched from the GUI thread except the conversations' Stop flags (CancelFlags), atomics the
// GUI sets and the engine reads once per token. The engine's structs travel in those signals as
// they are: Qt 6's moc records every argument's type, so none is declared or registered by hand.
//
// Answers are asked of the backend as one batch (InferenceBackend::generate_batch) of the answers
// asked for, and whenever it admits more (between steps of this machine's engine, between answers
// of a server) the worker handles the requests that came meanwhile: a new answer joins the batch,
// a request about another conversation runs at once, and one about a conversation of the batch, or
// a model load, waits until the batch ends.
//
// Every change to a conversation's cache is published with the conversation's key (statsChanged
// and cacheLayoutReady), during an answer too, and for every conversation after an answer, since
// making room for one may have evicted others.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QString>
#include <atomic>
#include <functional>
#include <memory>
#include <vector>

#include <llamadesk/engine.h>

#include "worker/inference_backend.h"

class CancelFlags;
class LocalBackend;

class InferenceWorker : public QObject {
    Q_OBJECT
public:
    explicit InferenceWorker(CancelFlags* cancel, QObject* parent = nullptr);
    ~InferenceWorker() override;

public slots:
    // path: a checkpoint, or a remote location (remote_location() in remote/endpoint.h).
    // kvCacheType: this machine's engine only.
    // contextLimit: LoadParams::context_length (0: the engine chooses).
    // serverTimeoutMs: how long a server may stay silent, apiKey: what to send it (a remote location only).
    void loadModel(const QString& path, const QString& tokenizer, int threads, qint64 kvCacheBytes,
                   llamadesk::KvCacheType kvCacheType, int contextLimit, int serverTimeoutMs, const QString& apiKey);
    // Keeps conversations' KV caches under folder, within budgetBytes (0: off); see
    // llamadesk::SnapshotSettings. What is restored or ignored goes to the log. A server keeps
    // its own cache.
    void setSnapshots(const QString& folder, qint64 budgetBytes);
    // Gives the engine a conversation's turns after a restart; nothing is computed until it is used.
    void restoreConversation(const QString& key, const std::vector<llamadesk::ChatTurn>& turns,
                             const QString& systemPrompt, llamadesk::ChatFormat format, const QString& date);
    void setChatFormat(const QString& key, llamadesk::ChatFormat format, const QString& date);
    void generate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void continueAnswer(const QString& key, const llamadesk::GenerateParams& params);
    void resetConversation(const QString& key);
    void deleteConversation(const QString& key);
    // The pool evicts this conversation before the window's (the local server's requests).
    void setEvictFirst(const QString& key);
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
        std::string date;  // the conversation's day; empty: the engine's today
        bool evict_first = false;
    };
    // What the window hears of one answer: pieces at most every kEmitIntervalMs, then its end.
    struct AnswerStream {
        AnswerStream(const QString& key, llamadesk::ConversationId id) : key(key), id(id) {}
        QString key;
        llamadesk::ConversationId id;
        std::string pending;  // text decoded since the last emission
        QElapsedTimer since_emit;
        bool first = true;
    };
    struct WaitingAnswer {
        QString key;
        std::string text;
        llamadesk::GenerateParams params;
        bool resume = false;  // continueAnswer(): goes on with the last answer
    };
    void startStream(AnswerStream& stream);
    void onPiece(AnswerStream& stream, const std::string& piece, const llamadesk::GenerationStats& stats);
    void onEnd(AnswerStream& stream, const llamadesk::GenerationResult& result);
    // Queues an answer for the batch (starting one when none runs).
    void ask(WaitingAnswer answer);
    // Answers waiting_ and every answer asked for while it runs, together; then the requests held
    // for its end, and again while answers wait.
    void runBatch();
    void runOneBatch();
    // True (and call is kept for later) when a batch is under way and this request must not
    // run inside it: it is about a conversation of the batch (key), or about every one (empty key).
    bool waitForBatch(const QString& key, std::function<void()> call);
    llamadesk::ConversationId ensure(const QString& key);
    llamadesk::ConversationStats stats_of(const QString& key) const;
    llamadesk::CacheLayout layout_of(const QString& key) const;
    void publishAll();
    void report(const QString& key, const llamadesk::Status& status);
    void connectRemote(const QString& location, int timeoutMs, const QString& apiKey);
    // The backend was replaced: the conversations it held are gone (historiesCleared).
    void clearHistories();
    void publishServerFigures(const QString& key);

    static constexpr int kEmitIntervalMs = 50;
    // This machine's engine loads checkpoints; while a server answers it holds no model.
    std::unique_ptr<LocalBackend> engine_;
    std::unique_ptr<InferenceBackend> server_;  // the server connected to, while one answers
    InferenceBackend* backend_;                 // the one that answers: engine_ or server_
    llamadesk::SnapshotSettings snapshots_;
    CancelFlags* cancel_;
    QHash<QString, Entry> conversations_;
    std::vector<WaitingAnswer> waiting_;         // asked for, not yet in the batch
    bool batch_running_ = false;
    bool draining_ = false;                     // running the requests held for the batch's end
    QSet<QString> in_batch_;                    // conversations whose answers the batch is giving
    std::vector<std::function<void()>> after_batch_;  // requests held until the batch ends, in order
};
