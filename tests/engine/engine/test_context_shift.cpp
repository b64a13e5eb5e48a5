// Context shift: cached keys moved to new positions equal keys computed there (layer 0, whose keys
// and values depend on the token and its position alone) for every cache type the CPU holds;
// shared blocks stay untouched and shifted blocks are never shared or saved; dropping turns keeps
// the cache where the tokens allow; generation goes on past the context.
#include <QTemporaryDir>
#include <QtTest>

#include <random>

#include "backends/cpu/cpu_backend.h"
#include "cache/kv_pool.h"
#include "engine/context_shift.h"
#include "engine_fixtures.h"
#include "model/weight_types.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;
using namespace llamadesk::test;
using llamadesk::cpu::CpuBackend;


namespace {

constexpr int kBlock = 16;

// A CPU backend over a 2-layer model (head_dim 32, so q8_0 can hold it) and a pool in front of it.
struct Cache {
    Checkpoint ckpt;
    std::unique_ptr<CpuBackend> backend;
    std::unique_ptr<KvPool> pool;

    explicit Cache(DType kv) : ckpt(make_synthetic_checkpoint(small_config(4, 2, 32, 256), DType::F32, 11)) {
        CpuBackendOptions opts;
        opts.n_threads = 1;
        opts.kv_dtype = kv;
        backend = std::make_unique<CpuBackend>(ckpt, opts);
        const KvLayout layout{ckpt.config.n_layers, ckpt.config.n_kv_heads, ckpt.config.head_dim(), kBlock};
        backend->allocate_kv_pool(layout, 40);
        pool = std::make_unique<KvPool>(layout, 40, backend->kv_bytes_per_block(layout));
    }
    void compute(ConversationId id, const std::vector<int32_t>& tokens) {
        pool->reserve(id, int(tokens.size()));
        std::vector<float> logits(size_t(ckpt.config.vocab_size));
        backend->forward(tokens, 0, pool->table(id), logits.data());
        pool->set_cached(id, int(tokens.size()), tokens);
    }
    // One row (head_dim values) of id's cache at pos, in f32.
    std::vector<float> row(ConversationId id, int layer, int is_value, int kv_head, int pos) const {
        const KvLayout& l = pool->layout();
        std::vector<std::byte> bytes(size_t(backend->kv_bytes_per_block(l)));
        backend->read_kv_block(pool->block_table(id)[size_t(pos / kBlock)], bytes);
        std::vector<float> all(size_t(l.block_elements()));
        weight_type(backend->kv_dtype()).to_f32(bytes.data(), all.data(), int64_t(all.size()));
        const float* r = all.data() + l.offset(0, layer, is_value, kv_head, pos % kBlock);
        return {r, r + l.head_dim};
    }
    std::vector<std::byte> block_bytes(int32_t block) const {
        std::vector<std::byte> bytes(size_t(backend->kv_bytes_per_block(pool->layout())));
        backend->read_kv_block(block, bytes);
        return bytes;
    }
};

std::vector<int32_t> random_tokens(int n, int vocab, unsigned seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int32_t& x : t) x = int32_t(3 + rng() % unsigned(vocab - 3));
    return t;
}

// Largest difference over a row, relative to the row's largest value.
double row_error(const std::vector<float>& a, const std::vector<float>& b) {
    double diff = 0, scale = 1e-12;
    for (size_t i = 0; i < a.size(); ++i) {
        diff = std::max(diff, std::abs(double(a[i]) - b[i]));
        scale = std::max(scale, std::abs(double(b[i])));
    }
    return diff / scale;
}

}  // namespace

