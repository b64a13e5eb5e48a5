// What the chat view is given for each message: answers' Markdown as HTML with any raw HTML shown
// as text, cut into prose and highlighted code blocks, tables with single borders, which answers
// can be continued, and which messages the model no longer sees.
#include <QGuiApplication>
#include <QtTest>

#include "models/code_highlighter.h"
#include "models/message_list_model.h"

class MessageListModelTest : public QObject {
    Q_OBJECT
    static QVariant role(const MessageListModel& model, int row, int role) {
        return model.index(row).data(role);
    }
    static QVariantList blocks(const MessageListModel& model, int row) {
        return role(model, row, MessageListModel::BlocksRole).toList();
    }
    static QString field(const QVariantList& blocks, int i, const char* name) {
        return blocks[i].toMap()[name].toString();
    }

private slots:
    void rawHtmlInAnAnswerIsShownAsText() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "**bold** and <b>raw</b> <img src=x>", false, AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        const QString html = role(model, 0, MessageListModel::HtmlRole).toString();
        QVERIFY2(html.contains("&lt;b&gt;raw&lt;/b&gt;") && html.contains("&lt;img src=x&gt;"), qPrintable(html));
        QVERIFY2(!html.contains("<b>raw") && !html.contains("<img"), qPrintable(html));
        QVERIFY2(html.contains("font-weight") && html.contains(">bold<"), qPrintable(html));  // Markdown stays
    }

    // The view's font sets the size (the window's zoom); the document's default must not override it.
    void theTextSizeIsTheViews() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "plain words", false, AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        const QString html = role(model, 0, MessageListModel::HtmlRole).toString();
        const qsizetype body = html.indexOf("<body");
        QVERIFY(body >= 0);
        const QString tag = html.mid(body, html.indexOf('>', body) - body);
        QVERIFY2(!tag.contains("font-size"), qPrintable(tag));
    }

    void answersCutShortCanBeContinued() {
        ConversationItem c;
        for (AnswerEnd::Reason reason : {AnswerEnd::Eos, AnswerEnd::Cancelled, AnswerEnd::MaxTokens, AnswerEnd::Interrupted,
                                         AnswerEnd::ContextFull, AnswerEnd::Error})
            c.messages.append({Message::Role::Assistant, "text", false, reason, false});
        c.messages.append({Message::Role::User, "question", false, {}, false});
        MessageListModel model;
        model.show(&c);
        QList<bool> continuable;
        for (int row = 0; row < model.rowCount(); ++row)
            continuable.append(role(model, row, MessageListModel::ContinuableRole).toBool());
        QCOMPARE(continuable, (QList<bool>{false, true, true, true, false, false, false}));
    }

    // The view gets a reason to compare (AnswerEnd), the files keep the engine's names.
    void stopReasonsKeepTheirNamesInFiles() {
        using llamadesk::StopReason;
        for (StopReason r : {StopReason::Eos, StopReason::StopString, StopReason::MaxTokens, StopReason::Cancelled,
                             StopReason::ContextFull, StopReason::Error}) {
            const AnswerEnd::Reason reason = AnswerEnd::of(r);
            QCOMPARE(AnswerEnd::name(reason), QString::fromLatin1(llamadesk::stop_reason_name(r)));
            QCOMPARE(AnswerEnd::from_name(AnswerEnd::name(reason)), reason);
        }
        QCOMPARE(AnswerEnd::from_name("interrupted"), AnswerEnd::Interrupted);
        QCOMPARE(AnswerEnd::name(AnswerEnd::None), QString());
        QCOMPARE(AnswerEnd::from_name(""), AnswerEnd::None);
        QCOMPARE(AnswerEnd::from_name("a reason from a later version"), AnswerEnd::None);

        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "text", false, AnswerEnd::Cancelled, false});
        MessageListModel model;
        model.show(&c);
        QCOMPARE(role(model, 0, MessageListModel::StopReasonRole).toInt(), int(AnswerEnd::Cancelled));
        QCOMPARE(role(model, 0, MessageListModel::MineRole).toBool(), false);
    }

    void forgottenMessagesStayAndAreMarked() {
        ConversationItem c;
        for (int i = 0; i < 4; ++i)
            c.messages.append({i % 2 ? Message::Role::Assistant : Message::Role::User, QString::number(i), false, {}, false});
        MessageListModel model;
        model.show(&c);
        QSignalSpy changed(&model, &MessageListModel::dataChanged);
        model.forget(&c, 0, 2);
        QCOMPARE(model.rowCount(), 4);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(role(model, 1, MessageListModel::ForgottenRole).toBool(), true);
        QCOMPARE(role(model, 2, MessageListModel::ForgottenRole).toBool(), false);
        QCOMPARE(c.remembered_turns(), 1);
        QCOMPARE(int(c.turns().size()), 1);
        QCOMPARE(c.turns()[0].user, std::string("2"));
    }
    void answersComeAsProseAndCodeBlocks() {
        ConversationItem c;
        c.messages.append({Message::Role::User, "```py\nx\n```", false, {}, false});
        c.messages.append({Message::Role::Assistant,
                           "Try **this**:\n\n```python\nif x < 1: print('<b>')\n```\n\nDone <i>now</i>.", false,
                           AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        QVERIFY(blocks(model, 0).isEmpty());  // the view shows the user's text as typed
        const QVariantList answer = blocks(model, 1);
        QCOMPARE(answer.size(), 3);
        QVERIFY(!answer[0].toMap()["isCode"].toBool());
        QVERIFY2(field(answer, 0, "html").contains(">this<"), qPrintable(field(answer, 0, "html")));
        QVERIFY(answer[1].toMap()["isCode"].toBool());
        QCOMPARE(field(answer, 1, "code"), QString("if x < 1: print('<b>')"));
        QCOMPARE(field(answer, 1, "language"), QString("Python"));
        const QString code = field(answer, 1, "html");
        QVERIFY2(code.startsWith("<pre") && code.contains(CodeColours::light().keyword.name()) &&
                     code.contains("&lt;b&gt;") && !code.contains("<b>"),
                 qPrintable(code));
        QVERIFY(!answer[2].toMap()["isCode"].toBool());
        QVERIFY2(field(answer, 2, "html").contains("&lt;i&gt;now&lt;/i&gt;"), qPrintable(field(answer, 2, "html")));
    }

    void codeCannotLeaveItsBlock() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "```html\n</pre><script>alert(1)</script>\n```", false,
                           AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        const QString html = field(blocks(model, 0), 0, "html");
        QVERIFY2(html.contains("&lt;/pre&gt;&lt;script&gt;") && !html.contains("<script") &&
                     html.count("</pre>") == 1,
                 qPrintable(html));
    }

    void theStreamingCursorEndsTheLastBlock() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "Code:\n```cpp\nint x", true, {}, false});
        MessageListModel model;
        model.show(&c);
        QVariantList streaming = blocks(model, 0);
        QCOMPARE(streaming.size(), 2);
        QCOMPARE(field(streaming, 1, "code"), QString("int x"));  // copied without the cursor
        QVERIFY2(field(streaming, 1, "html").contains("x \u258D</pre>"), qPrintable(field(streaming, 1, "html")));
        QVERIFY(!field(streaming, 0, "html").contains(u'\u258D'));

        c.messages[0].text = "Code:\n```cpp\nint x;\n```\nThat is";
        streaming = blocks(model, 0);
        QCOMPARE(streaming.size(), 3);
        QVERIFY(!field(streaming, 1, "html").contains(u'\u258D'));
        QVERIFY(field(streaming, 2, "html").contains(u'\u258D'));

        c.messages[0].text.clear();
        streaming = blocks(model, 0);
        QCOMPARE(streaming.size(), 1);
        QVERIFY(field(streaming, 0, "html").contains(u'\u258D'));
    }

    void darkCodeColours() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "```rust\nfn main() {}\n```", false, AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        QSignalSpy changed(&model, &MessageListModel::dataChanged);
        model.setDark(true);
        QCOMPARE(changed.size(), 1);
        QVERIFY(field(blocks(model, 0), 0, "html").contains(CodeColours::dark().keyword.name()));
        model.setDark(true);
        QCOMPARE(changed.size(), 1);
    }

    // QTextDocument's own table format frames each cell twice (border 1 with spacing 2).
    void tablesHaveSingleBorders() {
        ConversationItem c;
        c.messages.append({Message::Role::Assistant, "| a | b |\n|---|---|\n| 1 | 2 |\n", false, AnswerEnd::Eos, false});
        MessageListModel model;
        model.show(&c);
        for (const QString& html : {role(model, 0, MessageListModel::HtmlRole).toString(),
                                    field(blocks(model, 0), 0, "html")}) {
            QVERIFY2(html.contains("<table border=\"1\"") && html.contains("border-collapse:collapse") &&
                         html.contains("cellspacing=\"0\""),
                     qPrintable(html));
        }
    }
};

int main(int argc, char** argv) {
    QGuiApplication application(argc, argv);  // QTextDocument needs a GUI application for fonts
    MessageListModelTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_message_list_model.moc"
