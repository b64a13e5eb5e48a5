// The Engine with BackendKind::Cuda against BackendKind::Cpu on stories260K: several
// conversations interleaved, a reset, and a pool small enough that conversations are evicted and
// prefilled again; every generated token must be the CPU's. Greedy decoding, so the CUDA side
// samples on the device. The CUDA engine converts the F32 model to F16 (cuda_f32_as_bf16 off).
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

// The same script of calls on one engine.
Run script(BackendKind backend, const std::string& model, int pool_blocks) {
    Engine engine;
    LoadParams load;
    load.model_path = model;
    load.backend = backend;
    load.cuda_f32_as_bf16 = false;
    load.block_size = 16;
    // stories260K: 5 layers x 4 kv heads x 8 dims x 2 (K, V) x 16 tokens; F32 on the CPU, F16 on CUDA
    load.kv_cache_bytes = int64_t(pool_blocks) * 5 * 4 * 8 * 2 * 16 * (backend == BackendKind::Cpu ? 4 : 2);
    const Status s = engine.load(load);
    if (!s.ok()) qFatal("load failed: %s", s.message.c_str());

    GenerateParams gen;
    gen.sampling.temperature = 0.0f;
    gen.sampling.repeat_penalty = 1.0f;
    gen.max_new_tokens = 40;
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

}  // namespace

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
};

QTEST_GUILESS_MAIN(TestCudaEngine)
#include "test_cuda_engine.moc"
