// The built-in model (resources/guide-model/) on a machine with nothing else: no ../shared, an
// empty HOME, no settings. The window and the CLI start on it and answer from what it was taught,
// and the header names it.
#include <QFile>
#include <QFileInfo>
#include <QProcess>
#include <QtTest>

#include "app_fixture.h"
#include "llamadesk/builtin_model.h"
#include "synthetic/synthetic_model.h"

class TestBuiltinModel : public QObject {
    Q_OBJECT

    static QProcessEnvironment bare_environment(const QString& home) {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert("HOME", home);
        env.insert("XDG_CONFIG_HOME", home + "/.config");
        env.insert("XDG_DATA_HOME", home + "/.local/share");
        env.insert("LLAMADESK_SHARED_DIR", home + "/no-shared-here");
        env.insert("QT_QPA_PLATFORM", "offscreen");
        env.remove("LLAMADESK_MODEL");
        env.remove("LLAMADESK_BUILTIN_MODEL");  // found beside the program, as after a build
        return env;
    }

private slots:
    void windowAnswersFromTheBuiltinModel() {
        QTemporaryDir home;
        QProcess app;
        app.setProcessEnvironment(bare_environment(home.path()));
        const QString png = home.filePath("window.png");
        app.start(LLAMADESK_APP_BINARY, {"--screenshot", png, "--prompt", "How do I start a new conversation?"});
        QVERIFY(app.waitForFinished(240000));
        const QString out = QString::fromUtf8(app.readAllStandardOutput());
        QVERIFY2(app.exitCode() == 0, qPrintable(QString::fromUtf8(app.readAllStandardError())));
        QVERIFY2(out.contains("Ctrl+N"), qPrintable(out));
        QVERIFY(QFileInfo(png).size() > 0);
    }

    void cliAnswersFromTheBuiltinModel() {
        QTemporaryDir home;
        QProcess cli;
        cli.setProcessEnvironment(bare_environment(home.path()));
        cli.start(LLAMADESK_CLI_BINARY, {"--chat", "--temperature", "0"});
        cli.write("What is the shortcut to open a model?\n");
        cli.closeWriteChannel();
        QVERIFY(cli.waitForFinished(120000));
        const QString err = QString::fromUtf8(cli.readAllStandardError());
        QCOMPARE(cli.exitCode(), 0);
        QVERIFY2(err.contains("llamadesk-guide"), qPrintable(err));
        const QString out = QString::fromUtf8(cli.readAllStandardOutput());
        QVERIFY2(out.contains("Ctrl+O"), qPrintable(out));
    }

    void headerNamesOnlyTheBuiltinModel() {
        qputenv("LLAMADESK_BUILTIN_MODEL", LLAMADESK_BUILTIN_MODEL_FILE);
        AppFixture f;
        QVERIFY(f.load(QString::fromStdString(llamadesk::builtin_model_path())));
        QVERIFY(f.app->model()->hasModel());
        QVERIFY(f.app->model()->builtin());
        QCOMPARE(f.app->model()->name(), QString("LlamaDesk Guide (built in)"));
        QCOMPARE(f.app->model()->suggestedQuestions().size(), 3);
        QCOMPARE(f.app->format()->chatFormat(), ChatFormatChoice::Llama2Chat);

        const QString other = f.dir.filePath("other.gguf");
        llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("260K"),
                                                                   llamadesk::DType::F32, 7),
                              other.toStdString());
        QVERIFY(f.load(other));
        QVERIFY(!f.app->model()->builtin());
        QCOMPARE(f.app->model()->name(), QString("other"));
        QVERIFY(f.app->model()->suggestedQuestions().isEmpty());
        qunsetenv("LLAMADESK_BUILTIN_MODEL");
    }

    // A bad --model at start: the window names the file and why, and opens the last good model, or
    // the built-in one when there is none.
    void aBadModelAtStartOpensTheLastGoodOneOrTheBuiltinOne() {
        qputenv("LLAMADESK_BUILTIN_MODEL", LLAMADESK_BUILTIN_MODEL_FILE);
        QTemporaryDir root;
        const QString broken = root.filePath("broken.gguf"), good = root.filePath("good.gguf");
        QFile file(broken);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(QByteArray("GGUF\x03\x00\x00\x00", 8) + QByteArray(64, '\xff'));
        file.close();
        auto loaded = [](AppFixture& f) {
            return wait_until([&] { return f.app->model()->hasModel() && !f.app->model()->loading(); }, 120000);
        };
        {
            AppFixture f(root.path());
            f.app->start(broken);
            QVERIFY(loaded(f));
            QVERIFY(f.app->model()->builtin());
            const QString message = f.app->errorMessage();
            QVERIFY2(message.startsWith("Could not load broken.gguf: ") &&
                         message.endsWith(". Opening the built-in model instead."),
                     qPrintable(message));
            llamadesk::write_gguf(llamadesk::make_synthetic_checkpoint(llamadesk::synthetic_config("260K"),
                                                                       llamadesk::DType::F32, 7),
                                  good.toStdString());
            QVERIFY(f.load(good));
            QCOMPARE(f.app->model()->name(), QString("good"));
        }
        AppFixture f(root.path());
        f.app->start(broken);
        QVERIFY(loaded(f));
        QCOMPARE(f.app->model()->name(), QString("good"));
        QVERIFY2(f.app->errorMessage().endsWith(". Opening good.gguf instead."), qPrintable(f.app->errorMessage()));
        qunsetenv("LLAMADESK_BUILTIN_MODEL");
    }
};

QTEST_MAIN(TestBuiltinModel)
#include "test_builtin_model.moc"
