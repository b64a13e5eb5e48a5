// Several conversations answered together (Engine::generate_batch): each answer equals the one
// the conversation gives alone, also when it joins a batch under way; a joining prompt is prefilled
// a chunk per step while the others go on; one answer stopping or failing leaves the others going,
// and making room for one never takes another's blocks.
#include <QTest>

#include "engine_fixtures.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

const std::vector<std::string> kMessages{"hello there", "a story about a cat", "what next", "the last one, longer"};

}  // namespace

class TestEngineBatch : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_;

    // Each message answered alone, in a fresh engine, after an optional first turn.
    std::vector<std::vector<int>> alone(const GenerateParams& g, bool with_history) {
        std::vector<std::vector<int>> out;
        for (const std::string& m : kMessages) {
            Engine e;
            if (!e.load(load_params(model_)).ok()) qFatal("load");
            const ConversationId c = e.create_conversation();
            if (with_history && !e.generate(c, "first, " + m, g).status.ok()) qFatal("history");
            out.push_back(e.generate(c, m, g).tokens);
        }
        return out;
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = write_synthetic_gguf(dir_, "gqa", small_config(6, 2, 12, 512), 31);
    }

    void each_answer_equals_the_answer_alone_data() {
        QTest::addColumn<bool>("with_history");
        QTest::newRow("new conversations") << false;
        QTest::newRow("follow-ups") << true;
    }

    void each_answer_equals_the_answer_alone() {
        QFETCH(bool, with_history);
        const GenerateParams g = greedy(24);
        const std::vector<std::vector<int>> expected = alone(g, with_history);
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        std::vector<BatchRequest> requests;
        for (const std::string& m : kMessages) {
            const ConversationId c = e.create_conversation();
            if (with_history) LLAMADESK_VERIFY_OK(e.generate(c, "first, " + m, g).status);
            requests.push_back({c, m, g, {}, nullptr});
        }
        const std::vector<GenerationResult> results = e.generate_batch(requests);
        QCOMPARE(results.size(), kMessages.size());
        for (size_t i = 0; i < results.size(); ++i) {
            LLAMADESK_VERIFY_OK(results[i].status);
            QCOMPARE(results[i].tokens, expected[i]);
        }
    }

    // Answers join between steps: each still equals its answer alone, each is told its end once,
    // and results list the admitted after the requests.
    void answers_join_a_batch_under_way() {
        const GenerateParams g = greedy(24);
        const std::vector<std::vector<int>> expected = alone(g, false);
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        std::vector<ConversationId> ids;
        for (size_t i = 0; i < kMessages.size(); ++i) ids.push_back(e.create_conversation());
        std::vector<int> finished(kMessages.size(), 0);
        const auto request = [&](size_t i) {
            return BatchRequest{ids[i], kMessages[i], g, {}, nullptr, [&finished, i](const GenerationResult&) { ++finished[i]; }};
        };
        int steps = 0;
        const std::vector<GenerationResult> results = e.generate_batch({request(0)}, [&]() -> std::vector<BatchRequest> {
            ++steps;  // the third message joins at step 3, the others together at step 6
            if (steps == 3) return {request(2)};
            if (steps == 6) return {request(1), request(3)};
            return {};
        });
        QCOMPARE(results.size(), kMessages.size());
        const std::vector<size_t> order{0, 2, 1, 3};
        for (size_t k = 0; k < order.size(); ++k) {
            LLAMADESK_VERIFY_OK(results[k].status);
            QCOMPARE(results[k].tokens, expected[order[k]]);
        }
        QCOMPARE(finished, std::vector<int>(kMessages.size(), 1));
    }

    // A long prompt joins a chunk at a time: the answer under way gets a token after each chunk,
    // instead of waiting for the whole prompt.
    void a_long_prompt_joins_a_chunk_per_step() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId a = e.create_conversation(), b = e.create_conversation();
        std::string prompt = "the long one";
        TurnSize size;
        do {
            prompt += " and then the cache grew";
            LLAMADESK_VERIFY_OK(e.measure_turn(b, prompt, "", &size));
        } while (size.message_tokens < 300);  // two chunks of the CPU's 256
        QVERIFY2(size.fits(), "the test prompt must fit the model's context");

        int a_tokens = 0, a_when_joined = -1, a_when_b_began = -1;
        BatchRequest first{a, kMessages[0], greedy(60), [&](const std::string&, const GenerationStats&) { ++a_tokens; }};
        BatchRequest second{b, prompt, greedy(4), [&](const std::string&, const GenerationStats&) {
                                if (a_when_b_began < 0) a_when_b_began = a_tokens;
                            }};
        const std::vector<GenerationResult> results = e.generate_batch({first}, [&]() -> std::vector<BatchRequest> {
            if (a_tokens < 5 || a_when_joined >= 0) return {};
            a_when_joined = a_tokens;
            return {second};
        });
        LLAMADESK_VERIFY_OK(results[0].status);
        LLAMADESK_VERIFY_OK(results[1].status);
        QCOMPARE(results[1].stats.prefilled_tokens, size.message_tokens);
        // Whole, the prompt would have run before a's next token; in two chunks a decodes after each.
        QVERIFY2(a_when_b_began - a_when_joined >= 2,
                 qPrintable(QString("a decoded %1 tokens while b's prompt joined").arg(a_when_b_began - a_when_joined)));
    }

    // A conversation whose answer is under way cannot join again; its answer goes on untouched.
    void a_conversation_under_way_cannot_join_twice() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId a = e.create_conversation();
        int steps = 0;
        const std::vector<GenerationResult> results =
            e.generate_batch({{a, kMessages[0], greedy(12), {}, nullptr}}, [&]() -> std::vector<BatchRequest> {
                if (++steps != 4) return {};
                return {{a, "again", greedy(4), {}, nullptr}};
            });
        LLAMADESK_VERIFY_OK(results[0].status);
        QCOMPARE(results[1].status.code, ErrorCode::InvalidArgument);
        QCOMPARE(results[0].tokens, alone(greedy(12), false)[0]);
    }

    // Continue joins a batch too: the answer goes on exactly as continue_answer() goes on with it.
    void a_continued_answer_joins_a_batch() {
        const auto cut_short = [&](Engine& e) {
            const ConversationId c = e.create_conversation();
            if (e.generate(c, kMessages[3], greedy(5)).stop_reason != StopReason::MaxTokens) qFatal("cut short");
            return c;
        };
        Engine alone;
        LLAMADESK_VERIFY_OK(alone.load(load_params(model_)));
        const ConversationId c0 = cut_short(alone);
        const GenerationResult expected = alone.continue_answer(c0, greedy(6));
        LLAMADESK_VERIFY_OK(expected.status);

        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId c = cut_short(e), other = e.create_conversation();
        int steps = 0;
        BatchRequest resume{c, "", greedy(6), {}, nullptr, {}, true};
        const std::vector<GenerationResult> results =
            e.generate_batch({{other, kMessages[0], greedy(20), {}, nullptr}}, [&]() -> std::vector<BatchRequest> {
                if (++steps != 3) return {};
                return {resume};
            });
        LLAMADESK_VERIFY_OK(results[1].status);
        QCOMPARE(results[1].tokens, expected.tokens);
        QCOMPARE(results[1].text, expected.text);
        ConversationStats s;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &s));
        QCOMPARE(s.n_turns, 1);
    }

    // Once its answer has ended, a conversation may join again at the very next step (a follow-up,
    // a regenerate), while another answer goes on.
    void a_conversation_may_join_again_once_its_answer_ended() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId a = e.create_conversation(), b = e.create_conversation();
        bool a_ended = false, asked_again = false;
        BatchRequest first{a, kMessages[0], greedy(3), {}, nullptr, [&](const GenerationResult&) { a_ended = true; }};
        const std::vector<GenerationResult> results =
            e.generate_batch({first, {b, kMessages[1], greedy(40), {}, nullptr}}, [&]() -> std::vector<BatchRequest> {
                if (!a_ended || asked_again) return {};
                asked_again = true;
                return {{a, kMessages[2], greedy(3), {}, nullptr}};
            });
        QCOMPARE(results.size(), size_t(3));
        for (const GenerationResult& r : results) LLAMADESK_VERIFY_OK(r.status);
        ConversationStats s;
        LLAMADESK_VERIFY_OK(e.conversation_stats(a, &s));
        QCOMPARE(s.n_turns, 2);
    }

    // Stop ends one answer; the others run to their limit.
    void stop_stops_one() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        std::atomic<bool> stop{false};
        GenerateParams g = greedy(30);
        g.sampling.temperature = 0.0f;
        std::vector<BatchRequest> requests;
        for (int i = 0; i < 3; ++i) requests.push_back({e.create_conversation(), kMessages[size_t(i)], g, {}, nullptr});
        int pieces = 0;
        requests[1].cancel = &stop;
        requests[1].on_token = [&](const std::string&, const GenerationStats&) {
            if (++pieces == 5) stop = true;
        };
        const std::vector<GenerationResult> results = e.generate_batch(requests);
        QCOMPARE(results[1].stop_reason, StopReason::Cancelled);
        QCOMPARE(int(results[1].tokens.size()), 5);
        for (int i : {0, 2})
            QVERIFY(results[size_t(i)].stop_reason == StopReason::MaxTokens || results[size_t(i)].stop_reason == StopReason::Eos);
    }

    // An answer that cannot start (its message does not fit, its sampling is out of range) fails
    // alone and leaves its conversation as it was.
    void a_failing_answer_fails_alone() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId a = e.create_conversation(), b = e.create_conversation(), c = e.create_conversation();
        GenerateParams bad = greedy(8);
        bad.sampling.top_p = 7;
        const std::vector<GenerationResult> results =
            e.generate_batch({{a, "fine", greedy(8), {}, nullptr}, {b, std::string(3000, 'x'), greedy(8), {}, nullptr},
                              {c, "also fine", bad, {}, nullptr}});
        LLAMADESK_VERIFY_OK(results[0].status);
        QCOMPARE(results[1].status.code, ErrorCode::ContextFull);
        QCOMPARE(results[2].status.code, ErrorCode::InvalidArgument);
        ConversationStats s;
        LLAMADESK_VERIFY_OK(e.conversation_stats(b, &s));
        QCOMPARE(s.n_turns, 0);
        QVERIFY(!results[0].tokens.empty());

        const std::vector<GenerationResult> twice = e.generate_batch({{a, "x", greedy(2), {}, nullptr}, {a, "y", greedy(2), {}, nullptr}});
        QCOMPARE(twice[0].status.code, ErrorCode::InvalidArgument);
        QCOMPARE(twice[1].status.code, ErrorCode::InvalidArgument);
    }

    // With a pool that holds the batch and little else, making room evicts the idle conversation,
    // never one that is answering.
    void room_is_never_taken_from_the_batch() {
        Engine probe;
        LLAMADESK_VERIFY_OK(probe.load(load_params(model_)));
        const ConversationId p = probe.create_conversation();
        LLAMADESK_VERIFY_OK(probe.generate(p, "x", greedy(1)).status);
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(probe.cache_layout(p, &layout));

        Engine e;  // 8 blocks: the idle conversation's 2, then the two answers need 3 each
        LLAMADESK_VERIFY_OK(e.load(load_params(model_, 8 * layout.bytes_per_block)));
        const ConversationId idle = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.generate(idle, "an idle conversation", greedy(8)).status);
        const ConversationId a = e.create_conversation(), b = e.create_conversation();
        const std::vector<GenerationResult> results =
            e.generate_batch({{a, "first answer", greedy(30), {}, nullptr}, {b, "second answer", greedy(30), {}, nullptr}});
        LLAMADESK_VERIFY_OK(results[0].status);
        LLAMADESK_VERIFY_OK(results[1].status);
        ConversationStats s;
        LLAMADESK_VERIFY_OK(e.conversation_stats(idle, &s));
        QCOMPARE(s.times_evicted, int64_t(1));
        for (ConversationId c : {a, b}) {
            LLAMADESK_VERIFY_OK(e.conversation_stats(c, &s));
            QCOMPARE(s.times_evicted, int64_t(0));
        }
    }
};

QTEST_GUILESS_MAIN(TestEngineBatch)
#include "test_engine_batch.moc"
