// The CPU backend against a plain reference transformer on synthetic models of many shapes, and the
// KV cache against recomputation: logits with the cache equal logits recomputed over the whole
// prefix without it, at every step. Block tables are shuffled and unused pool slots hold NaN, so a
// read of a wrong or unwritten slot shows up.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string_view>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "core/error.h"
#include "model/weight_types.h"
#include "reference_transformer.h"
#include "test_support.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;
using namespace llamadesk::cpu;
using llamadesk::test::ReferenceTransformer;

namespace {

struct Shape {
    const char* name;
    ModelConfig config;
    int block_size;
    bool tied;
};

// n_rep 1, 2, 4; head_dim 6 to 128; widths that are not multiples of the vector or tile sizes
const Shape kShapes[] = {
    {"rep1_hd8", ModelConfig{64, 100, 2, 8, 8, 50, 48}, 16, true},
    {"rep2_hd16", ModelConfig{96, 131, 2, 6, 3, 61, 48}, 3, true},
    {"rep4_hd40_untied", ModelConfig{160, 170, 2, 4, 1, 70, 48}, 1, false},
    {"rep1_hd128", ModelConfig{256, 300, 1, 2, 2, 33, 48}, 5, true},
    {"rep4_hd12", ModelConfig{144, 77, 2, 12, 3, 29, 48}, 4, true},
};

// Shapes whose matrices take block types: rows of 256 and 512 (K-quants fit), and rows of 32 * 3
// and 32 * 7 (32-element blocks only; K-quants fall back as llama.cpp's do). The first's tied
// classifier fills whole groups, so where the kernels interleave its type the embedding's lookups
// read rows back from the groups; the second's untied one (77 rows) stays plain rows.
const Shape kQuantShapes[] = {
    {"q_dim256", ModelConfig{256, 512, 2, 4, 2, 320, 48}, 16, true},
    {"q_dim96", ModelConfig{96, 224, 2, 3, 1, 77, 48}, 5, false},
};
const char* const kQuantMixes[] = {"q8_0", "q4_0", "q4_k_m", "q5_k_m"};

// Block types quantize the activations to 8 bits before each product (about 0.5% of a product's
// norm each, over the 8 products of a 2-layer model), so their logits follow the float reference
// (dequantized weights, float activations) to this fraction of the largest logit; every kernel
// set lands on the same error, 3.3% at worst here.
constexpr double kQuantizedTolerance = 6e-2;

// A q8_0 cache multiplies keys by queries quantized to 8 bits: logits follow the reference with the
// same rounded cache to 1.2 % of the largest at worst here, with every kernel set.
constexpr double kQ8CacheTolerance = 3e-2;

// Positions each synthetic model row runs: its whole context (48) in the normal build; in the
// sanitizer build 20, still past the first cache block of every shape (blocks of 1 to 16). A decode
// row recomputes the whole prefix at every step, so its work grows with the square of this.
int positions_of(const Shape& s) {
    return llamadesk::test::normal_or_reduced(s.config.seq_len, 20, "positions per synthetic model");
}

std::vector<int32_t> random_tokens(int n, int vocab, uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int32_t> tokens(static_cast<size_t>(n));
    for (int32_t& t : tokens) t = int32_t(rng() % uint32_t(vocab));
    return tokens;
}

// max |a - b| <= tol * max(1, max |b|)
void compare_logits(const float* actual, const std::vector<float>& expected, double tol, const char* what, int step) {
    double scale = 1.0, worst = 0.0;
    for (float e : expected) scale = std::max(scale, double(std::abs(e)));
    for (size_t i = 0; i < expected.size(); ++i) {
        const double d = std::abs(double(actual[i]) - expected[i]);
        worst = std::isnan(d) ? INFINITY : std::max(worst, d);
    }
    if (!(worst <= tol * scale))
        QFAIL(qPrintable(QStringLiteral("%1, step %2: max difference %3 (scale %4)").arg(what).arg(step).arg(worst).arg(scale)));
}

// A backend whose pool (of kv_dtype) is poisoned with NaN, and disjoint shuffled block tables over it.
struct Fixture {
    Checkpoint ckpt;
    DType kv_dtype;
    std::unique_ptr<CpuBackend> backend;
    KvLayout layout;
    std::vector<std::vector<int32_t>> tables;

