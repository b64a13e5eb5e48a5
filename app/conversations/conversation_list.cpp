#include "conversations/conversation_list.h"

#include <QUuid>
#include <algorithm>
#include <utility>

using namespace llamadesk;

namespace {

const QString kUntitled = QStringLiteral("New conversation");

QString title_from(const QString& text) {
    const QString line = text.simplified();
    return line.size() <= 40 ? line : line.left(39) + QChar(0x2026);
}

}  // namespace

ConversationList::ConversationList(const QString& dataDir, QSettings* settings, QObject* parent)
    : QObject(parent),
      store_(dataDir),
      journal_(dataDir.isEmpty() ? QString() : dataDir + "/drafts.journal"),
      settings_(settings),
      presets_(settings) {
    undo_timer_.setSingleShot(true);
    undo_timer_.setInterval(kUndoMs);
    connect(&undo_timer_, &QTimer::timeout, this, &ConversationList::commitDelete);
}

ConversationList::~ConversationList() = default;

int ConversationList::currentIndex() const { return current() ? model_.rowOf(current()->id) : -1; }

QString ConversationList::currentId() const { return current() ? current()->id : QString(); }

QString ConversationList::currentTitle() const { return current() ? current()->title : QString(); }

ConversationItem* ConversationList::find(const QString& id) const {
    if (ConversationItem* c = model_.find(id))
        return c;
    return deleted_ && deleted_->conversation->id == id ? deleted_->conversation.get() : nullptr;
}

void ConversationList::loadSaved() {
    QStringList errors;
    QList<ConversationRecord> saved = store_.loadAll(&errors);
    std::stable_partition(saved.begin(), saved.end(), [](const ConversationRecord& r) { return r.pinned; });
    for (ConversationRecord& record : saved) {
        settings_.adopt(record.id);  // one saved before conversations kept their own settings keeps today's
        restore(model_.append(ConversationItem(std::move(record))));
    }
    // Drafts typed after their conversation's last save (the app was killed): back, and saved.
    QHash<QString, QString> typed = journal_.recover();
    for (auto it = typed.begin(); it != typed.end();) {
        ConversationItem* c = model_.find(it.key());
        if (!c || c->draft == it.value()) {
            it = typed.erase(it);
            continue;
        }
        c->draft = it.value();
        save(c);
        ++it;
    }
    journal_.restart(typed);
    if (!errors.isEmpty())
        emit errorOccurred((errors.size() == 1 ? tr("A saved conversation could not be read: ")
                                               : tr("%1 saved conversations could not be read: ").arg(errors.size())) +
                           errors.join("; ") + tr(". Nothing was deleted."));
    if (model_.rowCount() == 0)
        newConversation();
    else
        show(model_.at(0));
}

void ConversationList::restore(const ConversationItem* c) {
    emit requestRestore(c->id, c->turns(), settings_.systemPromptOf(c->id), c->format, conversation_date(*c));
}

void ConversationList::restoreAll() {
    for (int row = 0; row < model_.rowCount(); ++row)
        restore(model_.at(row));
    if (deleted_)  // Undo may still bring it back
        restore(deleted_->conversation.get());
}

void ConversationList::onModelLoaded(const QString&, const QString&, const ModelInfo& info) {
    model_defaults_ = {QString::fromStdString(info.name), info.chat_format,
                       QString::fromStdString(info.chat_format_reason), !info.chat_format_guessed,
                       info.context_length};
    // Conversations not used yet take the new model's format.
    for (int row = 0; row < model_.rowCount(); ++row) {
        ConversationItem* c = model_.at(row);
        if (c->messages.isEmpty() && c->format != info.chat_format) {
            c->format = info.chat_format;
            emit requestFormat(c->id, c->format, conversation_date(*c));
        }
    }
    emit modelChanged();
    emit currentChanged();
}

void ConversationList::onStatsChanged(const QString& key, const ConversationStats& conversation, const PoolStats&) {
    ConversationItem* c = key.isEmpty() ? nullptr : find(key);
    if (!c)
        return;
    const bool note_changed = c->stats.format_note != conversation.format_note;
    model_.setStats(c, conversation);
    // The model loaded cannot write this conversation's format: the engine gave it the model's own
    // (its text stays), which the conversation keeps; ChatFormatChoice::formatNote says so.
    if (!conversation.format_note.empty() && conversation.format != c->format) {
        c->format = conversation.format;
        save(c);
        emit currentChanged();
        emit formatChanged(c);
    } else if (note_changed && c == current()) {
        emit currentChanged();  // the note went with the model it named
    }
}

void ConversationList::show(ConversationItem* conversation) {
    messages_.show(conversation);
    settings_.setConversation(conversation ? conversation->id : QString());
    emit currentChanged();
    emit shown();
    if (conversation)
        emit requestPublish(conversation->id);
}

ConversationItem* ConversationList::createConversation() {
    ConversationItem c;
    c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    c.title = kUntitled;
    c.created = QDateTime::currentDateTimeUtc();
    c.format = model_defaults_.format;
    c.stats.context_length = model_defaults_.context_length;
    settings_.adopt(c.id);
    ConversationItem* added = model_.prepend(std::move(c));
    if (const std::optional<Preset> preset = presets_.find(presets_.forNewConversations())) {
        settings_.assign(added->id, preset->system_prompt, preset->sampling);
        added->format = preset->format;
    }
    emit requestFormat(added->id, added->format, conversation_date(*added));
    return added;
}

void ConversationList::setDraft(ConversationItem* c, const QString& text) {
    journal_.record(c->id, c->draft, text);
    c->draft = text;
}

