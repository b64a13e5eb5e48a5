// Generation alone, with no worker: the answers it asks for and the worker's replies played back
// to it (pieces, an end, a refusal), Stop, and the history edits that ask for a new answer.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "generation.h"

using namespace llamadesk;

class GenerationTest : public QObject {
    Q_OBJECT
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<QSettings> settings_;
    std::unique_ptr<CancelFlags> cancel_;
    std::unique_ptr<ConversationList> list_;
    std::unique_ptr<Generation> generation_;

    static GenerationResult ended(StopReason reason, const std::string& text, Status status = {}) {
        GenerationResult r;
        r.stop_reason = reason;
        r.text = text;
        r.tokens.assign(text.size(), 1);
        r.status = std::move(status);
        return r;
    }
    // Sends text in the current conversation and plays back its answer.
    void exchange(const QString& text, const QString& answer) {
        ConversationItem* c = list_->current();
        generation_->start(c, text);
        generation_->onGenerationFinished(c->id, ended(StopReason::Eos, answer.toStdString()),
                                          c->remembered_turns());
    }

private slots:
    void initTestCase() { register_engine_metatypes(); }

    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        settings_ = std::make_unique<QSettings>(dir_->path() + "/settings.ini", QSettings::IniFormat);
        cancel_ = std::make_unique<CancelFlags>();
        list_ = std::make_unique<ConversationList>(dir_->path() + "/data", settings_.get());
        generation_ = std::make_unique<Generation>(list_.get(), cancel_.get());
        list_->loadSaved();
    }

    void anAnswerStreamsIntoItsConversationAndIsSaved() {
        ConversationItem* c = list_->current();
        QSignalSpy asks(generation_.get(), &Generation::requestGenerate);
        QSignalSpy saves(list_.get(), &ConversationList::saveRequested);
        QSignalSpy ends(generation_.get(), &Generation::answerEnded);
        generation_->start(c, "What do llamas eat?");
        QVERIFY(generation_->generating());
        QCOMPARE(asks.count(), 1);
        QCOMPARE(asks[0][1].toString(), QString("What do llamas eat?"));
        QCOMPARE(c->title, QString("What do llamas eat?"));
        QCOMPARE(saves.count(), 1);  // the question survives a kill during the answer
        QVERIFY(c->messages[1].streaming);

        GenerationStats stats;
        stats.generated_tokens = 1;
        generation_->onTokenGenerated(c->id, "Grass", stats);
        stats.generated_tokens = 70;  // past kStreamSaveTokens: saved while it streams
        generation_->onTokenGenerated(c->id, " and hay", stats);
        QCOMPARE(c->messages[1].text, QString("Grass and hay"));
        QCOMPARE(saves.count(), 2);

        generation_->onGenerationFinished(c->id, ended(StopReason::Eos, "Grass and hay."), 1);
        QVERIFY(!generation_->generating());
        QCOMPARE(c->messages[1].text, QString("Grass and hay."));
        QCOMPARE(c->messages[1].stop_reason, AnswerEnd::Eos);
        QVERIFY(!c->messages[1].streaming);
        QCOMPARE(saves.count(), 3);
        QCOMPARE(ends.count(), 1);
    }

    void aRefusedQuestionLeavesTheHistoryAsItWas() {
        ConversationItem* c = list_->current();
        QSignalSpy refusals(generation_.get(), &Generation::refused);
        generation_->start(c, "Too long a question");
        generation_->onGenerationFinished(
            c->id, ended(StopReason::Error, "", Status::error(ErrorCode::ContextFull, "no room")), 0);
        QVERIFY(c->messages.isEmpty());
        QCOMPARE(c->title, QString("New conversation"));
        QCOMPARE(refusals.count(), 1);
        QCOMPARE(refusals[0][1].toString(), QString("Too long a question"));
    }

    void aFullContextIsSaid() {
        ConversationItem* c = list_->current();
        QSignalSpy filled(generation_.get(), &Generation::contextFilled);
        generation_->start(c, "Tell a long story");
        generation_->onGenerationFinished(c->id, ended(StopReason::ContextFull, "Once"), 1);
        QCOMPARE(filled.count(), 1);
        QCOMPARE(c->messages[1].stop_reason, AnswerEnd::ContextFull);
    }

    void stopRaisesTheConversationsFlagOnly() {
        ConversationItem* a = list_->current();
        generation_->start(a, "one");
        list_->newConversation();
        ConversationItem* b = list_->current();
        QVERIFY(!generation_->generating());  // the one on screen is not answering
        generation_->stop();
        QVERIFY(!cancel_->of(a->id)->load());
        list_->selectConversation(list_->model()->rowOf(a->id));
        generation_->stop();
        QVERIFY(cancel_->of(a->id)->load());
        QVERIFY(!cancel_->of(b->id)->load());
    }

    void deletingAnAnsweringConversationStopsItsAnswer() {
        ConversationItem* c = list_->current();
        generation_->start(c, "one");
        list_->deleteConversation(list_->currentIndex());
        QVERIFY(cancel_->of(c->id)->load());
    }

    void regenerateAsksAgainWithTheCacheCutBack() {
        exchange("first", "A");
        exchange("second", "B");
        ConversationItem* c = list_->current();
        QSignalSpy truncates(generation_.get(), &Generation::requestTruncate);
        QSignalSpy asks(generation_.get(), &Generation::requestGenerate);
        generation_->regenerate();
        QCOMPARE(truncates.count(), 1);
        QCOMPARE(truncates[0][1].toInt(), 1);
        QCOMPARE(asks[0][1].toString(), QString("second"));
        QCOMPARE(c->messages.size(), 4);
        generation_->regenerate();  // not while it answers
        QCOMPARE(asks.count(), 1);
    }

    void deletingAnEarlierExchangeRestoresTheHistoryAndTheLastCutsIt() {
        exchange("first", "A");
        exchange("second", "B");
        exchange("third", "C");
        ConversationItem* c = list_->current();
        QSignalSpy restores(list_.get(), &ConversationList::requestRestore);
        QSignalSpy truncates(generation_.get(), &Generation::requestTruncate);
        QSignalSpy cuts(generation_.get(), &Generation::historyCut);
        generation_->deleteExchange(3);  // the second answer: its question goes too
        QCOMPARE(c->messages.size(), 4);
        QCOMPARE(restores.count(), 1);
        QCOMPARE(int(restores[0][1].value<std::vector<ChatTurn>>().size()), 2);
        generation_->deleteExchange(2);  // the last question
        QCOMPARE(c->messages.size(), 2);
        QCOMPARE(truncates.count(), 1);
        QCOMPARE(truncates[0][1].toInt(), 1);
        QCOMPARE(cuts.count(), 2);
    }

    void droppingTheOldestTurnsForgetsHalf() {
        for (const char* q : {"one", "two", "three", "four"})
            exchange(q, "answer");
        ConversationItem* c = list_->current();
        QSignalSpy drops(generation_.get(), &Generation::requestDropOldest);
        QVERIFY(generation_->dropOldestTurns(c));
        QCOMPARE(drops[0][1].toInt(), 2);
        QCOMPARE(c->remembered_turns(), 2);
        QVERIFY(c->messages[3].forgotten && !c->messages[4].forgotten);
        QCOMPARE(c->messages.size(), 8);  // still shown
        list_->newConversation();
        QVERIFY(!generation_->dropOldestTurns(list_->current()));  // nothing to drop
    }
};

QTEST_MAIN(GenerationTest)
#include "test_generation.moc"
