// Presets: named sets of what a conversation is given (system prompt, chat format, sampling),
// made from a conversation, given to another, taken by every new conversation when one is chosen
// for them, and carried in the JSON export. Kept in the settings; a preset's sampling is checked
// by the engine's rules like any other.
#pragma once

#include <QObject>
#include <QSettings>
#include <QStringList>
#include <QVariantMap>
#include <QtQml/qqmlregistration.h>
#include <optional>

#include <llamadesk/engine.h>

struct Preset {
    QString name;
    QString system_prompt;
    llamadesk::ChatFormat format = llamadesk::ChatFormat::Llama2Chat;
    QVariantMap sampling;  // ConversationSettings::samplingOf's keys
};

class Presets : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ConversationList")
    Q_PROPERTY(QStringList names READ names NOTIFY changed)
    // The preset every new conversation takes; empty: none (the defaults).
    Q_PROPERTY(QString forNewConversations READ forNewConversations WRITE setForNewConversations NOTIFY changed)
public:
    explicit Presets(QSettings* store, QObject* parent = nullptr);

    QStringList names() const;
    QList<Preset> all() const;
    std::optional<Preset> find(const QString& name) const;
    // Keeps the preset under its name, replacing one of that name. Empty, or why not.
    QString put(const Preset& preset);
    Q_INVOKABLE void remove(const QString& name);
    QString forNewConversations() const;
    void setForNewConversations(const QString& name);

signals:
    void changed();

private:
    void write(const QList<Preset>& presets);
    QSettings* store_;
};
