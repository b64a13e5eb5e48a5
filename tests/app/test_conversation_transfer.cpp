// Export and import as the window does them, with a real AppContext and no model: a conversation
// to Markdown and JSON, all of them to one file, and a JSON export read back with everything it
// holds (messages, roles, times, model, chat format, system prompt, sampling). A bad file adds
// nothing and says why; a folder that cannot be written says so.
#include <QClipboard>
#include <QGuiApplication>
#include <QDir>
#include <QSignalSpy>
#include <QtTest>

#include "app_fixture.h"
#include "conversations/conversation_export.h"

namespace {

ConversationRecord sample(const QString& title, int exchanges) {
    ConversationRecord c;
    c.id = QUuid::createUuid().toString(QUuid::WithoutBraces);
    c.title = title;
    c.created = QDateTime(QDate(2026, 11, 30), QTime(9, 15, 2, 250), Qt::UTC);
    c.model = "Llama-3.2-1B-Instruct-Q4_K_M";
    c.format = llamadesk::ChatFormat::Llama31Chat;
    for (int i = 0; i < exchanges; ++i) {
        const QDateTime t = c.created.addSecs(60 * i);
        c.messages.append({Message::Role::User, QString("Question %1 about llamas?").arg(i), false, {}, false, t});
        c.messages.append({Message::Role::Assistant, QString("Answer %1: they hum.\n\n```python\nprint(%1)\n```").arg(i),
                           false, AnswerEnd::Eos, i == 0, t.addSecs(2)});
    }
    return c;
}

QUrl file_in(const QTemporaryDir& dir, const QString& name) { return QUrl::fromLocalFile(dir.filePath(name)); }

}  // namespace

class TestConversationTransfer : public QObject {
    Q_OBJECT

    std::unique_ptr<AppFixture> fixture_;
    QTemporaryDir out_;
    ConversationList* conversations() { return fixture_->app->conversations(); }
    ConversationTransfer* transfer() { return fixture_->app->transfer(); }

    void add(const ConversationRecord& c, const QString& systemPrompt, const QVariantMap& sampling) {
        QCOMPARE(conversations()->settings()->assign(c.id, systemPrompt, sampling), QString());
        conversations()->addConversation(c);
    }

private slots:
    void init() { fixture_ = std::make_unique<AppFixture>(); }
    void cleanup() { fixture_.reset(); }

    void jsonRoundTripKeepsEverything() {
        const ConversationRecord original = sample("Llamas & <alpacas>", 2);
        add(original, "You answer briefly.", {{"temperature", 0.3}, {"topK", 7}, {"seed", 42}});
        QSignalSpy done(transfer(), &ConversationTransfer::done);
        QVERIFY(transfer()->exportJson(0, file_in(out_, "one.json")));
        QCOMPARE(done.size(), 1);
        QVERIFY(done[0][0].toString().contains("one.json"));

        QCOMPARE(transfer()->importFile(file_in(out_, "one.json")), 1);
        QCOMPARE(conversations()->model()->rowCount(), 2);
        const ConversationItem* back = conversations()->model()->at(0);
        QVERIFY(back->id != original.id);  // never replaces what is there
        QCOMPARE(back->title, original.title);
        QCOMPARE(back->created, original.created);
        QCOMPARE(back->model, original.model);
        QCOMPARE(back->format, original.format);
        QCOMPARE(back->messages.size(), original.messages.size());
        for (int i = 0; i < original.messages.size(); ++i) {
            QCOMPARE(back->messages[i].role, original.messages[i].role);
            QCOMPARE(back->messages[i].text, original.messages[i].text);
            QCOMPARE(back->messages[i].time, original.messages[i].time);
            QCOMPARE(back->messages[i].stop_reason, original.messages[i].stop_reason);
            QCOMPARE(back->messages[i].forgotten, original.messages[i].forgotten);
        }
        QCOMPARE(conversations()->settings()->systemPromptOf(back->id), QString("You answer briefly."));
        const QVariantMap sampling = conversations()->settings()->samplingOf(back->id);
        QCOMPARE(sampling.value("temperature").toDouble(), 0.3);
        QCOMPARE(sampling.value("topK").toInt(), 7);
        QCOMPARE(sampling.value("seed").toInt(), 42);
        // Saved like any conversation: it is there after a restart.
        const QString saved = fixture_->dir.filePath("data/conversations/" + back->id + ".json");
        QVERIFY(wait_until([&] { return QFileInfo::exists(saved); }, 5000));
    }