class TestContextShift : public QObject {
    Q_OBJECT

private slots:
    void movedKeysEqualKeysComputedThere_data() {
        QTest::addColumn<int>("kv");
        QTest::addColumn<int>("keep");
        QTest::addColumn<int>("n");
        QTest::addColumn<double>("tolerance");
        // f16 and q8_0 round each moved row once more, where a fresh one is rounded once.
        for (const auto& [name, type, tol] : {std::tuple{"f32", DType::F32, 1e-5}, {"f16", DType::F16, 2e-3},
                                              {"q8_0", DType::Q8_0, 3e-2}}) {
            QTest::newRow((std::string(name) + " keep 4 drop 21").c_str()) << int(type) << 4 << 21 << tol;
            QTest::newRow((std::string(name) + " keep 16 drop 32").c_str()) << int(type) << 16 << 32 << tol;
            QTest::newRow((std::string(name) + " keep 0 drop 5").c_str()) << int(type) << 0 << 5 << tol;
        }
    }
    void movedKeysEqualKeysComputedThere() {
        QFETCH(int, kv);
        QFETCH(int, keep);
        QFETCH(int, n);
        QFETCH(double, tolerance);
        Cache c{DType(kv)};
        const std::vector<int32_t> tokens = random_tokens(90, c.ckpt.config.vocab_size, 5);
        c.compute(1, tokens);
        shift_kv(*c.backend, *c.pool, 1, keep, n, c.ckpt.config.rope());
        std::vector<int32_t> kept(tokens.begin(), tokens.begin() + keep);
        kept.insert(kept.end(), tokens.begin() + keep + n, tokens.end());
        QCOMPARE(c.pool->n_cached(1), int(kept.size()));
        QCOMPARE(c.pool->faithful_blocks(1), keep / kBlock);
        c.compute(2, kept);  // the same tokens computed at their new positions
        double worst = 0;
        for (int pos = 0; pos < int(kept.size()); ++pos)
            for (int g = 0; g < c.ckpt.config.n_kv_heads; ++g)
                for (int is_value = 0; is_value < 2; ++is_value)
                    worst = std::max(worst, row_error(c.row(1, 0, is_value, g, pos), c.row(2, 0, is_value, g, pos)));
        QVERIFY2(worst <= tolerance, qPrintable(QString("layer 0 differs by %1 of a row's scale").arg(worst)));
    }

    void sharedBlocksStayAndShiftedOnesAreNotShared() {
        Cache c{DType::F16};
        const std::vector<int32_t> tokens = random_tokens(64, c.ckpt.config.vocab_size, 9);
        c.compute(1, tokens);
        QCOMPARE(c.pool->share_prefix(2, tokens, 48), 48);  // conversation 2 takes blocks 0 to 2
        c.pool->reserve(2, 64);
        const std::vector<int32_t> theirs = c.pool->block_table(2);
        std::vector<std::vector<std::byte>> their_bytes;
        for (int32_t b : theirs) their_bytes.push_back(c.block_bytes(b));

        shift_kv(*c.backend, *c.pool, 1, 20, 10, c.ckpt.config.rope());
        QCOMPARE(c.pool->block_table(2), theirs);  // untouched, bytes too
        for (size_t i = 0; i < theirs.size(); ++i) QVERIFY(c.block_bytes(theirs[i]) == their_bytes[i]);
        QCOMPARE(c.pool->block_table(1)[0], theirs[0]);  // before the shift: still shared
        QVERIFY(c.pool->block_table(1)[1] != theirs[1]);  // rewritten: a copy of its own
        QCOMPARE(c.pool->faithful_blocks(1), 1);

        // What conversation 1 holds now is not what computing its tokens gives: nobody gets it.
        std::vector<int32_t> now(tokens.begin(), tokens.begin() + 20);
        now.insert(now.end(), tokens.begin() + 30, tokens.end());
        c.pool->set_cached(1, int(now.size()), now);
        QCOMPARE(c.pool->share_prefix(3, now, int(now.size())), kBlock);
        // Cut back before the shift, its cache is faithful again.
        c.pool->truncate(1, kBlock);
        QCOMPARE(c.pool->faithful_blocks(1), 1);
        c.compute(1, now);
        QCOMPARE(c.pool->faithful_blocks(1), int(now.size()) / kBlock);
    }

