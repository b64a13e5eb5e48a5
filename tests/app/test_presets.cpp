// Presets: a conversation's system prompt, format and sampling kept under a name, given to
// another conversation, taken by every new one when chosen for them, refused when the engine
// would refuse its sampling, and carried in the JSON export of all conversations.
#include <QtTest>

#include "conversation_parts.h"
#include "conversations/conversation_export.h"

using namespace llamadesk;

class PresetsTest : public QObject {
    Q_OBJECT
private slots:
    void savedFromOneConversationGivenToAnother() {
        ConversationParts p;
        p.list.loadSaved();
        ConversationSettings* s = p.list.settings();
        s->setSystemPrompt("Answer in French.");
        s->setTemperature(0.2);
        s->setTopK(7);
        p.list.setFormat(p.list.current(), ChatFormat::ChatML);
        QCOMPARE(p.list.savePreset("  French  "), QString());
        QCOMPARE(p.list.presets()->names(), QStringList{"French"});
        QVERIFY(!p.list.savePreset("").isEmpty());  // a name is needed

        p.list.messages()->append(p.list.current(), Message{});  // not empty: a new one is made
        p.list.newConversation();
        QVERIFY(s->systemPrompt() != "Answer in French.");
        QSignalSpy formats(&p.list, &ConversationList::requestFormat);
        p.list.applyPreset("French");
        QCOMPARE(s->systemPrompt(), QString("Answer in French."));
        QCOMPARE(s->temperature(), 0.2);
        QCOMPARE(s->topK(), 7);
        QCOMPARE(p.list.current()->format, ChatFormat::ChatML);
        QCOMPARE(formats.count(), 1);  // the engine is told

        // Saved again under the same name: replaced, not added.
        s->setTopK(9);
        QCOMPARE(p.list.savePreset("French"), QString());
        QCOMPARE(p.list.presets()->names().size(), 1);
        QCOMPARE(p.list.presets()->find("French")->sampling.value("topK").toInt(), 9);
    }

    void newConversationsTakeTheChosenOne() {
        ConversationParts p;
        p.list.loadSaved();
        QCOMPARE(p.list.presets()->put({"Coder", "You write C++.", ChatFormat::Llama3Chat, {{"temperature", 0.1}}}),
                 QString());
        p.list.presets()->setForNewConversations("Coder");
        p.list.messages()->append(p.list.current(), Message{});  // not empty: a new one is made
        p.list.newConversation();
        QCOMPARE(p.list.settings()->systemPrompt(), QString("You write C++."));
        QCOMPARE(p.list.settings()->temperature(), 0.1);
        QCOMPARE(p.list.current()->format, ChatFormat::Llama3Chat);
        p.list.presets()->remove("Coder");
        QCOMPARE(p.list.presets()->forNewConversations(), QString());
    }

    void samplingTheEngineWouldRefuseIsRefused() {
        ConversationParts p;
        const QString why = p.list.presets()->put({"Hot", "", ChatFormat::Llama2Chat, {{"topP", 7}}});
        QVERIFY2(why.contains("top-p"), qPrintable(why));
        QVERIFY(p.list.presets()->names().isEmpty());
    }

    void carriedInTheExport() {
        const QList<Preset> presets{{"French", "Answer in French.", ChatFormat::ChatML, {{"topK", 7}}}};
        QList<Preset> back;
        QString error;
        QVERIFY(import_json(export_json({}, presets), &error, &back));
        QCOMPARE(back.size(), 1);
        QCOMPARE(back[0].name, QString("French"));
        QCOMPARE(back[0].format, ChatFormat::ChatML);
        QCOMPARE(back[0].sampling.value("topK").toInt(), 7);
        // An export without presets (as older ones) gives none; an unknown format is named.
        back.clear();
        QVERIFY(import_json(export_json({}), &error, &back));
        QVERIFY(back.isEmpty());
        QByteArray bad = export_json({}, presets);
        bad.replace("chatml", "nonsense");
        QVERIFY(!import_json(bad, &error, &back));
        QVERIFY2(error.contains("nonsense"), qPrintable(error));
    }
};

QTEST_MAIN(PresetsTest)
#include "test_presets.moc"
