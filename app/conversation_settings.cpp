#include "conversation_settings.h"

ConversationSettings::ConversationSettings(QSettings* settings, QObject* parent)
    : QObject(parent), settings_(settings) {}

void ConversationSettings::setConversation(const QString& id) {
    id_ = id;
    emit changed();
}

void ConversationSettings::forget(const QString& id) { settings_->remove("conversations/" + id); }

QVariant ConversationSettings::value(const QString& key, const QVariant& fallback) const {
    return settings_->value("conversations/" + id_ + "/" + key,
                            settings_->value("defaults/" + key, fallback));
}

QString ConversationSettings::systemPromptOf(const QString& id) const {
    return settings_->value("conversations/" + id + "/systemPrompt",
                            settings_->value("defaults/systemPrompt")).toString();
}

void ConversationSettings::setValue(const QString& key, const QVariant& v) {
    if (value(key, {}) == v)
        return;
    if (!id_.isEmpty())
        settings_->setValue("conversations/" + id_ + "/" + key, v);
    settings_->setValue("defaults/" + key, v);  // new conversations start from the latest choice
    emit changed();
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
