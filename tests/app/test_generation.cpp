// Generation alone, with no worker: the answers it asks for and the worker's replies played back
// to it (pieces, an end, a refusal), Stop, and the history edits that ask for a new answer.
#include <QSignalSpy>
#include <QtTest>

#include "conversation_parts.h"

using namespace llamadesk;

class GenerationTest : public QObject {
    Q_OBJECT
    std::unique_ptr<ConversationParts> p_;

    // Sends text in the current conversation and plays back its answer.
    void exchange(const QString& text, const QString& answer) {
        ConversationItem* c = p_->list.current();
        p_->generation.start(c, text);
        p_->generation.onGenerationFinished(c->id, ConversationParts::ended(StopReason::Eos, answer.toStdString()),
                                            c->remembered_turns());
    }

private slots:
    void init() {
        p_ = std::make_unique<ConversationParts>();
        p_->list.loadSaved();
    }

    void anAnswerStreamsIntoItsConversationAndIsSaved() {
        ConversationItem* c = p_->list.current();
        QSignalSpy asks(&p_->generation, &Generation::requestGenerate);
        QSignalSpy saves(&p_->list, &ConversationList::saveRequested);
        QSignalSpy ends(&p_->generation, &Generation::answerEnded);
        p_->generation.start(c, "What do llamas eat?");
        QVERIFY(p_->generation.generating());
        QCOMPARE(asks.count(), 1);
        QCOMPARE(asks[0][1].toString(), QString("What do llamas eat?"));
        QCOMPARE(c->title, QString("What do llamas eat?"));
        QCOMPARE(saves.count(), 1);  // the question survives a kill during the answer
        QVERIFY(c->messages[1].streaming);

        GenerationStats stats;
        stats.generated_tokens = 1;
        p_->generation.onTokenGenerated(c->id, "Grass", stats);
        stats.generated_tokens = 70;  // past kStreamSaveTokens: saved while it streams
        p_->generation.onTokenGenerated(c->id, " and hay", stats);
        QCOMPARE(c->messages[1].text, QString("Grass and hay"));
        QCOMPARE(saves.count(), 2);

        p_->generation.onGenerationFinished(c->id, ConversationParts::ended(StopReason::Eos, "Grass and hay."), 1);
        QVERIFY(!p_->generation.generating());
        QCOMPARE(c->messages[1].text, QString("Grass and hay."));
        QCOMPARE(c->messages[1].stop_reason, AnswerEnd::Eos);
        QVERIFY(!c->messages[1].streaming);
        QCOMPARE(saves.count(), 3);
        QCOMPARE(ends.count(), 1);
    }

    void aRefusedQuestionLeavesTheHistoryAsItWas() {
        ConversationItem* c = p_->list.current();
        QSignalSpy refusals(&p_->generation, &Generation::refused);
        p_->generation.start(c, "Too long a question");
        p_->generation.onGenerationFinished(
            c->id, ConversationParts::ended(StopReason::Error, "", Status::error(ErrorCode::ContextFull, "no room")), 0);
        QVERIFY(c->messages.isEmpty());
        QCOMPARE(c->title, QString("New conversation"));
        QCOMPARE(refusals.count(), 1);
        QCOMPARE(refusals[0][1].toString(), QString("Too long a question"));
    }

    // An edit the engine refuses (too long) does not cost the version it was to replace: that
    // one is shown again, whole, and the engine is given its history back.
    void aRefusedEditBringsTheVersionBefore() {
        exchange("first", "A");
        exchange("second", "B");
        ConversationItem* c = p_->list.current();
        QSignalSpy restores(&p_->list, &ConversationList::requestRestore);
        QSignalSpy refusals(&p_->generation, &Generation::refused);
        p_->generation.editAndResend(0, "Too long a question");
        QCOMPARE(c->messages.size(), 2);
        QCOMPARE(version_count(c->messages[0]), 2);
        p_->generation.onGenerationFinished(
            c->id, ConversationParts::ended(StopReason::Error, "", Status::error(ErrorCode::ContextFull, "no room")), 0);
        QCOMPARE(c->messages.size(), 4);
        QCOMPARE(c->messages[0].text, QString("first"));
        QCOMPARE(c->messages[3].text, QString("B"));
        QCOMPARE(version_count(c->messages[0]), 1);
        QCOMPARE(restores.count(), 1);
        QCOMPARE(int(restores[0][1].value<std::vector<ChatTurn>>().size()), 2);
        QCOMPARE(refusals[0][1].toString(), QString("Too long a question"));
    }

