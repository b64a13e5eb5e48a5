// The elementwise and matrix kernels of the CUDA backend against the CPU backend's own code, on
// fresh random inputs, with every output buffer poisoned with NaN beforehand.
#include <QTest>

#include <cmath>
#include <functional>
#include <random>

#include "backends/cpu/kernels.h"
#include "backends/cpu/layer_ops.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels.h"
#include "backends/cuda/device_model.h"
#include "backends/cuda/weight_kernels.h"
#include "gpu_test.h"
#include "gpu_test_util.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;
using namespace llamadesk::test;

Q_DECLARE_METATYPE(llamadesk::DType)

namespace {

// Rounding of one result to dtype: half an ulp, relative.
float rounding_of(DType dtype) {
    return dtype == DType::F32 ? 1e-6f : dtype == DType::F16 ? 1.0f / 2048 : 1.0f / 256;
}

// One row per weight dtype; add_args adds the row's other columns.
void add_dtype_rows(const QString& shape, const std::function<void(QTestData&)>& add_args) {
    for (DType d : {DType::F32, DType::F16, DType::BF16}) {
        QTestData& row = QTest::addRow("%s %s", qPrintable(shape), dtype_name(d));
        add_args(row);
        row << d;
    }
}

}  // namespace

class TestCudaKernels : public QObject {
    Q_OBJECT

