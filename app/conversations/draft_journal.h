// Every change to a draft, written as it is typed, so that a kill at any moment loses nothing
// typed: the conversation files take a draft a second after the last key (a save ends with an
// fsync), the journal in between.
//
// One file per profile (<data folder>/drafts.journal), appended to with one write per change and
// no fsync: the text is in the kernel once the write returns, so a killed or crashed app loses
// nothing (a machine that loses power may lose the last seconds, as with any unsynced file). Each
// line is one JSON object: a conversation's draft in full the first time it changes ("base"), then
// each change as the range it replaced and the text put there ("at", "del", "ins", in UTF-16 code
// units), so a keystroke in a 200,000-character draft writes a few dozen bytes. Once every draft
// the journal holds is on disk in its conversation's file, the journal is emptied.
#pragma once

#include <QFile>
#include <QHash>
#include <QSet>
#include <QString>

class DraftJournal {
public:
    // An empty path: no journal (a profile without a data folder saves nothing).
    explicit DraftJournal(const QString& path);

    // Per conversation, its draft as last typed, from the journal on disk. Lines that cannot be
    // read (the last one, torn by a kill mid-write) and changes that do not fit what came before
    // are skipped, each conversation keeping the last text that was whole.
    QHash<QString, QString> recover() const;

    // Replaces the journal with one holding these drafts (recovered, not yet in their files), as
    // bases to record changes to. False, with error(), where the folder cannot be written.
    bool restart(const QHash<QString, QString>& drafts);

    // A conversation's draft changed from before to after: appends the change (its base first,
    // the first time in this journal).
    void record(const QString& id, const QString& before, const QString& after);

    // The conversation's file now holds this draft (saved), or it is gone (forget): when no
    // draft in the journal waits for its file, the journal is emptied.
    void saved(const QString& id, const QString& draft);
    void forget(const QString& id);

    // Why the journal could not be written, empty while it can; recording goes on in memory.
    QString error() const { return error_; }

private:
    bool append(const QByteArray& lines);
    void emptyWhenAllSaved();

    QString path_;
    QFile file_;
    QHash<QString, QString> drafts_;  // per conversation with a base in the journal: its text now
    QSet<QString> unsaved_;           // ... whose file does not hold that text yet
    QString error_;
};
