// What the window shows across model switches, with synthetic models and nothing from ../shared: a
// conversation in a format the next model cannot write (Llama 3 headers, a SentencePiece model)
// keeps its text, takes that model's format and says so, while the load happens whole; a failed
// load's message goes once a load the person chose succeeds. A state machine drives random
// sequences of loads (good, hostile, a server that does not answer, a model that cannot write the
// conversation's format), sends and switches, and after each step checks that everything the
// window shows names the model the engine really holds.
#include <QFile>
#include <QFileInfo>
#include <QRandomGenerator>
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

    void randomLoadsSendsAndSwitchesKeepEverythingTrue() {
        const QString builtin = QStringLiteral(LLAMADESK_BUILTIN_MODEL_FILE);
        const QStringList good{llama3_, sentencepiece_, builtin};
        const QString no_server = QStringLiteral("http://127.0.0.1:1/v1#absent");
        AppFixture f;
        f.app->start(QString());
        ConversationList* list = f.app->conversations();
        list->settings()->setMaxNewTokens(4);
        // The engine's own word: what the worker last said it loaded, and how many loads it
        // answered. Its signal reaches this test after the app's own slots, in another event,
        // so each load waits for the answer here too.
        ModelInfo engine;
        QString engine_path;
        int engine_answers = 0;
        connect(f.app->worker(), &InferenceWorker::modelLoaded, this,
                [&](const QString& path, const QString&, const ModelInfo& info) {
                    engine = info;
                    engine_path = path;
                    ++engine_answers;
                });
        connect(f.app->worker(), &InferenceWorker::loadFailed, this, [&] { ++engine_answers; });

        const quint32 seed = QRandomGenerator::global()->generate();
        QRandomGenerator random(seed);
        QStringList steps;
        const auto where = [&] { return QStringLiteral("seed %1, after: %2").arg(seed).arg(steps.join(" > ")); };
        for (int step = 0; step < 40; ++step) {
            const int action = step == 0 ? 0 : int(random.bounded(7));
            const int answers_before = engine_answers;
            bool failed_load = false;
            bool was_llama3 = false;  // a send: the conversation was in Llama 3's format before it
            switch (action) {
            case 0: {  // a good model
                const QString path = good[int(random.bounded(good.size()))];
                steps << "load " + QFileInfo(path).completeBaseName();
                QVERIFY2(f.load(path), qPrintable(where()));
                break;
            }
            case 1:  // a hostile file
                steps << "load broken";
                QVERIFY2(f.load(broken_), qPrintable(where()));
                failed_load = true;
                break;
            case 2:  // a server that does not answer
                steps << "load server";
                QVERIFY2(f.load(no_server), qPrintable(where()));
                failed_load = true;
                break;
            case 3:
            case 4: {  // a message
                steps << "send";
                was_llama3 = list->current()->format == ChatFormat::Llama3Chat;
                const AppFixture::Finished* answer = f.sendAndWait("hello " + QString::number(step));
                QVERIFY2(answer, qPrintable(where()));
                QVERIFY2(answer->result.status.ok(), qPrintable(where() + ": " + answer->result.status.message.c_str()));
                break;
            }
            case 5:  // a new conversation, written in Llama 3's format whatever the model
                steps << "new llama3";
                list->newConversation();
                list->setFormat(list->current(), ChatFormat::Llama3Chat);
                break;
            default:  // another conversation
                steps << "switch";
                list->selectConversation(int(random.bounded(list->model()->rowCount())));
                break;
            }
            const bool loaded = action <= 2;
            QVERIFY2(wait_until([&] {
                return !f.app->model()->loading() && !f.app->generation()->generating() &&
                       (!loaded || engine_answers > answers_before);
            }, 30000), qPrintable(where()));
            QCoreApplication::processEvents();

            // Everything the window shows names the model the engine holds.
            QVERIFY2(f.app->model()->hasModel(), qPrintable(where()));
            QCOMPARE(f.app->model()->name(), QString::fromStdString(engine.name));
            QCOMPARE(f.app->model()->path(), engine_path);
            QCOMPARE(f.app->model()->kvHeads(), engine.n_kv_heads);
            QCOMPARE(f.app->model()->contextLength(), engine.context_length);
            QCOMPARE(f.app->model()->recentCheckpoints().value(0), engine_path);
            QCOMPARE(f.app->figures()->contextLength(), engine.context_length);
            QCOMPARE(list->modelDefaults().format, engine.chat_format);
            if (f.app->inspector()->blocks() > 0) {
                QCOMPARE(f.app->inspector()->kvHeads(), engine.n_kv_heads);
                QCOMPARE(f.app->inspector()->headDim(), engine.head_dim);
            }
            // A failed load says so and names the file; a good one takes the message away.
            if (failed_load)
                QVERIFY2(!f.app->errorMessage().isEmpty(), qPrintable(where()));
            if (action == 0)
                QVERIFY2(f.app->errorMessage().isEmpty(), qPrintable(where() + ": " + f.app->errorMessage()));
            // An answer is the loaded model's: the figures and the saved record say which.
            if (action == 3 || action == 4) {
                QCOMPARE(list->current()->model, QString::fromStdString(engine.name));
                QCOMPARE(f.app->figures()->answerModel(), QString::fromStdString(engine.name));
                // Llama 3's format gave way where the model cannot write it, and the conversation says so.
                const bool writes_llama3 =
                    engine.chat_format == ChatFormat::Llama3Chat || engine.chat_format == ChatFormat::Llama31Chat;
                if (!writes_llama3) {
                    QVERIFY2(list->current()->format != ChatFormat::Llama3Chat, qPrintable(where()));
                    if (was_llama3) {
                        QCOMPARE(list->current()->format, engine.chat_format);
                        QVERIFY2(!list->current()->stats.format_note.empty(), qPrintable(where()));
                    }
                }
            }
            // A model loaded has answered nothing yet: no figures of the model before.
            if (action == 0)
                QVERIFY2(!f.app->figures()->hasAnswer(), qPrintable(where()));
            f.app->dismissError();
        }
        qInfo("%s", qPrintable(where()));
    }
};

QTEST_MAIN(AppModelSwitchTest)
#include "test_app_model_switch.moc"
