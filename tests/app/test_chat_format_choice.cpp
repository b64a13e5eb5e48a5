// The format selector's side alone, with no worker: the current conversation's format, the one
// the loaded model suggests, and no change while the conversation answers.
#include <QSettings>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "chat_format_choice.h"

using namespace llamadesk;

class ChatFormatChoiceTest : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { register_engine_metatypes(); }

    void theConversationKeepsItsFormatAndTheModelSuggestsOne() {
        QTemporaryDir dir;
        QSettings settings(dir.path() + "/settings.ini", QSettings::IniFormat);
        CancelFlags cancel;
        ConversationList list(dir.path() + "/data", &settings);
        Generation generation(&list, &cancel);
        ChatFormatChoice choice(&list, &generation);
        list.loadSaved();
        QSignalSpy changed(&choice, &ChatFormatChoice::changed);
        QSignalSpy formats(&list, &ConversationList::requestFormat);

        ModelInfo info;
        info.chat_format = ChatFormat::Completion;
        info.chat_format_reason = "no chat template";
        list.onModelLoaded({}, {}, info);
        QVERIFY(changed.count() > 0);
        QCOMPARE(choice.suggestedFormat(), QString("completion"));
        QCOMPARE(choice.suggestedFormatReason(), QString("no chat template"));
        QCOMPARE(choice.chatFormat(), QString("completion"));  // unused: it follows the model

        choice.setChatFormat("chat");
        QCOMPARE(choice.chatFormat(), QString("chat"));
        QCOMPARE(list.current()->format, ChatFormat::Llama2Chat);
        QCOMPARE(formats.last()[1].value<ChatFormat>(), ChatFormat::Llama2Chat);

        generation.start(list.current(), "Hello");
        choice.setChatFormat("completion");  // not while it answers
        QCOMPARE(choice.chatFormat(), QString("chat"));

        QCOMPARE(ChatFormatChoice::formats().size(), qsizetype(chat_formats().size()));
    }
};

QTEST_MAIN(ChatFormatChoiceTest)
#include "test_chat_format_choice.moc"
