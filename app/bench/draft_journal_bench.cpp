// llamadesk-draft-bench: what the draft journal costs per keystroke (conversations/draft_journal.h), on a draft
// of 200,000 characters by default: one character typed at a random place, or deleted, each as
// ConversationList::setDraft records it (finding the changed range, one line written). Prints the
// median and the 99th percentile in microseconds and the bytes written per key.
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFileInfo>
#include <QRandomGenerator>
#include <QTemporaryDir>
#include <algorithm>
#include <cstdio>
#include <vector>

#include "conversations/draft_journal.h"

int main(int argc, char** argv) {
    QCoreApplication app(argc, argv);
    const QStringList args = app.arguments();
    const int chars = args.size() > 1 ? args[1].toInt() : 200000, keys = args.size() > 2 ? args[2].toInt() : 2000;
    if (chars < 1 || keys < 1) {
        std::fputs("usage: llamadesk-draft-bench [CHARACTERS (200000)] [KEYS (2000)]\n", stderr);
        return 2;
    }
    QTemporaryDir dir;
    const QString path = dir.filePath("drafts.journal");
    DraftJournal journal(path);
    if (!journal.restart({})) {
        std::fprintf(stderr, "llamadesk-draft-bench: %s\n", qPrintable(journal.error()));
        return 1;
    }
    QString text = QString("lorem ipsum ").repeated(chars / 12 + 1).left(chars);
    journal.record("c", QString(), text);  // the paste
    const qint64 start_size = QFileInfo(path).size();
    QRandomGenerator rng(3);
    std::vector<double> micros;
    for (int key = 0; key < keys; ++key) {
        QString next = text;
        const qsizetype at = qsizetype(rng.bounded(qint64(text.size())));
        if (key % 4 == 3) next.remove(at, 1);
        else next.insert(at, QChar(u'a' + key % 26));
        QElapsedTimer timer;
        timer.start();
        journal.record("c", text, next);
        micros.push_back(double(timer.nsecsElapsed()) / 1000.0);
        text = std::move(next);
    }
    std::sort(micros.begin(), micros.end());
    std::printf("draft of %d characters, %d keys (a quarter of them deletions) at random places\n", chars, keys);
    std::printf("per key: median %.1f us, 99th percentile %.1f us, %.1f bytes written\n", micros[micros.size() / 2],
                micros[micros.size() * 99 / 100], double(QFileInfo(path).size() - start_size) / keys);
    return journal.recover().value("c") == text ? 0 : 1;
}
