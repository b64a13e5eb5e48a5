// What the window shows across model switches, with synthetic models and nothing from ../shared: a
// conversation in a format the next model cannot write (Llama 3 headers, a SentencePiece model)
// keeps its text, takes that model's format and says so, while the load happens whole; a failed
// load's message goes once a load the person chose succeeds.
#include <QFile>
#include <QtTest>

#include "app_fixture.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;

class AppModelSwitchTest : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString llama3_, sentencepiece_, broken_;

private slots:
    void initTestCase() {
        const ModelConfig config = synthetic_config("260K");
        // Llama 3's special tokens on byte-level pieces, and a SentencePiece vocabulary without them
        llama3_ = dir_.filePath("l3.gguf");
        write_gguf(make_synthetic_bpe_checkpoint(config, {"h e", "Ġ t", "l l"}, 31), llama3_.toStdString());
        sentencepiece_ = dir_.filePath("sp.gguf");
        write_gguf(make_synthetic_checkpoint(config, DType::F32, 32), sentencepiece_.toStdString());
        broken_ = dir_.filePath("broken.gguf");
        QFile file(broken_);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("GGUF\x03\x00\x00\x00", 8) + QByteArray(64, '\xff'));
    }

    void aConversationTakesTheFormatTheNewModelWrites() {
        AppFixture f;
        f.app->start(QString());
        QVERIFY(f.load(llama3_));
        QCOMPARE(f.app->model()->name(), QStringLiteral("l3"));
        ConversationList* list = f.app->conversations();
        list->settings()->setMaxNewTokens(4);
        list->newConversation();
        list->setFormat(list->current(), ChatFormat::Llama3Chat);
        const AppFixture::Finished* first = f.sendAndWait("hello there");
        QVERIFY(first && first->result.status.ok());
        f.app->dismissError();

        // The old engine half switched here: the load failed on the conversation's format.
        QVERIFY(f.load(sentencepiece_));
        QVERIFY2(f.app->model()->hasModel(), qPrintable(f.app->errorMessage()));
        QCOMPARE(f.app->model()->name(), QStringLiteral("sp"));
        QVERIFY(wait_until([&] { return list->current()->format != ChatFormat::Llama3Chat; }, 10000));
        QCOMPARE(list->current()->format, list->modelDefaults().format);
        QCOMPARE(list->current()->messages.size(), 2);  // its text is kept
        QVERIFY2(f.app->format()->formatNote().contains("Llama 3"), qPrintable(f.app->format()->formatNote()));
        const AppFixture::Finished* second = f.sendAndWait("and again");
        QVERIFY(second);
        QVERIFY2(second->result.status.ok(), second->result.status.message.c_str());
        QCOMPARE(list->current()->model, QStringLiteral("sp"));
        // chosen again, Llama 3 gives way to the model's format again: the selector follows the engine
        f.app->format()->setChatFormat(ChatFormatChoice::Llama3Chat);
        QCOMPARE(list->current()->format, ChatFormat::Llama3Chat);
        QVERIFY(wait_until([&] { return list->current()->format == list->modelDefaults().format; }, 10000));
        QVERIFY(!f.app->format()->formatNote().isEmpty());

        // A failed load keeps sp and says so; a good load then takes the message away.
        QVERIFY(f.load(broken_));
        QVERIFY2(f.app->errorMessage().contains("broken.gguf"), qPrintable(f.app->errorMessage()));
        QCOMPARE(f.app->model()->name(), QStringLiteral("sp"));
        QVERIFY(f.load(llama3_));
        QCOMPARE(f.app->model()->name(), QStringLiteral("l3"));
        QVERIFY2(f.app->errorMessage().isEmpty(), qPrintable(f.app->errorMessage()));
        // the conversation stays in the format it took; the note named sp, and goes with it
        QCOMPARE(list->current()->format, ChatFormat(f.app->format()->chatFormat()));
        QVERIFY(wait_until([&] { return f.app->format()->formatNote().isEmpty(); }, 10000));
    }
};

QTEST_MAIN(AppModelSwitchTest)
#include "test_app_model_switch.moc"