    void exportAllHoldsEveryConversationInOrder() {
        for (const QString& title : {"third", "second", "first"})
            add(sample(title, 1), {}, {});
        QVERIFY(transfer()->exportAll(file_in(out_, "all.json")));
        QCOMPARE(transfer()->importFile(file_in(out_, "all.json")), 3);
        QCOMPARE(conversations()->model()->rowCount(), 6);
        for (int row = 0; row < 3; ++row)
            QCOMPARE(conversations()->model()->at(row)->title, conversations()->model()->at(row + 3)->title);
        QCOMPARE(conversations()->model()->at(0)->title, QString("first"));
        QCOMPARE(conversations()->currentIndex(), 0);  // the first of them is shown
    }

    void markdownReadsAsTheConversation() {
        add(sample("Llamas", 1), "Be brief.", {});
        QVERIFY(transfer()->exportMarkdown(0, file_in(out_, "llamas.md")));
        QFile file(out_.filePath("llamas.md"));
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QString md = QString::fromUtf8(file.readAll());
        QVERIFY(md.startsWith("# Llamas\n"));
        QVERIFY(md.contains("model Llama-3.2-1B-Instruct-Q4_K_M"));
        QVERIFY(md.contains("**System prompt:** Be brief."));
        QVERIFY(md.indexOf("## You") < md.indexOf("Question 0 about llamas?"));
        QVERIFY(md.indexOf("## Assistant") < md.indexOf("```python\nprint(0)\n```"));
    }

