// RoPE + KV write and paged attention on the device against the CPU backend's Rope, store_kv and
// Attention. The pool starts all NaN except the cached prefix of the tested layer, and the block
// table is a shuffled subset of the pool, so any read of a slot the table does not give, or of a
// position past the causal limit, shows as NaN; every write outside this step's slots shows as a
// changed element.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "backends/cpu/attention.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/layer_ops.h"
#include "backends/cpu/thread_pool.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels.h"
#include "gpu_test.h"
#include "gpu_test_util.h"

using namespace llamadesk;
using namespace llamadesk::test;

Q_DECLARE_METATYPE(llamadesk::DType)

class TestCudaAttention : public QObject {
    Q_OBJECT

    std::mt19937_64 rng_{4242};
    std::unique_ptr<cuda::Stream> stream_;

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_CUDA();
        stream_ = std::make_unique<cuda::Stream>();
    }

    void rope_kv_attention_data() {
        QTest::addColumn<int>("n_heads");
        QTest::addColumn<int>("n_kv_heads");
        QTest::addColumn<int>("head_dim");
        QTest::addColumn<int>("start_pos");
        QTest::addColumn<int>("n_tokens");
        QTest::addColumn<int>("n_splits");
        QTest::addColumn<DType>("kv_dtype");
        struct Case { int heads, kv_heads, hd, start, n, splits; };
        const Case cases[] = {
            // decode: one token, positions around block boundaries (block_size 16), split or not
            {4, 4, 64, 0, 1, 1},    {4, 4, 64, 15, 1, 4},  {8, 2, 128, 16, 1, 1}, {8, 2, 128, 17, 1, 5},
            {8, 1, 64, 40, 1, 3},   {8, 1, 128, 200, 1, 8}, {32, 4, 128, 333, 1, 9}, {8, 4, 8, 47, 1, 2},
            {6, 2, 32, 31, 1, 7},
            // prefill: many tokens, causal, from an empty or a partly filled cache
            {4, 4, 64, 0, 37, 1},   {8, 2, 128, 21, 30, 1}, {8, 1, 64, 5, 16, 1},  {8, 8, 128, 0, 1, 1},
            {8, 4, 8, 0, 50, 1},    {16, 4, 64, 16, 17, 3},
        };
        for (const Case& c : cases)
            for (DType kv : {DType::F16, DType::F32})
                QTest::addRow("h%d kv%d hd%d pos%d n%d s%d %s", c.heads, c.kv_heads, c.hd, c.start, c.n,
                              c.splits, dtype_name(kv))
                    << c.heads << c.kv_heads << c.hd << c.start << c.n << c.splits << kv;
    }

    void rope_kv_attention() {
        QFETCH(int, n_heads);
        QFETCH(int, n_kv_heads);
        QFETCH(int, head_dim);
        QFETCH(int, start_pos);
        QFETCH(int, n_tokens);
        QFETCH(int, n_splits);
        QFETCH(DType, kv_dtype);

        ModelConfig config;
        config.dim = n_heads * head_dim;
        config.hidden_dim = 4 * config.dim;
        config.n_layers = 2;
        config.n_heads = n_heads;
        config.n_kv_heads = n_kv_heads;
        config.vocab_size = 32;
        config.seq_len = 512;
        const int layer = 1;
        const KvLayout layout{config.n_layers, n_kv_heads, head_dim, 16};
        const int end = start_pos + n_tokens;
        const int n_blocks = (end + layout.block_size - 1) / layout.block_size;
        const int pool_blocks = n_blocks + 5;
        std::vector<int32_t> all_blocks(static_cast<size_t>(pool_blocks));
        std::iota(all_blocks.begin(), all_blocks.end(), 0);
        std::shuffle(all_blocks.begin(), all_blocks.end(), rng_);
        const std::vector<int32_t> table(all_blocks.begin(), all_blocks.begin() + n_blocks);
        const BlockTableView view{table.data(), n_blocks};

        // the pool: NaN, then random keys and values for the cached prefix of `layer`
        std::vector<float> pool(size_t(layout.block_elements()) * pool_blocks, NAN);
        std::normal_distribution<float> normal(0.0f, 1.0f);
        for (int p = 0; p < start_pos; ++p) {
            const KvSlot slot = kv_slot(table.data(), layout.block_size, p);
            for (int is_value = 0; is_value < 2; ++is_value)
                for (int h = 0; h < n_kv_heads; ++h)
                    for (int d = 0; d < head_dim; ++d)
                        pool[size_t(layout.offset(slot.block, layer, is_value, h, slot.in_block)) + d] =
                            round_to(normal(rng_), kv_dtype);
        }
        const int q_dim = n_heads * head_dim, kv_dim = n_kv_heads * head_dim, row = q_dim + 2 * kv_dim;
        const HostTensor qkv = random_tensor(size_t(n_tokens) * row, DType::F32, rng_);

        // device
        auto d_pool = upload(to_dtype(pool, kv_dtype).bytes);
        auto d_qkv = upload(qkv.values);
        auto d_start = upload(std::vector<int32_t>{start_pos});
        auto d_table = upload(table);
        auto d_partials = poisoned(size_t(n_tokens) * n_heads * n_splits * (head_dim + 2) * 4);
        auto d_out = poisoned(size_t(n_tokens) * q_dim * 4);
        cuda::AttentionShape s;
        s.n_tokens = n_tokens;
        s.n_heads = n_heads;
        s.n_kv_heads = n_kv_heads;
        s.head_dim = head_dim;
        s.layer = layer;
        s.layout = layout;
        s.start_pos = d_start.as<int32_t>();
        s.block_table = d_table.as<int32_t>();
        // Llama 3.1's scaling over a short original context, so these positions reach scaled pairs.
        const RopeParams rope_params{10000.0f, {8.0f, 1.0f, 4.0f, 64}};
        cuda::rope_write_kv(d_qkv.as<float>(), s, rope_params, d_pool.get(), kv_dtype, stream_->get());
        cuda::attention(d_qkv.as<float>(), s, d_pool.get(), kv_dtype, n_splits, d_partials.as<float>(),
                        d_out.get(), DType::F32, stream_->get());

        // CPU backend: rotate q and k, store k and v, attend
        std::vector<float> q(size_t(n_tokens) * q_dim), k(size_t(n_tokens) * kv_dim), v(k.size());
        for (int t = 0; t < n_tokens; ++t) {
            const float* src = qkv.values.data() + size_t(t) * row;
            std::copy(src, src + q_dim, q.begin() + size_t(t) * q_dim);
            std::copy(src + q_dim, src + q_dim + kv_dim, k.begin() + size_t(t) * kv_dim);
            std::copy(src + q_dim + kv_dim, src + row, v.begin() + size_t(t) * kv_dim);
        }
        cpu::Rope rope(head_dim, rope_params);
        rope.cover(start_pos + n_tokens);
        rope.apply(q.data(), n_tokens, n_heads, start_pos);
        rope.apply(k.data(), n_tokens, n_kv_heads, start_pos);
        // The CPU reference keeps an f32 pool, rounded below as the device's cache rounds.
        const cpu::KvStorage cpu_pool{pool.data(), DType::F32, layout};
        cpu::store_kv(cpu::best_kernels(), cpu_pool, layer, k.data(), v.data(), n_tokens, start_pos, view);
        for (float& x : pool) x = std::isnan(x) ? x : round_to(x, kv_dtype);  // the cache's own rounding
        std::vector<float> expected(size_t(n_tokens) * q_dim);
        cpu::ThreadPool threads(1);
        cpu::Attention(config, 1).run(threads, cpu::best_kernels(), layer, q.data(), n_tokens, start_pos, cpu_pool,
                                      view, expected.data());

        // rotated q, in place in qkv
        const std::vector<float> got_qkv = download_f32(d_qkv, qkv.values.size());
        for (int t = 0; t < n_tokens; ++t)
            for (int i = 0; i < q_dim; ++i)
                QVERIFY2(std::abs(got_qkv[size_t(t) * row + i] - q[size_t(t) * q_dim + i]) < 1e-4f,
                         qPrintable(QString("rotated q of token %1, element %2").arg(t).arg(i)));
        // the pool: this step's slots hold rotated k and v; everything else is untouched
        const std::vector<float> got_pool = download_as_f32(d_pool, pool.size(), kv_dtype);
        const float tol = kv_dtype == DType::F32 ? 1e-4f : 2e-3f;
        for (size_t i = 0; i < pool.size(); ++i) {
            if (std::isnan(pool[i])) {
                QVERIFY2(std::isnan(got_pool[i]), qPrintable(QString("pool element %1 written outside the step's slots").arg(i)));
                continue;
            }
            QVERIFY2(std::abs(got_pool[i] - pool[i]) <= tol * (1.0f + std::abs(pool[i])),
                     qPrintable(QString("pool element %1: %2 vs %3").arg(i).arg(got_pool[i]).arg(pool[i])));
        }
        const std::vector<float> got = download_f32(d_out, expected.size());
        const double err = relative_error(got, expected);
        QVERIFY2(err < (kv_dtype == DType::F32 ? 2e-5 : 1e-3), qPrintable(QString("relative error %1").arg(err)));
    }

    void unsupported_head_dim() {
        QVERIFY(!cuda::attention_supports_head_dim(72));
        QVERIFY(cuda::attention_supports_head_dim(128));
    }
};

QTEST_GUILESS_MAIN(TestCudaAttention)
#include "test_cuda_attention.moc"
