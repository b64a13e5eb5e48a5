#include "conversation_settings.h"

ConversationSettings::ConversationSettings(QSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings) {}

void ConversationSettings::setConversation(const QString& id) {
    id_ = id;
    setLastError({});  // a refusal is about the conversation it was made in
    emit changed();
}

void ConversationSettings::forget(const QString& id) { settings_->remove("conversations/" + id); }

namespace {

const char* const kKeys[] = {"systemPrompt", "temperature", "topP", "topK", "repeatPenalty", "maxNewTokens", "seed"};
const QString kSystemPrompt = "systemPrompt";

}  // namespace

void ConversationSettings::adopt(const QString& id) {
    for (const char* key : kKeys) {
        const QString own = "conversations/" + id + "/" + key, common = QString("defaults/") + key;
        if (!settings_->contains(own) && settings_->contains(common))
            settings_->setValue(own, settings_->value(common));
    }
    if (id == id_)
        emit changed();
}

QVariant ConversationSettings::value(const QString& key, const QVariant& fallback) const {
    return settings_->value("conversations/" + id_ + "/" + key, fallback);
}

QString ConversationSettings::systemPromptOf(const QString& id) const {
    return settings_->value("conversations/" + id + "/" + kSystemPrompt).toString();
}

void ConversationSettings::setSystemPrompt(const QString& v) { setValue(kSystemPrompt, v); }

QString ConversationSettings::defaultSystemPrompt() const {
    return settings_->value("defaults/" + kSystemPrompt).toString();
}

void ConversationSettings::setDefaultSystemPrompt(const QString& v) {
    if (v == defaultSystemPrompt())
        return;
    settings_->setValue("defaults/" + kSystemPrompt, v);
    emit changed();
}

void ConversationSettings::setValue(const QString& key, const QVariant& v) {
    setLastError({});
    if (value(key, {}) == v)
        return;
    if (!id_.isEmpty())
        settings_->setValue("conversations/" + id_ + "/" + key, v);
    if (key != kSystemPrompt)
        settings_->setValue("defaults/" + key, v);  // new conversations start from the latest sampling
    emit changed();
}

void ConversationSettings::setTemperature(double v) {
    llamadesk::SamplingParams s = generateParams().sampling;
    s.temperature = float(v);
    setSampling("temperature", v, s);
}

void ConversationSettings::setTopP(double v) {
    llamadesk::SamplingParams s = generateParams().sampling;
    s.top_p = float(v);
    setSampling("topP", v, s);
}

void ConversationSettings::setTopK(int v) {
    llamadesk::SamplingParams s = generateParams().sampling;
    s.top_k = v;
    setSampling("topK", v, s);
}

void ConversationSettings::setRepeatPenalty(double v) {
    llamadesk::SamplingParams s = generateParams().sampling;
    s.repeat_penalty = float(v);
    setSampling("repeatPenalty", v, s);
}

// with_v: the current sampling with the new value in place, checked by the engine's own rule so
// the window never keeps a value that generate() would refuse.
void ConversationSettings::setSampling(const QString& key, const QVariant& v,
                                       const llamadesk::SamplingParams& with_v) {
    const llamadesk::Status s = llamadesk::validate_sampling(with_v);
    if (s.ok()) setValue(key, v);
    else setLastError(QString::fromStdString(s.message));
}

void ConversationSettings::setLastError(const QString& message) {
    if (lastError_ == message)
        return;
    lastError_ = message;
    emit lastErrorChanged();
}

llamadesk::GenerateParams ConversationSettings::generateParams() const {
    llamadesk::GenerateParams p;
    p.sampling.temperature = float(temperature());
    p.sampling.top_p = float(topP());
    p.sampling.top_k = topK();
    p.sampling.repeat_penalty = float(repeatPenalty());
    p.sampling.seed = seed();
    p.max_new_tokens = maxNewTokens();
    p.system_prompt = systemPrompt().toStdString();
    return p;
}