    // Llama 2 chat turns without a system prompt are rendered alike: dropping the first leaves the
    // rest's tokens as they were, so their cache stays and the next answer prefills its turn alone.
    void droppingTurnsKeepsTheirCache() {
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_synthetic_gguf(dir, "shift", small_config(4, 2, 32, 512), 3))));
        const ConversationId c = e.create_conversation(ChatFormat::Llama2Chat);
        for (const char* text : {"One two three four five.", "Six seven eight.", "Nine ten."})
            LLAMADESK_VERIFY_OK(e.generate(c, text, greedy(12)).status);
        ConversationStats before;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &before));
        LLAMADESK_VERIFY_OK(e.drop_oldest_turns(c, 1, ""));
        ConversationStats after;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &after));
        QCOMPARE(after.n_turns, 2);
        QVERIFY(after.history_tokens < before.history_tokens);
        // Moved, not dropped (the last answer's end marker was never computed, before or after).
        QCOMPARE(after.cached_tokens, before.cached_tokens - (before.history_tokens - after.history_tokens));
        QVERIFY(after.cached_tokens > 0);
        const GenerationResult next = e.generate(c, "Eleven. ", greedy(4));
        LLAMADESK_VERIFY_OK(next.status);
        // Its own turn and the end marker the cache never had; nothing the shift moved.
        QCOMPARE(next.stats.prefilled_tokens, next.stats.prompt_tokens + (after.history_tokens - after.cached_tokens));
        QCOMPARE(next.stats.reprefilled_tokens, 0);
    }

    // Llama 2 chat puts the system prompt inside the first turn: the next turn's tokens change, so
    // the cache is computed again.
    void llama2SystemPromptRebuilds() {
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_synthetic_gguf(dir, "shift", small_config(4, 2, 32, 512), 3))));
        const ConversationId c = e.create_conversation(ChatFormat::Llama2Chat);
        GenerateParams p = greedy(8);
        p.system_prompt = "Be brief.";
        for (const char* text : {"Hello", "Again", "More"}) LLAMADESK_VERIFY_OK(e.generate(c, text, p).status);
        LLAMADESK_VERIFY_OK(e.drop_oldest_turns(c, 1, "Be brief."));
        ConversationStats after;
        LLAMADESK_VERIFY_OK(e.conversation_stats(c, &after));
        QCOMPARE(after.n_turns, 2);
        QCOMPARE(after.cached_tokens, 0);
    }

    // A shifted conversation's blocks are not saved under its tokens: another conversation with
    // the same text computes them afresh instead of reading what the shift left.
    void snapshotsSkipShiftedBlocks() {
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_synthetic_gguf(dir, "shift", small_config(4, 2, 32, 512), 3))));
        LLAMADESK_VERIFY_OK(e.set_snapshots({dir.filePath("kv").toStdString(), 64 << 20, {}}));
        const ConversationId a = e.create_conversation(ChatFormat::Llama2Chat);
        std::vector<ChatTurn> turns;
        for (const char* text : {"One two three four five six seven.", "Eight nine ten eleven twelve thirteen.",
                                 "Fourteen fifteen sixteen seventeen."}) {
            const GenerationResult r = e.generate(a, text, greedy(16));
            LLAMADESK_VERIFY_OK(r.status);
            turns.push_back({text, r.text});
        }
        LLAMADESK_VERIFY_OK(e.drop_oldest_turns(a, 1, ""));
        ConversationStats shifted;
        LLAMADESK_VERIFY_OK(e.conversation_stats(a, &shifted));
        QVERIFY2(shifted.cached_tokens > 16, "the drop shifted the cache (else this test proves nothing)");
        LLAMADESK_VERIFY_OK(e.save_snapshot(a));
        const ConversationId b = e.create_conversation(ChatFormat::Llama2Chat);
        LLAMADESK_VERIFY_OK(e.restore_turns(b, {turns[1], turns[2]}, ""));
        const GenerationResult r = e.generate(b, "More.", greedy(2));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stats.restored_tokens, 0);
    }

    // With shift_when_full an answer goes on past the context; without, it stops there.
    void answersGoOnPastTheContext() {
        QTemporaryDir dir;
        Engine e;
        LoadParams lp = load_params(write_synthetic_gguf(dir, "shift", small_config(4, 2, 32, 512), 3));
        lp.context_length = 64;
        LLAMADESK_VERIFY_OK(e.load(lp));
        GenerateParams p = sampled(200, 1);  // a seed whose answer does not end before 200 tokens
        p.shift_when_full = true;
        const ConversationId c = e.create_conversation(ChatFormat::Completion);
        // A prompt longer than the sinks: the open turn's own tokens are dropped, the turn stays.
        const GenerationResult r = e.generate(c, "Once upon a time, in a land far away,", p);
        LLAMADESK_VERIFY_OK(r.status);
        QVERIFY2(r.stop_reason == StopReason::MaxTokens, stop_reason_name(r.stop_reason));
        QCOMPARE(r.stats.generated_tokens, 200);
        QVERIFY(r.stats.context_shifts >= 3);
        QCOMPARE(r.stats.reprefilled_tokens, 0);
        QVERIFY(r.stats.conversation.history_tokens <= 64);

        p.shift_when_full = false;
        const GenerationResult stopped = e.generate(e.create_conversation(ChatFormat::Completion), "Once", p);
        QCOMPARE(stopped.stop_reason, StopReason::ContextFull);
        QCOMPARE(stopped.stats.context_shifts, 0);
    }
};

QTEST_GUILESS_MAIN(TestContextShift)
#include "test_context_shift.moc"
