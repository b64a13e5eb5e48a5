#include "conversations/generation.h"

using namespace llamadesk;

Generation::Generation(ConversationList* list, CancelFlags* cancel, QObject* parent)
    : QObject(parent), list_(list), cancel_(cancel) {
    connect(list_, &ConversationList::shown, this, &Generation::generatingChanged);
    connect(list_, &ConversationList::removing, this, [this](const QString& id) {
        if (streams_.contains(id))
            cancel_->of(id)->store(true);
    });
}

ConversationItem* Generation::idle() const {
    ConversationItem* c = list_->current();
    return answering(c) ? nullptr : c;
}

void Generation::shutdown() {
    for (auto it = streams_.cbegin(); it != streams_.cend(); ++it)
        if (ConversationItem* c = list_->find(it.key()))
            list_->save(c);
}

void Generation::start(ConversationItem* c, const QString& text) {
    const QString title_before = c->title;
    list_->nameAfter(c, text);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    list_->messages()->append(c, {Message::Role::User, text, false, {}, false, now});
    list_->messages()->append(c, {Message::Role::Assistant, {}, true, {}, false, now});
    beginStreaming(c, int(c->messages.size()) - 1, title_before, QString());
    emit requestGenerate(c->id, text, list_->settings()->generateParams());
}

void Generation::beginStreaming(ConversationItem* c, int row, const QString& titleBefore,
                                const QString& answerBefore) {
    Stream& stream = streams_[c->id];
    stream = Stream{row, answerBefore, titleBefore, {}, 0};
    stream.since_save.start();
    list_->save(c);  // the question survives a kill during the answer
    // No answer of this conversation is in flight, so the worker is not reading its flag now.
    cancel_->of(c->id)->store(false);
    if (c == list_->current())
        emit generatingChanged();
}

void Generation::stop() {
    if (answering(list_->current()))
        cancel_->of(list_->current()->id)->store(true);
}

void Generation::onTokenGenerated(const QString& key, const QString& piece, const GenerationStats& stats) {
    ConversationItem* c = list_->find(key);
    if (!c)
        return;
    list_->model()->setStats(c, stats.conversation);
    const auto stream = streams_.find(key);
    if (stream == streams_.end())
        return;
    list_->messages()->appendText(c, stream->row, piece);
    if (stream->since_save.elapsed() >= kStreamSaveMs ||
        stats.generated_tokens - stream->tokens_at_save >= kStreamSaveTokens) {
        list_->save(c);
        stream->since_save.restart();
        stream->tokens_at_save = stats.generated_tokens;
    }
}

void Generation::onGenerationFinished(const QString& key, const GenerationResult& result, int nTurns) {
    ConversationItem* c = list_->find(key);
    const Stream stream = streams_.take(key);
    const int row = stream.row;
    const QString& before = stream.answer_before;
    if (c && row >= 1 && row < c->messages.size()) {
        if (nTurns < c->remembered_turns()) {
            // The engine did not keep this turn: take the question back out so both histories agree.
            const QString question = c->messages[row - 1].text;
            list_->messages()->truncate(c, row - 1);
            list_->setTitle(c, stream.title_before);
            emit refused(c, question, result.status);
        } else {
            const bool nothing_new = !result.status.ok() && result.tokens.empty() && !before.isEmpty();
            // A continuation that could not start leaves the answer as it was.
            const AnswerEnd::Reason reason = nothing_new ? c->messages[row].stop_reason
                                                         : AnswerEnd::of(result.stop_reason);
            list_->messages()->finish(c, row, before + QString::fromStdString(result.text), reason);
            if (!nothing_new)
                c->model = list_->modelDefaults().name;
            if (result.stop_reason == StopReason::ContextFull)
                emit contextFilled(c);
            else if (!result.status.ok())
                emit errorOccurred(QString::fromStdString(result.status.message));
        }
        list_->save(c);
    }
    if (c && c == list_->current())
        emit generatingChanged();
    emit answerEnded(c);
}

bool Generation::dropOldestTurns(ConversationItem* c) {
    const int turns = c->remembered_turns();
    if (turns == 0)
        return false;
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
    list_->messages()->forget(c, first, end);
    emit requestDropOldest(c->id, drop, list_->settings()->systemPrompt());
    list_->save(c);
    return true;
}

void Generation::regenerate() {
    ConversationItem* c = idle();
    const int n = c ? int(c->messages.size()) : 0;
    if (n < 2 || c->messages[n - 1].role != Message::Role::Assistant || c->messages[n - 2].forgotten)
        return;
    const QString question = c->messages[n - 2].text;
    const int turns = c->remembered_turns();
    list_->messages()->truncate(c, n - 2);
    emit requestTruncate(c->id, turns - 1);  // the cache is cut back, not rebuilt
    start(c, question);
}

void Generation::continueAnswer() {
    ConversationItem* c = idle();
    if (!c || c->messages.isEmpty() || !can_continue(c->messages.last()) || c->messages.last().forgotten)
        return;
    const int row = int(c->messages.size()) - 1;
    list_->messages()->setStreaming(c, row);
    beginStreaming(c, row, c->title, c->messages[row].text);
    emit requestContinue(c->id, list_->settings()->generateParams());
}

void Generation::regenerateAt(int messageRow) {
    ConversationItem* c = idle();
    if (!c || messageRow < 1 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::Assistant ||
        c->messages[messageRow - 1].role != Message::Role::User)
        return;
    if (messageRow == c->messages.size() - 1)
        return regenerate();
    const QString question = c->messages[messageRow - 1].text;
    start(list_->branch(c, messageRow - 1), question);
}

void Generation::editAndResend(int messageRow, const QString& text) {
    ConversationItem* c = idle();
    if (!c || messageRow < 0 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::User || text.trimmed().isEmpty())
        return;
    // An earlier question: what came after it stays where it is, and the new one goes on in a branch.
    if (messageRow + 2 < c->messages.size())
        return start(list_->branch(c, messageRow), text);
    const int turn = c->turns_before(messageRow);
    list_->messages()->truncate(c, messageRow);
    emit requestTruncate(c->id, turn);
    start(c, text);
}

void Generation::deleteExchange(int messageRow) {
    ConversationItem* c = idle();
    if (!c || messageRow < 0 || messageRow >= c->messages.size())
        return;
    const int question = c->messages[messageRow].role == Message::Role::User ? messageRow : messageRow - 1;
    if (question < 0)
        return;
    const int n = question + 1 < c->messages.size() ? 2 : 1;
    const bool last = question + n == c->messages.size();
    const int turn = c->turns_before(question);
    list_->messages()->remove(c, question, n);
    if (last)
        emit requestTruncate(c->id, turn);
    else
        list_->restore(c);
    list_->save(c);
    emit historyCut(c);
}

void Generation::clearConversation() {
    ConversationItem* c = idle();
    if (!c)
        return;
    list_->messages()->truncate(c, 0);
    emit requestReset(c->id);
    list_->save(c);
    emit historyCut(c);
}
