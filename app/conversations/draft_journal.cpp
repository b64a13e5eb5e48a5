#include "conversations/draft_journal.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSaveFile>

namespace {

QByteArray line(const QJsonObject& o) { return QJsonDocument(o).toJson(QJsonDocument::Compact) + '\n'; }

QByteArray base_line(const QString& id, const QString& text) { return line({{"id", id}, {"base", text}}); }

// The one range of before that after replaced: the text between their common prefix and suffix.
QByteArray change_line(const QString& id, const QString& before, const QString& after) {
    const qsizetype shorter = qMin(before.size(), after.size());
    qsizetype prefix = 0;
    while (prefix < shorter && before[prefix] == after[prefix])
        ++prefix;
    qsizetype suffix = 0;
    while (suffix < shorter - prefix && before[before.size() - 1 - suffix] == after[after.size() - 1 - suffix])
        ++suffix;
    return line({{"id", id},
                 {"at", double(prefix)},
                 {"del", double(before.size() - prefix - suffix)},
                 {"ins", after.mid(prefix, after.size() - prefix - suffix)}});
}

}  // namespace

DraftJournal::DraftJournal(const QString& path) : path_(path), file_(path) {}

QHash<QString, QString> DraftJournal::recover() const {
    QFile in(path_);
    QHash<QString, QString> drafts;
    if (path_.isEmpty() || !in.open(QIODevice::ReadOnly))
        return drafts;  // none yet
    QSet<QString> broken;  // a change did not fit: later ones cannot be trusted either
    for (const QByteArray& text : in.readAll().split('\n')) {
        const QJsonObject o = QJsonDocument::fromJson(text).object();
        const QString id = o.value("id").toString();
        if (id.isEmpty())
            continue;  // torn, or empty
        if (o.contains("base")) {
            drafts[id] = o.value("base").toString();
            broken.remove(id);
            continue;
        }
        auto draft = drafts.find(id);
        const qsizetype at = qsizetype(o.value("at").toDouble(-1)), del = qsizetype(o.value("del").toDouble(-1));
        if (draft == drafts.end() || broken.contains(id) || at < 0 || del < 0 || at + del > draft->size() ||
            !o.value("ins").isString()) {
            broken.insert(id);
            continue;
        }
        draft->replace(at, del, o.value("ins").toString());
    }
    return drafts;
}

bool DraftJournal::restart(const QHash<QString, QString>& drafts) {
    file_.close();
    drafts_ = drafts;
    unsaved_ = QSet<QString>(drafts.keyBegin(), drafts.keyEnd());
    if (path_.isEmpty())
        return true;
    if (drafts.isEmpty()) {  // nothing to carry: the first change makes the file
        if (QFile old(path_); old.exists() && !old.remove()) {
            error_ = old.errorString();
            return false;
        }
        error_.clear();
        return true;
    }
    QSaveFile out(path_);  // the old journal stays whole until this one is
    QByteArray lines;
    for (auto it = drafts.begin(); it != drafts.end(); ++it)
        lines += base_line(it.key(), it.value());
    if (!out.open(QIODevice::WriteOnly) || out.write(lines) != lines.size() || !out.commit()) {
        error_ = out.errorString();
        return false;
    }
    if (!file_.open(QIODevice::Append | QIODevice::Unbuffered)) {
        error_ = file_.errorString();
        return false;
    }
    error_.clear();
    return true;
}

void DraftJournal::record(const QString& id, const QString& before, const QString& after) {
    if (before == after)
        return;
    QByteArray lines;
    auto draft = drafts_.find(id);
    if (draft == drafts_.end() || *draft != before) {  // first change here, or a text set without the journal
        lines += base_line(id, before);
        draft = drafts_.insert(id, before);
    }
    lines += change_line(id, before, after);
    *draft = after;
    unsaved_.insert(id);
    if (!append(lines)) {
        // A change missing from the file would make every later one apply to the wrong text: the
        // journal starts again (emptying it frees a full disk), each draft with a base next time.
        drafts_.clear();
        unsaved_.clear();
        file_.resize(0);
    }
}

bool DraftJournal::append(const QByteArray& lines) {
    if (path_.isEmpty())
        return true;  // no data folder: nothing is saved at all
    if (!file_.isOpen() && !file_.open(QIODevice::Append | QIODevice::Unbuffered)) {
        error_ = file_.errorString();
        return false;
    }
    if (file_.write(lines) != lines.size()) {  // one write: the kernel has it when this returns
        error_ = file_.errorString();
        return false;
    }
    error_.clear();
    return true;
}

void DraftJournal::saved(const QString& id, const QString& draft) {
    if (drafts_.value(id) == draft)
        unsaved_.remove(id);
    emptyWhenAllSaved();
}

void DraftJournal::forget(const QString& id) {
    unsaved_.remove(id);
    emptyWhenAllSaved();
}

void DraftJournal::emptyWhenAllSaved() {
    if (!unsaved_.isEmpty() || drafts_.isEmpty())
        return;
    drafts_.clear();
    if (file_.isOpen())
        file_.resize(0);
}
