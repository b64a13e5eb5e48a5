// Live figures for the window: decode speed (with a series for the chart), time to first token,
// prefill speed, the current conversation's cache occupancy and the shared pool's.
#pragma once

#include <QElapsedTimer>
#include <QObject>
#include <QTimer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "engine_types.h"

class Figures : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(double decodeTokensPerSecond READ decodeTokensPerSecond NOTIFY generationChanged)
    Q_PROPERTY(double prefillTokensPerSecond READ prefillTokensPerSecond NOTIFY generationChanged)
    Q_PROPERTY(double timeToFirstTokenMs READ timeToFirstTokenMs NOTIFY generationChanged)
    Q_PROPERTY(int promptTokens READ promptTokens NOTIFY generationChanged)
    Q_PROPERTY(int prefilledTokens READ prefilledTokens NOTIFY generationChanged)
    Q_PROPERTY(int generatedTokens READ generatedTokens NOTIFY generationChanged)
    Q_PROPERTY(QVariantList decodeSeries READ decodeSeries NOTIFY generationChanged)
    Q_PROPERTY(int updates READ updates NOTIFY generationChanged)
    Q_PROPERTY(int cachedTokens READ cachedTokens NOTIFY occupancyChanged)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY occupancyChanged)
    Q_PROPERTY(int poolBlocksUsed READ poolBlocksUsed NOTIFY occupancyChanged)
    Q_PROPERTY(int poolBlocksTotal READ poolBlocksTotal NOTIFY occupancyChanged)
    Q_PROPERTY(double poolMiBUsed READ poolMiBUsed NOTIFY occupancyChanged)
    Q_PROPERTY(double poolMiBTotal READ poolMiBTotal NOTIFY occupancyChanged)
    Q_PROPERTY(double evictions READ evictions NOTIFY occupancyChanged)
public:
    explicit Figures(QObject* parent = nullptr);

    double decodeTokensPerSecond() const { return decode_tokens_per_s_; }
    double prefillTokensPerSecond() const { return generation_.prefill_tokens_per_s; }
    double timeToFirstTokenMs() const { return generation_.time_to_first_token_ms; }
    int promptTokens() const { return generation_.prompt_tokens; }
    int prefilledTokens() const { return generation_.prefilled_tokens; }
    int generatedTokens() const { return generation_.generated_tokens; }
    QVariantList decodeSeries() const { return series_; }
    int updates() const { return updates_; }
    int cachedTokens() const { return conversation_.cached_tokens; }
    int contextLength() const { return conversation_.context_length; }
    int poolBlocksUsed() const { return pool_.blocks_used; }
    int poolBlocksTotal() const { return pool_.blocks_total; }
    double poolMiBUsed() const { return double(pool_.bytes_used) / (1024.0 * 1024.0); }
    double poolMiBTotal() const { return double(pool_.bytes_total) / (1024.0 * 1024.0); }
    double evictions() const { return double(pool_.evictions); }

    // The conversation whose occupancy is shown.
    void setCurrentConversation(const QString& key);

public slots:
    void onGenerationStarted(const QString& key);
    void onTokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onGenerationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void onStatsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                        const llamadesk::PoolStats& pool);

signals:
    void generationChanged();
    void occupancyChanged();

private:
    void take(const QString& key, const llamadesk::GenerationStats& stats);
    void tick();

    // A slow model (one token every few hundred ms) still shows its speed moving at least
    // kTickMs apart: between tokens the rate is the tokens so far over the time so far.
    static constexpr int kTickMs = 200;
    QTimer ticker_;
    QElapsedTimer since_update_;
    double decode_tokens_per_s_ = 0;

    static constexpr int kMaxSeries = 240;
    QString current_;
    llamadesk::GenerationStats generation_;
    llamadesk::ConversationStats conversation_;
    llamadesk::PoolStats pool_;
    QVariantList series_;  // decode tokens/s over the answer, one point per update
    int updates_ = 0;      // how many updates this answer has had (tests and the chart use it)
};
