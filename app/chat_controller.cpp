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

ChatController::ChatController(const QString& dataDir, QSettings* settings, CancelFlags* cancel,
                               QObject* parent)
    : QObject(parent), store_(dataDir), settings_(settings), cancel_(cancel) {
    measure_timer_.setSingleShot(true);
    measure_timer_.setInterval(kMeasureDelayMs);
    connect(&measure_timer_, &QTimer::timeout, this, &ChatController::measureDraft);
    draft_save_timer_.setSingleShot(true);
    draft_save_timer_.setInterval(kStreamSaveMs);
    connect(&draft_save_timer_, &QTimer::timeout, this, [this] {
        if (current())
            save(current());
    });
    undo_timer_.setSingleShot(true);
    undo_timer_.setInterval(kUndoMs);
    connect(&undo_timer_, &QTimer::timeout, this, &ChatController::commitDelete);
}

ChatController::~ChatController() = default;

int ChatController::currentIndex() const { return current() ? conversations_.rowOf(current()->id) : -1; }

QString ChatController::currentId() const { return current() ? current()->id : QString(); }

QString ChatController::currentTitle() const { return current() ? current()->title : QString(); }

ConversationItem* ChatController::find(const QString& key) const {
    if (ConversationItem* c = conversations_.find(key))
        return c;
    return deleted_ && deleted_->conversation->id == key ? deleted_->conversation.get() : nullptr;
}

void ChatController::loadSaved() {
    QStringList errors;
    for (ConversationRecord& c : store_.loadAll(&errors)) {
        settings_.adopt(c.id);  // one saved before conversations kept their own settings keeps today's
        ConversationItem* added = conversations_.append(ConversationItem(std::move(c)));
        emit requestRestore(added->id, added->turns(), settings_.systemPromptOf(added->id), added->format,
                            conversation_date(*added));
    }
    if (!errors.isEmpty())
        emit errorOccurred((errors.size() == 1 ? tr("A saved conversation could not be read: ")
                                               : tr("%1 saved conversations could not be read: ").arg(errors.size())) +
                           errors.join("; ") + tr(". Nothing was deleted."));
    if (conversations_.rowCount() == 0)
        newConversation();
    else
        show(conversations_.at(0));
}

void ChatController::restoreAll() {
    for (int row = 0; row < conversations_.rowCount(); ++row) {
        const ConversationItem* c = conversations_.at(row);
        emit requestRestore(c->id, c->turns(), settings_.systemPromptOf(c->id), c->format, conversation_date(*c));
    }
    if (deleted_) {  // Undo may still bring it back
        const ConversationItem* c = deleted_->conversation.get();
        emit requestRestore(c->id, c->turns(), settings_.systemPromptOf(c->id), c->format, conversation_date(*c));
    }
}

void ChatController::shutdown() {
    commitDelete();
    if (draft_save_timer_.isActive() && current())
        save(current());
    // Answers whose end never arrived are saved as interrupted.
    for (auto it = streams_.cbegin(); it != streams_.cend(); ++it)
        if (ConversationItem* c = find(it.key()))
            save(c);
}

void ChatController::show(ConversationItem* conversation) {
    if (draft_save_timer_.isActive() && current() && current() != conversation) {
        draft_save_timer_.stop();
        save(current());
    }
    messages_.show(conversation);
    settings_.setConversation(conversation ? conversation->id : QString());
    pending_text_.clear();
    setContextFull(false);
    measure_key_.clear();
    emit currentChanged();
    emit generatingChanged();
    emit draftChanged();
    emit draftMeasured();
    if (conversation) {
        emit requestPublish(conversation->id);
        measure_timer_.start();
    }
}

ConversationItem* ChatController::createConversation() {
    ConversationItem c;
    c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    c.title = kUntitled;
    c.created = QDateTime::currentDateTimeUtc();
    c.format = model_format_;
    c.stats.context_length = context_length_;
    settings_.adopt(c.id);
    ConversationItem* added = conversations_.prepend(std::move(c));
    emit requestFormat(added->id, added->format, conversation_date(*added));
    return added;
}

void ChatController::save(ConversationItem* c) {
    emit saveRequested(*c);  // a copy: the saver's thread never sees the live object
    conversations_.touched(c);
}

QString ChatController::draft() const { return current() ? current()->draft : QString(); }

void ChatController::setDraft(const QString& text) {
    ConversationItem* c = current();
    if (!c || c->draft == text)
        return;
    c->draft = text;
    emit draftChanged();
    emit draftMeasured();  // the count shown is now of an older text
    measure_timer_.start();
    draft_save_timer_.start();
}

// The figures shown belong to the current conversation; send() trusts only an exact match.
bool ChatController::measured() const { return current() && measure_key_ == current()->id; }