    Fixture(const Shape& s, WeightMix mix, const Kernels& kernels, int n_threads, int n_tables,
            DType kv = DType::F16)
        : ckpt(make_synthetic_checkpoint(s.config, mix, 42, s.tied)), kv_dtype(kv) {
        CpuBackendOptions opts;
        opts.n_threads = n_threads;
        opts.kv_dtype = kv;
        backend = std::make_unique<CpuBackend>(ckpt, opts, kernels);
        layout = {s.config.n_layers, s.config.n_kv_heads, s.config.head_dim(), s.block_size};
        const int per_table = (s.config.seq_len + s.block_size - 1) / s.block_size;
        const int n_blocks = per_table * n_tables + 3;  // a few never used at all
        backend->allocate_kv_pool(layout, n_blocks);
        const int64_t elements = layout.block_elements() * n_blocks;
        if (kv == DType::F32)
            std::fill_n(static_cast<float*>(backend->kv_pool_data()), elements, std::numeric_limits<float>::quiet_NaN());
        else  // bytes 0x7e: every f16, and every q8_0 block's f16 scale, is NaN
            std::memset(backend->kv_pool_data(), 0x7e, size_t(weight_type(kv).bytes(elements)));
        std::vector<int32_t> ids(static_cast<size_t>(n_blocks));
        std::iota(ids.begin(), ids.end(), 0);
        std::shuffle(ids.begin(), ids.end(), std::mt19937(7));
        for (int t = 0; t < n_tables; ++t)
            tables.emplace_back(ids.begin() + t * per_table, ids.begin() + (t + 1) * per_table);
    }
    BlockTableView table(int i) const { return {tables[size_t(i)].data(), int(tables[size_t(i)].size())}; }
    int vocab() const { return ckpt.config.vocab_size; }
};

// An f16 cache rounds each key and value when it is written. A value computed one way (a batch) or
// another (one token, or the reference) can land on either side of a rounding boundary: one f16
// step, 1e-3 of the value, which moves logits by about 1e-4 of their scale. An f32 cache is exact.
double cache_tolerance(DType kv_dtype) { return kv_dtype == DType::F16 ? 1e-3 : 1e-4; }

// F16 and BF16 weights in a set with AMX-BF16 round the activations of a batch of 16 or more rows
// to bf16 before each product (8 significant bits, about as fine as the block types' 8-bit
// quantization), and decode's not: the two paths' logits then agree to 1.5 % of the largest at
// worst here.
constexpr double kBf16ActivationsTolerance = 3e-2;

// Decode and a batch sum attention in different orders; block types quantize the activations after
// it, which can turn that last-bit difference into one 8-bit step. So two ways of computing the
// same logits agree to the quantized tolerance for block types, to the bf16 one where a batch
// rounds activations to bf16, and to the cache's otherwise.
double paths_tolerance(const WeightMix& mix, DType kv_dtype, const Kernels& kernels) {
    if (weight_type(mix.base).quantized()) return kQuantizedTolerance;
    return kernels.types[int(mix.base)].bf16_tile_gemm ? kBf16ActivationsTolerance : cache_tolerance(kv_dtype);
}

// Rows: shape index (quantized shapes after kShapes), weight mix name, kernel set, KV cache type.
// Every row runs the default f16 cache; F32 weights also run an f32 cache, the exact case.
void add_model_rows(bool all_dtypes) {
    QTest::addColumn<int>("shape");
    QTest::addColumn<QString>("weights");
    QTest::addColumn<QString>("isa");
    QTest::addColumn<int>("kv");
    const int n_float = int(std::size(kShapes));
    for (const char* isa : kernel_set_names()) {
        for (int s = 0; s < n_float; ++s)
            for (DType d : {DType::F32, DType::F16, DType::BF16}) {
                // the generic kernels' f16/bf16 paths are covered by test_cpu_kernels
                if (d != DType::F32 && (!all_dtypes || std::string_view(isa) == "generic")) continue;
                for (DType kv : {DType::F16, DType::F32}) {
                    if (kv == DType::F32 && d != DType::F32) continue;
                    QTest::addRow("%s/%s/%s/kv_%s", isa, kShapes[s].name, dtype_name(d), dtype_name(kv))
                        << s << QString::fromLatin1(dtype_name(d)) << QString::fromLatin1(isa) << int(kv);
                }
            }
        for (int s = 0; s < int(std::size(kQuantShapes)); ++s)
            for (const char* mix : kQuantMixes)
                QTest::addRow("%s/%s/%s/kv_f16", isa, kQuantShapes[s].name, mix)
                    << n_float + s << QString::fromLatin1(mix) << QString::fromLatin1(isa) << int(DType::F16);
    }
}

const Shape& shape_at(int i) {
    const int n_float = int(std::size(kShapes));
    return i < n_float ? kShapes[i] : kQuantShapes[i - n_float];
}

}  // namespace

