#include "worker/inference_worker.h"

#include <QCoreApplication>
#include <list>

#include "endpoint.h"
#include "worker/cancel_flags.h"
#include "worker/local_backend.h"
#include "worker/remote_backend.h"

using namespace llamadesk;

InferenceWorker::InferenceWorker(CancelFlags* cancel, QObject* parent)
    : QObject(parent), engine_(std::make_unique<LocalBackend>()), backend_(engine_.get()), cancel_(cancel) {}

InferenceWorker::~InferenceWorker() = default;

void InferenceWorker::loadModel(const QString& path, const QString& tokenizer, int threads,
                                qint64 kvCacheBytes, KvCacheType kvCacheType, int contextLimit,
                                int serverTimeoutMs, const QString& apiKey) {
    if (waitForBatch(QString(), [=, this] {
            loadModel(path, tokenizer, threads, kvCacheBytes, kvCacheType, contextLimit, serverTimeoutMs, apiKey);
        }))
        return;
    if (remote::is_remote_location(path))
        return connectRemote(path, serverTimeoutMs, apiKey);
    LoadParams params;
    params.model_path = path.toStdString();
    params.tokenizer_path = tokenizer.toStdString();
    params.n_threads = threads;
    params.kv_cache_bytes = kvCacheBytes;
    params.kv_cache_type = kvCacheType;
    params.context_length = contextLimit;
    // Progress is thinned out so a fast reader cannot flood the GUI thread's event queue.
    QElapsedTimer since_emit;
    since_emit.start();
    double last_fraction = -1.0;
    params.on_progress = [&](float fraction, const std::string& stage) {
        if (fraction < 1.0f && fraction - last_fraction < 0.01 && since_emit.elapsed() < 30)
            return;
        last_fraction = fraction;
        since_emit.restart();
        emit loadProgress(fraction, QString::fromStdString(stage));
    };
    // A server in use stays until this machine's engine has loaded.
    const Status status = engine_->load(params);
    if (!status.ok()) {
        emit loadFailed(path, int(status.code), QString::fromStdString(status.message));
        return;
    }
    if (backend_ != engine_.get()) {
        backend_ = engine_.get();
        server_.reset();
        clearHistories();
    }
    emit modelLoaded(path, tokenizer, backend_->model_info());
    publishAll();  // every cache went with the old model
}

void InferenceWorker::setSnapshots(const QString& folder, qint64 budgetBytes) {
    if (waitForBatch(QString(), [=, this] { setSnapshots(folder, budgetBytes); }))
        return;
    snapshots_ = SnapshotSettings{};
    if (budgetBytes > 0) {
        snapshots_.folder = folder.toStdString();
        snapshots_.budget_bytes = budgetBytes;
        snapshots_.on_log = [](const std::string& line) { qInfo("%s", line.c_str()); };
    }
    report(QString(), engine_->set_snapshots(snapshots_));
}

void InferenceWorker::connectRemote(const QString& location, int timeoutMs, const QString& apiKey) {
    emit loadProgress(0.0, QStringLiteral("connecting to the server"));
    QString error;
    std::unique_ptr<RemoteBackend> remote = RemoteBackend::connect(location, apiKey, timeoutMs, &error);
    if (!remote) {
        emit loadFailed(location, int(ErrorCode::BackendUnavailable), error);
        return;
    }
    server_ = std::move(remote);
    backend_ = server_.get();
    // A fresh engine gives back the memory of the model it held.
    engine_ = std::make_unique<LocalBackend>();
    report(QString(), engine_->set_snapshots(snapshots_));
    clearHistories();
    emit modelLoaded(location, QString(), backend_->model_info());
    publishAll();
}

void InferenceWorker::clearHistories() {
    for (Entry& entry : conversations_) {
        entry.id = -1;
        entry.pending_turns.clear();
    }
    emit historiesCleared();
}

ConversationId InferenceWorker::ensure(const QString& key) {
    Entry& entry = conversations_[key];
    if (entry.id >= 0)
        return entry.id;
    entry.id = backend_->create_conversation(entry.format, entry.date);
    if (entry.evict_first) report(key, backend_->set_evict_first(entry.id, true));
    if (!entry.pending_turns.empty()) {
        report(key, backend_->restore_turns(entry.id, entry.pending_turns, entry.system_prompt));
        entry.pending_turns.clear();
    }
    return entry.id;
}

