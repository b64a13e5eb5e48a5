// Live figures for the window, always those of the conversation on screen: its last answer's
// decode speed (with a series for the chart), time to first token and prefill, labelled with the
// model that produced them (for a server's answer, what was measured as it arrived and what the
// server reported, -1 where it reported nothing); its cache occupancy, read from the conversation list (the one copy of
// each conversation's engine figures); and the shared pool's occupancy.
#pragma once

#include <QElapsedTimer>
#include <QHash>
#include <QObject>
#include <QSet>
#include <QTimer>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

#include "conversations/conversation_list_model.h"
#include "worker/server_figures.h"

class Figures : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(bool hasAnswer READ hasAnswer NOTIFY generationChanged)
    Q_PROPERTY(bool live READ live NOTIFY generationChanged)
    Q_PROPERTY(QString answerModel READ answerModel NOTIFY generationChanged)
    Q_PROPERTY(double decodeTokensPerSecond READ decodeTokensPerSecond NOTIFY generationChanged)
    Q_PROPERTY(double prefillTokensPerSecond READ prefillTokensPerSecond NOTIFY generationChanged)
    Q_PROPERTY(double timeToFirstTokenMs READ timeToFirstTokenMs NOTIFY generationChanged)
    Q_PROPERTY(int promptTokens READ promptTokens NOTIFY generationChanged)
    Q_PROPERTY(int prefilledTokens READ prefilledTokens NOTIFY generationChanged)
    Q_PROPERTY(int carriedTokens READ carriedTokens NOTIFY generationChanged)
    Q_PROPERTY(int reprefilledTokens READ reprefilledTokens NOTIFY generationChanged)
    Q_PROPERTY(int sharedTokens READ sharedTokens NOTIFY generationChanged)
    Q_PROPERTY(int restoredTokens READ restoredTokens NOTIFY generationChanged)
    Q_PROPERTY(int generatedTokens READ generatedTokens NOTIFY generationChanged)
    Q_PROPERTY(QVariantList decodeSeries READ decodeSeries NOTIFY generationChanged)
    Q_PROPERTY(int updates READ updates NOTIFY generationChanged)
    Q_PROPERTY(bool fromServer READ fromServer NOTIFY generationChanged)
    Q_PROPERTY(QString server READ server NOTIFY generationChanged)
    Q_PROPERTY(int serverPieces READ serverPieces NOTIFY generationChanged)
    Q_PROPERTY(double serverPiecesPerSecond READ serverPiecesPerSecond NOTIFY generationChanged)
    Q_PROPERTY(double serverTokensPerSecond READ serverTokensPerSecond NOTIFY generationChanged)
    Q_PROPERTY(int serverPromptTokens READ serverPromptTokens NOTIFY generationChanged)
    Q_PROPERTY(int serverCompletionTokens READ serverCompletionTokens NOTIFY generationChanged)
    Q_PROPERTY(int serverCachedTokens READ serverCachedTokens NOTIFY generationChanged)
    Q_PROPERTY(double serverCacheUsage READ serverCacheUsage NOTIFY generationChanged)
    Q_PROPERTY(int cachedTokens READ cachedTokens NOTIFY occupancyChanged)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY occupancyChanged)
    Q_PROPERTY(int poolBlocksUsed READ poolBlocksUsed NOTIFY occupancyChanged)
    Q_PROPERTY(int poolBlocksTotal READ poolBlocksTotal NOTIFY occupancyChanged)
    Q_PROPERTY(double poolMiBUsed READ poolMiBUsed NOTIFY occupancyChanged)
    Q_PROPERTY(double poolMiBTotal READ poolMiBTotal NOTIFY occupancyChanged)
    Q_PROPERTY(double evictions READ evictions NOTIFY occupancyChanged)
