#include "server/api_service.h"

#include <QDateTime>
#include <QRandomGenerator>

#include "worker/cancel_flags.h"
#include "worker/inference_worker.h"

namespace llamadesk::server {

namespace {

QString answer_id(Endpoint endpoint) {
    QRandomGenerator* random = QRandomGenerator::global();
    return (endpoint == Endpoint::Chat ? QStringLiteral("chatcmpl-") : QStringLiteral("cmpl-")) +
           QString::number(random->generate64(), 16) + QString::number(random->generate(), 16);
}

bool same_turns(const std::vector<ChatTurn>& a, const std::vector<ChatTurn>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const ChatTurn& x, const ChatTurn& y) { return x.user == y.user && x.answer == y.answer; });
}

}  // namespace

ApiService::ApiService(InferenceWorker* worker, CancelFlags* cancel, Limits limits, QObject* parent)
    : QObject(parent), cancel_(cancel), limits_(limits) {
    connect(this, &ApiService::requestEvictFirst, worker, &InferenceWorker::setEvictFirst);
    connect(this, &ApiService::requestRestore, worker, &InferenceWorker::restoreConversation);
    connect(this, &ApiService::requestGenerate, worker, &InferenceWorker::generate);
    connect(this, &ApiService::requestDelete, worker, &InferenceWorker::deleteConversation);
    connect(worker, &InferenceWorker::tokenGenerated, this, &ApiService::onToken);
    connect(worker, &InferenceWorker::generationFinished, this, &ApiService::onFinished);
    connect(worker, &InferenceWorker::modelLoaded, this,
            [this](const QString&, const QString&, const ModelInfo& info) { onModelLoaded(info); });
    connect(worker, &InferenceWorker::loadProgress, this, [this] {
        std::lock_guard lock(mutex_);
        model_.loading = true;
    });
    connect(worker, &InferenceWorker::loadFailed, this, [this] {
        std::lock_guard lock(mutex_);
        model_.loading = false;  // the model before stays
    });
    connect(worker, &InferenceWorker::historiesCleared, this, &ApiService::onHistoriesCleared);
    connect(worker, &InferenceWorker::statsChanged, this,
            [this](const QString&, const ConversationStats&, const PoolStats& pool) {
                std::lock_guard lock(mutex_);
                pool_ = pool;
            });
}

std::variant<std::shared_ptr<ApiStream>, ApiError> ApiService::submit(ApiRequest request, const QString& client) {
    std::unique_lock lock(mutex_);
    if (model_.loading) return api_error(503, QStringLiteral("a model is loading; try again shortly"), {}, "model_loading", 5);
    if (!model_.loaded)
        return api_error(503, QStringLiteral("no model is loaded; open one in LlamaDesk first"), {}, "no_model", 5);
    if (active_count_ + int(waiting_.size()) >= limits_.parallel + limits_.queue)
        return api_error(429,
                         QStringLiteral("the server is busy: %1 answers are under way and %2 wait; try again shortly")
                             .arg(active_count_).arg(waiting_.size()),
                         {}, "queue_full", 1);

    Pending pending;
    pending.client = client;
    const ChatFormat format = request.endpoint == Endpoint::Chat ? model_.chat_format : ChatFormat::Completion;
    // The conversation this request repeats with one more exchange, if one is kept: it goes on.
    if (request.endpoint == Endpoint::Chat) {
        const auto same = std::find_if(idle_.begin(), idle_.end(), [&](const Idle& i) {
            return i.endpoint == Endpoint::Chat && i.format == format && i.system_prompt == request.system_prompt &&
                   same_turns(i.turns, request.history);
        });
        if (same != idle_.end()) {
            pending.key = same->key;
            pending.reused = true;
            idle_.erase(same);
        }
    }
    if (pending.key.isEmpty()) pending.key = QStringLiteral("api/%1").arg(++next_key_);
    std::atomic<bool>* flag = cancel_->of(pending.key);
    flag->store(false);
    pending.stream = std::make_shared<ApiStream>(
        AnswerHeader{request.endpoint, answer_id(request.endpoint), QDateTime::currentSecsSinceEpoch(), model_.name}, flag);
    pending.request = std::move(request);
    std::shared_ptr<ApiStream> stream = pending.stream;
    waiting_.push_back(std::move(pending));
    lock.unlock();
    QMetaObject::invokeMethod(this, &ApiService::pump, Qt::QueuedConnection);
    return stream;
}

