// The sidebar's list as searched: the conversations whose title or messages hold every word of the
// query (any case), each with its title and a line of its matching text, the words marked. An
// empty query keeps every conversation. Each conversation's text is folded to one case once and
// kept until it changes, so a keystroke over 1000 conversations scans, never re-folds.
#pragma once

#include <QHash>
#include <QSortFilterProxyModel>
#include <QtQml/qqmlregistration.h>

#include "conversations/conversation_list_model.h"

class ConversationSearch : public QSortFilterProxyModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by AppContext")
    Q_PROPERTY(QString query READ query WRITE setQuery NOTIFY queryChanged)
    // The marked words' colour (StyledText: the sidebar's labels elide).
    Q_PROPERTY(QString markColor READ markColor WRITE setMarkColor NOTIFY queryChanged)
    Q_PROPERTY(int count READ count NOTIFY countChanged)
public:
    enum Roles { TitleMarkedRole = ConversationListModel::EndRole, SnippetRole };  // after the list's own

    explicit ConversationSearch(ConversationListModel* conversations, QObject* parent = nullptr);

    QString query() const { return query_; }
    void setQuery(const QString& query);
    QString markColor() const { return mark_color_; }
    void setMarkColor(const QString& color);
    int count() const { return rowCount(); }

    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    // A row here as a ConversationListModel row, and back (-1 when filtered out).
    Q_INVOKABLE int sourceRow(int row) const;
    Q_INVOKABLE int rowOfSource(int sourceRow) const;

signals:
    void queryChanged();
    void countChanged();

protected:
    bool filterAcceptsRow(int sourceRow, const QModelIndex& sourceParent) const override;

private:
    struct Folded {
        QString title;
        QStringList messages;
    };
    const Folded& folded(const ConversationItem* c) const;
    // text as StyledText, HTML-escaped, with every word of the query marked.
    QString marked(const QString& text) const;
    // The first message holding a word, as one line around the first match; empty: none does.
    QString snippet(const ConversationItem* c) const;

    ConversationListModel* conversations_;
    QString query_;
    QStringList words_;  // the query's words, case-folded
    QString mark_color_ = QStringLiteral("#ffd24d");
    mutable QHash<const ConversationItem*, Folded> folded_;
};
