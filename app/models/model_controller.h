// Which model is loaded and loading: open a checkpoint (file dialog, drop, recent list) or a model
// on a server (remote_location(): base URL and model; its API key goes to ApiKeyStore), load
// progress, the header's figures, the tokenizer question, and load errors. A failed load changes
// nothing here: the previous model's figures stay, as the previous model stays in the engine. With
// no model loaded (a bad --model at start), the last good model, else the built-in one, opens instead.
#pragma once

#include <QObject>
#include <QSet>
#include <QStringList>
#include <QTimer>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

#include "settings/api_key_store.h"
#include "settings/app_settings.h"

class ModelController : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(bool hasModel READ hasModel NOTIFY modelChanged)
    Q_PROPERTY(QString name READ name NOTIFY modelChanged)
    Q_PROPERTY(bool builtin READ builtin NOTIFY modelChanged)
    Q_PROPERTY(QStringList suggestedQuestions READ suggestedQuestions NOTIFY modelChanged)
    Q_PROPERTY(QString path READ path NOTIFY modelChanged)
    Q_PROPERTY(QString format READ format NOTIFY modelChanged)
    Q_PROPERTY(QString dtype READ dtype NOTIFY modelChanged)
    Q_PROPERTY(QString weightTypes READ weightTypes NOTIFY modelChanged)
    Q_PROPERTY(double weightBytes READ weightBytes NOTIFY modelChanged)
    Q_PROPERTY(double bytesPerParameter READ bytesPerParameter NOTIFY modelChanged)
    Q_PROPERTY(double residentBytes READ residentBytes NOTIFY residentBytesChanged)
    Q_PROPERTY(QString parameters READ parameters NOTIFY modelChanged)
    Q_PROPERTY(int layers READ layers NOTIFY modelChanged)
    Q_PROPERTY(int heads READ heads NOTIFY modelChanged)
    Q_PROPERTY(int kvHeads READ kvHeads NOTIFY modelChanged)
    Q_PROPERTY(int contextLength READ contextLength NOTIFY modelChanged)
    // Why that context: the model's own, or less to fit the memory, with the KV cache it takes.
    Q_PROPERTY(QString contextReason READ contextReason NOTIFY modelChanged)
    Q_PROPERTY(QString backend READ backend NOTIFY modelChanged)
    Q_PROPERTY(QString device READ device NOTIFY modelChanged)
    Q_PROPERTY(int threads READ threads NOTIFY modelChanged)
    Q_PROPERTY(bool loading READ loading NOTIFY loadingChanged)
    Q_PROPERTY(double progress READ progress NOTIFY progressChanged)
    Q_PROPERTY(QString stage READ stage NOTIFY progressChanged)
    Q_PROPERTY(bool needsTokenizer READ needsTokenizer NOTIFY needsTokenizerChanged)
    Q_PROPERTY(QString tokenizerMessage READ tokenizerMessage NOTIFY needsTokenizerChanged)
    Q_PROPERTY(QStringList recentCheckpoints READ recentCheckpoints NOTIFY recentChanged)
    // The model runs on a server: its figures and cache are the server's (device names it).
    Q_PROPERTY(bool remote READ remote NOTIFY modelChanged)
    // Where API keys are kept (the system keyring, or the file and why), for the dialogs to say so.
    Q_PROPERTY(QString apiKeyStorage READ apiKeyStorage NOTIFY apiKeyStorageChanged)
