// The real stories260K model: greedy text from the .bin (tok512.model found beside it) and from
// the .gguf (its own vocabulary) is the published one, the two files give the same logits, and
// stop strings cut the real text where they should.
#include <QTest>

#include <algorithm>
#include <cmath>

#include "backends/backend.h"
#include "engine_fixtures.h"
#include "model/checkpoint.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

class TestStories260K : public QObject {
    Q_OBJECT

private slots:
    void greedy_reproduces_published_text_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("prompt");
        QTest::newRow("bin from BOS") << "stories260K.bin" << "";
        QTest::newRow("gguf from BOS") << "stories260K.gguf" << "";
        QTest::newRow("bin with prompt") << "stories260K.bin" << "Once upon a time";
        QTest::newRow("gguf with prompt") << "stories260K.gguf" << "Once upon a time";
    }

    void greedy_reproduces_published_text() {
        QFETCH(QString, file);
        QFETCH(QString, prompt);
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/" + file);
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(path)));
        QCOMPARE(e.model_info().vocab_size, 512);
        QCOMPARE(e.model_info().n_kv_heads, 4);
        const ConversationId c = e.create_conversation(ChatFormat::Completion);
        const GenerationResult r = e.generate(c, prompt.toStdString(), greedy(120));
        LLAMADESK_VERIFY_OK(r.status);
        const std::string text = prompt.toStdString() + r.text;
        QVERIFY2(text.rfind(kStories260KGreedy, 0) == 0, text.c_str());
    }

    void bin_and_gguf_give_the_same_logits() {
        LLAMADESK_REQUIRE_SHARED(bin_path, "models/stories260K/stories260K.bin");
        LLAMADESK_REQUIRE_SHARED(gguf_path, "models/stories260K/stories260K.gguf");
        const Checkpoint bin = open_checkpoint(bin_path.toStdString());
        const Checkpoint gguf = open_checkpoint(gguf_path.toStdString());
        auto be_bin = make_cpu_backend(bin, {1});
        auto be_gguf = make_cpu_backend(gguf, {1});
        const int steps = 40, vocab = bin.config.vocab_size;
        QCOMPARE(gguf.config.vocab_size, vocab);
        const KvLayout layout{bin.config.n_layers, bin.config.n_kv_heads, bin.config.head_dim(), 16};
        be_bin->allocate_kv_pool(layout, (steps + 15) / 16);
        be_gguf->allocate_kv_pool(layout, (steps + 15) / 16);
        const std::vector<int32_t> blocks{0, 1, 2};
        const BlockTableView table{blocks.data(), int(blocks.size())};

        // Follow the greedy path from BOS, comparing every step's logits.
        std::vector<float> a(static_cast<size_t>(vocab)), b(static_cast<size_t>(vocab));
        int32_t token = 1;
        for (int pos = 0; pos < steps; ++pos) {
            be_bin->forward(std::span<const int32_t>(&token, 1), pos, table, a.data());
            be_gguf->forward(std::span<const int32_t>(&token, 1), pos, table, b.data());
            float scale = 0, diff = 0;
            for (int i = 0; i < vocab; ++i) {
                scale = std::max(scale, std::abs(a[size_t(i)]));
                diff = std::max(diff, std::abs(a[size_t(i)] - b[size_t(i)]));
            }
            QVERIFY2(diff <= 1e-5f * scale, qPrintable(QString("position %1: max difference %2").arg(pos).arg(diff)));
            token = int32_t(std::max_element(a.begin(), a.end()) - a.begin());
        }
    }

    void stop_strings_cut_the_answer() {
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.bin");
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(path)));
        GenerateParams g = greedy(120);
        g.stop_strings = {"Lily", "park"};
        std::string streamed;
        const GenerationResult r = e.generate(e.create_conversation(ChatFormat::Completion), "", g,
                                              [&](const std::string& piece, const GenerationStats&) { streamed += piece; });
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stop_reason, StopReason::StopString);
        QCOMPARE(r.text, std::string("Once upon a time, there was a little girl named "));
        QCOMPARE(streamed, r.text);  // nothing of the stop string was ever shown
    }

    void a_story_ends_at_its_end_token() {
        // stories260K closes a story with BOS, as llama2.c's run.c expects; the engine stops there.
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.bin");
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(path)));
        for (int64_t seed = 1; seed <= 10; ++seed) {
            const ConversationId c = e.create_conversation(ChatFormat::Completion);
            const GenerationResult r = e.generate(c, "", sampled(0, seed));
            LLAMADESK_VERIFY_OK(r.status);
            if (r.stop_reason != StopReason::Eos) continue;
            QVERIFY(r.stats.generated_tokens < 511);
            // Every answer token was run through the model: a follow-up prefills only itself.
            ConversationStats s;
            LLAMADESK_VERIFY_OK(e.conversation_stats(c, &s));
            QCOMPARE(s.cached_tokens, s.history_tokens);
            const GenerationResult next = e.generate(c, "The next day", sampled(5, seed));
            QCOMPARE(next.stats.prefilled_tokens, next.stats.prompt_tokens);
            return;
        }
        QFAIL("no story out of ten ended before the context was full");
    }

    void chat_template_runs_on_a_real_model() {
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.gguf");
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(path)));
        const ConversationId c = e.create_conversation();
        GenerateParams g = greedy(30);
        g.system_prompt = "You tell stories.";
        const GenerationResult first = e.generate(c, "Tell me a story.", g);
        LLAMADESK_VERIFY_OK(first.status);
        QVERIFY(first.stats.generated_tokens > 0);
        const GenerationResult second = e.generate(c, "Another one.", g);
        LLAMADESK_VERIFY_OK(second.status);
        QVERIFY(second.stats.prefilled_tokens <= second.stats.prompt_tokens + 2);
    }
};

QTEST_GUILESS_MAIN(TestStories260K)
#include "test_stories260k.moc"