#define FETCH_MODEL_ROW()                                                                    \
    QFETCH(int, shape);                                                                      \
    QFETCH(QString, weights);                                                                \
    QFETCH(QString, isa);                                                                    \
    QFETCH(int, kv);                                                                         \
    const Kernels* kernels = kernels_for(isa.toLatin1().constData());                        \
    if (!kernels) QSKIP(qPrintable(QStringLiteral("this CPU has no %1").arg(isa)));         \
    const Shape& s = shape_at(shape);                                                        \
    const WeightMix weight_mix = *WeightMix::parse(weights.toStdString())

class TestCpuBackend : public QObject {
    Q_OBJECT
private slots:
    // Token by token through the paged cache: equal to the reference, and equal to a forward over
    // the whole prefix from position 0 on a fresh table, at every step.
    void decode_matches_reference_and_recompute_data() { add_model_rows(true); }
    void decode_matches_reference_and_recompute() {
        FETCH_MODEL_ROW();
        Fixture f(s, weight_mix, *kernels, 2, 2, DType(kv));
        ReferenceTransformer reference(f.ckpt, f.kv_dtype);
        const double tolerance = weight_type(weight_mix.base).quantized() ? kQuantizedTolerance : cache_tolerance(f.kv_dtype);
        const int steps = positions_of(s);
        const std::vector<int32_t> tokens = random_tokens(steps, f.vocab(), 1);
        std::vector<float> cached(size_t(f.vocab())), recomputed(size_t(f.vocab()));
        for (int pos = 0; pos < steps; ++pos) {
            f.backend->forward({&tokens[size_t(pos)], 1}, pos, f.table(0), cached.data());
            compare_logits(cached.data(), reference.forward(tokens[size_t(pos)], pos), tolerance,
                           "backend vs reference", pos);
            f.backend->forward({tokens.data(), size_t(pos) + 1}, 0, f.table(1), recomputed.data());
            compare_logits(cached.data(), recomputed, paths_tolerance(weight_mix, f.kv_dtype, *kernels), "cached vs recomputed",
                           pos);
        }
    }

    // A prompt prefilled as one batch (every token's logits), then decoded token by token, equals
    // the same tokens fed one at a time.
    void prefill_then_decode_equals_token_by_token_data() { add_model_rows(false); }
    void prefill_then_decode_equals_token_by_token() {
        FETCH_MODEL_ROW();
        Fixture f(s, weight_mix, *kernels, 2, 2, DType(kv));
        const int n = positions_of(s), prompt = n * 29 / 48;  // 29 of 48: a batch over several blocks
        const std::vector<int32_t> tokens = random_tokens(n, f.vocab(), 2);
        std::vector<float> one_by_one(size_t(n) * f.vocab());
        for (int pos = 0; pos < n; ++pos)
            f.backend->forward({&tokens[size_t(pos)], 1}, pos, f.table(0), one_by_one.data() + size_t(pos) * f.vocab());

        std::vector<float> batched(size_t(n) * f.vocab());
        f.backend->forward({tokens.data(), size_t(prompt)}, 0, f.table(1), batched.data(), true);
        for (int pos = prompt; pos < n; ++pos)
            f.backend->forward({&tokens[size_t(pos)], 1}, pos, f.table(1), batched.data() + size_t(pos) * f.vocab());
        for (int pos = 0; pos < n; ++pos) {
            const float* row = one_by_one.data() + size_t(pos) * f.vocab();
            compare_logits(batched.data() + size_t(pos) * f.vocab(), std::vector<float>(row, row + f.vocab()),
                           paths_tolerance(weight_mix, f.kv_dtype, *kernels), "batched vs one by one", pos);
        }
        // without all_logits only the last token's row is written
        std::vector<float> last(size_t(f.vocab()));
        f.backend->forward({tokens.data(), size_t(prompt)}, 0, f.table(1), last.data());
        const float* row = one_by_one.data() + size_t(prompt - 1) * f.vocab();
        compare_logits(last.data(), std::vector<float>(row, row + f.vocab()), paths_tolerance(weight_mix, f.kv_dtype, *kernels),
                       "last logits", prompt - 1);
    }

