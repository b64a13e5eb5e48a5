// The composer alone, with no worker: drafts saved as they are typed (and before a switch), the
// token count played back to it, a message that does not fit waiting for the context-full choice,
// and a refused question coming back into the draft.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "message_composer.h"

using namespace llamadesk;

class MessageComposerTest : public QObject {
    Q_OBJECT
    std::unique_ptr<QTemporaryDir> dir_;
    std::unique_ptr<QSettings> settings_;
    std::unique_ptr<CancelFlags> cancel_;
    std::unique_ptr<ConversationList> list_;
    std::unique_ptr<Generation> generation_;
    std::unique_ptr<MessageComposer> composer_;

    static TurnSize size(int message, int history, int context) {
        return {message, message, history, context};
    }
    static GenerationResult ended(StopReason reason, Status status = {}) {
        GenerationResult r;
        r.stop_reason = reason;
        r.status = std::move(status);
        return r;
    }
    // Sends text and plays back an answer that filled the context.
    void fillContext(const QString& text) {
        ConversationItem* c = list_->current();
        composer_->send(text);
        generation_->onGenerationFinished(c->id, ended(StopReason::ContextFull), c->remembered_turns());
    }

private slots:
    void initTestCase() {
        register_engine_metatypes();
        qRegisterMetaType<ConversationRecord>();
    }

    void init() {
        dir_ = std::make_unique<QTemporaryDir>();
        settings_ = std::make_unique<QSettings>(dir_->path() + "/settings.ini", QSettings::IniFormat);
        cancel_ = std::make_unique<CancelFlags>();
        list_ = std::make_unique<ConversationList>(dir_->path() + "/data", settings_.get());
        generation_ = std::make_unique<Generation>(list_.get(), cancel_.get());
        composer_ = std::make_unique<MessageComposer>(list_.get(), generation_.get());
        list_->loadSaved();
    }

    void aDraftIsSavedAfterTypingStopsAndBeforeASwitch() {
        QSignalSpy saves(list_.get(), &ConversationList::saveRequested);
        composer_->setDraft("half a thought");
        QCOMPARE(list_->current()->draft, QString("half a thought"));
        QVERIFY(saves.isEmpty());
        QTRY_COMPARE(saves.count(), 1);
        QCOMPARE(saves[0][0].value<ConversationRecord>().draft, QString("half a thought"));

        list_->current()->messages.append({Message::Role::User, "q", false, {}, false, {}});
        const QString first = list_->currentId();
        composer_->setDraft("typed, then at once elsewhere");
        list_->newConversation();
        QCOMPARE(composer_->draft(), QString());
        composer_->setDraft("x");  // the other conversation's draft is saved first
        QCOMPARE(saves.count(), 2);
        QCOMPARE(saves[1][0].value<ConversationRecord>().id, first);
        composer_->shutdown();
        QCOMPARE(saves.count(), 3);
        QCOMPARE(saves[2][0].value<ConversationRecord>().draft, QString("x"));
    }

    void theCountDescribesTheTextAsItIs() {
        QSignalSpy asks(composer_.get(), &MessageComposer::requestMeasure);
        composer_->setDraft("Hello");
        QTRY_COMPARE(asks.count(), 1);
        QCOMPARE(composer_->draftTokens(), -1);
        composer_->onTurnMeasured(list_->currentId(), "Hell", size(3, 0, 100));  // typed on since
        QCOMPARE(composer_->draftTokens(), -1);
        composer_->onTurnMeasured(list_->currentId(), "Hello", size(4, 10, 100));
        QVERIFY(composer_->draftCounted());
        QCOMPARE(composer_->draftTokens(), 4);
        QCOMPARE(composer_->draftRoom(), 89);
        composer_->setDraft("Hello!");
        QVERIFY(!composer_->draftCounted());  // the figures stay, marked as of an older text
        QCOMPARE(composer_->draftTokens(), 4);
    }

    void aMessageLongerThanTheContextIsNeverSent() {
        QSignalSpy asks(generation_.get(), &Generation::requestGenerate);
        QSignalSpy errors(composer_.get(), &MessageComposer::errorOccurred);
        composer_->setDraft("long");
        composer_->onTurnMeasured(list_->currentId(), "long", size(200, 0, 100));
        QVERIFY(composer_->draftTooLong());
        composer_->send("long");
        QVERIFY(asks.isEmpty());
        QCOMPARE(errors.count(), 1);
        QCOMPARE(composer_->draft(), QString("long"));
    }

    void aMessageThatNeedsRoomWaitsForTheChoice() {
        composer_->setDraft("needs room");
        composer_->onTurnMeasured(list_->currentId(), "needs room", size(60, 50, 100));
        QVERIFY(composer_->draftNeedsRoom());
        composer_->send("needs room");
        QVERIFY(composer_->contextFull());
        QVERIFY(composer_->messageWaiting());
        QVERIFY(!generation_->generating());
        composer_->dismissContextFull();
        QVERIFY(!composer_->contextFull() && !composer_->messageWaiting());
        QCOMPARE(composer_->draft(), QString("needs room"));  // the message stays in the composer
    }

    void aRefusedQuestionComesBackIntoTheDraft() {
        ConversationItem* c = list_->current();
        QSignalSpy errors(composer_.get(), &MessageComposer::errorOccurred);
        composer_->setDraft("What now?");
        composer_->send("What now?");
        QCOMPARE(composer_->draft(), QString());
        composer_->setDraft("typed meanwhile");
        generation_->onGenerationFinished(c->id, ended(StopReason::Error, Status::error(ErrorCode::BackendUnavailable, "gone")), 0);
        QCOMPARE(composer_->draft(), QString("What now?\n\ntyped meanwhile"));
        QCOMPARE(errors.count(), 1);
        QCOMPARE(errors[0][0].toString(), QString("gone"));
    }

    void aFullContextAsksUnlessTheOldestTurnsDropByThemselves() {
        fillContext("one");
        QVERIFY(composer_->contextFull());
        QVERIFY(!composer_->messageWaiting());  // the answer filled it
        composer_->dismissContextFull();

        composer_->setDropOldestWhenFull(true);
        QSignalSpy drops(generation_.get(), &Generation::requestDropOldest);
        fillContext("two");
        QVERIFY(!composer_->contextFull());
        QCOMPARE(drops.count(), 1);
    }

    void theWaitingMessageCanGoToANewConversation() {
        fillContext("one");
        const QString full = list_->currentId();
        composer_->setDraft("next");
        composer_->onTurnMeasured(full, "next", size(10, 95, 100));
        composer_->send("next");
        QVERIFY(composer_->messageWaiting());
        QSignalSpy asks(generation_.get(), &Generation::requestGenerate);
        composer_->continueInNewConversation();
        QVERIFY(list_->currentId() != full);
        QCOMPARE(asks.count(), 1);
        QCOMPARE(asks[0][1].toString(), QString("next"));
        QCOMPARE(list_->find(full)->draft, QString());  // sent elsewhere, so not kept here
        QVERIFY(!composer_->contextFull());
    }
};

QTEST_MAIN(MessageComposerTest)
#include "test_message_composer.moc"
