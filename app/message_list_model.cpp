#include "message_list_model.h"

#include <QTextDocument>

namespace {

QString markdown_as_html(const QString& markdown) {
    QTextDocument document;
    document.setMarkdown(markdown, QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub |
                                                                   QTextDocument::MarkdownNoHTML));
    return document.toHtml();
}

}  // namespace

int MessageListModel::rowCount(const QModelIndex& parent) const {
    return parent.isValid() || !shown_ ? 0 : int(shown_->messages.size());
}

QVariant MessageListModel::data(const QModelIndex& index, int role) const {
    if (!shown_ || index.row() < 0 || index.row() >= rowCount())
        return {};
    const Message& m = shown_->messages[index.row()];
    switch (role) {
    case RoleRole: return m.role == Message::Role::User ? "user" : "assistant";
    case Qt::DisplayRole:
    case TextRole: return m.text;
    case HtmlRole: return markdown_as_html(m.streaming ? m.text + QStringLiteral(" \u258D") : m.text);
    case StreamingRole: return m.streaming;
    case StopReasonRole: return m.stop_reason;
    case ContinuableRole: return can_continue(m);
    case ForgottenRole: return m.forgotten;
    default: return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{RoleRole, "role"},           {TextRole, "text"},
            {HtmlRole, "html"},           {StreamingRole, "streaming"},
            {StopReasonRole, "stopReason"}, {ContinuableRole, "continuable"},
            {ForgottenRole, "forgotten"}};
}

void MessageListModel::show(Conversation* conversation) {
    beginResetModel();
    shown_ = conversation;
    endResetModel();
    emit countChanged();
}

void MessageListModel::append(Conversation* c, const Message& message) {
    const int row = int(c->messages.size());
    if (c == shown_)
        beginInsertRows({}, row, row);
    c->messages.append(message);
    if (c == shown_) {
        endInsertRows();
        emit countChanged();
    }
}

void MessageListModel::appendText(Conversation* c, int row, const QString& piece) {
    if (row < 0 || row >= c->messages.size())
        return;
    c->messages[row].text += piece;
    changed(c, row, row + 1);
}

void MessageListModel::setStreaming(Conversation* c, int row) {
    if (row < 0 || row >= c->messages.size())
        return;
    c->messages[row].streaming = true;
    c->messages[row].stop_reason.clear();
    changed(c, row, row + 1);
}

void MessageListModel::finish(Conversation* c, int row, const QString& text, const QString& stopReason) {
    if (row < 0 || row >= c->messages.size())
        return;
    Message& m = c->messages[row];
    m.text = text;
    m.streaming = false;
    m.stop_reason = stopReason;
    changed(c, row, row + 1);
}

void MessageListModel::truncate(Conversation* c, int n) {
    const int size = int(c->messages.size());
    if (n >= size)
        return;
    if (c == shown_)
        beginRemoveRows({}, n, size - 1);
    c->messages.resize(n);
    if (c == shown_) {
        endRemoveRows();
        emit countChanged();
    }
}

void MessageListModel::forget(Conversation* c, int first, int last) {
    last = std::min(last, int(c->messages.size()));
    for (int i = first; i < last; ++i)
        c->messages[i].forgotten = true;
    if (first < last)
        changed(c, first, last);
}

void MessageListModel::changed(Conversation* c, int first, int last) {
    if (c == shown_)
        emit dataChanged(index(first), index(last - 1));
}
