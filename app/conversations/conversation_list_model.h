// The sidebar's list, newest first: owns every ConversationItem (stable addresses, so the message
// view can point at the current one). Each conversation's engine figures live here and nowhere
// else on the GUI thread: the sidebar, the occupancy bar and the figures panel all read them.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <vector>

#include "conversations/conversation.h"

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ConversationList")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    // AnsweringRole: its last message is an answer still streaming (several conversations may be).
    // EndRole: where ConversationSearch's own roles begin.
    enum Roles {
        IdRole = Qt::UserRole + 1, TitleRole, MessageCountRole, CachedTokensRole, AnsweringRole, PinnedRole,
        TagsRole,  // its tags, joined with ", "
        EndRole
    };

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    ConversationItem* at(int row) const;
    ConversationItem* find(const QString& id) const;
    int rowOf(const QString& id) const;
    // New conversations go to the top, as in every chat app.
    // At the top of its kind: a pinned one above all, another below the pinned ones.
    ConversationItem* prepend(ConversationItem conversation);
    int pinnedCount() const;
    ConversationItem* append(ConversationItem conversation);  // loading saved ones, newest first
    ConversationItem* insert(int row, std::unique_ptr<ConversationItem> conversation);
    std::unique_ptr<ConversationItem> take(int row);
    void setStats(ConversationItem* conversation, const llamadesk::ConversationStats& stats);
    // Tell views that a conversation's title, messages or cached tokens changed.
    void touched(const ConversationItem* conversation);

signals:
    void countChanged();

private:
    std::vector<std::unique_ptr<ConversationItem>> conversations_;
};
