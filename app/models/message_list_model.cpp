#include "models/message_list_model.h"

#include <QRegularExpression>
#include <QTextDocument>
#include <QTextFrame>
#include <QTextTable>

#include "models/code_highlighter.h"
#include "models/markdown_blocks.h"

namespace {

const QString kCursor = QStringLiteral(" \u258D");  // the end of an answer still streaming

// QTextDocument writes GitHub tables with border="1" cellspacing="2": every cell framed twice.
// Cells that touch, with one line between them instead. (Qt Quick 6.4 draws each cell's frame
// itself and ignores the collapse, so there the line is two frames, 2 px, wide; still one line.)
void collapse_table_borders(QTextFrame* frame) {
    for (QTextFrame* child : frame->childFrames()) {
        if (auto* table = qobject_cast<QTextTable*>(child)) {
            QTextTableFormat format = table->format();
            format.setBorder(1);
            format.setBorderStyle(QTextFrameFormat::BorderStyle_Solid);
            format.setBorderCollapse(true);
            format.setCellSpacing(0);
            format.setCellPadding(4);
            table->setFormat(format);
        }
        collapse_table_borders(child);
    }
}

QString markdown_as_html(const QString& markdown) {
    QTextDocument document;
    document.setMarkdown(markdown, QTextDocument::MarkdownFeatures(QTextDocument::MarkdownDialectGitHub |
                                                                   QTextDocument::MarkdownNoHTML));
    collapse_table_borders(document.rootFrame());
    // The text's size is the view's (the window's font, zoomed), not the document's default.
    static const QRegularExpression body_size(QStringLiteral("(<body style=\"[^\"]*?) font-size:[^;]*;"));
    return document.toHtml().replace(body_size, QStringLiteral("\\1"));
}

QVariantMap prose_block(const QString& markdown) {
    return {{"isCode", false}, {"html", markdown_as_html(markdown)}, {"code", QString()},
            {"language", QString()}};
}

// Lines wrap in the chat's narrow column rather than run off to the right.
QVariantMap code_block(const MarkdownBlock& block, const CodeColours& colours, const QString& end) {
    const QString html =
        QStringLiteral("<pre style=\"margin:0; white-space:pre-wrap; font-family:monospace\">%1</pre>")
            .arg(highlight_code(block.text, block.language, colours) + end);
    return {{"isCode", true}, {"html", html}, {"code", block.text},
            {"language", language_display_name(block.language)}};
}

// The answer's prose and code blocks; while it streams, the cursor follows the last of them.
QVariantList blocks_of(const Message& m, const CodeColours& colours) {
    QList<MarkdownBlock> blocks = split_markdown_blocks(m.text);
    const bool cursorInCode =
        m.streaming && !blocks.isEmpty() && blocks.last().kind == MarkdownBlock::Kind::Code;
    if (m.streaming && !cursorInCode) {
        if (blocks.isEmpty())
            blocks.append(MarkdownBlock{});
        blocks.last().text += kCursor;
    }
    QVariantList list;
    for (int i = 0; i < blocks.size(); ++i) {
        const bool cursorHere = cursorInCode && i == blocks.size() - 1;
        list.append(blocks[i].kind == MarkdownBlock::Kind::Code
                        ? code_block(blocks[i], colours, cursorHere ? kCursor : QString())
                        : prose_block(blocks[i].text));
    }
    return list;
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
    case MineRole: return m.role == Message::Role::User;
    case Qt::DisplayRole:
    case TextRole: return m.text;
    case HtmlRole: return markdown_as_html(m.streaming ? m.text + kCursor : m.text);
    case BlocksRole:  // user messages are shown as typed
        return m.role == Message::Role::User ? QVariantList()
                                             : blocks_of(m, dark_ ? CodeColours::dark() : CodeColours::light());
    case StreamingRole: return m.streaming;
    case VersionRole: return m.version + 1;
    case VersionCountRole: return version_count(m);
    case StopReasonRole: return int(m.stop_reason);
    case ContinuableRole: return can_continue(m);
    case ForgottenRole: return m.forgotten;
    default: return {};
    }
}