int ChatController::draftRoom() const {
    return measured() ? qMax(0, measure_.context_length - measure_.history_tokens - 1) : -1;
}

void ChatController::measureDraft() {
    if (ConversationItem* c = current(); c && !c->draft.isEmpty())
        emit requestMeasure(c->id, c->draft, settings_.systemPrompt());
}

void ChatController::onTurnMeasured(const QString& key, const QString& text, const TurnSize& size) {
    ConversationItem* c = current();
    if (!c || key != c->id || text != c->draft)
        return;  // typed on since: a newer measurement is on its way
    measure_key_ = key;
    measure_text_ = text;
    measure_ = size;
    emit draftMeasured();
}

void ChatController::send(const QString& text) {
    if (text.trimmed().isEmpty())
        return;
    if (!current())
        newConversation();
    ConversationItem* c = current();
    if (streaming(c))
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
        c->draft.clear();
        emit draftChanged();
    }
    startGeneration(c, text);
}

void ChatController::startGeneration(ConversationItem* c, const QString& text) {
    const QString title_before = c->title;
    if (c->title == kUntitled || c->title.isEmpty())
        c->title = title_from(text);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    messages_.append(c, {Message::Role::User, text, false, {}, false, now});
    messages_.append(c, {Message::Role::Assistant, {}, true, {}, false, now});
    beginStreaming(c, int(c->messages.size()) - 1, title_before, QString());
    emit requestGenerate(c->id, text, settings_.generateParams());
}

void ChatController::beginStreaming(ConversationItem* c, int row, const QString& titleBefore,
                                    const QString& answerBefore) {
    Stream& stream = streams_[c->id];
    stream = Stream{row, answerBefore, titleBefore, {}, 0};
    stream.since_save.start();
    save(c);  // the question survives a kill during the answer
    // No answer of this conversation is in flight, so the worker is not reading its flag now.
    cancel_->of(c->id)->store(false);
    if (c == current())
        emit generatingChanged();
    emit currentChanged();  // the title may have changed
}

void ChatController::stop() {
    if (streaming(current()))
        cancel_->of(current()->id)->store(true);
}

void ChatController::onTokenGenerated(const QString& key, const QString& piece, const GenerationStats& stats) {
    ConversationItem* c = find(key);
    if (!c)
        return;
    conversations_.setStats(c, stats.conversation);
    const auto stream = streams_.find(key);
    if (stream == streams_.end())
        return;
    messages_.appendText(c, stream->row, piece);
    if (stream->since_save.elapsed() >= kStreamSaveMs ||
        stats.generated_tokens - stream->tokens_at_save >= kStreamSaveTokens) {
        save(c);
        stream->since_save.restart();
        stream->tokens_at_save = stats.generated_tokens;
    }
}

void ChatController::onGenerationFinished(const QString& key, const GenerationResult& result, int nTurns) {
    ConversationItem* c = find(key);
    const Stream stream = streams_.take(key);
    const int row = stream.row;
    const QString& before = stream.answer_before;
    if (c && row >= 1 && row < c->messages.size()) {
        const QString message = QString::fromStdString(result.status.message);
        if (nTurns < c->remembered_turns()) {
            // The engine did not keep this turn: take the question back out so both histories agree.
            const QString question = c->messages[row - 1].text;
            messages_.truncate(c, row - 1);
            c->title = stream.title_before;
            refused(c, question, result.status);
        } else {
            const bool nothing_new = !result.status.ok() && result.tokens.empty() && !before.isEmpty();
            // A continuation that could not start leaves the answer as it was.
            const QString reason = nothing_new ? c->messages[row].stop_reason
                                               : QString::fromLatin1(stop_reason_name(result.stop_reason));
            messages_.finish(c, row, before + QString::fromStdString(result.text), reason);
            if (!nothing_new)
                c->model = model_name_;
            if (result.stop_reason == StopReason::ContextFull && drop_oldest_when_full_ && c == current())
                dropOldestTurnsAndContinue();  // room for the next message; this answer stays as it is
            else if (result.stop_reason == StopReason::ContextFull)
                setContextFull(c == current());
            else if (!result.status.ok())
                emit errorOccurred(message);
        }
        save(c);
    }
    if (c && c == current())
        emit generatingChanged();
    emit currentChanged();
    measure_key_.clear();  // the history changed
    emit draftMeasured();
    measure_timer_.start();
}

