#include "conversations/conversation_search.h"

#include <algorithm>

namespace {

constexpr int kSnippetBefore = 30;  // characters of context before the first match
constexpr int kSnippetLength = 120;

}  // namespace

ConversationSearch::ConversationSearch(ConversationListModel* conversations, QObject* parent)
    : QSortFilterProxyModel(parent), conversations_(conversations) {
    // A conversation whose text changed is folded again the next time it is searched. Connected
    // before the proxy's own handlers, so they filter with the new text.
    connect(conversations, &QAbstractItemModel::dataChanged, this,
            [this](const QModelIndex& first, const QModelIndex& last) {
                for (int row = first.row(); row <= last.row(); ++row)
                    folded_.remove(conversations_->at(row));
            });
    connect(conversations, &QAbstractItemModel::rowsAboutToBeRemoved, this,
            [this](const QModelIndex&, int first, int last) {
                for (int row = first; row <= last; ++row)
                    folded_.remove(conversations_->at(row));
            });
    connect(conversations, &QAbstractItemModel::modelReset, this, [this] { folded_.clear(); });
    setSourceModel(conversations);
    setDynamicSortFilter(true);
    for (const auto signal : {&QAbstractItemModel::rowsInserted, &QAbstractItemModel::rowsRemoved})
        connect(this, signal, this, &ConversationSearch::countChanged);
    connect(this, &QAbstractItemModel::modelReset, this, &ConversationSearch::countChanged);
    connect(this, &QAbstractItemModel::layoutChanged, this, &ConversationSearch::countChanged);
}

void ConversationSearch::setQuery(const QString& query) {
    if (query == query_)
        return;
    query_ = query;
    words_ = query.toCaseFolded().split(QRegularExpression(QStringLiteral("\\s+")), Qt::SkipEmptyParts);
    invalidateFilter();
    emit queryChanged();
    emit countChanged();
    // The marks and snippets of rows kept through the change.
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, 0), {TitleMarkedRole, SnippetRole});
}

void ConversationSearch::setMarkColor(const QString& color) {
    if (color == mark_color_)
        return;
    mark_color_ = color;
    emit queryChanged();
    if (rowCount() > 0)
        emit dataChanged(index(0, 0), index(rowCount() - 1, 0), {TitleMarkedRole, SnippetRole});
}

const ConversationSearch::Folded& ConversationSearch::folded(const ConversationItem* c) const {
    auto it = folded_.find(c);
    if (it == folded_.end()) {
        // Tags are searched with the title: a word found in either marks no message.
        Folded f{(c->title + QChar('\n') + c->tags.join(QChar('\n'))).toCaseFolded(), {}};
        for (const Message& m : c->messages)
            f.messages.append(m.text.toCaseFolded());
        it = folded_.insert(c, f);
    }
    return *it;
}

bool ConversationSearch::filterAcceptsRow(int sourceRow, const QModelIndex&) const {
    if (words_.isEmpty())
        return true;
    const Folded& f = folded(conversations_->at(sourceRow));
    return std::all_of(words_.cbegin(), words_.cend(), [&f](const QString& word) {
        return f.title.contains(word) ||
               std::any_of(f.messages.cbegin(), f.messages.cend(),
                           [&word](const QString& text) { return text.contains(word); });
    });
}

QString ConversationSearch::marked(const QString& text) const {
    // Folding keeps lengths for the scripts people type queries in; where it would not, no marks.
    const QString lower = text.toCaseFolded();
    QList<std::pair<qsizetype, qsizetype>> spans;
    if (lower.size() == text.size())
        for (const QString& word : words_)
            for (qsizetype at = lower.indexOf(word); at >= 0; at = lower.indexOf(word, at + word.size()))
                spans.append({at, at + word.size()});
    std::sort(spans.begin(), spans.end());
    QString out;
    qsizetype done = 0;
    for (const auto& [from, to] : spans) {
        if (to <= done)
            continue;
        const qsizetype start = std::max(from, done);
        out += text.mid(done, start - done).toHtmlEscaped();
        out += "<font color=\"" + mark_color_ + "\"><b>" + text.mid(start, to - start).toHtmlEscaped() + "</b></font>";
        done = to;
    }
    return out + text.mid(done).toHtmlEscaped();
}

QString ConversationSearch::snippet(const ConversationItem* c) const {
    const Folded& f = folded(c);
    for (int i = 0; i < f.messages.size(); ++i)
        for (const QString& word : words_)
            if (const qsizetype at = f.messages[i].indexOf(word); at >= 0) {
                const QString& text = c->messages[i].text;
                const qsizetype from = std::max<qsizetype>(0, at - kSnippetBefore);
                QString line = text.mid(from, kSnippetLength).simplified();
                return (from > 0 ? QStringLiteral("…") : QString()) + marked(line);
            }
    return {};
}

QVariant ConversationSearch::data(const QModelIndex& index, int role) const {
    if (role != TitleMarkedRole && role != SnippetRole)
        return QSortFilterProxyModel::data(index, role);
    const ConversationItem* c = conversations_->at(mapToSource(index).row());
    if (!c)
        return {};
    if (role == TitleMarkedRole)
        return marked(c->title);
    return words_.isEmpty() ? QString() : snippet(c);
}

QHash<int, QByteArray> ConversationSearch::roleNames() const {
    QHash<int, QByteArray> names = QSortFilterProxyModel::roleNames();
    names.insert(TitleMarkedRole, "titleMarked");
    names.insert(SnippetRole, "snippet");
    return names;
}

int ConversationSearch::sourceRow(int row) const { return mapToSource(index(row, 0)).row(); }

int ConversationSearch::rowOfSource(int sourceRow) const {
    return mapFromSource(conversations_->index(sourceRow, 0)).row();
}