    void aFullContextIsSaid() {
        ConversationItem* c = p_->list.current();
        QSignalSpy filled(&p_->generation, &Generation::contextFilled);
        p_->generation.start(c, "Tell a long story");
        p_->generation.onGenerationFinished(c->id, ConversationParts::ended(StopReason::ContextFull, "Once"), 1);
        QCOMPARE(filled.count(), 1);
        QCOMPARE(c->messages[1].stop_reason, AnswerEnd::ContextFull);
    }

    void stopRaisesTheConversationsFlagOnly() {
        ConversationItem* a = p_->list.current();
        p_->generation.start(a, "one");
        p_->list.newConversation();
        ConversationItem* b = p_->list.current();
        QVERIFY(!p_->generation.generating());  // the one on screen is not answering
        p_->generation.stop();
        QVERIFY(!p_->cancel.of(a->id)->load());
        p_->list.selectConversation(p_->list.model()->rowOf(a->id));
        p_->generation.stop();
        QVERIFY(p_->cancel.of(a->id)->load());
        QVERIFY(!p_->cancel.of(b->id)->load());
    }

    void deletingAnAnsweringConversationStopsItsAnswer() {
        ConversationItem* c = p_->list.current();
        p_->generation.start(c, "one");
        p_->list.deleteConversation(p_->list.currentIndex());
        QVERIFY(p_->cancel.of(c->id)->load());
    }

    void regenerateAsksAgainWithTheCacheCutBack() {
        exchange("first", "A");
        exchange("second", "B");
        ConversationItem* c = p_->list.current();
        QSignalSpy truncates(&p_->generation, &Generation::requestTruncate);
        QSignalSpy asks(&p_->generation, &Generation::requestGenerate);
        p_->generation.regenerate();
        QCOMPARE(truncates.count(), 1);
        QCOMPARE(truncates[0][1].toInt(), 1);
        QCOMPARE(asks[0][1].toString(), QString("second"));
        QCOMPARE(c->messages.size(), 4);
        p_->generation.regenerate();  // not while it answers
        QCOMPARE(asks.count(), 1);
    }

    void deletingAnEarlierExchangeRestoresTheHistoryAndTheLastCutsIt() {
        exchange("first", "A");
        exchange("second", "B");
        exchange("third", "C");
        ConversationItem* c = p_->list.current();
        QSignalSpy restores(&p_->list, &ConversationList::requestRestore);
        QSignalSpy truncates(&p_->generation, &Generation::requestTruncate);
        QSignalSpy cuts(&p_->generation, &Generation::historyCut);
        p_->generation.deleteExchange(3);  // the second answer: its question goes too
        QCOMPARE(c->messages.size(), 4);
        QCOMPARE(restores.count(), 1);
        QCOMPARE(int(restores[0][1].value<std::vector<ChatTurn>>().size()), 2);
        p_->generation.deleteExchange(2);  // the last question
        QCOMPARE(c->messages.size(), 2);
        QCOMPARE(truncates.count(), 1);
        QCOMPARE(truncates[0][1].toInt(), 1);
        QCOMPARE(cuts.count(), 2);
    }

    void droppingTheOldestTurnsForgetsHalf() {
        for (const char* q : {"one", "two", "three", "four"})
            exchange(q, "answer");
        ConversationItem* c = p_->list.current();
        QSignalSpy drops(&p_->generation, &Generation::requestDropOldest);
        QVERIFY(p_->generation.dropOldestTurns(c));
        QCOMPARE(drops[0][1].toInt(), 2);
        QCOMPARE(c->remembered_turns(), 2);
        QVERIFY(c->messages[3].forgotten && !c->messages[4].forgotten);
        QCOMPARE(c->messages.size(), 8);  // still shown
        p_->list.newConversation();
        QVERIFY(!p_->generation.dropOldestTurns(p_->list.current()));  // nothing to drop
    }
};

QTEST_MAIN(GenerationTest)
#include "test_generation.moc"