void InferenceWorker::restoreConversation(const QString& key, const std::vector<ChatTurn>& turns,
                                          const QString& systemPrompt, ChatFormat format, const QString& date) {
    if (waitForBatch(key, [=, this] { restoreConversation(key, turns, systemPrompt, format, date); }))
        return;
    Entry& entry = conversations_[key];
    entry.format = format;
    entry.date = date.toStdString();
    if (entry.id >= 0) {
        report(key, backend_->set_chat_format(entry.id, format));
        report(key, backend_->restore_turns(entry.id, turns, systemPrompt.toStdString()));
        publish(key);
        return;
    }
    entry.pending_turns = turns;
    entry.system_prompt = systemPrompt.toStdString();
}

void InferenceWorker::setChatFormat(const QString& key, ChatFormat format, const QString& date) {
    if (waitForBatch(key, [=, this] { setChatFormat(key, format, date); }))
        return;
    Entry& entry = conversations_[key];
    entry.format = format;
    entry.date = date.toStdString();
    if (entry.id >= 0) {
        report(key, backend_->set_chat_format(entry.id, format));
        publish(key);
    }
}

void InferenceWorker::generate(const QString& key, const QString& text, const GenerateParams& params) {
    ask({key, text.toStdString(), params, false});
}

void InferenceWorker::continueAnswer(const QString& key, const GenerateParams& params) {
    ask({key, std::string(), params, true});
}

void InferenceWorker::ask(WaitingAnswer answer) {
    // After a request that waits for the batch to end (a load), new answers wait too, in order.
    if (batch_running_ && !after_batch_.empty()) {
        after_batch_.push_back([this, answer] { ask(answer); });
        return;
    }
    waiting_.push_back(std::move(answer));
    if (!batch_running_ && !draining_)
        runBatch();
}

bool InferenceWorker::waitForBatch(const QString& key, std::function<void()> call) {
    if (!batch_running_ || (!key.isEmpty() && !in_batch_.contains(key)))
        return false;
    after_batch_.push_back(std::move(call));
    return true;
}

void InferenceWorker::runBatch() {
    while (!waiting_.empty()) {
        runOneBatch();
        draining_ = true;  // held requests run in order; answers among them wait for the next batch
        for (const std::function<void()>& call : std::exchange(after_batch_, {}))
            call();
        draining_ = false;
    }
}

void InferenceWorker::runOneBatch() {
    batch_running_ = true;
    std::list<AnswerStream> streams;  // stable addresses for the answers' callbacks
    const auto admit = [&] {
        std::vector<BatchRequest> requests;
        for (WaitingAnswer& w : std::exchange(waiting_, {})) {
            AnswerStream& stream = streams.emplace_back(w.key, ensure(w.key));
            in_batch_.insert(w.key);
            startStream(stream);
            requests.push_back(
                {stream.id, std::move(w.text), w.params,
                 [this, &stream](const std::string& piece, const GenerationStats& stats) { onPiece(stream, piece, stats); },
                 cancel_->of(w.key), [this, &stream](const GenerationResult& result) {
                     in_batch_.remove(stream.key);
                     onEnd(stream, result);
                 },
                 w.resume});
        }
        return requests;
    };
    backend_->generate_batch(admit(), [&] {
        // Requests that came since the last step are delivered now: answers join (generate()
        // adds to waiting_), other conversations' requests run, the rest wait (waitForBatch).
        QCoreApplication::sendPostedEvents();
        return admit();
    });
    batch_running_ = false;
}

void InferenceWorker::startStream(AnswerStream& stream) {
    stream.since_emit.start();
    emit generationStarted(stream.key);
}

void InferenceWorker::onPiece(AnswerStream& stream, const std::string& piece, const GenerationStats& stats) {
    stream.pending += piece;
    if (!stream.first && stream.since_emit.elapsed() < kEmitIntervalMs)
        return;
    stream.since_emit.restart();
    emit tokenGenerated(stream.key, QString::fromStdString(stream.pending), stats);
    emit cacheLayoutReady(stream.key, layout_of(stream.key));
    publishServerFigures(stream.key);
    if (stream.first)
        publishAll();  // room for this answer may have been taken from other conversations
    stream.first = false;
    stream.pending.clear();
}

