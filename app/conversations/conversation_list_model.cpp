#include "conversations/conversation_list_model.h"

#include <algorithm>

int ConversationListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() ? 0 : int(conversations_.size());
}

QVariant ConversationListModel::data(const QModelIndex& index, int role) const {
    const ConversationItem* c = at(index.row());
    if (!c)
        return {};
    switch (role) {
    case IdRole: return c->id;
    case Qt::DisplayRole:
    case TitleRole: return c->title;
    case MessageCountRole: return int(c->messages.size());
    case CachedTokensRole: return c->stats.cached_tokens;
    case AnsweringRole: return !c->messages.isEmpty() && c->messages.last().streaming;
    case PinnedRole: return c->pinned;
    case TagsRole: return c->tags.join(QStringLiteral(", "));
    default: return {};
    }
}

QHash<int, QByteArray> ConversationListModel::roleNames() const {
    return {{IdRole, "conversationId"}, {TitleRole, "title"}, {MessageCountRole, "messageCount"},
            {CachedTokensRole, "cachedTokens"}, {AnsweringRole, "answering"}, {PinnedRole, "pinned"},
            {TagsRole, "tags"}};
}

ConversationItem* ConversationListModel::at(int row) const {
    return row >= 0 && row < rowCount() ? conversations_[size_t(row)].get() : nullptr;
}

int ConversationListModel::rowOf(const QString& id) const {
    for (size_t i = 0; i < conversations_.size(); ++i)
        if (conversations_[i]->id == id)
            return int(i);
    return -1;
}

ConversationItem* ConversationListModel::find(const QString& id) const { return at(rowOf(id)); }

ConversationItem* ConversationListModel::prepend(ConversationItem conversation) {
    const int row = conversation.pinned ? 0 : pinnedCount();
    return insert(row, std::make_unique<ConversationItem>(std::move(conversation)));
}

int ConversationListModel::pinnedCount() const {
    return int(std::count_if(conversations_.begin(), conversations_.end(), [](const auto& c) { return c->pinned; }));
}

ConversationItem* ConversationListModel::append(ConversationItem conversation) {
    return insert(rowCount(), std::make_unique<ConversationItem>(std::move(conversation)));
}

ConversationItem* ConversationListModel::insert(int row, std::unique_ptr<ConversationItem> conversation) {
    row = std::clamp(row, 0, rowCount());
    beginInsertRows({}, row, row);
    ConversationItem* added = conversation.get();
    conversations_.insert(conversations_.begin() + row, std::move(conversation));
    endInsertRows();
    emit countChanged();
    return added;
}

std::unique_ptr<ConversationItem> ConversationListModel::take(int row) {
    if (!at(row))
        return nullptr;
    beginRemoveRows({}, row, row);
    std::unique_ptr<ConversationItem> taken = std::move(conversations_[size_t(row)]);
    conversations_.erase(conversations_.begin() + row);
    endRemoveRows();
    emit countChanged();
    return taken;
}

void ConversationListModel::setStats(ConversationItem* conversation, const llamadesk::ConversationStats& stats) {
    conversation->stats = stats;
    touched(conversation);
}

void ConversationListModel::touched(const ConversationItem* conversation) {
    const int row = conversation ? rowOf(conversation->id) : -1;
    if (row >= 0)
        emit dataChanged(index(row), index(row));
}
