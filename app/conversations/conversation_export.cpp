#include "conversations/conversation_export.h"

#include "conversations/message_versions_json.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>

namespace {

constexpr char kKind[] = "llamadesk-conversations";
constexpr int kVersion = 1;

QString role_name(Message::Role role) { return role == Message::Role::User ? "user" : "assistant"; }

QString iso(const QDateTime& t) { return t.isValid() ? t.toString(Qt::ISODateWithMs) : QString(); }

QJsonObject message_json(const Message& m) {
    QJsonObject o{{"role", role_name(m.role)}, {"text", m.text}, {"time", iso(m.time)}};
    if (m.role == Message::Role::Assistant)
        o.insert("stop_reason", AnswerEnd::name(m.streaming ? AnswerEnd::Interrupted : m.stop_reason));
    if (m.forgotten)
        o.insert("forgotten", true);
    if (!m.other_versions.empty()) {
        o.insert("version", m.version);
        o.insert("other_versions", versions_json(m.other_versions, message_json));
    }
    return o;
}

Message message_from(const QJsonObject& m) {
    Message msg;
    msg.role = m.value("role").toString() == "user" ? Message::Role::User : Message::Role::Assistant;
    msg.text = m.value("text").toString();
    msg.time = QDateTime::fromString(m.value("time").toString(), Qt::ISODateWithMs);
    msg.stop_reason = AnswerEnd::from_name(m.value("stop_reason").toString());
    msg.forgotten = m.value("forgotten").toBool();
    versions_from(m, msg, message_from);
    return msg;
}

QJsonObject conversation_json(const ConversationExport& e) {
    const ConversationRecord& c = e.conversation;
    QJsonArray messages;
    for (const Message& m : c.messages)
        messages.append(message_json(m));
    QJsonObject o{{"id", c.id},
                  {"title", c.title},
                  {"created", iso(c.created)},
                  {"model", c.model},
                  {"chat_format", format_key(c.format)},
                  {"system_prompt", e.system_prompt},
                  {"sampling", QJsonObject::fromVariantMap(e.sampling)},
                  {"messages", messages}};
    if (c.pinned)
        o.insert("pinned", true);
    if (!c.tags.isEmpty())
        o.insert("tags", QJsonArray::fromStringList(c.tags));
    return o;
}

std::optional<ConversationExport> conversation_from(const QJsonObject& o, QString* error) {
    ConversationExport e;
    ConversationRecord& c = e.conversation;
    c.id = o.value("id").toString();
    c.title = o.value("title").toString();
    c.created = QDateTime::fromString(o.value("created").toString(), Qt::ISODateWithMs);
    c.model = o.value("model").toString();
    c.pinned = o.value("pinned").toBool();
    for (const QJsonValue& tag : o.value("tags").toArray())
        c.tags.append(tag.toString());
    const QString format = o.value("chat_format").toString();
    c.format = format_from_key(format, llamadesk::ChatFormat::Llama2Chat);
    if (!format.isEmpty() && format_key(c.format) != format) {
        *error = QString("unknown chat format \"%1\"").arg(format);
        return std::nullopt;
    }
    e.system_prompt = o.value("system_prompt").toString();
    e.sampling = o.value("sampling").toObject().toVariantMap();
    const QJsonArray messages = o.value("messages").toArray();
    for (int i = 0; i < messages.size(); ++i) {
        const QJsonObject m = messages[i].toObject();
        const QString role = m.value("role").toString();
        // The window's invariant: questions and answers alternate, a question first.
        const QString expected = i % 2 == 0 ? "user" : "assistant";
        if (role != expected) {
            *error = QString("message %1 has role \"%2\"; expected \"%3\" (questions and answers alternate)")
                         .arg(i + 1).arg(role, expected);
            return std::nullopt;
        }
        c.messages.append(message_from(m));
    }
    if (!c.created.isValid())
        c.created = QDateTime::currentDateTimeUtc();
    return e;
}

}  // namespace

QString export_markdown(const ConversationExport& e) {
    const ConversationRecord& c = e.conversation;
    QString out = "# " + c.title + "\n\n";
    QStringList facts;
    if (c.created.isValid())
        facts << "Started " + c.created.toLocalTime().toString("yyyy-MM-dd HH:mm");
    if (!c.model.isEmpty())
        facts << "model " + c.model;
    facts << "format " + format_key(c.format);
    out += "*" + facts.join(" · ") + "*\n\n";
    if (!e.system_prompt.isEmpty())
        out += "**System prompt:** " + e.system_prompt + "\n\n";
    for (const Message& m : c.messages) {
        out += m.role == Message::Role::User ? "## You" : "## Assistant";
        if (m.time.isValid())
            out += " · " + m.time.toLocalTime().toString("yyyy-MM-dd HH:mm");
        out += "\n\n" + m.text + "\n\n";
    }
    return out;
}

QByteArray export_json(const QList<ConversationExport>& conversations, const QList<Preset>& presets) {
    QJsonArray list;
    for (const ConversationExport& e : conversations)
        list.append(conversation_json(e));
    QJsonObject root{{"kind", kKind},
                     {"version", kVersion},
                     {"exported", iso(QDateTime::currentDateTimeUtc())},
                     {"conversations", list}};
    if (!presets.isEmpty()) {
        QJsonArray kept;
        for (const Preset& p : presets)
            kept.append(QJsonObject{{"name", p.name},
                                    {"system_prompt", p.system_prompt},
                                    {"chat_format", format_key(p.format)},
                                    {"sampling", QJsonObject::fromVariantMap(p.sampling)}});
        root.insert("presets", kept);
    }
    return QJsonDocument(root).toJson(QJsonDocument::Indented);
}

std::optional<QList<ConversationExport>> import_json(const QByteArray& json, QString* error, QList<Preset>* presets) {
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse_error);
    if (!doc.isObject()) {
        *error = "not JSON: " + parse_error.errorString() + QString(" at offset %1").arg(parse_error.offset);
        return std::nullopt;
    }
    const QJsonObject root = doc.object();
    if (root.value("kind").toString() != kKind) {
        *error = QString("not a LlamaDesk export (its \"kind\" is not \"%1\")").arg(kKind);
        return std::nullopt;
    }
    if (const int version = root.value("version").toInt(); version < 1 || version > kVersion) {
        *error = QString("export version %1; this LlamaDesk reads version 1 to %2").arg(version).arg(kVersion);
        return std::nullopt;
    }
    QList<ConversationExport> out;
    const QJsonArray list = root.value("conversations").toArray();
    for (int i = 0; i < list.size(); ++i) {
        QString why;
        std::optional<ConversationExport> e = conversation_from(list[i].toObject(), &why);
        if (!e) {
            *error = QString("conversation %1 of %2: %3").arg(i + 1).arg(list.size()).arg(why);
            return std::nullopt;
        }
        out.append(std::move(*e));
    }
    const QJsonArray kept = root.value("presets").toArray();
    for (int i = 0; presets && i < kept.size(); ++i) {
        const QJsonObject p = kept[i].toObject();
        const QString format = p.value("chat_format").toString();
        Preset preset{p.value("name").toString(), p.value("system_prompt").toString(),
                      format_from_key(format, llamadesk::ChatFormat::Llama2Chat), p.value("sampling").toObject().toVariantMap()};
        if (preset.name.trimmed().isEmpty() || format_key(preset.format) != format) {
            *error = QString("preset %1 of %2: no name, or an unknown chat format \"%3\"").arg(i + 1).arg(kept.size()).arg(format);
            return std::nullopt;
        }
        presets->append(std::move(preset));
    }
    return out;
}
