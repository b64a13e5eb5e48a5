#include "conversations/presets.h"

#include "conversations/conversation.h"
#include "conversations/conversation_settings.h"

namespace {
const QString kList = QStringLiteral("presets/list");
const QString kForNew = QStringLiteral("presets/forNewConversations");
}

Presets::Presets(QSettings* store, QObject* parent) : QObject(parent), store_(store) {}

QList<Preset> Presets::all() const {
    QList<Preset> out;
    for (const QVariant& v : store_->value(kList).toList()) {
        const QVariantMap m = v.toMap();
        out.append({m.value("name").toString(), m.value("systemPrompt").toString(),
                    format_from_key(m.value("format").toString(), llamadesk::ChatFormat::Llama2Chat),
                    m.value("sampling").toMap()});
    }
    return out;
}

QStringList Presets::names() const {
    QStringList out;
    for (const Preset& p : all()) out << p.name;
    return out;
}

std::optional<Preset> Presets::find(const QString& name) const {
    for (const Preset& p : all())
        if (p.name == name) return p;
    return std::nullopt;
}

QString Presets::put(const Preset& preset) {
    if (preset.name.trimmed().isEmpty()) return tr("a preset needs a name");
    if (const QString why = ConversationSettings::samplingError(preset.sampling); !why.isEmpty()) return why;
    QList<Preset> presets = all();
    const auto same = std::find_if(presets.begin(), presets.end(), [&](const Preset& p) { return p.name == preset.name; });
    if (same != presets.end())
        *same = preset;
    else
        presets.append(preset);
    write(presets);
    return {};
}

void Presets::remove(const QString& name) {
    QList<Preset> presets = all();
    presets.removeIf([&](const Preset& p) { return p.name == name; });
    if (forNewConversations() == name) store_->remove(kForNew);
    write(presets);
}

QString Presets::forNewConversations() const {
    const QString name = store_->value(kForNew).toString();
    return find(name) ? name : QString();
}

void Presets::setForNewConversations(const QString& name) {
    if (name.isEmpty() || !find(name))
        store_->remove(kForNew);
    else
        store_->setValue(kForNew, name);
    emit changed();
}

void Presets::write(const QList<Preset>& presets) {
    QVariantList list;
    for (const Preset& p : presets)
        list.append(QVariantMap{{"name", p.name},
                                {"systemPrompt", p.system_prompt},
                                {"format", format_key(p.format)},
                                {"sampling", p.sampling}});
    store_->setValue(kList, list);
    emit changed();
}