void ChatController::refused(ConversationItem* c, const QString& question, const Status& status) {
    returnToDraft(c, question);
    if (status.code == ErrorCode::ContextFull && c->remembered_turns() > 0) {
        pending_text_ = question;
        if (drop_oldest_when_full_ && c == current()) {
            dropOldestTurnsAndContinue();
            return;
        }
        setContextFull(c == current());
    } else if (status.code == ErrorCode::ContextFull) {
        emit errorOccurred(tr("This message is too long for the model: %1. It is back in the composer; "
                              "shorten it or split it.").arg(QString::fromStdString(status.message)));
    } else {
        emit errorOccurred(status.message.empty() ? tr("The answer failed.")
                                                  : QString::fromStdString(status.message));
    }
}

void ChatController::returnToDraft(ConversationItem* c, const QString& text) {
    if (c->draft.trimmed().isEmpty())
        c->draft = text;
    else if (!c->draft.contains(text))
        c->draft = text + "\n\n" + c->draft;
    if (c == current())
        emit draftChanged();
}

void ChatController::onStatsChanged(const QString& key, const ConversationStats& conversation,
                                    const PoolStats&) {
    if (ConversationItem* c = key.isEmpty() ? nullptr : find(key))
        conversations_.setStats(c, conversation);
}

void ChatController::onModelLoaded(const QString&, const QString&, const ModelInfo& info) {
    model_format_ = info.chat_format;
    model_name_ = QString::fromStdString(info.name);
    model_format_reason_ = QString::fromStdString(info.chat_format_reason);
    model_format_known_ = !info.chat_format_guessed;
    context_length_ = info.context_length;
    // Conversations not used yet take the new model's format.
    for (int row = 0; row < conversations_.rowCount(); ++row) {
        ConversationItem* c = conversations_.at(row);
        if (c->messages.isEmpty() && c->format != model_format_) {
            c->format = model_format_;
            emit requestFormat(c->id, c->format, conversation_date(*c));
        }
    }
    measure_key_.clear();
    emit currentChanged();
    emit draftMeasured();
    measure_timer_.start();
}

QString ChatController::chatFormat() const { return format_key(current() ? current()->format : model_format_); }

QVariantList ChatController::formats() {
    QVariantList list;
    for (const llamadesk::ChatFormatName& f : llamadesk::chat_formats())
        list.append(QVariantMap{{QStringLiteral("key"), QString::fromLatin1(f.key)},
                                {QStringLiteral("name"), QString::fromLatin1(f.name)}});
    return list;
}

void ChatController::setChatFormat(const QString& format) {
    ConversationItem* c = current();
    if (!c || streaming(c))
        return;
    const ChatFormat f = format_from_key(format, c->format);
    if (f == c->format)
        return;
    c->format = f;
    emit requestFormat(c->id, f, conversation_date(*c));
    save(c);
    measure_key_.clear();
    emit currentChanged();
    emit draftMeasured();
    measure_timer_.start();
}

void ChatController::newConversation() {
    if (current() && current()->messages.isEmpty())
        return show(current());  // reuse the empty one instead of piling up blanks
    show(createConversation());
}

void ChatController::continueInNewConversation() {
    const QString text = std::exchange(pending_text_, QString());
    setContextFull(false);
    if (ConversationItem* old = current(); old && !text.isEmpty() && old->draft == text) {
        old->draft.clear();
        save(old);
    }
    newConversation();
    if (text.isEmpty())
        return;
    current()->draft = text;
    emit draftChanged();
    send(text);
}

void ChatController::clearConversation() {
    ConversationItem* c = current();
    if (!c || streaming(c))
        return;
    messages_.truncate(c, 0);
    emit requestReset(c->id);
    save(c);
    setContextFull(false);
}

void ChatController::selectConversation(int row) {
    if (ConversationItem* c = conversations_.at(row); c && c != current())
        show(c);
}

void ChatController::addConversation(ConversationRecord conversation) {
    ConversationItem* added = conversations_.prepend(ConversationItem(std::move(conversation)));
    save(added);
    emit requestRestore(added->id, added->turns(), settings_.systemPromptOf(added->id), added->format,
                        conversation_date(*added));
    emit currentChanged();  // the current row moved down
}

void ChatController::renameConversation(int row, const QString& title) {
    ConversationItem* c = conversations_.at(row);
    if (!c || title.trimmed().isEmpty())
        return;
    c->title = title.trimmed();
    save(c);
    emit currentChanged();
}

void ChatController::deleteConversation(int row) {
    ConversationItem* c = conversations_.at(row);
    if (!c)
        return;
    commitDelete();  // one undo at a time
    const bool was_current = c == current();
    if (streaming(c))
        cancel_->of(c->id)->store(true);
    if (was_current)
        messages_.show(nullptr);
    deleted_ = std::make_unique<Deleted>(Deleted{conversations_.take(row), row});
    undo_timer_.start();
    emit undoDeleteChanged();
    if (!was_current)
        emit currentChanged();  // the current row may have moved
    else if (conversations_.rowCount() == 0)
        newConversation();
    else
        show(conversations_.at(qMin(row, conversations_.rowCount() - 1)));
}

