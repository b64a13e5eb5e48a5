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
    Message question, answer;
    question.text = text;
    answer.role = Message::Role::Assistant;
    answer.streaming = true;
    question.time = answer.time = now;
    list_->messages()->append(c, question);
    list_->messages()->append(c, answer);
    beginStreaming(c, int(c->messages.size()) - 1, title_before, QString());
    emit requestGenerate(c->id, text, list_->settings()->generateParams());
}

void Generation::beginStreaming(ConversationItem* c, int row, const QString& titleBefore,
                                const QString& answerBefore) {
    Stream& stream = streams_[c->id];
    stream = Stream{row, answerBefore, titleBefore, {}, 0, -1, 0};
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
            if (stream.version_row >= 0) {
                // It was asked again in place of a version: that version comes back, and the engine
                // is given its history.
                list_->messages()->showVersion(c, stream.version_row, stream.version_before);
                list_->messages()->dropLastVersion(c, stream.version_row);
                list_->restore(c);
            } else {
                list_->messages()->truncate(c, row - 1);
            }
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
    if (ConversationItem* c = idle())
        regenerateAt(int(c->messages.size()) - 1);
}

void Generation::regenerateAt(int messageRow) {
    ConversationItem* c = idle();
    if (!c || messageRow < 1 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::Assistant || c->messages[messageRow - 1].forgotten)
        return;
    askAgain(c, messageRow - 1, c->messages[messageRow - 1].text, messageRow);
}

void Generation::askAgain(ConversationItem* c, int row, QString question, int versionRow) {
    const int shown_before = c->messages[versionRow].version;
    const Versions replaced = keep_as_version(c->messages, versionRow);
    const Versions asked{c->messages[row].other_versions, c->messages[row].version};
    const int turn = c->turns_before(row);
    list_->messages()->truncate(c, row);
    emit requestTruncate(c->id, turn);  // the cache is cut back, not rebuilt
    start(c, question);
    Stream& stream = streams_[c->id];
    stream.version_row = versionRow;
    stream.version_before = shown_before;  // where keep_as_version() put what it replaced
    list_->messages()->setVersions(c, row, versionRow == row ? replaced : asked);
    if (versionRow != row)
        list_->messages()->setVersions(c, versionRow, replaced);
    list_->save(c);
}

void Generation::showVersion(int messageRow, int version) {
    ConversationItem* c = idle();
    if (!c || !list_->messages()->showVersion(c, messageRow, version))
        return;
    list_->restore(c);  // the engine's history follows the version shown
    list_->save(c);
    emit historyCut(c);
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

void Generation::editAndResend(int messageRow, const QString& text) {
    ConversationItem* c = idle();
    if (!c || messageRow < 0 || messageRow >= c->messages.size() ||
        c->messages[messageRow].role != Message::Role::User || text.trimmed().isEmpty())
        return;
    askAgain(c, messageRow, text, messageRow);
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
