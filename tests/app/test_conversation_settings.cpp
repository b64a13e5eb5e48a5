// ConversationSettings refuses sampling values the engine would refuse, keeps the old value and
// says why in lastError; each conversation keeps its own settings, and the system prompt never
// travels from one conversation to another; no model needed.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "conversations/conversation_settings.h"

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
        QTest::newRow("min-p 2") << QByteArray("minP") << QVariant(2.0)
                                 << "min-p must be in [0, 1] (0 turns it off), not 2";
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

    // One set of defaults: what a conversation nobody has tuned samples with is the engine's own
    // (the CLI's), min-p and the repetition penalty (off) included.
    void defaults_are_the_engines() {
        const llamadesk::SamplingParams engine;
        const llamadesk::SamplingParams window = settings_->generateParams().sampling;
        QCOMPARE(window.temperature, engine.temperature);
        QCOMPARE(window.top_p, engine.top_p);
        QCOMPARE(window.top_k, engine.top_k);
        QCOMPARE(window.min_p, engine.min_p);
        QCOMPARE(window.repeat_penalty, engine.repeat_penalty);
        QCOMPARE(engine.repeat_penalty, 1.0f);  // off, as in llama.cpp's tools
        QCOMPARE(window.seed, engine.seed);
        QVERIFY(settings_->generateParams().stop_strings.empty());
    }

    // Min-p and stop strings reach the engine, are the conversation's own and travel with its
    // export (samplingOf).
    void min_p_and_stop_strings_reach_the_engine() {
        settings_->setMinP(0.1);
        settings_->setStopStrings("###\n\nUser:\n");
        QCOMPARE(settings_->generateParams().sampling.min_p, 0.1f);
        QCOMPARE(settings_->generateParams().stop_strings, (std::vector<std::string>{"###", "User:"}));
        QCOMPARE(settings_->stopStrings(), QString("###\nUser:"));
        const QVariantMap own = settings_->samplingOf("c1");
        QCOMPARE(own.value("minP").toDouble(), 0.1);
        QCOMPARE(own.value("stopStrings").toStringList(), (QStringList{"###", "User:"}));
        settings_->adopt("c2");  // a new conversation starts from the latest choice
        settings_->setConversation("c2");
        QCOMPARE(settings_->minP(), 0.1);
        settings_->setStopStrings(QString());
        QVERIFY(settings_->generateParams().stop_strings.empty());
        settings_->setConversation("c1");
        QCOMPARE(settings_->stopStrings(), QString("###\nUser:"));
        QCOMPARE(ConversationSettings::samplingError({{"minP", 1.5}}), QString("min-p must be in [0, 1] (0 turns it off), not 1.5"));
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

    // A system prompt set in one conversation stays there: not in one made before, not in one made
    // after (that one takes the system prompt for new conversations).
    void the_system_prompt_belongs_to_its_conversation() {
        settings_->adopt("c1");
        settings_->adopt("c2");
        settings_->setSystemPrompt("Answer as a pirate.");
        QCOMPARE(settings_->systemPromptOf("c1"), QString("Answer as a pirate."));
        QCOMPARE(settings_->systemPromptOf("c2"), QString());
        QCOMPARE(settings_->defaultSystemPrompt(), QString());
        settings_->adopt("c3");
        QCOMPARE(settings_->systemPromptOf("c3"), QString());
        settings_->setConversation("c2");
        QCOMPARE(settings_->systemPrompt(), QString());
        QCOMPARE(settings_->generateParams().system_prompt, std::string());

        settings_->setDefaultSystemPrompt("Be brief.");
        settings_->adopt("c4");
        QCOMPARE(settings_->systemPromptOf("c4"), QString("Be brief."));
        // made before: unchanged
        QCOMPARE(settings_->systemPromptOf("c1"), QString("Answer as a pirate."));
        QCOMPARE(settings_->systemPromptOf("c2"), QString());
        QCOMPARE(settings_->systemPromptOf("c3"), QString());
    }

    // Sampling chosen in one conversation is where new ones start, and never changes another.
    void sampling_starts_new_conversations_and_stays_put() {
        settings_->adopt("c1");
        settings_->adopt("c2");
        settings_->setTemperature(0.3);
        settings_->setConversation("c2");
        QCOMPARE(settings_->temperature(), double(llamadesk::SamplingParams().temperature));  // the default, as before c1 changed
        settings_->adopt("c3");
        settings_->setConversation("c3");
        QCOMPARE(settings_->temperature(), 0.3);
        settings_->setTemperature(1.2);
        settings_->setConversation("c1");
        QCOMPARE(settings_->temperature(), 0.3);
    }

    // Settings written before conversations kept their own (only defaults/ was set) are kept by the
    // conversations that used them when they are adopted at load.
    void a_saved_conversation_keeps_the_values_it_used() {
        qsettings_->setValue("defaults/systemPrompt", "Old prompt.");
        qsettings_->setValue("defaults/topK", 7);
        settings_->adopt("old");
        settings_->setDefaultSystemPrompt("New prompt.");
        QCOMPARE(settings_->systemPromptOf("old"), QString("Old prompt."));
        settings_->setConversation("old");
        QCOMPARE(settings_->topK(), 7);
    }

private:
    QTemporaryDir dir_;
    std::unique_ptr<QSettings> qsettings_;
    std::unique_ptr<ConversationSettings> settings_;
};

QTEST_GUILESS_MAIN(TestConversationSettings)
#include "test_conversation_settings.moc"
