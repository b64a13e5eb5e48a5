// Engine::perplexity() against a slow reference that runs one token at a time through the CPU
// backend and takes a plain softmax in double; its windows on text longer than the context; the KV
// pool it borrows from; and the real stories260K model on its own greedy story.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <vector>

#include "backends/backend.h"
#include "engine_fixtures.h"
#include "model/checkpoint.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

const std::string kStory =
    "The little dog ran to the park. He saw a red ball under a big tree and wanted to play with it. "
    "A girl named Sue came by and threw the ball for him. The dog was happy and ran fast. They played "
    "all day until the sun went down, and then they walked home together, tired and glad. The next "
    "morning the dog waited by the door, hoping Sue would come back to play with the red ball again.";

std::vector<int> tokenize(const Engine& e, const std::string& text) {
    std::vector<int> ids;
    const Status s = e.tokenize(text, true, &ids);
    if (!s.ok()) qFatal("tokenize: %s", s.message.c_str());
    return ids;
}

PerplexityResult score(Engine& e, const std::string& text) {
    PerplexityResult r;
    const Status s = e.perplexity(text, &r);
    if (!s.ok()) qFatal("perplexity: %s", s.message.c_str());
    return r;
}

// The obviously correct score: each window from position 0, one token per forward call, and
// -log of the softmax probability of the next token, all in double.
class SlowReference {
public:
    explicit SlowReference(const QString& model_path)
        : ckpt_(open_checkpoint(model_path.toStdString())), backend_(make_cpu_backend(ckpt_, {1})) {
        const ModelConfig& c = ckpt_.config;
        const KvLayout layout{c.n_layers, c.n_kv_heads, c.head_dim(), 16};
        table_.resize(size_t((c.seq_len + layout.block_size - 1) / layout.block_size));
        std::iota(table_.begin(), table_.end(), 0);
        backend_->allocate_kv_pool(layout, int(table_.size()));
    }

    // Sum over i >= 1 of -log p(window[i] | window[0..i)).
    double nll_sum(const std::vector<int32_t>& window) {
        const int vocab = ckpt_.config.vocab_size;
        std::vector<float> logits(static_cast<size_t>(vocab));
        double sum = 0;
        for (size_t pos = 0; pos + 1 < window.size(); ++pos) {
            backend_->forward({&window[pos], 1}, int(pos), {table_.data(), int(table_.size())}, logits.data());
            const double max = *std::max_element(logits.begin(), logits.end());
            double total = 0;
            for (float x : logits) total += std::exp(double(x) - max);
            const double p = std::exp(double(logits[size_t(window[pos + 1])]) - max) / total;
            sum -= std::log(p);
        }
        return sum;
    }

private:
    Checkpoint ckpt_;
    std::unique_ptr<Backend> backend_;
    std::vector<int32_t> table_;
};

// The windows Engine::perplexity() documents, built here from the tokens: BOS then the next
// context - 1 text tokens each.
std::vector<std::vector<int32_t>> windows_of(const std::vector<int>& tokens, int context) {
    std::vector<std::vector<int32_t>> out;
    for (size_t first = 1; first < tokens.size(); first += size_t(context - 1)) {
        const size_t end = std::min(tokens.size(), first + size_t(context - 1));
        std::vector<int32_t> w{tokens[0]};
        w.insert(w.end(), tokens.begin() + std::ptrdiff_t(first), tokens.begin() + std::ptrdiff_t(end));
        out.push_back(std::move(w));
    }
    return out;
}

void compare_relative(double actual, double expected, double tol, const char* what) {
    const double d = std::abs(actual - expected);
    QVERIFY2(d <= tol * std::abs(expected),
             qPrintable(QStringLiteral("%1: %2 against the reference's %3").arg(what).arg(actual, 0, 'g', 12)
                            .arg(expected, 0, 'g', 12)));
}

}  // namespace

