// The chat view's list: the messages of the current conversation. Every change to any
// conversation's messages goes through here, so views are told only when the one shown changes.
#pragma once

#include <QAbstractListModel>
#include <QtQml/qqmlregistration.h>

#include "conversations/conversation.h"

class MessageListModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("owned by ConversationList")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)
    // Code blocks coloured for a dark code background instead of a light one.
    Q_PROPERTY(bool dark READ dark WRITE setDark NOTIFY darkChanged)
public:
    enum Roles {
        MineRole = Qt::UserRole + 1,  // the person wrote it (a question), else the model (an answer)
        TextRole,
        HtmlRole,         // an answer's Markdown as HTML, with any raw HTML in it shown as text
        StreamingRole,
        StopReasonRole,
        ContinuableRole,  // an answer cut short that the model can go on with
        ForgottenRole,
        // An answer as blocks of prose and code: QVariantMaps of isCode, html, and for code the
        // code itself and its language's name
        BlocksRole,
        VersionRole,       // which version of this message and what follows it is shown, from 1
        VersionCountRole,  // how many there are (1: never branched)
    };

    using QAbstractListModel::QAbstractListModel;
    int rowCount(const QModelIndex& parent = {}) const override;
    QVariant data(const QModelIndex& index, int role) const override;
    QHash<int, QByteArray> roleNames() const override;

    bool dark() const { return dark_; }
    void setDark(bool dark);

    ConversationItem* conversation() const { return shown_; }
    void show(ConversationItem* conversation);

    void append(ConversationItem* c, const Message& message);
    void appendText(ConversationItem* c, int row, const QString& piece);
    void setStreaming(ConversationItem* c, int row);
    void finish(ConversationItem* c, int row, const QString& text, AnswerEnd::Reason stopReason);
    // Keeps the first n messages.
    void truncate(ConversationItem* c, int n);
    // The versions the message at row carries (keep_as_version()).
    void setVersions(ConversationItem* c, int row, Versions versions);
    // Shows version k at row (show_version()); false when there is no such version.
    bool showVersion(ConversationItem* c, int row, int k);
    // Forgets the newest of the other versions at row (an answer the engine refused to start).
    void dropLastVersion(ConversationItem* c, int row);
    // Removes messages [first, first + n).
    void remove(ConversationItem* c, int first, int n);
    // Marks messages [first, last) as outside the model's memory.
    void forget(ConversationItem* c, int first, int last);

signals:
    void countChanged();
    void darkChanged();

private:
    void changed(ConversationItem* c, int first, int last);
    ConversationItem* shown_ = nullptr;
    bool dark_ = false;
};
