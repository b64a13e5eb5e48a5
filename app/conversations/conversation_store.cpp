#include "conversations/conversation_store.h"

#include "conversations/message_versions_json.h"

#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>
#include <algorithm>

namespace {

// 2 added format, draft, forgotten and interrupted answers; version 1 files read as chat.
// 3 added each message's time and the model of the last answer.
// 4 added a message's other versions (branches) and which one is shown, pinned and tags.
constexpr int kFormatVersion = 4;

QString role_name(Message::Role role) { return role == Message::Role::User ? "user" : "assistant"; }

QJsonObject message_json(const Message& m) {
    QJsonObject o{{"role", role_name(m.role)}, {"text", m.text},
                  {"stop_reason", AnswerEnd::name(m.streaming ? AnswerEnd::Interrupted : m.stop_reason)}};
    if (m.forgotten)
        o.insert("forgotten", true);
    if (m.time.isValid())
        o.insert("time", m.time.toString(Qt::ISODateWithMs));
    if (!m.other_versions.empty()) {
        o.insert("version", m.version);
        o.insert("other_versions", versions_json(m.other_versions, message_json));
    }
    return o;
}

Message message_from(const QJsonObject& o) {
    Message m;
    m.role = o.value("role").toString() == "user" ? Message::Role::User : Message::Role::Assistant;
    m.text = o.value("text").toString();
    m.stop_reason = AnswerEnd::from_name(o.value("stop_reason").toString());
    m.forgotten = o.value("forgotten").toBool();
    m.time = QDateTime::fromString(o.value("time").toString(), Qt::ISODateWithMs);
    versions_from(o, m, message_from);
    return m;
}

}  // namespace

ConversationStore::ConversationStore(const QString& dataDir) : dir_(dataDir + "/conversations") {}

QString ConversationStore::pathOf(const QString& id) const { return dir_ + "/" + id + ".json"; }

QByteArray ConversationStore::toJson(const ConversationRecord& conversation) {
    QJsonArray messages;
    for (const Message& m : conversation.messages)
        messages.append(message_json(m));
    const QJsonObject root{{"version", kFormatVersion},
                           {"id", conversation.id},
                           {"title", conversation.title},
                           {"created", conversation.created.toString(Qt::ISODateWithMs)},
                           {"format", format_key(conversation.format)},
                           {"draft", conversation.draft},
                           {"model", conversation.model},
                           {"messages", messages}};
    QJsonObject out = root;
    if (conversation.pinned)
        out.insert("pinned", true);
    if (!conversation.tags.isEmpty())
        out.insert("tags", QJsonArray::fromStringList(conversation.tags));
    return QJsonDocument(out).toJson(QJsonDocument::Indented);
}

std::optional<ConversationRecord> ConversationStore::fromJson(const QByteArray& json, QString* error) {
    QJsonParseError parse_error;
    const QJsonDocument doc = QJsonDocument::fromJson(json, &parse_error);
    if (!doc.isObject()) {
        if (error)
            *error = parse_error.errorString() + QString(" at offset %1").arg(parse_error.offset);
        return std::nullopt;
    }
    const QJsonObject root = doc.object();
    const int version = root.value("version").toInt();
    if (version < 1 || version > kFormatVersion || root.value("id").toString().isEmpty()) {
        if (error)
            *error = "unknown version or missing id";
        return std::nullopt;
    }
    ConversationRecord c;
    c.id = root.value("id").toString();
    c.title = root.value("title").toString();
    c.created = QDateTime::fromString(root.value("created").toString(), Qt::ISODateWithMs);
    c.format = format_from_key(root.value("format").toString(), llamadesk::ChatFormat::Llama2Chat);
    c.draft = root.value("draft").toString();
    c.model = root.value("model").toString();
    c.pinned = root.value("pinned").toBool();
    for (const QJsonValue& tag : root.value("tags").toArray())
        c.tags.append(tag.toString());
    for (const QJsonValue& v : root.value("messages").toArray())
        c.messages.append(message_from(v.toObject()));
    return c;
}

QList<ConversationRecord> ConversationStore::loadAll(QStringList* errors) const {
    QList<ConversationRecord> out;
    const QDir dir(dir_);
    for (const QString& name : dir.entryList({"*.json"}, QDir::Files)) {
        QFile file(dir.filePath(name));
        QString error;
        std::optional<ConversationRecord> c;
        if (file.open(QIODevice::ReadOnly))
            c = fromJson(file.readAll(), &error);
        else
            error = file.errorString();
        file.close();
        if (c) {
            out.append(*c);
            continue;
        }
        QDir().mkpath(unreadableDir());
        QString aside = unreadableDir() + "/" + name;
        for (int n = 2; QFileInfo::exists(aside); ++n)
            aside = unreadableDir() + "/" + QFileInfo(name).completeBaseName() + QString("-%1.json").arg(n);
        const bool moved = QFile::rename(file.fileName(), aside);
        if (errors)
            errors->append(QString("%1 (%2; %3)").arg(name, error,
                                                      moved ? "kept as " + aside : "left where it is: could not move it to " + aside));
    }
    std::sort(out.begin(), out.end(),
              [](const ConversationRecord& a, const ConversationRecord& b) { return a.created > b.created; });
    return out;
}

bool ConversationStore::save(const ConversationRecord& conversation, QString* error) const {
    QDir().mkpath(dir_);
    QSaveFile file(pathOf(conversation.id));
    // flush() before commit(): Qt 6.4's commit() reports success when the disk refuses the last
    // buffered bytes (a full disk), and would put an empty file in place of the saved one.
    const QByteArray bytes = toJson(conversation);
    if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.flush() || !file.commit()) {
        if (error)
            *error = file.fileName() + ": " + file.errorString();
        return false;
    }
    return true;
}

bool ConversationStore::remove(const QString& id) const { return QFile::remove(pathOf(id)); }
