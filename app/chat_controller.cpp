#include "chat_controller.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QUuid>
#include <utility>

using namespace llamadesk;

namespace {

const QString kUntitled = QStringLiteral("New conversation");

QString title_from(const QString& text) {
    const QString line = text.simplified();
    return line.size() <= 40 ? line : line.left(39) + QChar(0x2026);
}

}  // namespace

ChatController::ChatController(const QString& dataDir, QSettings* settings, std::atomic<bool>* cancel,
                               QObject* parent)
    : QObject(parent), store_(dataDir), settings_(settings), cancel_(cancel) {}

int ChatController::currentIndex() const { return current() ? conversations_.rowOf(current()->id) : -1; }

QString ChatController::currentId() const { return current() ? current()->id : QString(); }

void ChatController::loadSaved() {
    QStringList errors;
    for (Conversation& c : store_.loadAll(&errors)) {
        Conversation* added = conversations_.append(std::move(c));
        emit requestRestore(added->id, added->turns(), settings_.systemPromptOf(added->id));
    }
    for (const QString& e : errors)
        emit errorOccurred("A saved conversation could not be read: " + e);
    if (conversations_.rowCount() == 0)
        newConversation();
    else
        show(conversations_.at(conversations_.rowCount() - 1));
}

void ChatController::show(Conversation* conversation) {
    messages_.show(conversation);
    settings_.setConversation(conversation ? conversation->id : QString());
    pending_text_.clear();
    setContextFull(false);
    emit currentChanged();
    if (conversation) {
        emit requestStats(conversation->id);
        emit requestInspect(conversation->id);
    }
}

void ChatController::save(Conversation* c) {
    emit saveRequested(*c);  // a copy: the saver's thread never sees the live object
    conversations_.touched(c);
}

void ChatController::send(const QString& text) {
    if (generating_ || text.trimmed().isEmpty())
        return;
    if (!current())
        newConversation();
    startGeneration(current(), text);
}

void ChatController::startGeneration(Conversation* c, const QString& text) {
    if (c->title == kUntitled || c->title.isEmpty())
        c->title = title_from(text);
    messages_.append(c, {Message::Role::User, text, false, {}});
    messages_.append(c, {Message::Role::Assistant, {}, true, {}});
    generating_key_ = c->id;
    generating_row_ = int(c->messages.size()) - 1;
    save(c);  // the question survives a kill during the answer
    cancel_->store(false);  // no generation is in flight, so the worker is not reading it now
    setGenerating(true);
    emit requestGenerate(c->id, text, settings_.generateParams());
}

void ChatController::stop() {
    if (generating_)
        cancel_->store(true);
}

void ChatController::onTokenGenerated(const QString& key, const QString& piece, const GenerationStats&) {
    if (Conversation* c = conversations_.find(key); c && key == generating_key_)
        messages_.appendText(c, generating_row_, piece);
}

void ChatController::onGenerationFinished(const QString& key, const GenerationResult& result, int nTurns) {
    Conversation* c = conversations_.find(key);
    const int row = generating_row_;
    generating_key_.clear();
    generating_row_ = -1;
    if (c && row >= 1 && row < c->messages.size()) {
        const QString message = QString::fromStdString(result.status.message);
        if (nTurns < c->user_message_count()) {
            // The engine did not keep this turn: take the question back out so both histories agree.
            const QString question = c->messages[row - 1].text;
            messages_.truncate(c, row - 1);
            if (result.status.code == ErrorCode::ContextFull) {
                pending_text_ = question;
                setContextFull(true);
            } else {
                emit errorOccurred(message.isEmpty() ? QStringLiteral("The answer failed.") : message);
            }
        } else {
            messages_.finish(c, row, QString::fromStdString(result.text),
                             QString::fromLatin1(stop_reason_name(result.stop_reason)));
            if (result.stop_reason == StopReason::ContextFull)
                setContextFull(c == current());
            else if (!result.status.ok())
                emit errorOccurred(message);
        }
        c->cached_tokens = result.stats.conversation.cached_tokens;
        save(c);
    }
    setGenerating(false);
    if (c && c == current())
        emit requestInspect(key);
}

void ChatController::onStatsChanged(const QString& key, const ConversationStats& conversation,
                                    const PoolStats&) {
    if (Conversation* c = conversations_.find(key); c && c->cached_tokens != conversation.cached_tokens) {
        c->cached_tokens = conversation.cached_tokens;
        conversations_.touched(c);
    }
}

