#include "models/chat_format_choice.h"

using namespace llamadesk;

ChatFormatChoice::ChatFormatChoice(ConversationList* list, const Generation* generation, QObject* parent)
    : QObject(parent), list_(list), generation_(generation) {
    connect(list_, &ConversationList::currentChanged, this, &ChatFormatChoice::changed);
    connect(list_, &ConversationList::modelChanged, this, &ChatFormatChoice::changed);
}

ChatFormatChoice::Format ChatFormatChoice::chatFormat() const {
    const ConversationItem* c = list_->current();
    return Format(c ? c->format : list_->modelDefaults().format);
}

QString ChatFormatChoice::formatNote() const {
    const ConversationItem* c = list_->current();
    return c ? QString::fromStdString(c->stats.format_note) : QString();
}

void ChatFormatChoice::setChatFormat(Format format) {
    ConversationItem* c = list_->current();
    if (c && !generation_->answering(c))
        list_->setFormat(c, ChatFormat(format));
}

QVariantList ChatFormatChoice::formats() {
    QVariantList list;
    for (const ChatFormatName& f : chat_formats())
        list.append(QVariantMap{{QStringLiteral("format"), int(f.format)},
                                {QStringLiteral("name"), QString::fromLatin1(f.name)}});
    return list;
}