    std::mt19937_64 rng_{20261129};
    std::unique_ptr<cuda::Stream> stream_;

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_CUDA();
        stream_ = std::make_unique<cuda::Stream>();
    }

    void embedding_data() {
        QTest::addColumn<int>("vocab");
        QTest::addColumn<int>("dim");
        QTest::addColumn<DType>("dtype");
        for (auto [vocab, dim] : {std::pair{1000, 77}, std::pair{32000, 64}})
            add_dtype_rows(QString("%1x%2").arg(vocab).arg(dim),
                           [&](QTestData& r) { r << vocab << dim; });
    }
    void embedding() {
        QFETCH(int, vocab);
        QFETCH(int, dim);
        QFETCH(DType, dtype);
        const HostTensor table = random_tensor(size_t(vocab) * dim, dtype, rng_);
        std::vector<int32_t> tokens = {0, 5, vocab - 1, 17, 17, 3, vocab / 2, 1, 9};
        std::vector<float> expected(tokens.size() * dim);
        TensorView view{"token_embedding", dtype, vocab, dim, table.bytes.data()};
        cpu::embed(cpu::best_kernels(), view, tokens, expected.data());  // plain rows: no kernels read

        auto d_table = upload(table.bytes);
        auto d_tokens = upload(tokens);
        auto d_x = poisoned(expected.size() * 4);
        cuda::embedding_lookup(d_tokens.as<int32_t>(), int(tokens.size()), d_table.get(), dtype, vocab,
                               dim, d_x.as<float>(), stream_->get());
        QCOMPARE(download_f32(d_x, expected.size()), expected);
    }

    void rmsnorm_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("dim");
        QTest::addColumn<DType>("dtype");
        for (auto [n, dim] : {std::pair{1, 64}, std::pair{5, 77}, std::pair{3, 4096}, std::pair{2, 1500}})
            add_dtype_rows(QString("%1x%2").arg(n).arg(dim), [&](QTestData& r) { r << n << dim; });
    }
    void rmsnorm() {
        QFETCH(int, n);
        QFETCH(int, dim);
        QFETCH(DType, dtype);
        const HostTensor x = random_tensor(size_t(n) * dim, DType::F32, rng_, 3.0f);
        const HostTensor w = random_tensor(size_t(dim), DType::F32, rng_);
        std::vector<float> expected(x.values.size());
        cpu::ThreadPool threads(1);
        cpu::rmsnorm(threads, cpu::best_kernels(), x.values.data(), w.values.data(), n, dim, 1e-5f, expected.data());

        auto d_x = upload(x.values);
        auto d_w = upload(w.values);
        auto d_out = poisoned(size_t(weight_type(dtype).bytes(int64_t(expected.size()))));
        cuda::rmsnorm(d_x.as<float>(), d_w.as<float>(), n, dim, 1e-5f, d_out.get(), dtype, stream_->get());
        const std::vector<float> got = download_as_f32(d_out, expected.size(), dtype);
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY2(std::abs(got[i] - expected[i]) <= 2 * rounding_of(dtype) * std::abs(expected[i]) + 1e-5f,
                     qPrintable(QString("element %1: %2 vs %3").arg(i).arg(got[i]).arg(expected[i])));
    }

    void swiglu_data() {
        QTest::addColumn<int>("n");
        QTest::addColumn<int>("hidden");
        QTest::addColumn<DType>("dtype");
        for (auto [n, hidden] : {std::pair{1, 172}, std::pair{3, 11008}, std::pair{7, 33}})
            add_dtype_rows(QString("%1x%2").arg(n).arg(hidden), [&](QTestData& r) { r << n << hidden; });
    }
    void swiglu() {
        QFETCH(int, n);
        QFETCH(int, hidden);
        QFETCH(DType, dtype);
        const HostTensor gate_up = random_tensor(size_t(n) * 2 * hidden, DType::F32, rng_, 2.0f);
        std::vector<float> expected(size_t(n) * hidden);
        for (int t = 0; t < n; ++t) {
            std::vector<float> gate(gate_up.values.begin() + t * 2 * hidden, gate_up.values.begin() + t * 2 * hidden + hidden);
            cpu::best_kernels().swiglu(gate.data(), gate_up.values.data() + t * 2 * hidden + hidden, hidden);
            std::copy(gate.begin(), gate.end(), expected.begin() + t * hidden);
        }
        auto d_in = upload(gate_up.values);
        auto d_out = poisoned(size_t(weight_type(dtype).bytes(int64_t(expected.size()))));
        cuda::swiglu(d_in.as<float>(), n, hidden, d_out.get(), dtype, stream_->get());
        const std::vector<float> got = download_as_f32(d_out, expected.size(), dtype);
        for (size_t i = 0; i < got.size(); ++i)
            QVERIFY2(std::abs(got[i] - expected[i]) <= 2 * rounding_of(dtype) * std::abs(expected[i]) + 1e-5f,
                     qPrintable(QString("element %1: %2 vs %3").arg(i).arg(got[i]).arg(expected[i])));
    }

    // Our GEMV (n = 1) and the cuBLAS path (any n) against the CPU's GEMM on the same values.
    void matmul_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<int>("n");
        QTest::addColumn<bool>("accumulate");
        QTest::addColumn<DType>("dtype");
        struct Shape { int rows, cols, n; bool acc; };
        for (Shape s : {Shape{1, 64, 1, false}, Shape{7, 77, 1, true}, Shape{4099, 4096, 1, false},
                        Shape{333, 172, 1, true}, Shape{512, 1024, 5, false}, Shape{100, 64, 33, true},
                        Shape{1000, 96, 2, false}})
            add_dtype_rows(QString("%1x%2 n%3%4").arg(s.rows).arg(s.cols).arg(s.n).arg(s.acc ? " +=" : ""),
                           [&](QTestData& r) { r << s.rows << s.cols << s.n << s.acc; });
    }
    void matmul() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(int, n);
        QFETCH(bool, accumulate);
        QFETCH(DType, dtype);
        const HostTensor w = random_tensor(size_t(rows) * cols, dtype, rng_, 1.0f / std::sqrt(float(cols)));
        const HostTensor x = random_tensor(size_t(n) * cols, dtype, rng_);
        const HostTensor y0 = random_tensor(size_t(n) * rows, DType::F32, rng_);
        const cpu::Kernels& k = cpu::best_kernels();
        const cpu::GemmFn gemm = k.types[int(dtype)].gemm;
        std::vector<float> expected(size_t(n) * rows), bound(size_t(n) * rows);
        gemm(x.values.data(), cols, n, w.bytes.data(), cols, rows, cols, expected.data(), rows);
        for (int t = 0; t < n; ++t)
            for (int r = 0; r < rows; ++r) {
                double b = 0.0;
                for (int c = 0; c < cols; ++c)
                    b += std::abs(double(w.values[size_t(r) * cols + c]) * x.values[size_t(t) * cols + c]);
                bound[size_t(t) * rows + r] = float(1e-4 * b + 1e-6);
                if (accumulate) expected[size_t(t) * rows + r] += y0.values[size_t(t) * rows + r];
            }

        auto d_w = upload(w.bytes);
        auto d_x = upload(x.bytes);
        auto check = [&](const char* path, const cuda::DeviceBuffer& d_y) {
            const std::vector<float> got = download_f32(d_y, expected.size());
            for (size_t i = 0; i < got.size(); ++i)
                QVERIFY2(std::abs(got[i] - expected[i]) <= bound[i],
                         qPrintable(QString("%1, element %2: %3 vs %4").arg(path).arg(i).arg(got[i]).arg(expected[i])));
        };
        auto fresh_y = [&] { return accumulate ? upload(y0.values) : poisoned(expected.size() * 4); };
        if (n == 1) {
            auto d_y = fresh_y();
            cuda::gemv(d_w.get(), d_x.get(), dtype, rows, cols, d_y.as<float>(), accumulate, stream_->get());
            check("gemv", d_y);
        }
        cuda::Gemm cublas(stream_->get());
        auto d_y = fresh_y();
        cublas.matmul(d_w.get(), d_x.get(), dtype, rows, cols, n, d_y.as<float>(), rows, accumulate);
        check("cuBLAS", d_y);
    }

    // A slice of W into its rows of a taller output (ldy > rows), as a matrix of parts does.
    void cublas_into_taller_output() {
        const int rows = 96, cols = 128, n = 3, ldy = 160, first = 40;
        const HostTensor w = random_tensor(size_t(rows) * cols, DType::F16, rng_, 0.1f);
        const HostTensor x = random_tensor(size_t(n) * cols, DType::F16, rng_);
        auto d_w = upload(w.bytes);
        auto d_x = upload(x.bytes);
        auto d_y = poisoned(size_t(n) * ldy * 4);
        cuda::Gemm cublas(stream_->get());
        cublas.matmul(d_w.get(), d_x.get(), DType::F16, rows, cols, n, d_y.as<float>() + first, ldy, false);
        const std::vector<float> got = download_f32(d_y, size_t(n) * ldy);
        for (int t = 0; t < n; ++t)
            for (int r = 0; r < ldy; ++r) {
                const float v = got[size_t(t) * ldy + r];
                if (r < first || r >= first + rows) {
                    QVERIFY2(std::isnan(v), qPrintable(QString("token %1 row %2 was written").arg(t).arg(r)));
                    continue;
                }
                double e = 0.0, b = 0.0;
                for (int c = 0; c < cols; ++c) {
                    const double p = double(w.values[size_t(r - first) * cols + c]) * x.values[size_t(t) * cols + c];
                    e += p;
                    b += std::abs(p);
                }
                QVERIFY2(std::abs(v - e) <= 1e-4 * b + 1e-6, qPrintable(QString("token %1 row %2: %3 vs %4").arg(t).arg(r).arg(v).arg(e)));
            }
    }

    // Each block type's GEMV, widening to F16 and embedding lookup against the CPU's to_f32 of the
    // same blocks (the ground truth). Shapes cover one block, skewed rows (Q8_0's 34-byte and
    // Q6_K's 210-byte blocks leave rows off 16-byte boundaries), rows of several staged chunks and
    // a partial last thread block.
    void block_types_data() {
        QTest::addColumn<int>("rows");
        QTest::addColumn<int>("cols");
        QTest::addColumn<bool>("accumulate");
        QTest::addColumn<DType>("dtype");
        struct Shape { int rows, cols; bool acc; };
        for (const WeightType& t : weight_types()) {
            if (!t.quantized()) continue;
            for (Shape s : {Shape{1, 256, false}, Shape{7, 512, true}, Shape{333, 4352, false},
                            Shape{1030, 4096, false}, Shape{65, 11008, true}})
                QTest::addRow("%dx%d%s %s", s.rows, s.cols, s.acc ? " +=" : "", t.name)
                    << s.rows << s.cols << s.acc << t.dtype;
            if (t.block_elements == 32)  // 43 blocks a row: rows of 32-element blocks skewed too
                QTest::addRow("9x1376 %s", t.name) << 9 << 1376 << false << t.dtype;
        }
    }
    void block_types() {
        QFETCH(int, rows);
        QFETCH(int, cols);
        QFETCH(bool, accumulate);
        QFETCH(DType, dtype);
        const WeightType& type = weight_type(dtype);
        const cuda::WeightKernels& kernels = cuda::weight_kernels(dtype);
        QCOMPARE(kernels.dtype, dtype);
        QVERIFY(kernels.to_f16 != nullptr);

        // weights: normal values through the reference quantizer; the buffer padded to 16 bytes
        // as DeviceMatrix pads it
        const HostTensor source = random_tensor(size_t(rows) * cols, DType::F32, rng_, 1.0f / std::sqrt(float(cols)));
        const size_t n_bytes = size_t(type.bytes(int64_t(rows) * cols));
        std::vector<uint8_t> blocks((n_bytes + 15) / 16 * 16, 0xff);
        type.from_f32(source.values.data(), blocks.data(), int64_t(rows) * cols);
        std::vector<float> w(size_t(rows) * cols);
        type.to_f32(blocks.data(), w.data(), int64_t(w.size()));
        const HostTensor x = random_tensor(size_t(cols), DType::F16, rng_);
        const HostTensor y0 = random_tensor(size_t(rows), DType::F32, rng_);
        auto d_w = upload(blocks);
        auto d_x = upload(x.bytes);

        // GEMV
        auto d_y = accumulate ? upload(y0.values) : poisoned(size_t(rows) * 4);
        kernels.gemv(d_w.get(), d_x.get(), rows, cols, d_y.as<float>(), accumulate, stream_->get());
        const std::vector<float> y = download_f32(d_y, size_t(rows));
        for (int r = 0; r < rows; ++r) {
            double e = accumulate ? y0.values[size_t(r)] : 0.0, b = 0.0;
            for (int c = 0; c < cols; ++c) {
                const double p = double(w[size_t(r) * cols + c]) * x.values[size_t(c)];
                e += p;
                b += std::abs(p);
            }
            QVERIFY2(std::abs(y[size_t(r)] - e) <= 1e-4 * b + 1e-6,
                     qPrintable(QString("gemv row %1: %2 vs %3").arg(r).arg(y[size_t(r)]).arg(e)));
        }

        // widening to F16: the reference rounded to F16, up to the last bit (the device may fuse
        // scale * q + offset into one rounding)
        auto d_f16 = poisoned(size_t(rows) * cols * 2);
        kernels.to_f16(d_w.get(), rows, cols, d_f16.get(), stream_->get());
        const std::vector<float> wide = download_as_f32(d_f16, w.size(), DType::F16);
        for (size_t i = 0; i < w.size(); ++i)
            QVERIFY2(std::abs(wide[i] - w[i]) <= std::abs(w[i]) / 1024 + 1e-7f,
                     qPrintable(QString("to_f16 element %1: %2 vs %3").arg(i).arg(wide[i]).arg(w[i])));

        // embedding lookup: rows picked by token, widened to F32
        const std::vector<int32_t> tokens = {0, rows - 1, rows / 2, 0, rows / 3};
        auto d_tokens = upload(tokens);
        auto d_e = poisoned(tokens.size() * size_t(cols) * 4);
        kernels.embed(d_tokens.as<int32_t>(), int(tokens.size()), d_w.get(), rows, cols, d_e.as<float>(), stream_->get());
        const std::vector<float> e = download_f32(d_e, tokens.size() * size_t(cols));
        for (size_t t = 0; t < tokens.size(); ++t)
            for (int c = 0; c < cols; ++c) {
                const float want = w[size_t(tokens[t]) * cols + c], got = e[t * cols + c];
                QVERIFY2(std::abs(got - want) <= 1e-6f * std::abs(want) + 1e-7f,
                         qPrintable(QString("embed token %1 column %2: %3 vs %4").arg(t).arg(c).arg(got).arg(want)));
            }
    }

    // A Q4_K_M checkpoint uploads as its blocks (padding aside), with q|k|v split where wv is Q6_K.
    void blocks_stay_blocks() {
        const ModelConfig c{256, 768, 4, 4, 2, 333, 256};
        const Checkpoint ckpt = make_synthetic_checkpoint(c, *WeightMix::parse("q4_k_m"), 3, false);
        const cuda::DeviceModel m = cuda::upload_model(ckpt, DType::F16, {}, stream_->get());
        int n_parts = 0;
        auto count = [&](const cuda::DeviceMatrix& x) { n_parts += int(x.parts.size()); };
        count(m.token_embedding);
        count(m.output);
        for (const cuda::DeviceLayer& l : m.layers) {
            count(l.wqkv);
            count(l.wo);
            count(l.w13);
            count(l.w2);
        }
        QVERIFY(m.weight_bytes >= ckpt.weight_bytes());
        QVERIFY(m.weight_bytes <= ckpt.weight_bytes() + 16 * n_parts);
        QCOMPARE(m.output.parts.size(), size_t(1));
        QCOMPARE(m.output.parts[0].dtype, DType::Q6_K);
        QCOMPARE(m.layers[0].wqkv.parts.size(), size_t(1));  // wq, wk, wv all Q4_K
        QCOMPARE(m.layers[0].wqkv.parts[0].dtype, DType::Q4_K);
        const cuda::DeviceMatrix& qkv = m.layers[3].wqkv;  // wv Q6_K on the last layer
        QCOMPARE(qkv.parts.size(), size_t(2));
        QCOMPARE(qkv.parts[0].dtype, DType::Q4_K);
        QCOMPARE(qkv.parts[0].rows, int64_t(c.dim + c.kv_dim()));
        QCOMPARE(qkv.parts[1].dtype, DType::Q6_K);
        QCOMPARE(qkv.parts[1].rows, int64_t(c.kv_dim()));
        QCOMPARE(m.largest_block_part(), int64_t(2) * c.hidden_dim * c.dim);  // w1 | w3
    }

    void convert_and_fill() {
        const HostTensor src = random_tensor(100003, DType::F32, rng_, 10.0f);
        auto d_src = upload(src.values);
        for (DType d : {DType::F16, DType::BF16, DType::F32}) {
            auto d_dst = poisoned(size_t(weight_type(d).bytes(int64_t(src.values.size()))));
            cuda::convert_from_f32(d_src.as<float>(), int64_t(src.values.size()), d_dst.get(), d, stream_->get());
            QCOMPARE(download_as_f32(d_dst, src.values.size(), d), to_dtype(src.values, d).values);

            cuda::fill_random(d_dst.get(), int64_t(src.values.size()), d, 0.5f, 7, stream_->get());
            const std::vector<float> r = download_as_f32(d_dst, src.values.size(), d);
            double mean = 0.0;
            for (float v : r) {
                QVERIFY(std::abs(v) <= 0.5f);
                mean += v;
            }
            QVERIFY(std::abs(mean / double(r.size())) < 0.01);  // uniform, centred
            QVERIFY(r[0] != r[1] && r[1] != r[2]);
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaKernels)
#include "test_cuda_kernels.moc"