void ChatController::onModelLoaded() {
    // A new model rebuilds every cache lazily; refresh what the window shows.
    for (int row = 0; row < conversations_.rowCount(); ++row)
        emit requestStats(conversations_.at(row)->id);
    if (current())
        emit requestInspect(current()->id);
}

void ChatController::newConversation() {
    if (current() && current()->messages.isEmpty())
        return show(current());  // reuse the empty one instead of piling up blanks
    Conversation c;
    c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    c.title = kUntitled;
    c.created = QDateTime::currentDateTimeUtc();
    show(conversations_.append(std::move(c)));
}

void ChatController::clearConversation() {
    Conversation* c = current();
    if (!c || (generating_ && generating_key_ == c->id))
        return;
    messages_.truncate(c, 0);
    emit requestReset(c->id);
    save(c);
    setContextFull(false);
    emit requestInspect(c->id);
}

void ChatController::selectConversation(int row) {
    if (Conversation* c = conversations_.at(row); c && c != current())
        show(c);
}

void ChatController::renameConversation(int row, const QString& title) {
    Conversation* c = conversations_.at(row);
    if (!c || title.trimmed().isEmpty())
        return;
    c->title = title.trimmed();
    save(c);
}

void ChatController::deleteConversation(int row) {
    Conversation* c = conversations_.at(row);
    if (!c)
        return;
    if (generating_ && generating_key_ == c->id)
        cancel_->store(true);
    const QString id = c->id;
    const bool was_current = c == current();
    if (was_current)
        messages_.show(nullptr);
    conversations_.remove(row);
    emit removeRequested(id);
    settings_.forget(id);
    emit requestDelete(id);
    if (was_current) {
        if (conversations_.rowCount() == 0)
            newConversation();
        else
            show(conversations_.at(qMin(row, conversations_.rowCount() - 1)));
    } else {
        emit currentChanged();  // the current row may have moved
    }
}

void ChatController::regenerate() {
    Conversation* c = current();
    const int n = c ? int(c->messages.size()) : 0;
    if (generating_ || n < 2 || c->messages[n - 1].role != Message::Role::Assistant)
        return;
    const QString question = c->messages[n - 2].text;
    const int turns = c->user_message_count();
    messages_.truncate(c, n - 2);
    emit requestTruncate(c->id, turns - 1);  // the cache is cut back, not rebuilt
    startGeneration(c, question);
}

void ChatController::editAndResend(int messageRow, const QString& text) {
    Conversation* c = current();
    if (generating_ || !c || messageRow < 0 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::User || text.trimmed().isEmpty())
        return;
    int turn = 0;  // turns before this message
    for (int i = 0; i < messageRow; ++i)
        turn += c->messages[i].role == Message::Role::User ? 1 : 0;
    messages_.truncate(c, messageRow);
    emit requestTruncate(c->id, turn);
    startGeneration(c, text);
}

void ChatController::dropOldestTurnsAndContinue() {
    Conversation* c = current();
    setContextFull(false);
    if (!c || generating_)
        return;
    const int turns = c->user_message_count();
    if (turns == 0) {
        pending_text_.clear();
        emit errorOccurred("This message alone is longer than the model's context. Shorten it.");
        return;
    }
    const int drop = qMax(1, turns / 2);
    int users = 0, first_kept = 0;  // first message of turn `drop`
    for (; first_kept < c->messages.size(); ++first_kept) {
        if (c->messages[first_kept].role == Message::Role::User && users++ == drop)
            break;
    }
    messages_.dropFront(c, first_kept);
    emit requestDropOldest(c->id, drop, settings_.systemPrompt());
    save(c);
    const QString pending = std::exchange(pending_text_, QString());
    if (!pending.isEmpty())
        startGeneration(c, pending);
}

void ChatController::dismissContextFull() {
    pending_text_.clear();
    setContextFull(false);
}

void ChatController::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }

void ChatController::setGenerating(bool on) {
    if (generating_ == on)
        return;
    generating_ = on;
    emit generatingChanged();
}

void ChatController::setContextFull(bool on) {
    if (context_full_ == on)
        return;
    context_full_ = on;
    emit contextFullChanged();
}