void ChatController::undoDelete() {
    if (!deleted_)
        return;
    undo_timer_.stop();
    const std::unique_ptr<Deleted> d = std::move(deleted_);
    // The blank conversation that stood in for the deleted one goes again.
    if (ConversationItem* blank = current(); blank && blank->messages.isEmpty() && blank->draft.isEmpty()) {
        const QString id = blank->id;
        messages_.show(nullptr);
        conversations_.take(conversations_.rowOf(id));
        emit requestDelete(id);
    }
    ConversationItem* c = conversations_.insert(d->row, std::move(d->conversation));
    emit undoDeleteChanged();
    show(c);
}

void ChatController::commitDelete() {
    if (!deleted_)
        return;
    undo_timer_.stop();
    const QString id = deleted_->conversation->id;
    deleted_.reset();
    emit removeRequested(id);
    settings_.forget(id);
    emit requestDelete(id);
    emit undoDeleteChanged();
}

void ChatController::regenerate() {
    ConversationItem* c = current();
    const int n = c ? int(c->messages.size()) : 0;
    if (streaming(c) || n < 2 || c->messages[n - 1].role != Message::Role::Assistant ||
        c->messages[n - 2].forgotten)
        return;
    const QString question = c->messages[n - 2].text;
    const int turns = c->remembered_turns();
    messages_.truncate(c, n - 2);
    emit requestTruncate(c->id, turns - 1);  // the cache is cut back, not rebuilt
    startGeneration(c, question);
}

void ChatController::continueAnswer() {
    ConversationItem* c = current();
    if (!c || streaming(c) || c->messages.isEmpty() || !can_continue(c->messages.last()) ||
        c->messages.last().forgotten)
        return;
    const int row = int(c->messages.size()) - 1;
    messages_.setStreaming(c, row);
    beginStreaming(c, row, c->title, c->messages[row].text);
    emit requestContinue(c->id, settings_.generateParams());
}

void ChatController::editAndResend(int messageRow, const QString& text) {
    ConversationItem* c = current();
    if (!c || streaming(c) || messageRow < 0 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::User || text.trimmed().isEmpty())
        return;
    const int turn = c->turns_before(messageRow);
    messages_.truncate(c, messageRow);
    emit requestTruncate(c->id, turn);
    startGeneration(c, text);
}

void ChatController::deleteExchange(int messageRow) {
    ConversationItem* c = current();
    if (!c || streaming(c) || messageRow < 0 || messageRow >= c->messages.size())
        return;
    const int question = c->messages[messageRow].role == Message::Role::User ? messageRow : messageRow - 1;
    if (question < 0)
        return;
    const int n = question + 1 < c->messages.size() ? 2 : 1;
    const bool last = question + n == c->messages.size();
    const int turn = c->turns_before(question);
    messages_.remove(c, question, n);
    if (last)
        emit requestTruncate(c->id, turn);
    else
        emit requestRestore(c->id, c->turns(), settings_.systemPromptOf(c->id), c->format, conversation_date(*c));
    save(c);
    setContextFull(false);
    measure_key_.clear();  // the history changed
    measure_timer_.start();
}

void ChatController::dropOldestTurnsAndContinue() {
    ConversationItem* c = current();
    setContextFull(false);
    if (!c || streaming(c))
        return;
    const int turns = c->remembered_turns();
    if (turns == 0) {
        pending_text_.clear();
        emit errorOccurred(tr("This message alone is longer than the model's context. It is in the "
                              "composer; shorten it."));
        return;
    }
    // The oldest remembered half leaves the model's view; the window still shows it.
    const int drop = qMax(1, turns / 2);
    int users = 0, first = -1, end = 0;
    for (; end < c->messages.size(); ++end) {
        const Message& m = c->messages[end];
        if (m.forgotten)
            continue;
        if (first < 0)
            first = end;
        if (m.role == Message::Role::User && users++ == drop)
            break;
    }
    messages_.forget(c, first, end);
    emit requestDropOldest(c->id, drop, settings_.systemPrompt());
    save(c);
    const QString pending = std::exchange(pending_text_, QString());
    if (pending.isEmpty())
        return;
    if (c->draft == pending) {
        c->draft.clear();
        emit draftChanged();
    }
    startGeneration(c, pending);
}

void ChatController::dismissContextFull() {
    pending_text_.clear();  // the message itself stays in the composer
    setContextFull(false);
}

void ChatController::copyText(const QString& text) { QGuiApplication::clipboard()->setText(text); }

void ChatController::setContextFull(bool on) {
    if (context_full_ == on)
        return;
    context_full_ = on;
    emit contextFullChanged();
}