    // A q8_0 cache: keys and values in blocks of 32 with a scale, and the queries quantized as the
    // block kernels take activations. Logits follow the reference that keeps the same rounded cache,
    // as closely as quantized activations allow, and a cached step equals one recomputed.
    void q8_0_cache_follows_the_reference_data() {
        QTest::addColumn<QString>("isa");
        for (const char* isa : kernel_set_names()) QTest::newRow(isa) << QString(isa);
    }
    void q8_0_cache_follows_the_reference() {
        QFETCH(QString, isa);
        const Kernels* kernels = kernels_for(isa.toLatin1().constData());
        if (!kernels) QSKIP(qPrintable(QStringLiteral("this CPU has no %1").arg(isa)));
        const Shape& s = kShapes[3];  // head_dim 128
        Fixture f(s, DType::F32, *kernels, 2, 2, DType::Q8_0);
        ReferenceTransformer reference(f.ckpt, DType::Q8_0);
        const std::vector<int32_t> tokens = random_tokens(positions_of(s), f.vocab(), 9);
        std::vector<float> cached(size_t(f.vocab())), recomputed(size_t(f.vocab()));
        for (int pos = 0; pos < int(tokens.size()); ++pos) {
            f.backend->forward({&tokens[size_t(pos)], 1}, pos, f.table(0), cached.data());
            compare_logits(cached.data(), reference.forward(tokens[size_t(pos)], pos), kQ8CacheTolerance,
                           "q8_0 cache vs reference", pos);
            f.backend->forward({tokens.data(), size_t(pos) + 1}, 0, f.table(1), recomputed.data());
            compare_logits(cached.data(), recomputed, kQ8CacheTolerance, "cached vs recomputed", pos);
        }
    }

    // A cache type the model cannot take is refused when the backend is made, with the reason.
    void q8_0_cache_needs_whole_blocks_per_head() {
        const Checkpoint ckpt = make_synthetic_checkpoint(kShapes[0].config, DType::F32, 1, true);  // head_dim 8
        try {
            CpuBackend backend(ckpt, {1, DType::Q8_0});
            QFAIL("a q8_0 cache was made for head_dim 8");
        } catch (const EngineError& e) {
            QCOMPARE(e.code(), ErrorCode::InvalidArgument);
            QVERIFY2(std::string(e.what()).find("head_dim") != std::string::npos, e.what());
        }
    }

    // A prompt longer than the backend's batch runs in chunks, each reading the ones before.
    void long_prompt_runs_in_chunks() {
        const Shape s{"long", ModelConfig{48, 64, 2, 4, 2, 40, 700}, 16, true};
        Fixture f(s, DType::F32, best_kernels(), 2, 1);
        const int n = 650;
        QVERIFY(n > f.backend->chunk_tokens());
        const std::vector<int32_t> tokens = random_tokens(n, f.vocab(), 3);
        std::vector<float> batched(size_t(n) * f.vocab());
        f.backend->forward(tokens, 0, f.table(0), batched.data(), true);
        ReferenceTransformer reference(f.ckpt, f.kv_dtype);
        for (int pos = 0; pos < n; ++pos)
            compare_logits(batched.data() + size_t(pos) * f.vocab(), reference.forward(tokens[size_t(pos)], pos),
                           cache_tolerance(f.kv_dtype),
                           "chunked prefill vs reference", pos);
    }

