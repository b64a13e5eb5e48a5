#include "inference_worker.h"

using namespace llamadesk;

InferenceWorker::InferenceWorker(const std::atomic<bool>* cancel, QObject* parent)
    : QObject(parent), cancel_(cancel) {}

InferenceWorker::~InferenceWorker() = default;

void InferenceWorker::loadModel(const QString& path, const QString& tokenizer, int threads,
                                qint64 kvCacheBytes, const QString& kvCacheType) {
    LoadParams params;
    params.model_path = path.toStdString();
    params.tokenizer_path = tokenizer.toStdString();
    params.n_threads = threads;
    params.kv_cache_bytes = kvCacheBytes;
    parse_kv_cache_type(kvCacheType.toStdString(), &params.kv_cache_type);
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
    const Status status = engine_.load(params);
    if (!status.ok()) {
        emit loadFailed(path, int(status.code), QString::fromStdString(status.message));
        return;
    }
    emit modelLoaded(path, tokenizer, engine_.model_info());
    publishAll();  // every cache went with the old model
}

void InferenceWorker::setSnapshots(const QString& folder, qint64 budgetBytes) {
    SnapshotSettings settings;
    if (budgetBytes > 0) {
        settings.folder = folder.toStdString();
        settings.budget_bytes = budgetBytes;
        settings.on_log = [](const std::string& line) { qInfo("%s", line.c_str()); };
    }
    report(QString(), engine_.set_snapshots(settings));
}

ConversationId InferenceWorker::ensure(const QString& key) {
    Entry& entry = conversations_[key];
    if (entry.id >= 0)
        return entry.id;
    entry.id = engine_.create_conversation(entry.format);
    if (!entry.pending_turns.empty()) {
        report(key, engine_.restore_turns(entry.id, entry.pending_turns, entry.system_prompt));
        entry.pending_turns.clear();
    }
    return entry.id;
}

void InferenceWorker::restoreConversation(const QString& key, const std::vector<ChatTurn>& turns,
                                          const QString& systemPrompt, ChatFormat format) {
    Entry& entry = conversations_[key];
    entry.format = format;
    if (entry.id >= 0) {
        report(key, engine_.set_chat_format(entry.id, format));
        report(key, engine_.restore_turns(entry.id, turns, systemPrompt.toStdString()));
        publish(key);
        return;
    }
    entry.pending_turns = turns;
    entry.system_prompt = systemPrompt.toStdString();
}

void InferenceWorker::setChatFormat(const QString& key, ChatFormat format) {
    Entry& entry = conversations_[key];
    entry.format = format;
    if (entry.id >= 0) {
        report(key, engine_.set_chat_format(entry.id, format));
        publish(key);
    }
}

void InferenceWorker::generate(const QString& key, const QString& text, const GenerateParams& params) {
    const std::string user_text = text.toStdString();
    run(key, [&](ConversationId id, const TokenCallback& on_token) {
        return engine_.generate(id, user_text, params, on_token, cancel_);
    });
}

void InferenceWorker::continueAnswer(const QString& key, const GenerateParams& params) {
    run(key, [&](ConversationId id, const TokenCallback& on_token) {
        return engine_.continue_answer(id, params, on_token, cancel_);
    });
}

void InferenceWorker::run(const QString& key, const Generation& generation) {
    const ConversationId id = ensure(key);
    emit generationStarted(key);
    std::string pending;  // text decoded since the last emission
    QElapsedTimer since_emit;
    since_emit.start();
    bool first = true;
    const auto on_token = [&](const std::string& piece, const GenerationStats& stats) {
        pending += piece;
        if (!first && since_emit.elapsed() < kEmitIntervalMs)
            return;
        since_emit.restart();
        emit tokenGenerated(key, QString::fromStdString(pending), stats);
        emit cacheLayoutReady(key, layout_of(key));
        if (first)
            publishAll();  // room for this answer may have been taken from other conversations
        first = false;
        pending.clear();
    };
    const GenerationResult result = generation(id, on_token);
    if (!pending.empty())
        emit tokenGenerated(key, QString::fromStdString(pending), result.stats);
    emit generationFinished(key, result, stats_of(key).n_turns);
    publishAll();
    // The conversation is idle: its new full blocks go to disk (this also runs for the answer a
    // quit stops, before the thread ends).
    report(key, engine_.save_snapshot(id));
}

void InferenceWorker::resetConversation(const QString& key) {
    Entry& entry = conversations_[key];
    entry.pending_turns.clear();
    if (entry.id >= 0)
        report(key, engine_.reset_conversation(entry.id));
    publish(key);
}

void InferenceWorker::deleteConversation(const QString& key) {
    const auto it = conversations_.constFind(key);
    if (it == conversations_.constEnd())
        return;
    if (it->id >= 0)
        report(key, engine_.delete_conversation(it->id));
    conversations_.erase(it);
    emit statsChanged(QString(), ConversationStats{}, engine_.pool_stats());
}

void InferenceWorker::truncateTurns(const QString& key, int nTurns) {
    report(key, engine_.truncate_turns(ensure(key), nTurns));
    publish(key);
}

void InferenceWorker::dropOldestTurns(const QString& key, int n, const QString& systemPrompt) {
    report(key, engine_.drop_oldest_turns(ensure(key), n, systemPrompt.toStdString()));
    publish(key);
}

void InferenceWorker::measureTurn(const QString& key, const QString& text, const QString& systemPrompt) {
    if (!engine_.has_model())
        return;
    TurnSize size;
    if (engine_.measure_turn(ensure(key), text.toStdString(), systemPrompt.toStdString(), &size).ok())
        emit turnMeasured(key, text, size);
}

CacheLayout InferenceWorker::layout_of(const QString& key) const {
    CacheLayout layout;
    const auto it = conversations_.constFind(key);
    if (engine_.has_model() && it != conversations_.constEnd() && it->id >= 0)
        engine_.cache_layout(it->id, &layout);
    return layout;
}

ConversationStats InferenceWorker::stats_of(const QString& key) const {
    ConversationStats stats;
    const auto it = conversations_.constFind(key);
    if (it != conversations_.constEnd() && it->id >= 0)
        engine_.conversation_stats(it->id, &stats);
    else if (engine_.has_model())
        stats.context_length = engine_.model_info().context_length;
    return stats;
}

void InferenceWorker::publish(const QString& key) {
    emit statsChanged(key, stats_of(key), engine_.pool_stats());
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
