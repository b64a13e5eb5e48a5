// The sidebar's list, newest first: owns every Conversation (stable addresses, so the message
// view can point at the current one). Each conversation's engine figures live here and nowhere
// else on the GUI thread: the sidebar, the occupancy bar and the figures panel all read them.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>
#include <memory>
#include <vector>

#include "conversation.h"

class ConversationListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ChatController")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
public:
    // AnsweringRole: its last message is an answer still streaming (several conversations may be).
    enum Roles { IdRole = Qt::UserRole + 1, TitleRole, MessageCountRole, CachedTokensRole, AnsweringRole };

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Conversation* at(int row) const;
    Conversation* find(const QString& id) const;
    int rowOf(const QString& id) const;
    // New conversations go to the top, as in every chat app.
    Conversation* prepend(Conversation conversation);
    Conversation* append(Conversation conversation);  // loading saved ones, newest first
    Conversation* insert(int row, std::unique_ptr<Conversation> conversation);
    std::unique_ptr<Conversation> take(int row);
    void setStats(Conversation* conversation, const llamadesk::ConversationStats& stats);
    // Tell views that a conversation's title, messages or cached tokens changed.
    void touched(const Conversation* conversation);

signals:
    void countChanged();

private:
    std::vector<std::unique_ptr<Conversation>> conversations_;
};