public:
    explicit Figures(const ConversationListModel* conversations, QObject* parent = nullptr);

    bool hasAnswer() const { return answers_.contains(current_); }
    bool live() const { return hasAnswer() && live_.contains(current_); }
    QString answerModel() const { return shown().model; }
    double decodeTokensPerSecond() const { return shown().decode_tokens_per_s; }
    double prefillTokensPerSecond() const { return shown().stats.prefill_tokens_per_s; }
    double timeToFirstTokenMs() const { return shown().stats.time_to_first_token_ms; }
    int promptTokens() const { return shown().stats.prompt_tokens; }
    int prefilledTokens() const { return shown().stats.prefilled_tokens; }
    // Prefilled tokens that were neither this message nor lost to eviction: history the cache
    // never held, mostly the previous answer's last token and end-of-turn marker (only run with the
    // next message), or a whole history restored after a restart or a model change (less what a KV
    // snapshot on disk gave back: restoredTokens).
    int carriedTokens() const;
    int reprefilledTokens() const { return shown().stats.reprefilled_tokens; }
    int sharedTokens() const { return shown().stats.shared_tokens; }
    int restoredTokens() const { return shown().stats.restored_tokens; }
    int generatedTokens() const { return shown().stats.generated_tokens; }
    QVariantList decodeSeries() const { return shown().series; }
    int updates() const { return shown().updates; }
    // The shown answer came from a server; the server* figures below are -1 where it reported none.
    bool fromServer() const { return shown().server.has_value(); }
    QString server() const { return fromServer() ? shown().server->server : QString(); }
    int serverPieces() const { return fromServer() ? shown().server->pieces : 0; }
    double serverPiecesPerSecond() const { return reported(&ServerFigures::pieces_per_second); }
    double serverTokensPerSecond() const { return reported(&ServerFigures::tokens_per_second); }
    int serverPromptTokens() const { return reported(&ServerFigures::prompt_tokens); }
    int serverCompletionTokens() const { return reported(&ServerFigures::completion_tokens); }
    int serverCachedTokens() const { return reported(&ServerFigures::cached_tokens); }
    double serverCacheUsage() const { return reported(&ServerFigures::kv_cache_usage); }
    int cachedTokens() const;
    int contextLength() const;
    int poolBlocksUsed() const { return pool_.blocks_used; }
    int poolBlocksTotal() const { return pool_.blocks_total; }
    double poolMiBUsed() const { return double(pool_.bytes_used) / (1024.0 * 1024.0); }
    double poolMiBTotal() const { return double(pool_.bytes_total) / (1024.0 * 1024.0); }
    double evictions() const { return double(pool_.evictions); }

    // The conversation whose figures are shown.
    void setCurrentConversation(const QString& key);
    void forget(const QString& key) { answers_.remove(key); }

public slots:
    void onModelLoaded(const QString& path, const QString& tokenizer, const llamadesk::ModelInfo& info);
    void onGenerationStarted(const QString& key);
    void onTokenGenerated(const QString& key, const QString& piece, const llamadesk::GenerationStats& stats);
    void onGenerationFinished(const QString& key, const llamadesk::GenerationResult& result, int nTurns);
    void onStatsChanged(const QString& key, const llamadesk::ConversationStats& conversation,
                        const llamadesk::PoolStats& pool);
    void onServerFigures(const QString& key, const ServerFigures& figures);

signals:
    void generationChanged();
    void occupancyChanged();

private:
    // One conversation's latest answer.
    struct Answer {
        llamadesk::GenerationStats stats;
        QVariantList series;  // decode tokens/s over the answer, one point per update
        double decode_tokens_per_s = 0;
        int updates = 0;      // how many updates this answer has had (tests and the chart use it)
        QString model;        // the model that wrote it
        std::optional<ServerFigures> server;  // a server wrote it
        QElapsedTimer since_update;           // while it streams: since its last figures
    };
    const Answer& shown() const;
    template <typename T>
    T reported(std::optional<T> ServerFigures::*field) const {
        return fromServer() && (*shown().server.*field) ? *(*shown().server.*field) : T(-1);
    }
    void take(const QString& key, const llamadesk::GenerationStats& stats);
    void changed(const QString& key);
    void tick();

    // A slow model (one token every few hundred ms) still shows its speed moving at least
    // kTickMs apart: between tokens the rate is the tokens so far over the time so far.
    static constexpr int kTickMs = 200;
    QTimer ticker_;

    static constexpr int kMaxSeries = 240;
    const ConversationListModel* conversations_;
    QString current_;
    QSet<QString> live_;  // the conversations answering now
    QString model_;
    QHash<QString, Answer> answers_;
    llamadesk::PoolStats pool_;
};
