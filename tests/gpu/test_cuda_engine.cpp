// The Engine with BackendKind::Cuda against BackendKind::Cpu on stories260K: several
// conversations interleaved, a reset, and a pool small enough that conversations are evicted and
// prefilled again; every generated token must be the CPU's. Greedy decoding, so the CUDA side
// samples on the device. The CUDA engine converts the F32 model to F16 (cuda_f32_as_bf16 off).
// Also: a context shift on CUDA (the same tokens as the CPU's, nothing prefilled again), and the
// f16 cache CUDA keeps, saying so, when a q8_0 one is asked for.
#include <QTest>

#include "gpu_test.h"
#include "llamadesk/engine.h"
#include "test_support.h"

using namespace llamadesk;

namespace {

struct Run {
    std::vector<std::vector<int>> tokens;  // of every generate() call, in order
    PoolStats pool;
};

// stories260K on `backend`, its F32 weights made F16 on CUDA.
LoadParams load_on(BackendKind backend, const std::string& model) {
    LoadParams load;
    load.model_path = model;
    load.backend = backend;
    load.cuda_f32_as_bf16 = false;
    return load;
}

// Greedy, without the repetition penalty, at most n tokens.
GenerateParams greedy(int n) {
    GenerateParams gen;
    gen.sampling.temperature = 0.0f;
    gen.sampling.repeat_penalty = 1.0f;
    gen.max_new_tokens = n;
    return gen;
}

// The same script of calls on one engine.
Run script(BackendKind backend, const std::string& model, int pool_blocks) {
    Engine engine;
    LoadParams load = load_on(backend, model);
    load.block_size = 16;
    // stories260K: 5 layers x 4 kv heads x 8 dims x 2 (K, V) x 16 tokens; F32 on the CPU, F16 on CUDA
    load.kv_cache_bytes = int64_t(pool_blocks) * 5 * 4 * 8 * 2 * 16 * (backend == BackendKind::Cpu ? 4 : 2);
    const Status s = engine.load(load);
    if (!s.ok()) qFatal("load failed: %s", s.message.c_str());

    const GenerateParams gen = greedy(40);
    Run run;
    auto generate = [&](ConversationId id, const std::string& text) {
        const GenerationResult r = engine.generate(id, text, gen);
        if (!r.status.ok()) qFatal("generate failed: %s", r.status.message.c_str());
        run.tokens.push_back(r.tokens);
    };
    const ConversationId a = engine.create_conversation(ChatFormat::Completion);
    const ConversationId b = engine.create_conversation(ChatFormat::Completion);
    const ConversationId c = engine.create_conversation(ChatFormat::Completion);
    generate(a, "Once upon a time");
    generate(b, "Lily and Ben went to the park.");
    generate(a, " Then");                 // follow-up: only the new tokens are prefilled
    generate(c, "The cat sat");           // the pool is full by now: the oldest idle one is evicted
    generate(b, " The sun was");          // b was evicted: its history is prefilled again
    engine.reset_conversation(a);
    generate(a, "Once upon a time");      // after reset: as a new conversation
    run.pool = engine.pool_stats();
    return run;
}

// One answer of 150 tokens in a context of 64, shifting whenever it is full.
GenerationResult shifted_answer(BackendKind backend, const std::string& model) {
    Engine engine;
    LoadParams load = load_on(backend, model);
    load.context_length = 64;
    if (const Status s = engine.load(load); !s.ok()) qFatal("load failed: %s", s.message.c_str());
    GenerateParams gen = greedy(150);
    gen.shift_when_full = true;
    return engine.generate(engine.create_conversation(ChatFormat::Completion), "Once upon a time", gen);
}

}  // namespace

#define VERIFY_OK(expr)                                      \
    do {                                                     \
        const Status s_ = (expr);                            \
        QVERIFY2(s_.ok(), s_.message.c_str());               \
    } while (0)

class TestCudaEngine : public QObject {
    Q_OBJECT

private slots:
    void initTestCase() { LLAMADESK_REQUIRE_CUDA(); }

    void same_tokens_as_cpu() {
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.bin");
        const int pool_blocks = 10;  // 160 tokens: the script below must evict
        const Run cpu = script(BackendKind::Cpu, path.toStdString(), pool_blocks);
        const Run cuda = script(BackendKind::Cuda, path.toStdString(), pool_blocks);
        QCOMPARE(cuda.tokens.size(), cpu.tokens.size());
        for (size_t i = 0; i < cpu.tokens.size(); ++i)
            QVERIFY2(cuda.tokens[i] == cpu.tokens[i], qPrintable(QString("generate call %1 differs").arg(i)));
        QCOMPARE(cuda.tokens.back(), cuda.tokens.front());  // reset = new conversation
        QVERIFY2(cpu.pool.evictions > 0, "the script should evict on the CPU");
        QCOMPARE(cuda.pool.evictions, cpu.pool.evictions);
        QCOMPARE(cuda.pool.reprefilled_tokens, cpu.pool.reprefilled_tokens);
        QCOMPARE(cuda.pool.blocks_total, cpu.pool.blocks_total);
    }

    void a_context_shift_on_cuda_matches_the_cpu() {
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.bin");
        const GenerationResult cpu = shifted_answer(BackendKind::Cpu, path.toStdString());
        const GenerationResult cuda = shifted_answer(BackendKind::Cuda, path.toStdString());
        VERIFY_OK(cuda.status);
        QCOMPARE(cuda.stop_reason, StopReason::MaxTokens);
        QVERIFY2(cuda.stats.context_shifts >= 2, "150 tokens in a context of 64 shift at least twice");
        QCOMPARE(cuda.stats.reprefilled_tokens, 0);
        QCOMPARE(cuda.stats.context_shifts, cpu.stats.context_shifts);
        QVERIFY2(cuda.tokens == cpu.tokens, "the shifted answer differs from the CPU's");
    }

    void a_q8_0_cache_asked_of_cuda_is_f16_and_said() {
        LLAMADESK_REQUIRE_SHARED(path, "models/stories260K/stories260K.bin");
        Engine engine;
        LoadParams load = load_on(BackendKind::Cuda, path.toStdString());
        load.kv_cache_type = KvCacheType::Q8_0;
        VERIFY_OK(engine.load(load));
        const ModelInfo info = engine.model_info();
        QCOMPARE(QString::fromStdString(info.backend), QString("CUDA"));
        QVERIFY2(info.device.find("a q8_0 KV cache is CPU only, so CUDA keeps an f16 one") != std::string::npos,
                 info.device.c_str());
        const ConversationId c = engine.create_conversation(ChatFormat::Completion);
        VERIFY_OK(engine.generate(c, "Once", greedy(4)).status);
        CacheLayout layout;
        VERIFY_OK(engine.cache_layout(c, &layout));
        QCOMPARE(QString::fromStdString(layout.dtype), QString("f16"));
    }
};

QTEST_GUILESS_MAIN(TestCudaEngine)
#include "test_cuda_engine.moc"
