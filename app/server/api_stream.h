// One request's answer on its way from the worker to the HTTP thread that serves it: events pushed
// by ApiService (on its thread) and taken by the connection's thread, which waits on them. The
// client's going away raises the answer's Stop flag, which the engine reads once per token.
#pragma once

#include <QString>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>

#include <llamadesk/engine.h>

#include "server/api_protocol.h"

namespace llamadesk::server {

struct ApiEvent {
    enum class Kind { Piece, Finished, Failed };
    Kind kind = Kind::Piece;
    std::string text;         // Piece: the text decoded since the last one
    GenerationResult result;  // Finished: the answer's end and figures
    ApiError error;           // Failed: the request is given up (the backend was replaced under it)
};

class ApiStream {
public:
    ApiStream(AnswerHeader header, std::atomic<bool>* cancel) : header_(std::move(header)), cancel_(cancel) {}

    const AnswerHeader& header() const { return header_; }

    void push(ApiEvent event) {
        {
            std::lock_guard lock(mutex_);
            events_.push_back(std::move(event));
        }
        ready_.notify_one();
    }
    // The next event, waiting at most `timeout`; false when none came.
    bool next(ApiEvent* out, std::chrono::milliseconds timeout) {
        std::unique_lock lock(mutex_);
        if (!ready_.wait_for(lock, timeout, [&] { return !events_.empty(); })) return false;
        *out = std::move(events_.front());
        events_.pop_front();
        return true;
    }
    // The client is gone: the answer stops at its next token.
    void cancel() { cancel_->store(true); }

private:
    const AnswerHeader header_;
    std::atomic<bool>* cancel_;
    std::mutex mutex_;
    std::condition_variable ready_;
    std::deque<ApiEvent> events_;
};

}  // namespace llamadesk::server
