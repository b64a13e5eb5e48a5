#include "models/figures.h"

using namespace llamadesk;

Figures::Figures(const ConversationListModel* conversations, QObject* parent)
    : QObject(parent), conversations_(conversations) {
    ticker_.setInterval(kTickMs);
    connect(&ticker_, &QTimer::timeout, this, &Figures::tick);
    connect(conversations_, &ConversationListModel::dataChanged, this,
            [this](const QModelIndex& first, const QModelIndex& last) {
                const int row = conversations_->rowOf(current_);
                if (row >= first.row() && row <= last.row())
                    emit occupancyChanged();
            });
}

const Figures::Answer& Figures::shown() const {
    static const Answer none;
    const auto it = answers_.constFind(current_);
    return it == answers_.constEnd() ? none : *it;
}

int Figures::carriedTokens() const {
    const GenerationStats& s = shown().stats;
    return qMax(0, s.prefilled_tokens + s.shared_tokens - s.prompt_tokens - s.reprefilled_tokens);
}

int Figures::cachedTokens() const {
    const ConversationItem* c = conversations_->find(current_);
    return c ? c->stats.cached_tokens : 0;
}

int Figures::contextLength() const {
    const ConversationItem* c = conversations_->find(current_);
    return c ? c->stats.context_length : 0;
}

void Figures::setCurrentConversation(const QString& key) {
    if (key == current_)
        return;
    current_ = key;
    emit generationChanged();
    emit occupancyChanged();
}

void Figures::onModelLoaded(const QString&, const QString&, const ModelInfo& info) {
    answers_.clear();  // they describe the previous model
    model_ = QString::fromStdString(info.name);
    emit generationChanged();
}

void Figures::changed(const QString& key) {
    if (key == current_)
        emit generationChanged();
}

void Figures::onGenerationStarted(const QString& key) {
    Answer& answer = answers_[key];
    answer = Answer{};
    answer.model = model_;
    answer.since_update.start();
    live_.insert(key);
    ticker_.start();
    changed(key);
}

void Figures::tick() {
    for (const QString& key : std::as_const(live_)) {
        const auto it = answers_.find(key);
        if (it == answers_.end() || it->since_update.elapsed() < kTickMs || it->stats.generated_tokens < 2)
            continue;  // the engine's own figure is recent enough, or decoding has not started
        const double ms = it->stats.decode_ms + double(it->since_update.elapsed());
        it->decode_tokens_per_s = 1000.0 * (it->stats.generated_tokens - 1) / ms;
        changed(key);
    }
}

void Figures::take(const QString& key, const GenerationStats& stats) {
    Answer& answer = answers_[key];
    // The chart shows the speed between two updates, not the running average, so slowdowns show.
    // The first token comes out of prefill, so speeds are taken only between decode steps.
    const double tokens = stats.generated_tokens - answer.stats.generated_tokens;
    const double ms = stats.decode_ms - answer.stats.decode_ms;
    if (answer.stats.generated_tokens > 0 && tokens > 0 && ms > 0) {
        answer.series.append(1000.0 * tokens / ms);
        if (answer.series.size() > kMaxSeries)
            answer.series.removeFirst();
    }
    answer.stats = stats;
    answer.decode_tokens_per_s = stats.decode_tokens_per_s;
    ++answer.updates;
    answer.since_update.restart();
    changed(key);
    pool_ = stats.pool;
    emit occupancyChanged();
}

void Figures::onTokenGenerated(const QString& key, const QString&, const GenerationStats& stats) {
    take(key, stats);
}

void Figures::onGenerationFinished(const QString& key, const GenerationResult& result, int) {
    live_.remove(key);
    if (live_.isEmpty())
        ticker_.stop();
    // A server's answer counts once text came: its token counts may never be reported.
    const auto it = answers_.constFind(key);
    const bool ran = it != answers_.constEnd() && it->server
                         ? it->server->pieces > 0
                         : result.stats.generated_tokens > 0 || result.stats.prompt_tokens > 0;
    if (ran)
        take(key, result.stats);
    else
        answers_.remove(key);  // refused before anything ran: there is nothing to show
    changed(key);
}

void Figures::onStatsChanged(const QString&, const ConversationStats&, const PoolStats& pool) {
    pool_ = pool;
    emit occupancyChanged();
}

void Figures::onServerFigures(const QString& key, const ServerFigures& figures) {
    answers_[key].server = figures;
    changed(key);
}
