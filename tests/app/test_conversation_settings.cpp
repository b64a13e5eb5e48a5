// ConversationSettings refuses sampling values the engine would refuse, keeps the old value and
// says why in lastError; no model needed.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "conversation_settings.h"

class TestConversationSettings : public QObject {
    Q_OBJECT

private slots:
    void init() {
        QVERIFY(dir_.isValid());
        qsettings_ = std::make_unique<QSettings>(dir_.filePath("settings.ini"), QSettings::IniFormat);
        qsettings_->clear();
        settings_ = std::make_unique<ConversationSettings>(qsettings_.get());
        settings_->setConversation("c1");
    }

    void out_of_range_is_refused_data() {
        QTest::addColumn<QByteArray>("property");
        QTest::addColumn<QVariant>("value");
        QTest::addColumn<QString>("error");
        QTest::newRow("temperature -1") << QByteArray("temperature") << QVariant(-1.0)
                                        << "temperature must be 0 or more (0 is greedy), not -1";
        QTest::newRow("top-p 7") << QByteArray("topP") << QVariant(7.0)
                                 << "top-p must be in (0, 1] (1 turns it off), not 7";
        QTest::newRow("top-p 0") << QByteArray("topP") << QVariant(0.0)
                                 << "top-p must be in (0, 1] (1 turns it off), not 0";
        QTest::newRow("top-k -1") << QByteArray("topK") << QVariant(-1)
                                  << "top-k must be 0 or more (0 turns it off), not -1";
        QTest::newRow("repeat penalty 0") << QByteArray("repeatPenalty") << QVariant(0.0)
                                          << "repeat penalty must be more than 0 (1 turns it off), not 0";
    }

    void out_of_range_is_refused() {
        QFETCH(QByteArray, property);
        QFETCH(QVariant, value);
        QFETCH(QString, error);
        const QVariant before = settings_->property(property);
        QSignalSpy changed(settings_.get(), &ConversationSettings::changed);
        QSignalSpy error_changed(settings_.get(), &ConversationSettings::lastErrorChanged);

        QVERIFY(settings_->setProperty(property, value));
        QCOMPARE(settings_->property(property), before);
        QCOMPARE(changed.count(), 0);
        QCOMPARE(settings_->lastError(), error);
        QCOMPARE(error_changed.count(), 1);
        QVERIFY(llamadesk::validate_sampling(settings_->generateParams().sampling).ok());
    }

    void a_valid_value_clears_the_error() {
        settings_->setTopP(7);
        QVERIFY(!settings_->lastError().isEmpty());
        settings_->setTopP(1);  // the edge of the range: top-p off
        QCOMPARE(settings_->topP(), 1.0);
        QCOMPARE(settings_->lastError(), QString());
        settings_->setTemperature(0);  // greedy
        QCOMPARE(settings_->temperature(), 0.0);
        QCOMPARE(settings_->lastError(), QString());
    }

private:
    QTemporaryDir dir_;
    std::unique_ptr<QSettings> qsettings_;
    std::unique_ptr<ConversationSettings> settings_;
};

QTEST_GUILESS_MAIN(TestConversationSettings)
#include "test_conversation_settings.moc"
