// The engine's side of the local server: requests from the HTTP threads become answers of the
// window's own worker, in the same batch as the window's conversations and on the same KV pool.
//
// A request is a conversation of the worker's, keyed "api/N", marked to be evicted before the
// window's (Engine::set_evict_first). After its answer it stays, idle, holding its cache: a request
// that repeats it with one more exchange (what chat clients send) continues that very conversation
// and prefills only the new turn; any other request whose tokens begin the same way takes the
// blocks it shares with it, or with a window conversation, through the pool's shared prefixes. At
// most Limits::idle such conversations are kept.
//
// At most Limits::parallel answers run at once; up to Limits::queue more wait; beyond that a
// request is refused with 429 at once, never dropped.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QString>
#include <deque>
#include <list>
#include <memory>
#include <mutex>
#include <variant>

#include <llamadesk/engine.h>

#include "server/api_protocol.h"
#include "server/api_stream.h"

class CancelFlags;
class InferenceWorker;

namespace llamadesk::server {

// One request as the window's list shows it.
struct ServedRequest {
    QString id;        // the answer's id ("chatcmpl-...")
    QString client;    // the client's address
    QString endpoint;  // "chat", "completion"
    int prompt_tokens = 0;
    int cached_tokens = 0;
    int completion_tokens = 0;
    double tokens_per_s = 0;
    bool finished = false;
    QString outcome;   // when finished: "stop", "length", "cancelled" or the error
};

class ApiService : public QObject {
    Q_OBJECT
public:
    struct Limits {
        int parallel = 4;  // answers decoding at once
        int queue = 64;    // requests waiting beyond those
        int idle = 32;     // finished requests kept with their cache
    };
    struct ModelState {
        bool loaded = false;
        bool loading = false;
        QString name;
        qint64 created = 0;  // when it loaded (seconds since the epoch): /v1/models' "created"
        int context_length = 0;
        ChatFormat chat_format = ChatFormat::Completion;
    };

    // Connects to worker's signals and to its slots (queued: the worker has its own thread).
    ApiService(InferenceWorker* worker, CancelFlags* cancel, Limits limits, QObject* parent = nullptr);

    // Any thread. The answer's stream, or why it is refused now (no model, a load, a full queue).
    std::variant<std::shared_ptr<ApiStream>, ApiError> submit(ApiRequest request, const QString& client);
    ModelState model() const;
    SamplingParams sampling_defaults() const { return SamplingParams{}; }
    // Any thread: a response went out with this HTTP status.
    void count_response(int status);
    // Any thread: the Prometheus page of /metrics.
    QByteArray metrics() const;

    // The requests of this session, newest last (at most kRecent), on this object's thread.
    const std::deque<ServedRequest>& recent() const { return recent_; }
    static constexpr int kRecent = 100;

signals:
    void requestsChanged();
    // To the worker.
    void requestEvictFirst(const QString& key);
    void requestRestore(const QString& key, const std::vector<llamadesk::ChatTurn>& turns, const QString& systemPrompt,
                        llamadesk::ChatFormat format, const QString& date);
    void requestGenerate(const QString& key, const QString& text, const llamadesk::GenerateParams& params);
    void requestDelete(const QString& key);

private:
    struct Pending {
        QString key;
        bool reused = false;  // continues an idle conversation: nothing to restore
        ApiRequest request;
        std::shared_ptr<ApiStream> stream;
        QString client;
    };
    struct Active {
        ApiRequest request;
        std::shared_ptr<ApiStream> stream;
    };
    // A finished request kept with its cache, and what it holds.
    struct Idle {
        QString key;
        Endpoint endpoint;
        ChatFormat format;
        std::string system_prompt;
        std::vector<ChatTurn> turns;
    };

    void pump();  // starts waiting requests while answers are fewer than Limits::parallel
    void start(Pending pending);
    void onToken(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void onModelLoaded(const llamadesk::ModelInfo& info);
    void onHistoriesCleared();
    void forgetIdle();  // the conversations kept for their cache, deleted
    ServedRequest* served(const QString& id);

    CancelFlags* cancel_;
    const Limits limits_;

    mutable std::mutex mutex_;  // guards the members up to recent_
    ModelState model_;
    std::deque<Pending> waiting_;
    int active_count_ = 0;
    std::list<Idle> idle_;  // least recently used first
    int64_t next_key_ = 0;
    QHash<int, int64_t> responses_;  // per HTTP status
    int64_t prompt_tokens_ = 0, completion_tokens_ = 0, cached_tokens_ = 0, cache_hits_ = 0, cancelled_ = 0;
    double last_tokens_per_s_ = 0;
    PoolStats pool_;

    QHash<QString, Active> active_;  // by key; this object's thread only
    std::deque<ServedRequest> recent_;
};

}  // namespace llamadesk::server