QHash<int, QByteArray> MessageListModel::roleNames() const {
    return {{MineRole, "mine"},           {TextRole, "text"},
            {HtmlRole, "html"},           {StreamingRole, "streaming"},
            {StopReasonRole, "stopReason"}, {ContinuableRole, "continuable"},
            {ForgottenRole, "forgotten"},     {BlocksRole, "blocks"},
            {VersionRole, "version"},         {VersionCountRole, "versionCount"}};
}

void MessageListModel::setDark(bool dark) {
    if (dark == dark_)
        return;
    dark_ = dark;
    emit darkChanged();
    if (rowCount() > 0)
        emit dataChanged(index(0), index(rowCount() - 1), {BlocksRole});
}

void MessageListModel::show(ConversationItem* conversation) {
    beginResetModel();
    shown_ = conversation;
    endResetModel();
    emit countChanged();
}

void MessageListModel::append(ConversationItem* c, const Message& message) {
    const int row = int(c->messages.size());
    if (c == shown_)
        beginInsertRows({}, row, row);
    c->messages.append(message);
    if (c == shown_) {
        endInsertRows();
        emit countChanged();
    }
}

void MessageListModel::appendText(ConversationItem* c, int row, const QString& piece) {
    if (row < 0 || row >= c->messages.size())
        return;
    c->messages[row].text += piece;
    changed(c, row, row + 1);
}

void MessageListModel::setStreaming(ConversationItem* c, int row) {
    if (row < 0 || row >= c->messages.size())
        return;
    c->messages[row].streaming = true;
    c->messages[row].stop_reason = AnswerEnd::None;
    changed(c, row, row + 1);
}

void MessageListModel::finish(ConversationItem* c, int row, const QString& text, AnswerEnd::Reason stopReason) {
    if (row < 0 || row >= c->messages.size())
        return;
    Message& m = c->messages[row];
    m.text = text;
    m.streaming = false;
    m.stop_reason = stopReason;
    changed(c, row, row + 1);
}

void MessageListModel::remove(ConversationItem* c, int first, int n) {
    if (n <= 0 || first < 0 || first + n > c->messages.size())
        return;
    if (c == shown_)
        beginRemoveRows({}, first, first + n - 1);
    c->messages.remove(first, n);
    if (c == shown_) {
        endRemoveRows();
        emit countChanged();
    }
}

void MessageListModel::setVersions(ConversationItem* c, int row, Versions versions) {
    if (row < 0 || row >= c->messages.size())
        return;
    c->messages[row].other_versions = std::move(versions.others);
    c->messages[row].version = versions.version;
    changed(c, row, row + 1);
}

bool MessageListModel::showVersion(ConversationItem* c, int row, int k) {
    if (c == shown_)
        beginResetModel();
    const bool shown = show_version(c->messages, row, k);
    if (c == shown_) {
        endResetModel();
        emit countChanged();
    }
    return shown;
}

void MessageListModel::dropLastVersion(ConversationItem* c, int row) {
    if (row < 0 || row >= c->messages.size() || c->messages[row].other_versions.empty())
        return;
    c->messages[row].other_versions.pop_back();
    changed(c, row, row + 1);
}

void MessageListModel::truncate(ConversationItem* c, int n) {
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

void MessageListModel::forget(ConversationItem* c, int first, int last) {
    last = std::min(last, int(c->messages.size()));
    for (int i = first; i < last; ++i)
        c->messages[i].forgotten = true;
    if (first < last)
        changed(c, first, last);
}

void MessageListModel::changed(ConversationItem* c, int first, int last) {
    if (c == shown_)
        emit dataChanged(index(first), index(last - 1));
}
