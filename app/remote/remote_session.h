// A remote engine for callers that block, as the local Engine's callers do (the app's worker thread,
// the CLI): each call waits for its answer while a RemoteClient does the network work on a thread of
// its own, so the caller's own event queue is never run from inside a call. A cancel flag, read
// every few milliseconds, ends a stream as Stop ends a local answer.
#pragma once

#include <QString>
#include <QStringList>
#include <QThread>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <optional>
#include <vector>

#include "endpoint.h"
#include "openai_protocol.h"

namespace llamadesk::remote {

class RemoteClient;

// What the window and the CLI show for one answer: times measured here, as pieces arrive, and the
// server's own counts where it sent them. Nothing here is estimated.
struct StreamFigures {
    double time_to_first_piece_ms = -1;  // request sent to first text; -1: no text came
    double streaming_ms = 0;             // first text to last text
    int pieces = 0;                      // text events received
    std::optional<Usage> usage;          // absent: the server reported none
    // The server's completion tokens over the time they took to arrive after the first; nullopt
    // without usage or with fewer than two tokens.
    std::optional<double> tokens_per_second() const;
};

struct StreamResult {
    QString text;           // everything that arrived, kept on errors and on Stop
    QString finish_reason;  // the server's ("stop", "length"); empty when it did not finish
    bool cancelled = false;
    QString error;          // empty: no error
    StreamFigures figures;
};

using PieceCallback = std::function<void(const QString& piece, const StreamFigures& so_far)>;

class RemoteSession {
public:
    static constexpr int kDefaultStallTimeoutMs = 60000;

    explicit RemoteSession(const Endpoint& endpoint, int stall_timeout_ms = kDefaultStallTimeoutMs);
    ~RemoteSession();
    RemoteSession(const RemoteSession&) = delete;
    RemoteSession& operator=(const RemoteSession&) = delete;

    const Endpoint& endpoint() const { return endpoint_; }
    // GET /v1/models: the ids, or nullopt with *error saying why.
    std::optional<QStringList> models(QString* error);
    StreamResult chat(const std::vector<Message>& messages, const GenerateParams& params,
                      const PieceCallback& on_piece, const std::atomic<bool>* cancel);
    StreamResult complete(const QString& prompt, const GenerateParams& params, const PieceCallback& on_piece,
                          const std::atomic<bool>* cancel);
    // The server's KV cache occupancy from /metrics; nullopt when it does not publish one.
    std::optional<double> kv_cache_usage();

private:
    using Clock = std::chrono::steady_clock;
    struct Event {
        enum Kind { Models, Piece, Usage, Finished, Metrics, Failed } kind;
        QString text;
        QStringList ids;
        remote::Usage usage;
        double value = 0;
        Clock::time_point at;
    };
    void push(Event event);
    // Starts a request on the client's thread, forgetting whatever the last one left queued.
    void start(const std::function<void(RemoteClient*)>& request);
    // The next event; nullopt when *cancel was set first (the request is then aborted).
    std::optional<Event> next(const std::atomic<bool>* cancel);
    StreamResult stream(bool chat, const QByteArray& body, const PieceCallback& on_piece,
                        const std::atomic<bool>* cancel);

    Endpoint endpoint_;
    QThread thread_;
    RemoteClient* client_;  // lives on thread_, deleted there
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<Event> events_;
};

}  // namespace llamadesk::remote