class TestPerplexity : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString long_context_path_, tiny_context_path_;

    // The engine's score equals the reference over the documented windows.
    void check_against_reference(const QString& model, const std::string& text, int expect_windows) {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model)));
        const std::vector<int> tokens = tokenize(e, text);
        const PerplexityResult r = score(e, text);
        QCOMPARE(r.tokens, int(tokens.size()) - 1);
        QCOMPARE(r.windows, expect_windows);

        SlowReference ref(model);
        const auto windows = windows_of(tokens, e.model_info().context_length);
        QCOMPARE(int(windows.size()), expect_windows);
        double sum = 0;
        for (const auto& w : windows) sum += ref.nll_sum(w);
        const double mean = sum / r.tokens;
        compare_relative(r.mean_nll, mean, 1e-4, "mean NLL");
        compare_relative(r.perplexity, std::exp(mean), 1e-4, "perplexity");
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        long_context_path_ = write_synthetic_gguf(dir_, "long", small_config(6, 2, 12, 600), 21);
        tiny_context_path_ = write_synthetic_gguf(dir_, "tiny", small_config(4, 4, 10, 32), 22);
    }

    // One window longer than the prefill chunk, so several forward calls share one cache.
    void one_window_equals_slow_reference() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(long_context_path_)));
        const int n = int(tokenize(e, kStory).size());
        QVERIFY2(n > 300 && n <= 600, qPrintable(QString::number(n)));
        check_against_reference(long_context_path_, kStory, 1);
    }

    // Context 32: windows of BOS + 31 text tokens, the last one partial.
    void windows_equal_slow_reference() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(tiny_context_path_)));
        QCOMPARE(e.model_info().context_length, 32);
        const std::string text = kStory.substr(0, 120);
        const int n = int(tokenize(e, text).size());
        QVERIFY(n > 64);
        check_against_reference(tiny_context_path_, text, (n - 1 + 30) / 31);
    }

    // The edges: exactly a context's worth of tokens is one window; one more starts a second that
    // scores that single token after BOS.
    void window_edges() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(tiny_context_path_)));
        std::string fits, spills;
        for (size_t len = 1; len <= kStory.size() && spills.empty(); ++len) {
            const std::string prefix = kStory.substr(0, len);
            const size_t n = tokenize(e, prefix).size();
            if (n == 32) fits = prefix;
            if (n == 33) spills = prefix;
        }
        QVERIFY(!fits.empty() && !spills.empty());
        PerplexityResult r = score(e, fits);
        QCOMPARE(r.tokens, 31);
        QCOMPARE(r.windows, 1);
        r = score(e, spills);
        QCOMPARE(r.tokens, 32);
        QCOMPARE(r.windows, 2);
        check_against_reference(tiny_context_path_, spills, 2);
    }

    // The scratch blocks go back to the pool, and a conversation's cache stays as it was.
    void leaves_conversations_alone() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(long_context_path_)));
        const ConversationId c = e.create_conversation(ChatFormat::Completion);
        LLAMADESK_VERIFY_OK(e.generate(c, "once there was", greedy(8)).status);
        ConversationStats before;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &before));
        const PoolStats pool_before = e.pool_stats();
        QVERIFY(before.cached_tokens > 0);

        int calls = 0, last_scored = 0, total = 0;
        PerplexityResult r;
        LLAMADESK_VERIFY_OK(e.perplexity(kStory, &r, [&](int scored, int all) {
            ++calls;
            QVERIFY(scored > last_scored);
            last_scored = scored;
            total = all;
        }));
        QCOMPARE(calls, 2);  // two prefill chunks
        QCOMPARE(last_scored, r.tokens);
        QCOMPARE(total, r.tokens);

        ConversationStats after;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &after));
        QCOMPARE(after.cached_tokens, before.cached_tokens);
        QCOMPARE(after.times_evicted, int64_t(0));
        QCOMPARE(e.pool_stats().blocks_used, pool_before.blocks_used);
        QCOMPARE(e.pool_stats().evictions, int64_t(0));
        // and the conversation goes on from its cache
        const GenerationResult more = e.generate(c, " and", greedy(4));
        LLAMADESK_VERIFY_OK(more.status);
        QCOMPARE(more.stats.reprefilled_tokens, 0);
    }

    void refuses_what_it_cannot_score() {
        Engine none;
        PerplexityResult r;
        Status s = none.perplexity(kStory, &r);
        QCOMPARE(s.code, ErrorCode::NoModel);

        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(tiny_context_path_)));
        s = e.perplexity("", &r);
        QCOMPARE(s.code, ErrorCode::InvalidArgument);
        QCOMPARE(s.message, std::string("the text is empty; perplexity needs at least one token after BOS"));
        LLAMADESK_VERIFY_OK(e.perplexity("a", &r));  // one token after BOS is enough
        QCOMPARE(r.tokens, 1);
        QCOMPARE(e.pool_stats().blocks_used, 0);
    }

    // The model predicts its own greedy story well; the .bin and the .gguf hold the same weights.
    void stories260k_own_story_is_likely() {
        LLAMADESK_REQUIRE_SHARED(gguf, "models/stories260K/stories260K.gguf");
        LLAMADESK_REQUIRE_SHARED(bin, "models/stories260K/stories260K.bin");
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gguf)));
        const PerplexityResult r = score(e, kStories260KGreedy);
        qInfo("stories260K on its greedy story: perplexity %.4f, mean NLL %.5f over %d tokens", r.perplexity,
              r.mean_nll, r.tokens);
        QCOMPARE(r.windows, 1);
        QVERIFY2(r.perplexity > 1.0 && r.perplexity < 10.0, qPrintable(QString::number(r.perplexity)));
        // Ordinary story text the model did not write scores worse than its own.
        const PerplexityResult other = score(e, kStory);
        qInfo("stories260K on another story: perplexity %.4f over %d tokens", other.perplexity, other.tokens);
        QVERIFY(other.perplexity > r.perplexity);

        Engine from_bin;
        LLAMADESK_VERIFY_OK(from_bin.load(load_params(bin)));
        compare_relative(score(from_bin, kStories260KGreedy).mean_nll, r.mean_nll, 1e-4, "bin against gguf");
    }
};

QTEST_GUILESS_MAIN(TestPerplexity)
#include "test_perplexity.moc"
