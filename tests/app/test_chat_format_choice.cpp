// The format selector's side alone, with no worker: the current conversation's format, the one
// the loaded model suggests, and no change while the conversation answers.
#include <QMetaEnum>
#include <QSignalSpy>
#include <QtTest>

#include "conversation_parts.h"

using namespace llamadesk;

class ChatFormatChoiceTest : public QObject {
    Q_OBJECT

private slots:
    void theConversationKeepsItsFormatAndTheModelSuggestsOne() {
        ConversationParts p;
        ConversationList& list = p.list;
        ChatFormatChoice& choice = p.format;
        list.loadSaved();
        QSignalSpy changed(&choice, &ChatFormatChoice::changed);
        QSignalSpy formats(&list, &ConversationList::requestFormat);

        ModelInfo info;
        info.chat_format = ChatFormat::Completion;
        info.chat_format_reason = "no chat template";
        list.onModelLoaded({}, {}, info);
        QVERIFY(changed.count() > 0);
        QCOMPARE(choice.suggestedFormat(), ChatFormatChoice::Completion);
        QCOMPARE(choice.suggestedFormatReason(), QString("no chat template"));
        QCOMPARE(choice.chatFormat(), ChatFormatChoice::Completion);  // unused: it follows the model

        choice.setChatFormat(ChatFormatChoice::Llama2Chat);
        QCOMPARE(choice.chatFormat(), ChatFormatChoice::Llama2Chat);
        QCOMPARE(list.current()->format, ChatFormat::Llama2Chat);
        QCOMPARE(formats.last()[1].value<ChatFormat>(), ChatFormat::Llama2Chat);

        p.generation.start(list.current(), "Hello");
        choice.setChatFormat(ChatFormatChoice::Completion);  // not while it answers
        QCOMPARE(choice.chatFormat(), ChatFormatChoice::Llama2Chat);
    }

    // QML names every format the engine renders, by the engine's own value, and lists them all.
    void everyEngineFormatHasItsName() {
        const QMetaEnum names = QMetaEnum::fromType<ChatFormatChoice::Format>();
        const QVariantList listed = ChatFormatChoice::formats();
        QCOMPARE(listed.size(), qsizetype(chat_formats().size()));
        QCOMPARE(names.keyCount(), int(chat_formats().size()));
        for (qsizetype i = 0; i < listed.size(); ++i) {
            const ChatFormatName& f = chat_formats()[size_t(i)];
            QVERIFY2(names.valueToKey(int(f.format)), f.key);
            QCOMPARE(listed[i].toMap()["format"].toInt(), int(f.format));
            QCOMPARE(listed[i].toMap()["name"].toString(), QString::fromLatin1(f.name));
        }
    }
};

QTEST_MAIN(ChatFormatChoiceTest)
#include "test_chat_format_choice.moc"