void ApiService::pump() {
    for (;;) {
        Pending next;
        {
            std::lock_guard lock(mutex_);
            if (waiting_.empty() || active_count_ >= limits_.parallel) return;
            next = std::move(waiting_.front());
            waiting_.pop_front();
            ++active_count_;
        }
        start(std::move(next));
    }
}

void ApiService::start(Pending pending) {
    const ApiRequest& request = pending.request;
    const QString& key = pending.key;
    if (!pending.reused) {
        const ChatFormat format = request.endpoint == Endpoint::Chat ? model().chat_format : ChatFormat::Completion;
        emit requestEvictFirst(key);
        emit requestRestore(key, request.history, QString::fromStdString(request.system_prompt), format, QString());
    }
    GenerateParams params = request.params;
    params.system_prompt = request.system_prompt;  // a conversation's first turn writes it
    emit requestGenerate(key, QString::fromStdString(request.user_text), params);

    ServedRequest row;
    row.id = pending.stream->header().id;
    row.client = pending.client;
    row.endpoint = request.endpoint == Endpoint::Chat ? QStringLiteral("chat") : QStringLiteral("completion");
    recent_.push_back(row);
    if (recent_.size() > size_t(kRecent)) recent_.pop_front();
    active_.insert(key, Active{std::move(pending.request), std::move(pending.stream)});
    emit requestsChanged();
}

ServedRequest* ApiService::served(const QString& id) {
    for (auto it = recent_.rbegin(); it != recent_.rend(); ++it)
        if (it->id == id) return &*it;
    return nullptr;
}

void ApiService::onToken(const QString& key, const QString& piece, const GenerationStats& stats) {
    const auto it = active_.constFind(key);
    if (it == active_.constEnd()) return;  // a window conversation's
    it->stream->push(ApiEvent{ApiEvent::Kind::Piece, piece.toStdString(), {}, {}});
    if (ServedRequest* row = served(it->stream->header().id)) {
        const Usage usage = usage_of(stats);
        row->prompt_tokens = usage.prompt_tokens;
        row->cached_tokens = usage.cached_tokens;
        row->completion_tokens = stats.generated_tokens;
        row->tokens_per_s = stats.decode_tokens_per_s;
        emit requestsChanged();
    }
}

void ApiService::onFinished(const QString& key, const GenerationResult& result, int nTurns) {
    const auto it = active_.find(key);
    if (it == active_.end()) return;
    const Active done = std::move(*it);
    active_.erase(it);

    const Usage usage = usage_of(result.stats);
    const ApiRequest& request = done.request;
    // Kept for its cache when the engine holds exactly what the client will send back: the
    // exchanges, this question and this answer (a stop string's text stays out of the answer,
    // but its tokens would be in the cache).
    const bool whole = result.status.ok() && nTurns == int(request.history.size()) + 1 &&
                       (result.stop_reason == StopReason::Eos || result.stop_reason == StopReason::MaxTokens);
    {
        std::lock_guard lock(mutex_);
        --active_count_;
        cancelled_ += result.stop_reason == StopReason::Cancelled;
        if (result.status.ok()) {
            prompt_tokens_ += usage.prompt_tokens;
            completion_tokens_ += usage.completion_tokens;
            cached_tokens_ += usage.cached_tokens;
            cache_hits_ += usage.cached_tokens > 0;
            if (result.stats.decode_tokens_per_s > 0) last_tokens_per_s_ = result.stats.decode_tokens_per_s;
        }
        if (whole) {
            Idle kept{key, request.endpoint, model_.chat_format, request.system_prompt, request.history};
            if (request.endpoint == Endpoint::Completion) kept.format = ChatFormat::Completion;
            kept.turns.push_back({request.user_text, result.text});
            idle_.push_back(std::move(kept));
        }
    }
    // Only now the client hears of the end: a /metrics read or a follow-up it sends on the answer
    // finds the counters and the kept conversation already updated.
    done.stream->push(ApiEvent{ApiEvent::Kind::Finished, {}, result, {}});
    if (!whole) emit requestDelete(key);  // its blocks go back to the pool
    for (;;) {
        QString oldest;
        {
            std::lock_guard lock(mutex_);
            if (int(idle_.size()) <= limits_.idle) break;
            oldest = idle_.front().key;
            idle_.pop_front();
        }
        emit requestDelete(oldest);
    }

    if (ServedRequest* row = served(done.stream->header().id)) {
        row->finished = true;
        row->prompt_tokens = usage.prompt_tokens;
        row->cached_tokens = usage.cached_tokens;
        row->completion_tokens = usage.completion_tokens;
        row->tokens_per_s = result.stats.decode_tokens_per_s;
        row->outcome = !result.status.ok()                          ? QString::fromStdString(result.status.message)
                       : result.stop_reason == StopReason::Cancelled ? QStringLiteral("cancelled")
                                                                     : finish_reason(result.stop_reason);
    }
    emit requestsChanged();
    pump();
}

