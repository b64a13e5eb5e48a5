#include "conversations/message_composer.h"

#include <utility>

using namespace llamadesk;

MessageComposer::MessageComposer(ConversationList* list, Generation* generation, QObject* parent)
    : QObject(parent), list_(list), generation_(generation) {
    measure_timer_.setSingleShot(true);
    measure_timer_.setInterval(kMeasureDelayMs);
    connect(&measure_timer_, &QTimer::timeout, this, &MessageComposer::measureDraft);
    draft_save_timer_.setSingleShot(true);
    draft_save_timer_.setInterval(kDraftSaveMs);
    connect(&draft_save_timer_, &QTimer::timeout, this, &MessageComposer::saveDraft);

    connect(list_, &ConversationList::shown, this, &MessageComposer::onShown);
    connect(list_, &ConversationList::modelChanged, this, &MessageComposer::remeasure);
    connect(list_, &ConversationList::formatChanged, this, &MessageComposer::remeasure);
    connect(generation_, &Generation::refused, this, &MessageComposer::onRefused);
    connect(generation_, &Generation::contextFilled, this, &MessageComposer::onContextFilled);
    connect(generation_, &Generation::answerEnded, this, &MessageComposer::remeasure);
    connect(generation_, &Generation::historyCut, this, [this] {
        setContextFull(false);
        remeasure();
    });
}

QString MessageComposer::draft() const { return list_->current() ? list_->current()->draft : QString(); }

void MessageComposer::setDraft(const QString& text) {
    ConversationItem* c = list_->current();
    if (!c || c->draft == text)
        return;
    if (unsaved_draft_ != c->id)
        saveDraft();  // another conversation's, typed just before the switch
    list_->setDraft(c, text);
    unsaved_draft_ = c->id;
    emit draftChanged();
    emit draftMeasured();  // the count shown is now of an older text
    measure_timer_.start();
    draft_save_timer_.start();
}

void MessageComposer::saveDraft() {
    draft_save_timer_.stop();
    if (ConversationItem* c = list_->find(std::exchange(unsaved_draft_, QString())))
        list_->save(c);
}

void MessageComposer::onShown() {
    pending_text_.clear();
    setContextFull(false);
    measure_key_.clear();
    emit draftChanged();
    emit draftMeasured();
    if (list_->current())
        measure_timer_.start();
}

void MessageComposer::remeasure() {
    measure_key_.clear();
    emit draftMeasured();
    measure_timer_.start();
}

// The figures shown belong to the current conversation; send() trusts only an exact match.
bool MessageComposer::measured() const { return list_->current() && measure_key_ == list_->current()->id; }

int MessageComposer::draftRoom() const {
    return measured() ? qMax(0, measure_.context_length - measure_.history_tokens - 1) : -1;
}

void MessageComposer::measureDraft() {
    if (ConversationItem* c = list_->current(); c && !c->draft.isEmpty())
        emit requestMeasure(c->id, c->draft, list_->settings()->systemPrompt());
}

void MessageComposer::onTurnMeasured(const QString& key, const QString& text, const TurnSize& size) {
    ConversationItem* c = list_->current();
    if (!c || key != c->id || text != c->draft)
        return;  // typed on since: a newer measurement is on its way
    measure_key_ = key;
    measure_text_ = text;
    measure_ = size;
    emit draftMeasured();
}

void MessageComposer::send(const QString& text) {
    if (text.trimmed().isEmpty())
        return;
    if (!list_->current())
        list_->newConversation();
    ConversationItem* c = list_->current();
    if (generation_->answering(c))
        return;
    if (draftCounted() && measure_text_ == text) {
        if (!measure_.fits_alone()) {
            emit errorOccurred(tr("This message is %1 tokens, more than the model's whole context of %2 "
                                  "tokens. Shorten it or split it; it stays in the composer.")
                                   .arg(measure_.alone_tokens).arg(measure_.context_length));
            return;
        }
        if (!measure_.fits()) {
            pending_text_ = text;  // stays in the composer until it is sent somewhere
            setContextFull(true);
            return;
        }
    }
    if (c->draft == text) {
        list_->setDraft(c, QString());
        emit draftChanged();
    }
    generation_->start(c, text);
}

void MessageComposer::onRefused(ConversationItem* c, const QString& question, const Status& status) {
    returnToDraft(c, question);
    if (status.code == ErrorCode::ContextFull && c->remembered_turns() > 0) {
        pending_text_ = question;
        if (drop_oldest_when_full_ && c == list_->current()) {
            dropOldestTurnsAndContinue();
            return;
        }
        setContextFull(c == list_->current());
    } else if (status.code == ErrorCode::ContextFull) {
        emit errorOccurred(tr("This message is too long for the model: %1. It is back in the composer; "
                              "shorten it or split it.").arg(QString::fromStdString(status.message)));
    } else {
        emit errorOccurred(status.message.empty() ? tr("The answer failed.")
                                                  : QString::fromStdString(status.message));
    }
}

void MessageComposer::onContextFilled(ConversationItem* c) {
    if (drop_oldest_when_full_ && c == list_->current())
        dropOldestTurnsAndContinue();  // room for the next message; this answer stays as it is
    else
        setContextFull(c == list_->current());
}

void MessageComposer::returnToDraft(ConversationItem* c, const QString& text) {
    if (c->draft.trimmed().isEmpty())
        list_->setDraft(c, text);
    else if (!c->draft.contains(text))
        list_->setDraft(c, text + "\n\n" + c->draft);
    if (c == list_->current())
        emit draftChanged();
}

void MessageComposer::dropOldestTurnsAndContinue() {
    ConversationItem* c = list_->current();
    setContextFull(false);
    if (!c || generation_->answering(c))
        return;
    if (!generation_->dropOldestTurns(c)) {
        pending_text_.clear();
        emit errorOccurred(tr("This message alone is longer than the model's context. It is in the "
                              "composer; shorten it."));
        return;
    }
    const QString pending = std::exchange(pending_text_, QString());
    if (pending.isEmpty())
        return;
    if (c->draft == pending) {
        list_->setDraft(c, QString());
        emit draftChanged();
    }
    generation_->start(c, pending);
}

void MessageComposer::continueInNewConversation() {
    const QString text = std::exchange(pending_text_, QString());
    setContextFull(false);
    if (ConversationItem* old = list_->current(); old && !text.isEmpty() && old->draft == text) {
        list_->setDraft(old, QString());
        list_->save(old);
    }
    list_->newConversation();
    if (text.isEmpty())
        return;
    list_->setDraft(list_->current(), text);
    emit draftChanged();
    send(text);
}

void MessageComposer::dismissContextFull() {
    pending_text_.clear();  // the message itself stays in the composer
    setContextFull(false);
}

void MessageComposer::setContextFull(bool on) {
    if (context_full_ == on)
        return;
    context_full_ = on;
    emit contextFullChanged();
}
