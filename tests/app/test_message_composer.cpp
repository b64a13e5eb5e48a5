// The composer alone, with no worker: drafts saved as they are typed (and before a switch), the
// token count played back to it, a message that does not fit waiting for the context-full choice,
// and a refused question coming back into the draft.
#include <QSignalSpy>
#include <QtTest>

#include "conversation_parts.h"

using namespace llamadesk;

class MessageComposerTest : public QObject {
    Q_OBJECT
    std::unique_ptr<ConversationParts> p_;

    static TurnSize size(int message, int history, int context) {
        return {message, message, history, context};
    }
    // Sends text and plays back an answer that filled the context.
    void fillContext(const QString& text) {
        ConversationItem* c = p_->list.current();
        p_->composer.send(text);
        p_->generation.onGenerationFinished(c->id, ConversationParts::ended(StopReason::ContextFull), c->remembered_turns());
    }

private slots:
    void init() {
        p_ = std::make_unique<ConversationParts>();
        p_->list.loadSaved();
    }

    void aDraftIsSavedAfterTypingStopsAndBeforeASwitch() {
        QSignalSpy saves(&p_->list, &ConversationList::saveRequested);
        p_->composer.setDraft("half a thought");
        QCOMPARE(p_->list.current()->draft, QString("half a thought"));
        QVERIFY(saves.isEmpty());
        QTRY_COMPARE(saves.count(), 1);
        QCOMPARE(saves[0][0].value<ConversationRecord>().draft, QString("half a thought"));

        p_->list.current()->messages.append({Message::Role::User, "q", false, {}, false, {}});
        const QString first = p_->list.currentId();
        p_->composer.setDraft("typed, then at once elsewhere");
        p_->list.newConversation();
        QCOMPARE(p_->composer.draft(), QString());
        p_->composer.setDraft("x");  // the other conversation's draft is saved first
        QCOMPARE(saves.count(), 2);
        QCOMPARE(saves[1][0].value<ConversationRecord>().id, first);
        p_->composer.shutdown();
        QCOMPARE(saves.count(), 3);
        QCOMPARE(saves[2][0].value<ConversationRecord>().draft, QString("x"));
    }

    void theCountDescribesTheTextAsItIs() {
        QSignalSpy asks(&p_->composer, &MessageComposer::requestMeasure);
        p_->composer.setDraft("Hello");
        QTRY_COMPARE(asks.count(), 1);
        QCOMPARE(p_->composer.draftTokens(), -1);
        p_->composer.onTurnMeasured(p_->list.currentId(), "Hell", size(3, 0, 100));  // typed on since
        QCOMPARE(p_->composer.draftTokens(), -1);
        p_->composer.onTurnMeasured(p_->list.currentId(), "Hello", size(4, 10, 100));
        QVERIFY(p_->composer.draftCounted());
        QCOMPARE(p_->composer.draftTokens(), 4);
        QCOMPARE(p_->composer.draftRoom(), 89);
        p_->composer.setDraft("Hello!");
        QVERIFY(!p_->composer.draftCounted());  // the figures stay, marked as of an older text
        QCOMPARE(p_->composer.draftTokens(), 4);
    }

    void aMessageLongerThanTheContextIsNeverSent() {
        QSignalSpy asks(&p_->generation, &Generation::requestGenerate);
        QSignalSpy errors(&p_->composer, &MessageComposer::errorOccurred);
        p_->composer.setDraft("long");
        p_->composer.onTurnMeasured(p_->list.currentId(), "long", size(200, 0, 100));
        QVERIFY(p_->composer.draftTooLong());
        p_->composer.send("long");
        QVERIFY(asks.isEmpty());
        QCOMPARE(errors.count(), 1);
        QCOMPARE(p_->composer.draft(), QString("long"));
    }

    void aMessageThatNeedsRoomWaitsForTheChoice() {
        p_->composer.setDraft("needs room");
        p_->composer.onTurnMeasured(p_->list.currentId(), "needs room", size(60, 50, 100));
        QVERIFY(p_->composer.draftNeedsRoom());
        p_->composer.send("needs room");
        QVERIFY(p_->composer.contextFull());
        QVERIFY(p_->composer.messageWaiting());
        QVERIFY(!p_->generation.generating());
        p_->composer.dismissContextFull();
        QVERIFY(!p_->composer.contextFull() && !p_->composer.messageWaiting());
        QCOMPARE(p_->composer.draft(), QString("needs room"));  // the message stays in the composer
    }

    void aRefusedQuestionComesBackIntoTheDraft() {
        ConversationItem* c = p_->list.current();
        QSignalSpy errors(&p_->composer, &MessageComposer::errorOccurred);
        p_->composer.setDraft("What now?");
        p_->composer.send("What now?");
        QCOMPARE(p_->composer.draft(), QString());
        p_->composer.setDraft("typed meanwhile");
        p_->generation.onGenerationFinished(c->id, ConversationParts::ended(StopReason::Error, {}, Status::error(ErrorCode::BackendUnavailable, "gone")), 0);
        QCOMPARE(p_->composer.draft(), QString("What now?\n\ntyped meanwhile"));
        QCOMPARE(errors.count(), 1);
        QCOMPARE(errors[0][0].toString(), QString("gone"));
    }

    void aFullContextAsksUnlessTheOldestTurnsDropByThemselves() {
        fillContext("one");
        QVERIFY(p_->composer.contextFull());
        QVERIFY(!p_->composer.messageWaiting());  // the answer filled it
        p_->composer.dismissContextFull();

        p_->composer.setDropOldestWhenFull(true);
        QSignalSpy drops(&p_->generation, &Generation::requestDropOldest);
        fillContext("two");
        QVERIFY(!p_->composer.contextFull());
        QCOMPARE(drops.count(), 1);
    }

    void theWaitingMessageCanGoToANewConversation() {
        fillContext("one");
        const QString full = p_->list.currentId();
        p_->composer.setDraft("next");
        p_->composer.onTurnMeasured(full, "next", size(10, 95, 100));
        p_->composer.send("next");
        QVERIFY(p_->composer.messageWaiting());
        QSignalSpy asks(&p_->generation, &Generation::requestGenerate);
        p_->composer.continueInNewConversation();
        QVERIFY(p_->list.currentId() != full);
        QCOMPARE(asks.count(), 1);
        QCOMPARE(asks[0][1].toString(), QString("next"));
        QCOMPARE(p_->list.find(full)->draft, QString());  // sent elsewhere, so not kept here
        QVERIFY(!p_->composer.contextFull());
    }
};

QTEST_MAIN(MessageComposerTest)
#include "test_message_composer.moc"