void ApiService::onModelLoaded(const ModelInfo& info) {
    {
        std::lock_guard lock(mutex_);
        model_.loaded = true;
        model_.loading = false;
        model_.name = QString::fromStdString(info.name);
        model_.created = QDateTime::currentSecsSinceEpoch();
        model_.context_length = info.context_length;
        model_.chat_format = info.chat_format;
    }
    forgetIdle();  // their caches went with the model before
}

void ApiService::onHistoriesCleared() {
    // The backend was replaced (this machine <-> a server): every conversation it held is gone.
    // Waiting requests are restored from their messages when they start; those already handed to
    // the worker may have lost their history on the way, so they are told to send again.
    {
        std::lock_guard lock(mutex_);
        for (Pending& p : waiting_)
            p.reused = false;
    }
    ApiEvent given_up;
    given_up.kind = ApiEvent::Kind::Failed;
    given_up.error = api_error(503, QStringLiteral("the model changed while this request was answered; send it again"),
                               {}, "model_changed", 1);
    for (auto it = active_.begin(); it != active_.end(); ++it) {
        it->stream->push(given_up);
        it->stream->cancel();
    }
    forgetIdle();
}

void ApiService::forgetIdle() {
    std::list<Idle> gone;
    {
        std::lock_guard lock(mutex_);
        gone.swap(idle_);
    }
    for (const Idle& i : gone) emit requestDelete(i.key);
}

ApiService::ModelState ApiService::model() const {
    std::lock_guard lock(mutex_);
    return model_;
}

void ApiService::count_response(int status) {
    std::lock_guard lock(mutex_);
    ++responses_[status];
}

QByteArray ApiService::metrics() const {
    std::lock_guard lock(mutex_);
    QByteArray out;
    const auto metric = [&](const char* name, const char* type, const char* help) {
        out += QByteArray("# HELP llamadesk_") + name + ' ' + help + "\n# TYPE llamadesk_" + name + ' ' + type + '\n';
    };
    const auto value = [&](const char* name, double v, const QByteArray& labels = {}) {
        out += QByteArray("llamadesk_") + name + labels + ' ' + QByteArray::number(v, 'g', 15) + '\n';
    };
    metric("requests_total", "counter", "Responses sent, by HTTP status.");
    QList<int> statuses = responses_.keys();
    std::sort(statuses.begin(), statuses.end());
    for (int status : statuses) value("requests_total", double(responses_.value(status)), "{status=\"" + QByteArray::number(status) + "\"}");
    metric("requests_active", "gauge", "Answers being decoded.");
    value("requests_active", active_count_);
    metric("requests_waiting", "gauge", "Requests waiting for a place in the batch.");
    value("requests_waiting", double(waiting_.size()));
    metric("requests_cancelled_total", "counter", "Answers stopped because their client left.");
    value("requests_cancelled_total", double(cancelled_));
    metric("prompt_tokens_total", "counter", "Prompt tokens of the answers given, history and template included.");
    value("prompt_tokens_total", double(prompt_tokens_));
    metric("completion_tokens_total", "counter", "Tokens generated.");
    value("completion_tokens_total", double(completion_tokens_));
    metric("prefix_cache_tokens_total", "counter", "Prompt tokens that came out of the KV cache instead of a prefill.");
    value("prefix_cache_tokens_total", double(cached_tokens_));
    metric("prefix_cache_hits_total", "counter", "Answers whose prompt began with cached tokens.");
    value("prefix_cache_hits_total", double(cache_hits_));
    metric("decode_tokens_per_second", "gauge", "Decode speed of the last answer.");
    value("decode_tokens_per_second", last_tokens_per_s_);
    metric("kv_blocks_total", "gauge", "Blocks of the KV pool.");
    value("kv_blocks_total", pool_.blocks_total);
    metric("kv_blocks_used", "gauge", "Blocks of the KV pool holding keys and values (shared ones once).");
    value("kv_blocks_used", pool_.blocks_used);
    metric("kv_blocks_free", "gauge", "Blocks of the KV pool free.");
    value("kv_blocks_free", pool_.blocks_total - pool_.blocks_used);
    metric("kv_conversations", "gauge", "Conversations holding blocks, the window's and the server's.");
    value("kv_conversations", pool_.n_conversations);
    return out;
}

}  // namespace llamadesk::server
