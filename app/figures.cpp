#include "figures.h"

using namespace llamadesk;

Figures::Figures(QObject* parent) : QObject(parent) {
    ticker_.setInterval(kTickMs);
    connect(&ticker_, &QTimer::timeout, this, &Figures::tick);
}

void Figures::setCurrentConversation(const QString& key) {
    current_ = key;
    conversation_ = ConversationStats{};  // until the worker reports this conversation's figures
    emit occupancyChanged();
}

void Figures::onGenerationStarted(const QString&) {
    generation_ = GenerationStats{};
    decode_tokens_per_s_ = 0;
    series_.clear();
    updates_ = 0;
    since_update_.start();
    ticker_.start();
    emit generationChanged();
}

void Figures::tick() {
    if (since_update_.elapsed() < kTickMs || generation_.generated_tokens < 2)
        return;  // the engine's own figure is recent enough, or decoding has not started
    const double ms = generation_.decode_ms + double(since_update_.elapsed());
    decode_tokens_per_s_ = 1000.0 * (generation_.generated_tokens - 1) / ms;
    emit generationChanged();
}

void Figures::take(const QString& key, const GenerationStats& stats) {
    // The chart shows the speed between two updates, not the running average, so slowdowns show.
    // The first token comes out of prefill, so speeds are taken only between decode steps.
    const double tokens = stats.generated_tokens - generation_.generated_tokens;
    const double ms = stats.decode_ms - generation_.decode_ms;
    if (generation_.generated_tokens > 0 && tokens > 0 && ms > 0) {
        series_.append(1000.0 * tokens / ms);
        if (series_.size() > kMaxSeries)
            series_.removeFirst();
    }
    generation_ = stats;
    decode_tokens_per_s_ = stats.decode_tokens_per_s;
    since_update_.restart();
    ++updates_;
    emit generationChanged();
    if (key == current_) {
        conversation_ = stats.conversation;
    }
    pool_ = stats.pool;
    emit occupancyChanged();
}

void Figures::onTokenGenerated(const QString& key, const QString&, const GenerationStats& stats) {
    take(key, stats);
}

void Figures::onGenerationFinished(const QString& key, const GenerationResult& result, int) {
    ticker_.stop();
    if (result.stats.generated_tokens > 0 || result.stats.prompt_tokens > 0)
        take(key, result.stats);
}

void Figures::onStatsChanged(const QString& key, const ConversationStats& conversation,
                             const PoolStats& pool) {
    if (key == current_)
        conversation_ = conversation;
    pool_ = pool;
    emit occupancyChanged();
}
