// The current conversation's chat format (a chat family, or plain completion) and the one the
// loaded model suggests, with why; the format selector lists every one the engine renders.
#pragma once

#include <QObject>
#include <QVariantList>
#include <QtQml/qqmlregistration.h>

#include "conversations/conversation_list.h"
#include "conversations/generation.h"

class ChatFormatChoice : public QObject {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    // The current conversation's format and the model's own.
    Q_PROPERTY(Format chatFormat READ chatFormat WRITE setChatFormat NOTIFY changed)
    Q_PROPERTY(Format suggestedFormat READ suggestedFormat NOTIFY changed)
    // Why the model suggests it ("from its chat template", or that its template is of no family
    // LlamaDesk renders); suggestedFormatKnown is false in that last case.
    Q_PROPERTY(QString suggestedFormatReason READ suggestedFormatReason NOTIFY changed)
    Q_PROPERTY(bool suggestedFormatKnown READ suggestedFormatKnown NOTIFY changed)
    // One line when the model loaded cannot write the format the conversation had, which took
    // the model's own instead (ConversationStats::format_note); empty otherwise.
    Q_PROPERTY(QString formatNote READ formatNote NOTIFY changed)
    // Every chat format the selector lists: {format, name}, from the engine's one list.
    Q_PROPERTY(QVariantList formats READ formats CONSTANT)
public:
    // The engine's formats (llamadesk::ChatFormat, same values) by the names QML compares
    // (ChatFormatChoice.Completion); a test checks that each of chat_formats() has one.
    enum Format {
        Llama2Chat = int(llamadesk::ChatFormat::Llama2Chat),
        Completion = int(llamadesk::ChatFormat::Completion),
        Llama3Chat = int(llamadesk::ChatFormat::Llama3Chat),
        Llama31Chat = int(llamadesk::ChatFormat::Llama31Chat),
        Mistral = int(llamadesk::ChatFormat::Mistral),
        ChatML = int(llamadesk::ChatFormat::ChatML),
        Zephyr = int(llamadesk::ChatFormat::Zephyr),
        DeepSeekR1 = int(llamadesk::ChatFormat::DeepSeekR1),
    };
    Q_ENUM(Format)

    ChatFormatChoice(ConversationList* list, const Generation* generation, QObject* parent = nullptr);

    Format chatFormat() const;
    // Not while the conversation answers: its answer is being written in the format it has.
    void setChatFormat(Format format);
    Format suggestedFormat() const { return Format(list_->modelDefaults().format); }
    QString suggestedFormatReason() const { return list_->modelDefaults().format_reason; }
    bool suggestedFormatKnown() const { return list_->modelDefaults().format_known; }
    QString formatNote() const;
    static QVariantList formats();

signals:
    void changed();

private:
    ConversationList* list_;
    const Generation* generation_;
};
