// The draft journal alone: every change replayed in order gives the text as typed, whatever the
// edit (typing, deleting, pasting in the middle, characters outside the BMP); a torn last line and
// a change that does not fit are skipped; the file empties once every draft is in its file, and
// stays small per keystroke on a long draft.
#include <QFile>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <QTest>

#include "conversations/draft_journal.h"

class DraftJournalTest : public QObject {
    Q_OBJECT
private slots:
    // Random edits of two conversations' drafts, interleaved: recovery gives each one's last text.
    void replayGivesTheTextAsTyped() {
        QTemporaryDir dir;
        const QString path = dir.filePath("drafts.journal");
        DraftJournal journal(path);
        QVERIFY(journal.restart({}));
        QRandomGenerator rng(11);
        const QString pieces[] = {"a", " ", "word ", "🦙", "ünï", "\n", "\"quoted\"", "\\", "long paste "};
        QHash<QString, QString> typed{{"one", QString()}, {"two", QStringLiteral("saved before")}};
        for (int step = 0; step < 2000; ++step) {
            const QString id = rng.bounded(3) ? "one" : "two";
            QString text = typed[id];
            const int at = int(rng.bounded(qint64(text.size()) + 1));
            if (rng.bounded(4) == 0 && !text.isEmpty()) {
                text.remove(at == text.size() ? at - 1 : at, 1 + int(rng.bounded(3)));
            } else {
                text.insert(at, pieces[rng.bounded(int(std::size(pieces)))]);
            }
            journal.record(id, typed[id], text);
            typed[id] = text;
        }
        QCOMPARE(journal.error(), QString());
        const QHash<QString, QString> recovered = DraftJournal(path).recover();
        QCOMPARE(recovered.value("one"), typed["one"]);
        QCOMPARE(recovered.value("two"), typed["two"]);
    }

    // A kill in the middle of a write leaves a torn last line: what came before is whole.
    void tornLastLineIsSkipped() {
        QTemporaryDir dir;
        const QString path = dir.filePath("drafts.journal");
        {
            DraftJournal journal(path);
            QVERIFY(journal.restart({}));
            journal.record("c", "", "hello");
            journal.record("c", "hello", "hello world");
        }
        QFile file(path);
        QVERIFY(file.open(QIODevice::Append));
        file.write("{\"id\":\"c\",\"at\":11,\"del\":0,\"ins\":\" and mo");
        file.close();
        QCOMPARE(DraftJournal(path).recover().value("c"), QString("hello world"));
    }

    // A change that does not fit the text before it (a file edited by hand, a lost line) stops
    // that conversation's replay at its last whole text; a later base starts it again.
    void changeThatDoesNotFitStopsItsConversation() {
        QTemporaryDir dir;
        const QString path = dir.filePath("drafts.journal");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write("{\"id\":\"c\",\"base\":\"abc\"}" "\n"
                   "{\"id\":\"c\",\"at\":3,\"del\":0,\"ins\":\"d\"}" "\n"
                   "{\"id\":\"c\",\"at\":9,\"del\":1,\"ins\":\"x\"}" "\n"
                   "{\"id\":\"c\",\"at\":0,\"del\":0,\"ins\":\"y\"}" "\n"
                   "{\"id\":\"e\",\"at\":0,\"del\":0,\"ins\":\"no base\"}" "\n");
        file.close();
        QHash<QString, QString> recovered = DraftJournal(path).recover();
        QCOMPARE(recovered.value("c"), QString("abcd"));
        QVERIFY(!recovered.contains("e"));
        QVERIFY(file.open(QIODevice::Append));
        file.write("{\"id\":\"c\",\"base\":\"new\"}" "\n" "{\"id\":\"c\",\"at\":3,\"del\":0,\"ins\":\"!\"}" "\n");
        file.close();
        QCOMPARE(DraftJournal(path).recover().value("c"), QString("new!"));
    }

    // The journal empties once every draft it holds is in its file; a save of an older text, or
    // of one conversation while another waits, keeps it.
    void emptiesOnceEveryDraftIsSaved() {
        QTemporaryDir dir;
        const QString path = dir.filePath("drafts.journal");
        DraftJournal journal(path);
        QVERIFY(journal.restart({{"carried", "recovered text"}}));
        QCOMPARE(DraftJournal(path).recover().value("carried"), QString("recovered text"));
        journal.record("c", "", "first");
        journal.record("c", "first", "first and more");
        journal.saved("c", "first");  // a save asked for before the last keys
        journal.saved("carried", "recovered text");
        QVERIFY(QFileInfo(path).size() > 0);
        QCOMPARE(DraftJournal(path).recover().value("c"), QString("first and more"));
        journal.saved("c", "first and more");
        QCOMPARE(QFileInfo(path).size(), 0);
        journal.record("c", "first and more", "first and more!");  // a new base after emptying
        QCOMPARE(DraftJournal(path).recover().value("c"), QString("first and more!"));
        journal.forget("c");  // deleted for good
        QCOMPARE(QFileInfo(path).size(), 0);
    }

    // A keystroke in a 200,000-character draft writes one short line, not the draft.
    void keystrokeInALongDraftWritesOneLine() {
        QTemporaryDir dir;
        const QString path = dir.filePath("drafts.journal");
        DraftJournal journal(path);
        QVERIFY(journal.restart({}));
        const QString long_draft = QString("lorem ipsum ").repeated(200000 / 12);
        journal.record("c", "", long_draft);  // the paste: base and change
        const qint64 after_paste = QFileInfo(path).size();
        QString text = long_draft;
        text.insert(100000, "x");
        journal.record("c", long_draft, text);
        QVERIFY2(QFileInfo(path).size() - after_paste < 64,
                 qPrintable(QString("%1 bytes for one key").arg(QFileInfo(path).size() - after_paste)));
        QCOMPARE(DraftJournal(path).recover().value("c"), text);
    }

    // A folder that cannot be written: the journal says so and the drafts are not harmed.
    void unwritableFolderIsReported() {
        DraftJournal journal("/proc/llamadesk-no-such-dir/drafts.journal");
        QVERIFY(journal.restart({}));  // nothing to carry: nothing written yet
        journal.record("c", "", "typed");
        QVERIFY(!journal.error().isEmpty());
        QVERIFY(!journal.restart({{"c", "typed"}}));
        QVERIFY(!journal.error().isEmpty());
        QVERIFY(journal.recover().isEmpty());
    }
};

QTEST_GUILESS_MAIN(DraftJournalTest)
#include "test_draft_journal.moc"
