// The conversation list alone, with no worker: what it asks the worker and the saver (its signals),
// making, reusing, naming, deleting with undo, and following the loaded model's format.
#include <QSignalSpy>
#include <QtTest>

#include "conversation_parts.h"
#include "conversations/conversation_store.h"

using namespace llamadesk;

class ConversationListTest : public QObject {
    Q_OBJECT
    std::unique_ptr<ConversationParts> p_;

    static ModelInfo model(ChatFormat format, int context) {
        ModelInfo info;
        info.name = "tiny";
        info.chat_format = format;
        info.context_length = context;
        return info;
    }
    static void say(ConversationItem* c, const QString& question, const QString& answer) {
        c->messages.append({Message::Role::User, question, false, {}, false, {}});
        c->messages.append({Message::Role::Assistant, answer, false, AnswerEnd::Eos, false, {}});
    }

private slots:
    void init() { p_ = std::make_unique<ConversationParts>(); }

    // A pinned conversation stays above the others: new ones come in below it, it is saved pinned
    // and read back first, and unpinned it goes back among them.
    void pinnedConversationsStayOnTop() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        say(list->current(), "first", "a");
        const QString first = list->currentId();
        list->newConversation();
        say(list->current(), "second", "b");
        QCOMPARE(list->model()->at(1)->id, first);
        list->setPinned(1, true);
        QCOMPARE(list->model()->at(0)->id, first);
        QVERIFY(list->isPinned(0));
        list->newConversation();  // below the pinned one
        QCOMPARE(list->model()->at(0)->id, first);
        QCOMPARE(list->model()->at(1)->id, list->currentId());
        QCOMPARE(list->model()->index(0).data(ConversationListModel::PinnedRole).toBool(), true);
        const std::optional<ConversationRecord> read =
            ConversationStore::fromJson(ConversationStore::toJson(*list->model()->at(0)));
        QVERIFY(read && read->pinned);
        QVERIFY(!ConversationStore::fromJson(ConversationStore::toJson(*list->model()->at(1)))->pinned);
        list->setPinned(0, false);
        QVERIFY(!list->isPinned(0));
    }

    // Tags as typed, separated by commas: blanks and repeats dropped, saved with the conversation.
    void tagsAreKeptAsTyped() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        QSignalSpy saves(list, &ConversationList::saveRequested);
        list->setTags(0, " work , Recipes,, work ,WORK ");
        QCOMPARE(list->current()->tags, (QStringList{"work", "Recipes"}));
        QCOMPARE(list->tagsOf(0), QString("work, Recipes"));
        QCOMPARE(saves.count(), 1);
        const std::optional<ConversationRecord> read = ConversationStore::fromJson(ConversationStore::toJson(*list->current()));
        QVERIFY(read);
        QCOMPARE(read->tags, (QStringList{"work", "Recipes"}));
        list->setTags(0, "");
        QVERIFY(list->current()->tags.isEmpty());
    }

    void anEmptyFolderStartsWithOneNewConversation() {
        ConversationList* list = &p_->list;
        QSignalSpy formats(list, &ConversationList::requestFormat);
        list->loadSaved();
        QCOMPARE(list->model()->rowCount(), 1);
        QCOMPARE(list->currentIndex(), 0);
        QCOMPARE(list->currentTitle(), QString("New conversation"));
        QCOMPARE(formats.count(), 1);  // the worker learns its format before it is used
        QCOMPARE(formats[0][0].toString(), list->currentId());
    }

    void savedConversationsComeBackAndGoToTheWorker() {
        ConversationRecord saved;
        saved.id = "a1";
        saved.title = "Llamas";
        saved.created = QDateTime::currentDateTimeUtc();
        saved.messages.append({Message::Role::User, "Hi", false, {}, false, {}});
        saved.messages.append({Message::Role::Assistant, "Hello", false, AnswerEnd::Eos, false, {}});
        QVERIFY(ConversationStore(p_->dir.path() + "/data").save(saved));
        ConversationList* list = &p_->list;
        QSignalSpy restores(list, &ConversationList::requestRestore);
        list->loadSaved();
        QCOMPARE(list->currentId(), QString("a1"));
        QCOMPARE(restores.count(), 1);
        const auto turns = restores[0][1].value<std::vector<ChatTurn>>();
        QCOMPARE(int(turns.size()), 1);
        QCOMPARE(turns[0].answer, std::string("Hello"));
    }

    void anUnusedConversationIsReusedAndTheFirstMessageNamesIt() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        const QString first = list->currentId();
        list->newConversation();
        QCOMPARE(list->currentId(), first);  // no pile of blanks
        ConversationItem* c = list->current();
        list->nameAfter(c, "  How   long do llamas live, and what do they eat in winter?  ");
        QCOMPARE(c->title, QString("How long do llamas live, and what do th") + QChar(0x2026));
        list->nameAfter(c, "Something else");
        QCOMPARE(c->title.left(8), QString("How long"));  // named once
        say(c, "q", "a");
        list->newConversation();
        QVERIFY(list->currentId() != first);
        QCOMPARE(list->currentIndex(), 0);  // the newest is on top
    }

    void aSaveSendsACopyToTheSaver() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        QSignalSpy saves(list, &ConversationList::saveRequested);
        ConversationItem* c = list->current();
        c->draft = "half a thought";
        list->save(c);
        QCOMPARE(saves.count(), 1);
        c->draft = "changed after";
        QCOMPARE(saves[0][0].value<ConversationRecord>().draft, QString("half a thought"));
    }

    void aDeleteCanBeUndoneUntilItIsCommitted() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        say(list->current(), "q", "a");
        const QString id = list->currentId();
        QSignalSpy removing(list, &ConversationList::removing);
        QSignalSpy deletes(list, &ConversationList::requestDelete);
        QSignalSpy removes(list, &ConversationList::removeRequested);
        list->deleteConversation(0);
        QCOMPARE(removing.count(), 1);
        QCOMPARE(removing[0][0].toString(), id);
        QCOMPARE(list->undoDeleteTitle(), QString("New conversation"));
        QVERIFY(list->currentId() != id);  // a blank one stands in
        QVERIFY(list->find(id));            // still there for an answer that ends meanwhile
        list->undoDelete();
        QCOMPARE(list->currentId(), id);
        QCOMPARE(list->model()->rowCount(), 1);  // the stand-in went again
        QCOMPARE(deletes.count(), 1);
        QVERIFY(deletes[0][0].toString() != id);
        QVERIFY(removes.isEmpty());

        list->deleteConversation(0);
        list->shutdown();  // commits the delete
        QCOMPARE(removes.count(), 1);
        QCOMPARE(removes[0][0].toString(), id);
        QCOMPARE(deletes.last()[0].toString(), id);
        QVERIFY(!list->find(id));
        QVERIFY(list->undoDeleteTitle().isEmpty());
    }

    void unusedConversationsTakeTheLoadedModelsFormat() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        ConversationItem* used = list->current();
        say(used, "q", "a");
        list->newConversation();
        ConversationItem* unused = list->current();
        QSignalSpy formats(list, &ConversationList::requestFormat);
        QSignalSpy changed(list, &ConversationList::modelChanged);
        list->onModelLoaded({}, {}, model(ChatFormat::Completion, 512));
        QCOMPARE(unused->format, ChatFormat::Completion);
        QCOMPARE(used->format, ChatFormat::Llama2Chat);
        QCOMPARE(formats.count(), 1);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(list->modelDefaults().context_length, 512);
        QCOMPARE(list->modelDefaults().name, QString("tiny"));
    }

    void aNewBackendGetsEveryConversationBackTheDeletedOneToo() {
        ConversationList* list = &p_->list;
        list->loadSaved();
        say(list->current(), "q", "a");
        list->newConversation();
        say(list->current(), "q2", "a2");
        list->deleteConversation(1);
        QSignalSpy restores(list, &ConversationList::requestRestore);
        list->restoreAll();
        QCOMPARE(restores.count(), 2);  // the one left and the one Undo may bring back
    }
};

QTEST_MAIN(ConversationListTest)
#include "test_conversation_list.moc"