void InferenceWorker::onEnd(AnswerStream& stream, const GenerationResult& result) {
    if (!stream.pending.empty())
        emit tokenGenerated(stream.key, QString::fromStdString(stream.pending), result.stats);
    publishServerFigures(stream.key);
    emit generationFinished(stream.key, result, stats_of(stream.key).n_turns);
    publishAll();
    // The conversation is idle: its new full blocks go to disk (this also runs for the answer a
    // quit stops, before the thread ends).
    report(stream.key, backend_->save_snapshot(stream.id));
}

void InferenceWorker::publishServerFigures(const QString& key) {
    if (const std::optional<ServerFigures> figures = backend_->server_figures())
        emit serverFiguresChanged(key, *figures);
}

void InferenceWorker::resetConversation(const QString& key) {
    if (waitForBatch(key, [=, this] { resetConversation(key); }))
        return;
    Entry& entry = conversations_[key];
    entry.pending_turns.clear();
    if (entry.id >= 0)
        report(key, backend_->reset_conversation(entry.id));
    publish(key);
}

void InferenceWorker::deleteConversation(const QString& key) {
    if (waitForBatch(key, [=, this] { deleteConversation(key); }))
        return;
    const auto it = conversations_.constFind(key);
    if (it == conversations_.constEnd())
        return;
    if (it->id >= 0)
        report(key, backend_->delete_conversation(it->id));
    conversations_.erase(it);
    emit statsChanged(QString(), ConversationStats{}, backend_->pool_stats());
}

void InferenceWorker::setEvictFirst(const QString& key) {
    Entry& entry = conversations_[key];
    entry.evict_first = true;
    if (entry.id >= 0) report(key, backend_->set_evict_first(entry.id, true));
}

void InferenceWorker::truncateTurns(const QString& key, int nTurns) {
    if (waitForBatch(key, [=, this] { truncateTurns(key, nTurns); }))
        return;
    report(key, backend_->truncate_turns(ensure(key), nTurns));
    publish(key);
}

void InferenceWorker::dropOldestTurns(const QString& key, int n, const QString& systemPrompt) {
    if (waitForBatch(key, [=, this] { dropOldestTurns(key, n, systemPrompt); }))
        return;
    report(key, backend_->drop_oldest_turns(ensure(key), n, systemPrompt.toStdString()));
    publish(key);
}

void InferenceWorker::measureTurn(const QString& key, const QString& text, const QString& systemPrompt) {
    if (!backend_->has_model())
        return;
    TurnSize size;
    if (backend_->measure_turn(ensure(key), text.toStdString(), systemPrompt.toStdString(), &size).ok())
        emit turnMeasured(key, text, size);
}

CacheLayout InferenceWorker::layout_of(const QString& key) const {
    CacheLayout layout;
    const auto it = conversations_.constFind(key);
    if (backend_->has_model() && it != conversations_.constEnd() && it->id >= 0)
        backend_->cache_layout(it->id, &layout);
    return layout;
}

ConversationStats InferenceWorker::stats_of(const QString& key) const {
    ConversationStats stats;
    const auto it = conversations_.constFind(key);
    if (it != conversations_.constEnd() && it->id >= 0)
        backend_->conversation_stats(it->id, &stats);
    else if (backend_->has_model())
        stats.context_length = backend_->model_info().context_length;
    return stats;
}

void InferenceWorker::publish(const QString& key) {
    const ConversationStats stats = stats_of(key);
    // A model that cannot write the conversation's format gave it its own: later calls use that one.
    if (const auto it = conversations_.find(key); it != conversations_.end() && !stats.format_note.empty())
        it->format = stats.format;
    emit statsChanged(key, stats, backend_->pool_stats());
    emit cacheLayoutReady(key, layout_of(key));
}

void InferenceWorker::publishAll() {
    for (auto it = conversations_.constBegin(); it != conversations_.constEnd(); ++it)
        publish(it.key());
}

void InferenceWorker::report(const QString& key, const Status& status) {
    if (!status.ok())
        emit error(key, QString::fromStdString(status.message));
}
