// The sidebar's search over ConversationListModel: every word of the query in the title or the
// messages, in any case; marks that escape the text around them; a line of matching text; rows
// that follow changes; and how long a keystroke takes over 1000 conversations (a benchmark).
#include <QElapsedTimer>
#include <QtTest>

#include "conversations/conversation_search.h"

namespace {

ConversationItem make(const QString& title, const QStringList& texts) {
    ConversationItem c;
    c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    c.title = title;
    for (int i = 0; i < texts.size(); ++i)
        c.messages.append({i % 2 ? Message::Role::Assistant : Message::Role::User, texts[i]});
    return c;
}

QStringList titles(const ConversationSearch& search) {
    QStringList out;
    for (int row = 0; row < search.rowCount(); ++row)
        out << search.index(row, 0).data(ConversationListModel::TitleRole).toString();
    return out;
}

}  // namespace

class TestConversationSearch : public QObject {
    Q_OBJECT

    ConversationListModel list_;
    std::unique_ptr<ConversationSearch> search_;

private slots:
    void init() {
        while (list_.rowCount() > 0)
            list_.take(0);
        list_.append(make("Llama care", {"How often do llamas eat?", "Twice a day, mostly grass."}));
        list_.append(make("KV cache sizes", {"What is a KV cache?", "It keeps the keys and values of past tokens."}));
        list_.append(make("Alpaca <b>wool</b>", {"Is alpaca wool warm?", "Yes, warmer than sheep's wool."}));
        search_ = std::make_unique<ConversationSearch>(&list_);
    }

    void anEmptyQueryKeepsEveryConversation() {
        QCOMPARE(search_->count(), 3);
        search_->setQuery("   ");
        QCOMPARE(search_->count(), 3);
    }

    void matchesTitlesAndMessagesInAnyCase() {
        search_->setQuery("LLAMA");
        QCOMPARE(titles(*search_), QStringList({"Llama care"}));
        search_->setQuery("wool");
        QCOMPARE(titles(*search_), QStringList({"Alpaca <b>wool</b>"}));
        search_->setQuery("keys");  // only in an answer
        QCOMPARE(titles(*search_), QStringList({"KV cache sizes"}));
        search_->setQuery("grass twice");  // every word, anywhere in the conversation
        QCOMPARE(titles(*search_), QStringList({"Llama care"}));
        search_->setQuery("grass cache");
        QCOMPARE(search_->count(), 0);
    }

    // Tags are searched too, in any case, though no title or message holds the word.
    void findsConversationsByTheirTags() {
        list_.at(1)->tags = QStringList{"Work", "memory"};
        list_.touched(list_.at(1));  // as a save does: folded again
        search_->setQuery("work");
        QCOMPARE(titles(*search_), QStringList({"KV cache sizes"}));
        search_->setQuery("MEMORY keys");
        QCOMPARE(titles(*search_), QStringList({"KV cache sizes"}));
        QCOMPARE(list_.index(1).data(ConversationListModel::TagsRole).toString(), QString("Work, memory"));
    }

    void marksEscapeTheText() {
        search_->setMarkColor("#ffd24d");
        search_->setQuery("wool");
        const QString title = search_->index(0, 0).data(ConversationSearch::TitleMarkedRole).toString();
        QCOMPARE(title, QString("Alpaca &lt;b&gt;<font color=\"#ffd24d\"><b>wool</b></font>&lt;/b&gt;"));
    }

    void aLineOfTheMatchingText() {
        list_.append(make("Long", {QString(200, 'x') + " the needle is here " + QString(200, 'y')}));
        search_->setQuery("NEEDLE");
        const QString snippet = search_->index(0, 0).data(ConversationSearch::SnippetRole).toString();
        QVERIFY2(snippet.startsWith("…") && snippet.contains("the <font color=\"#ffd24d\"><b>needle</b></font> is"),
                 qPrintable(snippet));
        QVERIFY(snippet.size() < 200);
        search_->setQuery({});
        QCOMPARE(search_->index(0, 0).data(ConversationSearch::SnippetRole).toString(), QString());
    }

    void rowsFollowChanges() {
        search_->setQuery("hay");
        QCOMPARE(search_->count(), 0);
        ConversationItem* c = list_.at(1);
        c->messages.append({Message::Role::User, "Do llamas eat hay?"});
        list_.touched(c);  // what every save does
        QCOMPARE(titles(*search_), QStringList({"KV cache sizes"}));
        QCOMPARE(search_->sourceRow(0), 1);
        QCOMPARE(search_->rowOfSource(1), 0);
        QCOMPARE(search_->rowOfSource(0), -1);
        list_.take(1);
        QCOMPARE(search_->count(), 0);
    }

    // 1000 conversations of 20 messages of about 600 characters: 12 MB of text.
    void keystrokeOver1000Conversations() {
        while (list_.rowCount() > 0)
            list_.take(0);
        const QString filler = QString("the model keeps each conversation's keys and values in blocks of sixteen tokens. ")
                                   .repeated(7);
        for (int i = 0; i < 1000; ++i) {
            QStringList texts;
            for (int m = 0; m < 20; ++m)
                texts << filler + QString::number(i * 20 + m);
            list_.append(make(QString("Conversation %1").arg(i), texts));
        }
        search_->setQuery("warm-up");  // folds every conversation once
        QElapsedTimer timer;
        timer.start();
        const QStringList queries{"b", "bl", "blo", "bloc", "block", "blocks", "blocks 19999", "zebra"};
        for (const QString& q : queries)
            search_->setQuery(q);
        qInfo("search over 1000 conversations (12 MB): %.1f ms per keystroke",
              double(timer.nsecsElapsed()) / 1e6 / double(queries.size()));
        QCOMPARE(search_->count(), 0);
        search_->setQuery("blocks 19999");
        QCOMPARE(titles(*search_), QStringList({"Conversation 999"}));
    }
};

QTEST_GUILESS_MAIN(TestConversationSearch)
#include "test_conversation_search.moc"
