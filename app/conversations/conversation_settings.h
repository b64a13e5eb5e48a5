// The sampling settings and system prompt of the current conversation, kept with QSettings under
// conversations/<id>/. A conversation takes its values when it is made (adopt) and keeps them:
// changing one conversation never changes another. New conversations start from defaults/: the
// sampling last chosen anywhere, and the system prompt for new conversations, a setting of its own
// (a conversation's system prompt is part of its history, so it never travels).
#pragma once

#include <QObject>
#include <QSettings>
#include <QtQml/qqmlregistration.h>

#include <llamadesk/engine.h>

class ConversationSettings : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ConversationList")
    Q_PROPERTY(QString systemPrompt READ systemPrompt WRITE setSystemPrompt NOTIFY changed)
    Q_PROPERTY(QString defaultSystemPrompt READ defaultSystemPrompt WRITE setDefaultSystemPrompt NOTIFY changed)
    Q_PROPERTY(double temperature READ temperature WRITE setTemperature NOTIFY changed)
    Q_PROPERTY(double topP READ topP WRITE setTopP NOTIFY changed)
    Q_PROPERTY(int topK READ topK WRITE setTopK NOTIFY changed)
    Q_PROPERTY(double minP READ minP WRITE setMinP NOTIFY changed)
    Q_PROPERTY(double repeatPenalty READ repeatPenalty WRITE setRepeatPenalty NOTIFY changed)
    // Where an answer ends besides EOS: one string per line.
    Q_PROPERTY(QString stopStrings READ stopStrings WRITE setStopStrings NOTIFY changed)
    Q_PROPERTY(int maxNewTokens READ maxNewTokens WRITE setMaxNewTokens NOTIFY changed)
    Q_PROPERTY(int seed READ seed WRITE setSeed NOTIFY changed)
    // Why the last sampling value was refused; cleared by the next accepted value.
    Q_PROPERTY(QString lastError READ lastError NOTIFY lastErrorChanged)
public:
    ConversationSettings(QSettings* settings, QObject* parent = nullptr);

    void setConversation(const QString& id);
    // Gives conversation id the defaults' values for every setting it has none of yet: a new
    // conversation, or one saved before conversations kept their own.
    void adopt(const QString& id);
    void forget(const QString& id);
    llamadesk::GenerateParams generateParams() const;

    QString systemPrompt() const { return systemPromptOf(id_); }
    // Unset values are the engine's defaults (llamadesk::SamplingParams), as in the CLI.
    double temperature() const { return value("temperature", kEngineSampling.temperature).toDouble(); }
    double topP() const { return value("topP", kEngineSampling.top_p).toDouble(); }
    int topK() const { return value("topK", kEngineSampling.top_k).toInt(); }
    double minP() const { return value("minP", kEngineSampling.min_p).toDouble(); }
    double repeatPenalty() const { return value("repeatPenalty", kEngineSampling.repeat_penalty).toDouble(); }
    QString stopStrings() const { return value("stopStrings", QStringList()).toStringList().join('\n'); }
    int maxNewTokens() const { return value("maxNewTokens", 256).toInt(); }
    int seed() const { return value("seed", qlonglong(kEngineSampling.seed)).toInt(); }  // < 0: random
    QString systemPromptOf(const QString& id) const;
    // Conversation id's own sampling values by their settings keys (temperature, topP, topK, minP,
    // repeatPenalty, stopStrings, maxNewTokens, seed), for export.
    QVariantMap samplingOf(const QString& id) const;
    // An imported conversation's settings; values the engine would refuse are refused as a whole:
    // returns why, and nothing is written.
    QString assign(const QString& id, const QString& systemPrompt, const QVariantMap& sampling);
    // Why the engine would refuse these sampling values; empty when it would take them.
    static QString samplingError(const QVariantMap& sampling);
    QString defaultSystemPrompt() const;
    void setDefaultSystemPrompt(const QString& v);
    QString lastError() const { return lastError_; }

    void setSystemPrompt(const QString& v);
    // Sampling setters refuse what the engine would refuse: the old value stays, lastError says why.
    void setTemperature(double v);
    void setTopP(double v);
    void setTopK(int v);
    void setMinP(double v);
    void setRepeatPenalty(double v);
    void setStopStrings(const QString& lines);
    void setMaxNewTokens(int v) { setValue("maxNewTokens", v); }
    void setSeed(int v) { setValue("seed", v); }

signals:
    void changed();
    void lastErrorChanged();

private:
    static inline const llamadesk::SamplingParams kEngineSampling{};

    QVariant value(const QString& key, const QVariant& fallback) const;
    void setValue(const QString& key, const QVariant& v);
    void setSampling(const QString& key, const QVariant& v, const llamadesk::SamplingParams& with_v);
    void setLastError(const QString& message);

    QSettings* settings_;
    QString id_;
    QString lastError_;
};