    void aBadFileAddsNothingAndSaysWhy_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<QString>("why");
        QTest::newRow("not json") << QByteArray("{\"kind\": ") << "not JSON";
        QTest::newRow("another kind") << QByteArray(R"({"kind": "chatgpt", "version": 1})") << "not a LlamaDesk export";
        QTest::newRow("newer version") << QByteArray(R"({"kind": "llamadesk-conversations", "version": 9})")
                                       << "export version 9";
        QTest::newRow("roles out of order")
            << QByteArray(R"({"kind": "llamadesk-conversations", "version": 1, "conversations": [
                 {"title": "ok", "messages": []},
                 {"title": "bad", "messages": [{"role": "assistant", "text": "hi"}]}]})")
            << "conversation 2 of 2: message 1 has role \"assistant\"";
        QTest::newRow("unknown format")
            << QByteArray(R"({"kind": "llamadesk-conversations", "version": 1, "conversations": [
                 {"title": "x", "chat_format": "klingon", "messages": []}]})")
            << "unknown chat format \"klingon\"";
        QTest::newRow("sampling the engine refuses")
            << QByteArray(R"({"kind": "llamadesk-conversations", "version": 1, "conversations": [
                 {"title": "ok", "messages": []}, {"title": "x", "sampling": {"topP": 7}, "messages": []}]})")
            << "conversation 2: top-p must be in (0, 1]";
    }

    void aBadFileAddsNothingAndSaysWhy() {
        QFETCH(QByteArray, bytes);
        QFETCH(QString, why);
        add(sample("kept", 1), {}, {});
        QFile file(out_.filePath("bad.json"));
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(bytes);
        file.close();
        QSignalSpy failed(transfer(), &ConversationTransfer::failed);
        QCOMPARE(transfer()->importFile(QUrl::fromLocalFile(file.fileName())), 0);
        QCOMPARE(conversations()->model()->rowCount(), 1);
        QCOMPARE(failed.size(), 1);
        const QString message = failed[0][0].toString();
        QVERIFY2(message.contains(why) && message.contains("bad.json") && message.contains("Nothing was added"),
                 qPrintable(message));
        QCOMPARE(fixture_->app->errorMessage(), message);  // the window shows it
    }

    void aFolderThatCannotBeWrittenSaysSo() {
        add(sample("kept", 1), {}, {});
        // a file where the folder should be (a read-only folder would not stop root, who runs CI)
        QFile blocker(out_.filePath("a-file"));
        QVERIFY(blocker.open(QIODevice::WriteOnly));
        blocker.close();
        QSignalSpy failed(transfer(), &ConversationTransfer::failed);
        QVERIFY(!transfer()->exportJson(0, QUrl::fromLocalFile(out_.filePath("a-file/x.json"))));
        QCOMPARE(failed.size(), 1);
        QVERIFY(failed[0][0].toString().contains("a-file/x.json"));
    }

    // The dialogs open where a file can be written: the documents folder, or home in a fresh
    // account that has none yet (the export failed there with "No such file or directory").
    void dialogsStartInAFolderThatExists() {
        QTemporaryDir home;
        const QByteArray old_home = qgetenv("HOME"), old_config = qgetenv("XDG_CONFIG_HOME");
        qputenv("HOME", home.path().toUtf8());
        qputenv("XDG_CONFIG_HOME", (home.path() + "/.config").toUtf8());
        const QUrl fresh = ConversationTransfer::startFolder();
        QVERIFY(QDir(home.path()).mkpath("Documents"));
        const QUrl with_documents = ConversationTransfer::startFolder();
        qputenv("HOME", old_home);
        if (old_config.isNull()) qunsetenv("XDG_CONFIG_HOME");
        else qputenv("XDG_CONFIG_HOME", old_config);
        QCOMPARE(fresh, QUrl::fromLocalFile(home.path()));
        QCOMPARE(with_documents, QUrl::fromLocalFile(home.path() + "/Documents"));
    }

    void suggestedNamesAreFileNames() {
        ConversationRecord c = sample("What is a/b: \"ratio\"?", 0);
        add(c, {}, {});
        QCOMPARE(transfer()->suggestedName(0, "md"), QString("What is a-b- ratio.md"));
    }

    // The export dialog's path field: what a typed path means (it replaced Qt's save dialog, whose
    // Ctrl+L lost the file name and whose Enter did nothing).
    void aTypedPathMeansTheFileAPersonExpects() {
        add(sample("Hay prices", 1), {}, {});
        const QString start = ConversationTransfer::startFolder().toLocalFile();
        QCOMPARE(transfer()->suggestedPath(0, "md"), start + "/Hay prices.md");
        QCOMPARE(transfer()->suggestedName(-1, "json"), QString("LlamaDesk conversations.json"));
        const auto target = [&](const QString& typed) { return transfer()->targetOf(typed, 0, "md").toLocalFile(); };
        QCOMPARE(target(start + "/Hay prices.md"), start + "/Hay prices.md");
        QCOMPARE(target("~/notes/hay"), QDir::homePath() + "/notes/hay.md");         // home, extension added
        QCOMPARE(target("notes.txt"), start + "/notes.txt");                          // relative: in the start folder
        QCOMPARE(target(out_.path()), out_.path() + "/Hay prices.md");                // a folder: the name goes in it
        QCOMPARE(target(out_.path() + "/later/"), out_.path() + "/later/Hay prices.md");  // one to be made
        QCOMPARE(target("  " + out_.path() + "/x.md\n"), out_.path() + "/x.md");  // spaces around a paste go
        QCOMPARE(ConversationTransfer::inFolder(start + "/Hay prices.md", QUrl::fromLocalFile(out_.path())),
                 out_.path() + "/Hay prices.md");
        QVERIFY(!ConversationTransfer::exists(QUrl::fromLocalFile(out_.path() + "/Hay prices.md")));
    }

    // A folder typed that is not there yet is made, and the export goes in it.
    void anExportMakesItsFolder() {
        add(sample("Shearing", 1), {}, {});
        const QUrl file = QUrl::fromLocalFile(out_.path() + "/new/deeper/Shearing.md");
        QVERIFY(transfer()->exportMarkdown(0, file));
        QVERIFY(ConversationTransfer::exists(file));
    }

    // A message's Copy button.
    void copyPutsTheTextOnTheClipboard() {
        QGuiApplication::clipboard()->setText("before");
        transfer()->copyText("Llamas hum.\nAlpacas too.");
        QCOMPARE(QGuiApplication::clipboard()->text(), QString("Llamas hum.\nAlpacas too."));
    }
};

QTEST_MAIN(TestConversationTransfer)
#include "test_conversation_transfer.moc"