void ConversationList::save(ConversationItem* c) {
    emit saveRequested(*c);
    model_.touched(c);
}

void ConversationList::nameAfter(ConversationItem* c, const QString& text) {
    if (c->title == kUntitled || c->title.isEmpty())
        setTitle(c, title_from(text));
}

void ConversationList::setTitle(ConversationItem* c, const QString& title) {
    if (c->title == title)
        return;
    c->title = title;
    model_.touched(c);
    emit currentChanged();
}

void ConversationList::setFormat(ConversationItem* c, ChatFormat format) {
    if (c->format == format)
        return;
    c->format = format;
    c->stats.format_note.clear();  // the engine's goes with the format it explained
    emit requestFormat(c->id, format, conversation_date(*c));
    save(c);
    emit currentChanged();
    emit formatChanged(c);
}

void ConversationList::newConversation() {
    if (current() && current()->messages.isEmpty())
        return show(current());  // reuse the empty one instead of piling up blanks
    show(createConversation());
}

void ConversationList::branchFromMessage(int row) {
    if (ConversationItem* c = current(); c && row >= 0 && row < c->messages.size())
        branch(c, row + 1);
}

ConversationItem* ConversationList::branch(ConversationItem* source, int keep) {
    ConversationItem b;
    b.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    b.title = tr("%1 (branch)").arg(source->title);
    b.created = source->created;  // the same day: Llama 3.1's header, and so the shared blocks, stay the same
    b.messages = source->messages.mid(0, keep);
    b.format = source->format;
    b.model = source->model;
    b.stats.context_length = source->stats.context_length;
    settings_.assign(b.id, settings_.systemPromptOf(source->id), settings_.samplingOf(source->id));
    ConversationItem* added = model_.prepend(std::move(b));
    save(added);
    restore(added);
    show(added);
    return added;
}

QString ConversationList::savePreset(const QString& name) {
    const ConversationItem* c = current();
    if (!c) return tr("no conversation is shown");
    return presets_.put({name.trimmed(), settings_.systemPromptOf(c->id), c->format, settings_.samplingOf(c->id)});
}

void ConversationList::applyPreset(const QString& name) {
    ConversationItem* c = current();
    const std::optional<Preset> preset = presets_.find(name);
    if (!c || !preset) return;
    settings_.assign(c->id, preset->system_prompt, preset->sampling);
    settings_.setConversation(c->id);  // the settings shown follow
    setFormat(c, preset->format);
    save(c);
}

void ConversationList::selectConversation(int row) {
    if (ConversationItem* c = model_.at(row); c && c != current())
        show(c);
}

void ConversationList::addConversation(ConversationRecord conversation) {
    ConversationItem* added = model_.prepend(ConversationItem(std::move(conversation)));
    save(added);
    restore(added);
    emit currentChanged();  // the current row moved down
}

void ConversationList::setPinned(int row, bool pinned) {
    ConversationItem* c = model_.at(row);
    if (!c || c->pinned == pinned)
        return;
    std::unique_ptr<ConversationItem> moving = model_.take(row);
    moving->pinned = pinned;
    ConversationItem* moved = model_.insert(pinned ? 0 : model_.pinnedCount(), std::move(moving));
    save(moved);
    emit currentChanged();  // the current row may have moved
}

void ConversationList::setTags(int row, const QString& commaSeparated) {
    ConversationItem* c = model_.at(row);
    if (!c)
        return;
    QStringList tags;
    for (const QString& tag : commaSeparated.split(','))
        if (const QString t = tag.simplified(); !t.isEmpty() && !tags.contains(t, Qt::CaseInsensitive))
            tags << t;
    if (tags == c->tags)
        return;
    c->tags = tags;
    save(c);
}

void ConversationList::renameConversation(int row, const QString& title) {
    ConversationItem* c = model_.at(row);
    if (!c || title.trimmed().isEmpty())
        return;
    c->title = title.trimmed();
    save(c);
    emit currentChanged();
}

void ConversationList::deleteConversation(int row) {
    ConversationItem* c = model_.at(row);
    if (!c)
        return;
    commitDelete();  // one undo at a time
    const bool was_current = c == current();
    emit removing(c->id);
    if (was_current)
        messages_.show(nullptr);
    deleted_ = std::make_unique<Deleted>(Deleted{model_.take(row), row});
    undo_timer_.start();
    emit undoDeleteChanged();
    if (!was_current)
        emit currentChanged();  // the current row may have moved
    else if (model_.rowCount() == 0)
        newConversation();
    else
        show(model_.at(qMin(row, model_.rowCount() - 1)));
}

void ConversationList::undoDelete() {
    if (!deleted_)
        return;
    undo_timer_.stop();
    const std::unique_ptr<Deleted> d = std::move(deleted_);
    // The blank conversation that stood in for the deleted one goes again.
    if (ConversationItem* blank = current(); blank && blank->messages.isEmpty() && blank->draft.isEmpty()) {
        const QString id = blank->id;
        messages_.show(nullptr);
        model_.take(model_.rowOf(id));
        emit requestDelete(id);
    }
    ConversationItem* c = model_.insert(d->row, std::move(d->conversation));
    emit undoDeleteChanged();
    show(c);
}

void ConversationList::commitDelete() {
    if (!deleted_)
        return;
    undo_timer_.stop();
    const QString id = deleted_->conversation->id;
    deleted_.reset();
    journal_.forget(id);
    emit removeRequested(id);
    settings_.forget(id);
    emit requestDelete(id);
    emit undoDeleteChanged();
}