public:
    ModelController(AppSettings* settings, ApiKeyStore* keys, QObject* parent = nullptr);

    bool hasModel() const { return has_model_; }
    QString name() const;  // "LlamaDesk Guide (built in)" for the built-in model
    // The loaded model is the one that ships with LlamaDesk (builtin_model_path()).
    bool builtin() const;
    // Questions the welcome text offers: the built-in model's own topics; none for other models.
    QStringList suggestedQuestions() const;
    QString path() const { return QString::fromStdString(info_.path); }
    QString format() const { return QString::fromStdString(info_.format); }
    QString dtype() const { return QString::fromStdString(info_.weight_dtype); }
    // "Q4_K_M: Q4_K ×97, Q6_K ×19"
    QString weightTypes() const { return QString::fromStdString(info_.weight_types); }
    double weightBytes() const { return double(info_.weight_bytes); }
    double bytesPerParameter() const;
    // The whole process, refreshed every few seconds while a model is loaded; -1 when unknown.
    double residentBytes() const { return double(resident_bytes_); }
    QString parameters() const;  // "260K", "6.7B"
    int layers() const { return info_.n_layers; }
    int heads() const { return info_.n_heads; }
    int kvHeads() const { return info_.n_kv_heads; }
    int contextLength() const { return info_.context_length; }
    QString contextReason() const { return QString::fromStdString(info_.context_reason); }
    QString backend() const { return QString::fromStdString(info_.backend); }
    QString device() const { return QString::fromStdString(info_.device); }
    int threads() const { return info_.n_threads; }
    bool loading() const { return loads_in_flight_ > 0; }
    double progress() const { return progress_; }
    QString stage() const { return stage_; }
    bool needsTokenizer() const { return !tokenizer_for_.isEmpty(); }
    QString tokenizerMessage() const { return tokenizer_message_; }
    QStringList recentCheckpoints() const { return settings_->recentCheckpoints(); }
    bool remote() const { return has_model_ && info_.backend == "Remote"; }
    QString apiKeyFile() const { return keys_->file(); }
    QString apiKeyStorage() const { return keys_->whereKept(); }

    // A local path or a file:// URL, from the dialog, a drop or the recent list.
    Q_INVOKABLE void open(const QString& pathOrUrl);
    // A model on a server; apiKey (may be empty) is stored for baseUrl's origin before connecting.
    Q_INVOKABLE void openRemote(const QString& baseUrl, const QString& apiKey, const QString& model);
    // Empty when baseUrl is https or loopback; else the warning the window shows before sending.
    Q_INVOKABLE QString plainHttpWarning(const QString& baseUrl) const;
    // "model on host:port" for a remote location in Recent, the file name for a checkpoint.
    Q_INVOKABLE QString displayName(const QString& location) const;
    Q_INVOKABLE bool isRemote(const QString& location) const;
    Q_INVOKABLE QString serverAddress(const QString& location) const;  // a remote location's base URL
    // Retries the checkpoint that asked for a tokenizer with this one.
    Q_INVOKABLE void openWithTokenizer(const QString& pathOrUrl);
    Q_INVOKABLE void cancelTokenizer();
    // Loads the current model again, e.g. after threads or the KV budget changed.
    Q_INVOKABLE void reload();
    void load(const QString& path, const QString& tokenizer);

public slots:
    void onLoadProgress(double fraction, const QString& stage);
    void onModelLoaded(const QString& path, const QString& tokenizer, const llamadesk::ModelInfo& info);
    void onLoadFailed(const QString& path, int code, const QString& message);

signals:
    void requestLoad(const QString& path, const QString& tokenizer, int threads, qint64 kvCacheBytes,
                     llamadesk::KvCacheType kvCacheType, int contextLimit, int serverTimeoutMs, const QString& apiKey);
    void modelChanged();
    void loadingChanged();
    void progressChanged();
    void needsTokenizerChanged();
    void recentChanged();
    void residentBytesChanged();
    void apiKeyStorageChanged();
    void errorOccurred(const QString& message);
    // A load the person chose succeeded after the failed one whose message this was.
    void failureAnswered(const QString& message);

private:
    void finishOne();
    void refreshResidentBytes();
    // The model to open after `failed` when none is loaded: the last good one, else the built-in
    // one, each tried once; empty when none is left.
    QString nextFallback(const QString& failed);

    AppSettings* settings_;
    ApiKeyStore* keys_;
    llamadesk::ModelInfo info_;
    bool has_model_ = false;
    int loads_in_flight_ = 0;
    double progress_ = 0;
    QString stage_;
    QString tokenizer_for_;  // the checkpoint waiting for a tokenizer file
    QString tokenizer_message_;
    qint64 resident_bytes_ = -1;
    QTimer resident_timer_;
    QSet<QString> fallbacks_tried_;
    QString failure_;   // the message of the last failed load, until a load the person chose succeeds
    QString fallback_;  // the model that failure opened instead, whose load answers nothing
};
