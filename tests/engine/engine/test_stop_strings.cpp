// StopStringFilter: stop strings split across pieces are found, text that might start one is
// held back, and nothing of the stop string is ever shown.
#include <QTest>

#include "engine/stop_strings.h"

using namespace llamadesk;

class TestStopStrings : public QObject {
    Q_OBJECT
private slots:
    void stream_data() {
        QTest::addColumn<QStringList>("stops");
        QTest::addColumn<QStringList>("pieces");
        QTest::addColumn<QString>("shown");
        QTest::addColumn<bool>("stopped");
        QTest::newRow("no stops") << QStringList{} << QStringList{"a", "b", "c"} << "abc" << false;
        QTest::newRow("whole stop in a piece") << QStringList{"User:"} << QStringList{"Hi. User: x", "y"} << "Hi. "
                                               << true;
        QTest::newRow("stop split over pieces")
            << QStringList{"User:"} << QStringList{"Hi", " Us", "e", "r", ": more"} << "Hi " << true;
        QTest::newRow("false start released")
            << QStringList{"User:"} << QStringList{"Hi Us", "ually"} << "Hi Usually" << false;
        QTest::newRow("earliest of several")
            << QStringList{"###", "\n\n"} << QStringList{"a\n", "\nb###"} << "a" << true;
        QTest::newRow("held tail flushed at the end") << QStringList{"END"} << QStringList{"the E", "N"} << "the EN"
                                                      << false;
        QTest::newRow("empty stop ignored") << QStringList{""} << QStringList{"ab"} << "ab" << false;
        QTest::newRow("stop at the very start") << QStringList{"<"} << QStringList{"<x"} << "" << true;
    }

    void stream() {
        QFETCH(QStringList, stops);
        QFETCH(QStringList, pieces);
        QFETCH(QString, shown);
        QFETCH(bool, stopped);
        std::vector<std::string> s;
        for (const QString& x : stops) s.push_back(x.toStdString());
        StopStringFilter f(s);
        std::string out;
        for (const QString& p : pieces) {
            const std::string piece = f.push(p.toStdString());
            out += piece;
            // What is shown never contains the beginning of a stop string that is still open.
            for (const std::string& stop : s)
                if (!stop.empty()) QVERIFY(out.find(stop) == std::string::npos);
        }
        out += f.flush();
        QCOMPARE(QString::fromStdString(out), shown);
        QCOMPARE(f.stopped(), stopped);
    }

    void holds_back_only_what_could_start_a_stop() {
        StopStringFilter f({"User:"});
        QCOMPARE(f.push("Hello Us"), std::string("Hello "));
        QCOMPARE(f.push("x"), std::string("Usx"));
    }
};

QTEST_APPLESS_MAIN(TestStopStrings)
#include "test_stop_strings.moc"