    // A real trained model (grouped-query attention, 2 query heads per kv head), read from both of
    // its files: the backend matches the reference at every step.
    void stories260k_matches_reference_data() {
        QTest::addColumn<QString>("file");
        QTest::newRow("bin") << QStringLiteral("models/stories260K/stories260K.bin");
        QTest::newRow("gguf") << QStringLiteral("models/stories260K/stories260K.gguf");
    }
    void stories260k_matches_reference() {
        QFETCH(QString, file);
        LLAMADESK_REQUIRE_SHARED(path, file);
        const Checkpoint ckpt = open_checkpoint(path.toStdString());
        CpuBackendOptions opts;
        opts.n_threads = 2;
        CpuBackend backend(ckpt, opts);  // the default f16 cache
        const ModelConfig& c = ckpt.config;
        const KvLayout layout{c.n_layers, c.n_kv_heads, c.head_dim(), 16};
        std::vector<int32_t> table(4);
        std::iota(table.begin(), table.end(), 0);
        backend.allocate_kv_pool(layout, int(table.size()));
        ReferenceTransformer reference(ckpt, backend.kv_dtype());
        const std::vector<int32_t> tokens = random_tokens(64, c.vocab_size, 8);
        std::vector<float> logits(size_t(c.vocab_size));
        for (int pos = 0; pos < int(tokens.size()); ++pos) {
            backend.forward({&tokens[size_t(pos)], 1}, pos, {table.data(), int(table.size())}, logits.data());
            compare_logits(logits.data(), reference.forward(tokens[size_t(pos)], pos), cache_tolerance(backend.kv_dtype()),
                           "stories260K", pos);
        }
    }

    void thread_counts_agree() {
        const Shape& s = kShapes[1];
        const std::vector<int32_t> tokens = random_tokens(40, s.config.vocab_size, 4);
        std::vector<float> expected;
        for (int n_threads : {1, 2, 3, 5}) {
            Fixture f(s, DType::F16, best_kernels(), n_threads, 1);
            std::vector<float> logits(size_t(tokens.size()) * f.vocab());
            f.backend->forward({tokens.data(), 30}, 0, f.table(0), logits.data(), true);
            for (int pos = 30; pos < 40; ++pos)
                f.backend->forward({&tokens[size_t(pos)], 1}, pos, f.table(0), logits.data() + size_t(pos) * f.vocab());
            if (expected.empty()) expected = logits;
            compare_logits(logits.data(), expected, 1e-5, "threads", n_threads);
        }
    }

    // A pool that cannot be allocated throws OutOfMemory and leaves the old pool in use.
    void failed_pool_allocation_keeps_old_pool() {
        const Shape& s = kShapes[0];
        Fixture f(s, DType::F32, best_kernels(), 2, 1);
        const std::vector<int32_t> tokens = random_tokens(10, f.vocab(), 5);
        std::vector<float> before(size_t(f.vocab())), after(size_t(f.vocab()));
        f.backend->forward(tokens, 0, f.table(0), before.data());
        try {
            f.backend->allocate_kv_pool(f.layout, std::numeric_limits<int>::max());
            QFAIL("an absurd pool was allocated");
        } catch (const EngineError& e) {
            QCOMPARE(e.code(), ErrorCode::OutOfMemory);
        }
        f.backend->forward({&tokens[9], 1}, 9, f.table(0), after.data());
        compare_logits(after.data(), before, 1e-4, "after failed allocation", 9);
    }

    void rejects_calls_outside_the_cache() {
        const Shape& s = kShapes[0];
        Fixture f(s, DType::F32, best_kernels(), 2, 1);
        std::vector<float> logits(size_t(f.vocab()));
        const std::vector<int32_t> tokens = random_tokens(4, f.vocab(), 6);
        auto code_of = [&](auto&& call) {
            try {
                call();
            } catch (const EngineError& e) {
                return e.code();
            }
            return ErrorCode::Ok;
        };
        QCOMPARE(code_of([&] { f.backend->forward(tokens, s.config.seq_len - 2, f.table(0), logits.data()); }),
                 ErrorCode::ContextFull);
        QCOMPARE(code_of([&] { f.backend->forward(tokens, 0, {f.tables[0].data(), 0}, logits.data()); }),
                 ErrorCode::Internal);
        const int32_t bad_token = int32_t(f.vocab());
        QCOMPARE(code_of([&] { f.backend->forward({&bad_token, 1}, 0, f.table(0), logits.data()); }),
                 ErrorCode::InvalidArgument);
        QCOMPARE(code_of([&] { f.backend->forward({}, 0, f.table(0), logits.data()); }), ErrorCode::InvalidArgument);
        QCOMPARE(code_of([&] { f.backend->forward(tokens, 0, f.table(0), nullptr); }), ErrorCode::InvalidArgument);
    }
};

QTEST_APPLESS_MAIN(TestCpuBackend)
#include "test_cpu_backend.moc"
