#include "remote_session.h"

#include "remote_client.h"

namespace llamadesk::remote {

namespace {

constexpr auto kCancelPoll = std::chrono::milliseconds(20);

double ms_between(std::chrono::steady_clock::time_point from, std::chrono::steady_clock::time_point to) {
    return std::chrono::duration<double, std::milli>(to - from).count();
}

}  // namespace

std::optional<double> StreamFigures::tokens_per_second() const {
    if (!usage || usage->completion_tokens < 2 || streaming_ms <= 0) return std::nullopt;
    return (usage->completion_tokens - 1) / (streaming_ms / 1000.0);
}

RemoteSession::RemoteSession(const Endpoint& endpoint, int stall_timeout_ms)
    : endpoint_(endpoint), client_(new RemoteClient(endpoint, stall_timeout_ms)) {
    thread_.setObjectName("remote");
    client_->moveToThread(&thread_);
    // Direct: these run on the client's thread and only queue the event for the waiting caller.
    const auto d = Qt::DirectConnection;
    QObject::connect(client_, &RemoteClient::modelsListed, client_,
                     [this](const QStringList& ids) { push({Event::Models, {}, ids, {}, 0, {}}); }, d);
    QObject::connect(client_, &RemoteClient::piece, client_,
                     [this](const QString& text) { push({Event::Piece, text, {}, {}, 0, {}}); }, d);
    QObject::connect(client_, &RemoteClient::usageReported, client_,
                     [this](const Usage& usage) { push({Event::Usage, {}, {}, usage, 0, {}}); }, d);
    QObject::connect(client_, &RemoteClient::streamFinished, client_,
                     [this](const QString& reason) { push({Event::Finished, reason, {}, {}, 0, {}}); }, d);
    QObject::connect(client_, &RemoteClient::metricsRead, client_,
                     [this](double value) { push({Event::Metrics, {}, {}, {}, value, {}}); }, d);
    QObject::connect(client_, &RemoteClient::failed, client_,
                     [this](const QString& message) { push({Event::Failed, message, {}, {}, 0, {}}); }, d);
    thread_.start();
}

RemoteSession::~RemoteSession() {
    QMetaObject::invokeMethod(client_, [client = client_] { delete client; }, Qt::BlockingQueuedConnection);
    thread_.quit();
    thread_.wait();
}

void RemoteSession::push(Event event) {
    event.at = Clock::now();
    {
        std::lock_guard lock(mutex_);
        events_.push_back(std::move(event));
    }
    ready_.notify_one();
}

void RemoteSession::start(const std::function<void(RemoteClient*)>& request) {
    QMetaObject::invokeMethod(client_, [this, request] {
        {
            std::lock_guard lock(mutex_);
            events_.clear();
        }
        request(client_);
    }, Qt::BlockingQueuedConnection);
}

std::optional<RemoteSession::Event> RemoteSession::next(const std::atomic<bool>* cancel) {
    std::unique_lock lock(mutex_);
    for (;;) {
        // Checked before each event, so a fast stream that never leaves the queue empty still stops.
        if (cancel != nullptr && cancel->load()) {
            lock.unlock();
            QMetaObject::invokeMethod(client_, &RemoteClient::abort, Qt::BlockingQueuedConnection);
            return std::nullopt;
        }
        if (!events_.empty()) break;
        ready_.wait_for(lock, kCancelPoll);
    }
    Event event = std::move(events_.front());
    events_.pop_front();
    return event;
}

std::optional<QStringList> RemoteSession::models(QString* error) {
    start([](RemoteClient* client) { client->listModels(); });
    const Event event = *next(nullptr);
    if (event.kind == Event::Models) return event.ids;
    *error = event.text;
    return std::nullopt;
}

std::optional<double> RemoteSession::kv_cache_usage() {
    start([](RemoteClient* client) { client->fetchMetrics(); });
    const Event event = *next(nullptr);
    if (event.kind == Event::Metrics && event.value >= 0) return event.value;
    return std::nullopt;
}

StreamResult RemoteSession::chat(const std::vector<Message>& messages, const GenerateParams& params,
                                 const PieceCallback& on_piece, const std::atomic<bool>* cancel) {
    return stream(true, chat_body(endpoint_.model, messages, params), on_piece, cancel);
}

StreamResult RemoteSession::complete(const QString& prompt, const GenerateParams& params,
                                     const PieceCallback& on_piece, const std::atomic<bool>* cancel) {
    return stream(false, completion_body(endpoint_.model, prompt, params), on_piece, cancel);
}

StreamResult RemoteSession::stream(bool chat, const QByteArray& body, const PieceCallback& on_piece,
                                   const std::atomic<bool>* cancel) {
    StreamResult result;
    StreamFigures& figures = result.figures;
    const Clock::time_point sent = Clock::now();
    Clock::time_point first_piece;
    start([chat, body](RemoteClient* client) { client->startStream(chat, body); });
    for (;;) {
        const std::optional<Event> event = next(cancel);
        if (!event) {
            result.cancelled = true;
            return result;
        }
        switch (event->kind) {
        case Event::Piece:
            if (figures.pieces++ == 0) {
                first_piece = event->at;
                figures.time_to_first_piece_ms = ms_between(sent, event->at);
            }
            figures.streaming_ms = ms_between(first_piece, event->at);
            result.text += event->text;
            if (on_piece) on_piece(event->text, figures);
            break;
        case Event::Usage: figures.usage = event->usage; break;
        case Event::Finished: result.finish_reason = event->text; return result;
        case Event::Failed: result.error = event->text; return result;
        case Event::Models:
        case Event::Metrics: break;  // not asked for by this request
        }
    }
}

}  // namespace llamadesk::remote
