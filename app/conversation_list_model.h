// The sidebar's list: owns every Conversation (stable addresses, so the message view can point
// at the current one).
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
    enum Roles { IdRole = Qt::UserRole + 1, TitleRole, MessageCountRole, CachedTokensRole };

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    Conversation* at(int row) const;
    Conversation* find(const QString& id) const;
    int rowOf(const QString& id) const;
    Conversation* append(Conversation conversation);
    void remove(int row);
    // Tell views that a conversation's title, messages or cached tokens changed.
    void touched(const Conversation* conversation);

signals:
    void countChanged();

private:
    std::vector<std::unique_ptr<Conversation>> conversations_;
};
