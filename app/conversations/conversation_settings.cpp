#include "conversations/conversation_settings.h"

ConversationSettings::ConversationSettings(QSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings) {}

void ConversationSettings::setConversation(const QString& id) {
    id_ = id;
    setLastError({});  // a refusal is about the conversation it was made in
    emit changed();
}

void ConversationSettings::forget(const QString& id) { settings_->remove("conversations/" + id); }

namespace {

const QString kSystemPrompt = "systemPrompt";
const char* const kSamplingKeys[] = {"temperature", "topP",        "topK",         "minP",
                                     "repeatPenalty", "stopStrings", "maxNewTokens", "seed"};

QString own_key(const QString& id, const QString& key) { return "conversations/" + id + "/" + key; }

}  // namespace

void ConversationSettings::adopt(const QString& id) {
    QStringList keys{kSystemPrompt};
    for (const char* key : kSamplingKeys)
        keys.append(key);
    for (const QString& key : keys) {
        const QString own = own_key(id, key), common = "defaults/" + key;
        if (!settings_->contains(own) && settings_->contains(common))
            settings_->setValue(own, settings_->value(common));
    }
    if (id == id_)
        emit changed();
}

QVariant ConversationSettings::value(const QString& key, const QVariant& fallback) const {
    return settings_->value(own_key(id_, key), fallback);
}

QString ConversationSettings::systemPromptOf(const QString& id) const {
    return settings_->value(own_key(id, kSystemPrompt)).toString();
}

QVariantMap ConversationSettings::samplingOf(const QString& id) const {
    QVariantMap out;
    for (const char* key : kSamplingKeys)
        if (const QVariant v = settings_->value(own_key(id, key)); v.isValid())
            out.insert(key, v);
    return out;
}

QString ConversationSettings::samplingError(const QVariantMap& sampling) {
    llamadesk::SamplingParams check;
    check.temperature = float(sampling.value("temperature", check.temperature).toDouble());
    check.top_p = float(sampling.value("topP", check.top_p).toDouble());
    check.top_k = sampling.value("topK", check.top_k).toInt();
    check.min_p = float(sampling.value("minP", check.min_p).toDouble());
    check.repeat_penalty = float(sampling.value("repeatPenalty", check.repeat_penalty).toDouble());
    const llamadesk::Status s = llamadesk::validate_sampling(check);
    return s.ok() ? QString() : QString::fromStdString(s.message);
}

QString ConversationSettings::assign(const QString& id, const QString& systemPrompt, const QVariantMap& sampling) {
    if (QString error = samplingError(sampling); !error.isEmpty())
        return error;
    settings_->setValue(own_key(id, kSystemPrompt), systemPrompt);
    for (const char* key : kSamplingKeys)
        if (sampling.contains(key))
            settings_->setValue(own_key(id, key), sampling.value(key));
    adopt(id);  // what the file did not say comes from the defaults, as for a new conversation
    return {};
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
        settings_->setValue(own_key(id_, key), v);
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

void ConversationSettings::setMinP(double v) {
    llamadesk::SamplingParams s = generateParams().sampling;
    s.min_p = float(v);
    setSampling("minP", v, s);
}

void ConversationSettings::setStopStrings(const QString& lines) {
    QStringList strings = lines.split('\n');
    strings.removeAll(QString());
    setValue("stopStrings", strings);
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
    p.sampling.min_p = float(minP());
    p.sampling.repeat_penalty = float(repeatPenalty());
    for (const QString& stop : value("stopStrings", QStringList()).toStringList())
        p.stop_strings.push_back(stop.toStdString());
    p.sampling.seed = seed();
    p.max_new_tokens = maxNewTokens();
    p.system_prompt = systemPrompt().toStdString();
    return p;
}
