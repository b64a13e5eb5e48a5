// What the chat view is given for each message: answers' Markdown as HTML with any raw HTML shown
// as text, which answers can be continued, and which messages the model no longer sees.
#include <QGuiApplication>
#include <QtTest>

#include "message_list_model.h"

class MessageListModelTest : public QObject {
    Q_OBJECT
    static QVariant role(const MessageListModel& model, int row, int role) {
        return model.index(row).data(role);
    }

private slots:
    void rawHtmlInAnAnswerIsShownAsText() {
        Conversation c;
        c.messages.append({Message::Role::Assistant, "**bold** and <b>raw</b> <img src=x>", false, "eos", false});
        MessageListModel model;
        model.show(&c);
        const QString html = role(model, 0, MessageListModel::HtmlRole).toString();
        QVERIFY2(html.contains("&lt;b&gt;raw&lt;/b&gt;") && html.contains("&lt;img src=x&gt;"), qPrintable(html));
        QVERIFY2(!html.contains("<b>raw") && !html.contains("<img"), qPrintable(html));
        QVERIFY2(html.contains("font-weight") && html.contains(">bold<"), qPrintable(html));  // Markdown stays
    }

    void answersCutShortCanBeContinued() {
        Conversation c;
        for (const char* reason : {"eos", "cancelled", "max tokens", "interrupted", "context full", "error"})
            c.messages.append({Message::Role::Assistant, "text", false, reason, false});
        c.messages.append({Message::Role::User, "question", false, {}, false});
        MessageListModel model;
        model.show(&c);
        QList<bool> continuable;
        for (int row = 0; row < model.rowCount(); ++row)
            continuable.append(role(model, row, MessageListModel::ContinuableRole).toBool());
        QCOMPARE(continuable, (QList<bool>{false, true, true, true, false, false, false}));
    }

    void forgottenMessagesStayAndAreMarked() {
        Conversation c;
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
};

int main(int argc, char** argv) {
    QGuiApplication application(argc, argv);  // QTextDocument needs a GUI application for fonts
    MessageListModelTest test;
    return QTest::qExec(&test, argc, argv);
}

#include "test_message_list_model.moc"
