// Every CPU kernel set the machine runs (generic, AVX2, AVX-512) against slow scalar references,
// for every weight type and for sizes that are not multiples of the vector width or the tile.
#include <QTest>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <random>
#include <string_view>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/matmul.h"
#include "backends/cpu/thread_pool.h"
#include "core/error.h"
#include "model/dtype.h"
#include "model/weight_types.h"

using namespace llamadesk;
using namespace llamadesk::cpu;

namespace {

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<float> dist(lo, hi);
    std::vector<float> v(n);
    for (float& x : v) x = dist(rng);
    return v;
}

// Weights of a dtype, stored as that dtype, plus their exact f32 values for the reference.
struct Weights {
    std::vector<uint8_t> bytes;
    std::vector<float> values;
    TensorView view;
};

Weights make_weights(DType dtype, int rows, int cols, uint32_t seed) {
    Weights w;
    w.values = random_floats(size_t(rows) * cols, seed);
    w.bytes.resize(size_t(weight_type(dtype).bytes(int64_t(w.values.size()))));
    for (size_t i = 0; i < w.values.size(); ++i) {
        if (dtype == DType::F32) {
            reinterpret_cast<float*>(w.bytes.data())[i] = w.values[i];
        } else {
            const uint16_t h = dtype == DType::F16 ? f32_to_f16(w.values[i]) : f32_to_bf16(w.values[i]);
            reinterpret_cast<uint16_t*>(w.bytes.data())[i] = h;
            w.values[i] = load_as_f32(&h, dtype, 0);
        }
    }
    w.view = TensorView{"w", dtype, rows, cols, w.bytes.data()};
    return w;
}

// y (n, rows) = x (n, cols) w^T in double
std::vector<double> reference_gemm(const std::vector<float>& x, const Weights& w, int n, std::vector<double>* magnitude);
std::vector<double> reference_gemm(const std::vector<float>& x, const Weights& w, int n) {
    return reference_gemm(x, w, n, nullptr);
}

// |a - b| <= tol * (1 + |b|) everywhere
template <class A, class B>
void compare(const A& actual, const B& expected, double tol) {
    QCOMPARE(actual.size(), expected.size());
    for (size_t i = 0; i < actual.size(); ++i)
        if (!(std::abs(double(actual[i]) - double(expected[i])) <= tol * (1.0 + std::abs(double(expected[i])))))
            QFAIL(qPrintable(QStringLiteral("element %1: %2, expected %3").arg(i).arg(actual[i]).arg(expected[i])));
}

const DType kBlockTypes[] = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                             DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};

// Quantized weights: the reference quantizer's bytes and their dequantized values.
Weights make_block_weights(DType dtype, int rows, int cols, uint32_t seed) {
    const WeightType& type = weight_type(dtype);
    Weights w;
    w.values = random_floats(size_t(rows) * cols, seed);
    w.bytes.resize(size_t(type.bytes(int64_t(w.values.size()))));
    type.from_f32(w.values.data(), w.bytes.data(), int64_t(w.values.size()));
    type.to_f32(w.bytes.data(), w.values.data(), int64_t(w.values.size()));
    w.view = TensorView{"w", dtype, rows, cols, w.bytes.data()};
    return w;
}

// Activation rows as a kernel set quantizes them, and the values they stand for.
struct Quantized {
    std::vector<int8_t> q;
    std::vector<float> d, d_sum, values;
    std::vector<int32_t> half_sums;
    int64_t k = 0;
    QuantizedRows rows() const { return {q.data(), d.data(), d_sum.data(), half_sums.data(), k}; }
};

Quantized quantize(const Kernels& kernels, const std::vector<float>& x, int n, int k) {
    Quantized out;
    out.k = k;
    out.q.resize(size_t(n * k));
    out.d.resize(size_t(n * k / 32));
    out.d_sum.resize(out.d.size());
    out.half_sums.resize(out.d.size() * 4);
    const int64_t ldx = k + 5;  // strided rows
    std::vector<float> xs(size_t(n * ldx), NAN);
    for (int t = 0; t < n; ++t) std::copy_n(x.begin() + t * k, k, xs.begin() + t * ldx);
    kernels.quantize_rows(xs.data(), ldx, n, k, out.q.data(), out.d.data(), out.d_sum.data(), out.half_sums.data());
    out.values.resize(size_t(n * k));
    for (size_t i = 0; i < out.values.size(); ++i) out.values[i] = out.d[i / 32] * float(out.q[i]);
    return out;
}

// Activation rows quantized per super-block of 256, as the K-quant types' decode reads them.
struct Superblocks {
    std::vector<int8_t> q;
    std::vector<float> d, values;
    std::vector<int16_t> sums, sums32;
    int64_t k = 0;
    SuperblockRows rows() const { return {q.data(), d.data(), sums.data(), sums32.data(), k}; }
};

Superblocks quantize_superblocks(const Kernels& kernels, const std::vector<float>& x, int n, int k) {
    Superblocks out;
    out.k = k;
    out.q.resize(size_t(n * k));
    out.d.resize(size_t(n * k / kSuperBlock));
    out.sums.resize(size_t(n * k / 16));
    out.sums32.resize(size_t(n * k / 32));
    const int64_t ldx = k + 5;  // strided rows
    std::vector<float> xs(size_t(n * ldx), NAN);
    for (int t = 0; t < n; ++t) std::copy_n(x.begin() + t * k, k, xs.begin() + t * ldx);
    kernels.quantize_superblocks(xs.data(), ldx, n, k, out.q.data(), out.d.data(), out.sums.data(), out.sums32.data());
    out.values.resize(size_t(n * k));
    for (size_t i = 0; i < out.values.size(); ++i) out.values[i] = out.d[i / kSuperBlock] * float(out.q[i]);
    return out;
}

// The activation values a threaded product of n rows reads for a weight type's kernels (plain or
// on groups): per super-block where they take that path, else per block of 32.
std::vector<float> quantized_values(const Kernels& kernels, const TypeKernels& type, const std::vector<float>& x,
                                    int n, int k) {
    if (type.superblock_gemm && n <= type.superblock_max_tokens)
        return quantize_superblocks(kernels, x, n, k).values;
    return quantize(kernels, x, n, k).values;
}

// y (n, rows) = x (n, cols) w^T in double, and the same over |x| |w| (the size of the rounding error).
std::vector<double> reference_gemm(const std::vector<float>& x, const Weights& w, int n, std::vector<double>* magnitude) {
    const int64_t rows = w.view.rows, cols = w.view.cols;
    std::vector<double> y(size_t(n * rows));
    if (magnitude) magnitude->assign(y.size(), 0.0);
    for (int t = 0; t < n; ++t)
        for (int64_t r = 0; r < rows; ++r) {
            double s = 0.0, m = 0.0;
            for (int64_t k = 0; k < cols; ++k) {
                const double p = double(x[size_t(t * cols + k)]) * w.values[size_t(r * cols + k)];
                s += p;
                m += std::abs(p);
            }
            y[size_t(t * rows + r)] = s;
            if (magnitude) (*magnitude)[size_t(t * rows + r)] = m;
        }
    return y;
}

// Squared Euclidean norms of an error and of what it is relative to, summed over several outputs.
struct ErrorNorm {
    double error = 0.0, norm = 0.0;
    template <class A>
    void add(const A& actual, const std::vector<double>& expected) {
        for (size_t i = 0; i < expected.size(); ++i) {
            error += (double(actual[i]) - expected[i]) * (double(actual[i]) - expected[i]);
            norm += expected[i] * expected[i];
        }
    }
    double relative() const { return std::sqrt(error / norm); }
};

// A product of n activation rows with block-type weights w, written by product(y, ldy) into rows
// of y further apart than w's rows (the gaps must stay unwritten): equal to the dequantized weights
// times the activation values the kernel read (quantized) up to float rounding (1e-5 of the sum of
// |products|); its error against the unquantized activations x goes into accuracy.
template <class Product>
void check_product(const QString& what, int n, const Weights& w, const std::vector<float>& x,
                   const std::vector<float>& quantized, ErrorNorm& accuracy, Product product) {
    const int64_t rows = w.view.rows, ldy = rows + 3;
    std::vector<float> ys(size_t(n * ldy), NAN);
    product(ys.data(), ldy);
    std::vector<float> y;
    for (int t = 0; t < n; ++t) {
        y.insert(y.end(), ys.begin() + t * ldy, ys.begin() + t * ldy + rows);
        for (int64_t r = rows; r < ldy; ++r)
            if (!std::isnan(ys[size_t(t * ldy + r)])) QFAIL(qPrintable(what + QStringLiteral(": a gap of y was written")));
    }
    std::vector<double> magnitude;
    const std::vector<double> exact = reference_gemm(quantized, w, n, &magnitude);
    for (size_t i = 0; i < y.size(); ++i)
        if (!(std::abs(double(y[i]) - exact[i]) <= 1e-5 * (1.0 + magnitude[i])))
            QFAIL(qPrintable(QStringLiteral("%1, element %2: %3, expected %4").arg(what).arg(i).arg(y[i]).arg(exact[i])));
    accuracy.add(y, reference_gemm(x, w, n));
}

// w's rows regrouped by the kernel set's interleaved layout of its type (whole groups), and a view
// of them as the CPU backend makes it.
struct Interleaved {
    std::vector<uint8_t> bytes;
    TensorView view;
};

Interleaved interleave(const Kernels& kernels, const Weights& w) {
    const int group = kernels.interleave_rows;
    Interleaved out;
    out.bytes.resize(w.bytes.size());
    const int64_t ldw = w.view.row_bytes();
    for (int64_t g = 0; g < w.view.rows / group; ++g)
        kernels.interleaved[int(w.view.dtype)].interleave(w.view.row(g * group), ldw, w.view.cols,
                                                          out.bytes.data() + g * group * ldw);
    out.view = w.view;
    out.view.data = out.bytes.data();
    out.view.interleaved_rows = group;
    return out;
}

// x (n rows of k) as a set's product on dtype weights reads it: rounded to bf16 where it takes bf16
// tiles, else as given.
std::vector<float> as_read(const Kernels& kernels, DType dtype, std::vector<float> x, int n, int k) {
    if (kernels.types[int(dtype)].bf16_tile_gemm && n >= kBf16TileMinTokens && k % kBf16Step == 0)
        for (float& v : x) v = bf16_to_f32(f32_to_bf16(v));
    return x;
}

void add_isa_rows() {
    QTest::addColumn<QString>("isa");
    for (const char* isa : kernel_set_names()) QTest::newRow(isa) << QString::fromLatin1(isa);
}

}  // namespace

// The kernel set of the current data row; skips the row when this CPU or build lacks it.
#define FETCH_KERNELS(var)                                                                   \
    QFETCH(QString, isa);                                                                    \
    const Kernels* var##_ptr = kernels_for(isa.toLatin1().constData());                      \
    if (!var##_ptr) QSKIP(qPrintable(QStringLiteral("this CPU has no %1").arg(isa)));       \
    const Kernels& var = *var##_ptr

class TestCpuKernels : public QObject {
    Q_OBJECT
private slots:
    void gemm_matches_reference_data() { add_isa_rows(); }
    void gemm_matches_reference() {
        FETCH_KERNELS(kernels);
        struct Size { int n, rows, k; };
        const Size sizes[] = {{1, 1, 1},   {1, 7, 5},    {3, 5, 17},  {4, 3, 8},     {5, 7, 33},
                              {9, 13, 64}, {17, 10, 100}, {1, 33, 768}, {6, 14, 129},
                              // one query against a block of keys: short rows, four at a time, and a tail
                              {1, 18, 64}, {1, 6, 32}, {1, 9, 16},
                              // panels (32 rows of x or more): several panels and a part, columns
                              // over several blocks and a vector's tail, a last tile of fewer rows
                              {33, 197, 1000}, {40, 96, 67}, {32, 50, 385}};
        for (DType dtype : {DType::F32, DType::F16, DType::BF16}) {
            const GemmFn gemm = kernels.types[int(dtype)].gemm;
            QVERIFY(gemm && !kernels.types[int(dtype)].quantized_gemm);
            for (const Size& sz : sizes) {
                const Weights w = make_weights(dtype, sz.rows, sz.k, uint32_t(sz.n * 131 + sz.k));
                const std::vector<float> x = random_floats(size_t(sz.n * sz.k), uint32_t(sz.rows));
                const std::vector<double> expected = reference_gemm(x, w, sz.n);
                // strided: rows of x and y further apart than their length
                const int64_t ldx = sz.k + 3, ldy = sz.rows + 2;
                std::vector<float> xs(size_t(sz.n * ldx), NAN), ys(size_t(sz.n * ldy), NAN);
                for (int t = 0; t < sz.n; ++t)
                    std::copy_n(x.begin() + t * sz.k, sz.k, xs.begin() + t * ldx);
                gemm(xs.data(), ldx, sz.n, w.view.data, sz.k, sz.rows, sz.k, ys.data(), ldy);
                std::vector<float> y;
                for (int t = 0; t < sz.n; ++t)
                    y.insert(y.end(), ys.begin() + t * ldy, ys.begin() + t * ldy + sz.rows);
                compare(y, expected, 1e-5);
                for (int t = 0; t < sz.n; ++t)  // the gaps between rows of y are not written
                    for (int64_t r = sz.rows; r < ldy; ++r) QVERIFY(std::isnan(ys[size_t(t * ldy + r)]));
            }
        }
    }

    // The threaded product, over 1..4 threads, two products per job, token counts that cross the
    // token blocks and row counts that are not multiples of the tile.
    void matmuls_match_reference_data() { add_isa_rows(); }
    void matmuls_match_reference() {
        FETCH_KERNELS(kernels);
        for (int n_threads = 1; n_threads <= 4; ++n_threads) {
            ThreadPool pool(n_threads);
            for (DType dtype : {DType::F32, DType::F16, DType::BF16})
                for (int n : {1, 5, 70}) {
                    const Weights a = make_weights(dtype, 50, 64, 1), b = make_weights(dtype, 301, 1000, 2);
                    const std::vector<float> xa = random_floats(size_t(n * 64), 3), xb = random_floats(size_t(n * 1000), 4);
                    std::vector<float> ya(size_t(n * 50)), yb(size_t(n * 301));
                    const Matmul products[] = {{xa.data(), 64, &a.view, ya.data(), 50},
                                               {xb.data(), 1000, &b.view, yb.data(), 301}};
                    matmuls(pool, kernels, n, products);
                    compare(ya, reference_gemm(as_read(kernels, dtype, xa, n, 64), a, n), 1e-5);
                    compare(yb, reference_gemm(as_read(kernels, dtype, xb, n, 1000), b, n), 1e-5);
                }
        }
    }

    // Activation rows quantize to blocks of 32 with q = round(x / d) in -127..127, d = max |x| / 127,
    // d_sum = d * sum(q) and the sums of each half of 16.
    void quantize_rows_rounds_to_nearest_data() { add_isa_rows(); }
    void quantize_rows_rounds_to_nearest() {
        FETCH_KERNELS(kernels);
        const int n = 3, k = 96;
        std::vector<float> x = random_floats(size_t(n * k), 11, -3.0f, 3.0f);
        std::fill_n(x.begin() + 32, 32, 0.0f);  // an all-zero block
        const Quantized q = quantize(kernels, x, n, k);
        for (size_t b = 0; b < q.d.size(); ++b) {
            float amax = 0.0f;
            int sum = 0, halves[2] = {0, 0};
            for (size_t l = 0; l < 32; ++l) {
                amax = std::max(amax, std::abs(x[32 * b + l]));
                sum += q.q[32 * b + l];
                halves[l / 16] += q.q[32 * b + l];
                QVERIFY(std::abs(q.q[32 * b + l]) <= 127);
            }
            const int32_t* stored = q.half_sums.data() + 4 * b;
            QCOMPARE(stored[0], halves[0]);
            QCOMPARE(stored[1], 0);
            QCOMPARE(stored[2], halves[1]);
            QCOMPARE(stored[3], 0);
            QCOMPARE(q.d[b], amax / 127.0f);
            QVERIFY(std::abs(q.d_sum[b] - q.d[b] * float(sum)) <= 1e-6f * (1.0f + std::abs(q.d_sum[b])));
            for (size_t l = 0; l < 32; ++l)
                QVERIFY(std::abs(q.values[32 * b + l] - x[32 * b + l]) <= q.d[b] * 0.5001f);
        }
    }

    // Every block type, every kernel set: equal to its dequantized weights times the quantized
    // activations up to float rounding (1e-5 of the sum of |products|), and within 1% of the
    // exact product with unquantized activations (relative to the norm of all the outputs;
    // activations rounded to 8 bits cost about 0.5%). Sizes cover decode (n = 1), prefill tiles with odd n
    // and edges, rows not a multiple of any tile or panel, and k = 32 * odd for the 32-element blocks.
    void quantized_gemm_matches_dequantized_data() { add_isa_rows(); }
    void quantized_gemm_matches_dequantized() {
        FETCH_KERNELS(kernels);
        struct Size { int n, rows, k; };
        // n >= 8 takes interleaved panels of 16 weight rows where the kernel set has them: whole and
        // partial panels, and activation rows that are not a multiple of the pass; n >= 16 takes
        // tiles where the set has them for the type (amx's Q8_0, Q4_0): one and two tiles, tails,
        // a block of 16 tiles and more, and more than one chunk of 32 blocks of columns
        const Size sizes[] = {{1, 1, 256},   {1, 13, 512},  {2, 5, 256},    {4, 4, 256},   {5, 7, 512},
                              {9, 11, 256},  {1, 3, 96},    {3, 9, 224},    {7, 6, 32},    {8, 16, 256},
                              {13, 37, 512}, {20, 33, 96},  {31, 17, 224},  {48, 19, 512}, {33, 16, 256},
                              {16, 16, 32},  {17, 35, 1056}, {70, 48, 4096}, {300, 32, 512}};
        for (DType dtype : kBlockTypes) {
            const WeightType& type = weight_type(dtype);
            ErrorNorm accuracy;
            const QuantizedGemmFn gemm = kernels.types[int(dtype)].quantized_gemm;
            QVERIFY(gemm && !kernels.types[int(dtype)].gemm);
            for (const Size& sz : sizes) {
                if (sz.k % type.block_elements) continue;
                const QString what = QStringLiteral("%1 n=%2 rows=%3 k=%4").arg(type.name).arg(sz.n).arg(sz.rows).arg(sz.k);
                const Weights w = make_block_weights(dtype, sz.rows, sz.k, uint32_t(sz.n * 7 + sz.k + int(dtype)));
                const std::vector<float> x = random_floats(size_t(sz.n * sz.k), uint32_t(sz.rows + 100));
                const Quantized q = quantize(kernels, x, sz.n, sz.k);
                check_product(what, sz.n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                    gemm(q.rows(), sz.n, w.view.data, w.view.row_bytes(), sz.rows, sz.k, y, ldy);
                });
                if (QTest::currentTestFailed()) return;
            }
            if (!(accuracy.relative() <= 1e-2))
                QFAIL(qPrintable(QStringLiteral("%1: relative error %2 against unquantized activations").arg(type.name).arg(accuracy.relative())));
        }
    }

    // Activation rows quantize per super-block of 256 with q = round(x / d), d = max |x| / 127, and
    // the sums of q per 16.
    void quantize_superblocks_rounds_to_nearest_data() { add_isa_rows(); }
    void quantize_superblocks_rounds_to_nearest() {
        FETCH_KERNELS(kernels);
        if (!kernels.quantize_superblocks) QSKIP("this kernel set has no super-block products");
        const int n = 3, k = 512;
        std::vector<float> x = random_floats(size_t(n * k), 12, -3.0f, 3.0f);
        std::fill_n(x.begin() + 256, 256, 0.0f);  // an all-zero super-block
        const Superblocks q = quantize_superblocks(kernels, x, n, k);
        for (size_t b = 0; b < q.d.size(); ++b) {
            float amax = 0.0f;
            for (size_t l = 0; l < 256; ++l) amax = std::max(amax, std::abs(x[256 * b + l]));
            QCOMPARE(q.d[b], amax / 127.0f);
            for (size_t s = 0; s < 16; ++s) {
                int sum = 0;
                for (size_t l = 0; l < 16; ++l) sum += q.q[256 * b + 16 * s + l];
                QCOMPARE(int(q.sums[16 * b + s]), sum);
            }
            for (size_t l = 0; l < 256; ++l) {
                QVERIFY(std::abs(q.q[256 * b + l]) <= 127);
                QVERIFY(std::abs(q.values[256 * b + l] - x[256 * b + l]) <= q.d[b] * 0.5001f);
            }
        }
    }

    // The K-quant types' integer decode: equal to the dequantized weights times the activations as
    // quantized per super-block, up to float rounding, and within 1% of the exact product. Sizes
    // cover one and several super-blocks, every tile edge (rows not a multiple of the tile, activation
    // rows up to the largest count that takes this path), and the 8B model's row length.
    void superblock_gemm_matches_dequantized_data() { add_isa_rows(); }
    void superblock_gemm_matches_dequantized() {
        FETCH_KERNELS(kernels);
        struct Size { int n, rows, k; };
        // and, where a set takes this path for prefill too (amx's Q5_K), a tile of activation rows,
        // two, a tail, and several blocks of columns, on rows past the last 16
        const Size sizes[] = {{1, 1, 256},   {1, 13, 512},  {2, 5, 256},   {3, 7, 768},    {4, 4, 256},
                              {5, 9, 512},   {7, 3, 256},   {1, 37, 4096}, {2, 6, 14336},  {16, 16, 256},
                              {33, 37, 1280}, {70, 48, 4096}, {100, 19, 768}, {300, 32, 512}};
        int types_with_path = 0;
        for (DType dtype : {DType::Q4_K, DType::Q5_K, DType::Q6_K}) {
            const SuperblockGemmFn gemm = kernels.types[int(dtype)].superblock_gemm;
            if (!gemm) continue;
            ++types_with_path;
            const WeightType& type = weight_type(dtype);
            ErrorNorm accuracy;
            for (const Size& sz : sizes) {
                if (sz.n > kernels.types[int(dtype)].superblock_max_tokens) continue;
                const QString what = QStringLiteral("%1 n=%2 rows=%3 k=%4").arg(type.name).arg(sz.n).arg(sz.rows).arg(sz.k);
                const Weights w = make_block_weights(dtype, sz.rows, sz.k, uint32_t(sz.n * 5 + sz.k + int(dtype)));
                const std::vector<float> x = random_floats(size_t(sz.n * sz.k), uint32_t(sz.rows + 200));
                const Superblocks q = quantize_superblocks(kernels, x, sz.n, sz.k);
                check_product(what, sz.n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                    gemm(q.rows(), sz.n, w.view.data, w.view.row_bytes(), sz.rows, y, ldy);
                });
                if (QTest::currentTestFailed()) return;
            }
            if (!(accuracy.relative() <= 1e-2))
                QFAIL(qPrintable(QStringLiteral("%1: relative error %2 against unquantized activations").arg(type.name).arg(accuracy.relative())));
        }
        if (std::string_view(kernels.isa) != "generic") QCOMPARE(types_with_path, 3);
        if (!types_with_path) QSKIP("this kernel set has no super-block products");
    }

    // F16 and BF16 from 16 activation rows on, where a set takes AMX-BF16 tiles: the exact weights
    // (F16 as its two bf16 planes) times the activations rounded to bf16, up to float rounding, with
    // x's rows further apart than k; one and two tiles of activation rows and of weight rows, tails
    // of both, several chunks of columns, and the 8B model's row lengths.
    void bf16_tile_gemm_matches_rounded_reference_data() { add_isa_rows(); }
    void bf16_tile_gemm_matches_rounded_reference() {
        FETCH_KERNELS(kernels);
        if (!kernels.pack_bf16_tiles) QSKIP("this kernel set (or CPU) has no bf16 tile products");
        struct Size { int n, rows, k; };
        const Size sizes[] = {{16, 16, 32}, {16, 1, 64},    {17, 15, 96},    {32, 32, 256},  {33, 17, 288},
                              {48, 45, 512}, {70, 33, 1024}, {100, 64, 4096}, {16, 7, 14336}, {20, 300, 4096}};
        for (DType dtype : {DType::F16, DType::BF16}) {
            const Bf16TileGemmFn gemm = kernels.types[int(dtype)].bf16_tile_gemm;
            QVERIFY(gemm);
            ErrorNorm accuracy;
            for (const Size& sz : sizes) {
                const QString what = QStringLiteral("%1 n=%2 rows=%3 k=%4").arg(weight_type(dtype).name).arg(sz.n).arg(sz.rows).arg(sz.k);
                const Weights w = make_weights(dtype, sz.rows, sz.k, uint32_t(sz.n * 7 + sz.k));
                const std::vector<float> x = random_floats(size_t(sz.n * sz.k), uint32_t(sz.rows + 300));
                const int64_t ldx = sz.k + 5;
                std::vector<float> xs(size_t(sz.n * ldx), NAN);
                for (int t = 0; t < sz.n; ++t) std::copy_n(x.begin() + t * sz.k, sz.k, xs.begin() + t * ldx);
                const int tiles = (sz.n + kBf16TileRows - 1) / kBf16TileRows;
                std::vector<uint32_t> pairs(size_t(tiles) * sz.k / 2 * kBf16TileRows);
                kernels.pack_bf16_tiles(xs.data(), ldx, sz.n, sz.k, pairs.data());
                check_product(what, sz.n, w, x, as_read(kernels, dtype, x, sz.n, sz.k), accuracy, [&](float* y, int64_t ldy) {
                    gemm(Bf16Tiles{pairs.data(), sz.k}, sz.n, w.view.data, sz.k, sz.rows, y, ldy);
                });
                if (QTest::currentTestFailed()) return;
            }
            if (!(accuracy.relative() <= 1e-2))
                QFAIL(qPrintable(QStringLiteral("%1: relative error %2 against unrounded activations")
                                     .arg(weight_type(dtype).name).arg(accuracy.relative())));
        }
    }

    // Weights regrouped at load (Kernels::interleaved): decode (the K-quants' super-block
    // activations, up to superblock_max_tokens rows; Q4_0's blocks) and prefill (panels, tiles) on the
    // groups equal the dequantized weights times the activations the path reads, as the plain
    // kernels; the 8B model's row lengths, rows of odd numbers of blocks, and activation rows around
    // every pass.
    void interleaved_gemm_matches_dequantized_data() { add_isa_rows(); }
    void interleaved_gemm_matches_dequantized() {
        FETCH_KERNELS(kernels);
        if (!kernels.interleave_rows) {
            QCOMPARE(std::string_view(kernels.isa), std::string_view("generic"));
            QSKIP("this kernel set has no interleaved layout");
        }
        for (DType dtype : {DType::Q4_K, DType::Q6_K, DType::Q4_0}) QVERIFY(kernels.interleaved[int(dtype)].interleave);
        QCOMPARE(kernels.interleave_rows % kernels.block_tile_rows, 0);
        struct Size { int n, groups, k; };
        const Size sizes[] = {{1, 1, 256}, {1, 3, 4096}, {2, 2, 512},  {3, 1, 768},  {4, 1, 256},   {5, 2, 256},
                              {7, 1, 14336}, {8, 1, 256}, {13, 2, 512}, {9, 1, 4096}, {40, 3, 256},
                              // AMX: one tile, a pair and a tail, more than one block of rows
                              {16, 1, 512}, {33, 2, 1024}, {100, 2, 512}, {70, 1, 4096},
                              // blocks of 32 only: one block, an odd number, more than an AMX chunk
                              {1, 2, 32}, {2, 1, 96}, {1, 1, 1056}, {9, 2, 96}, {17, 2, 1056}, {300, 1, 160}};
        for (DType dtype : kBlockTypes) {
            const InterleavedKernels& interleaved = kernels.interleaved[int(dtype)];
            if (!interleaved.interleave) continue;
            const WeightType& type = weight_type(dtype);
            ErrorNorm accuracy;
            for (const Size& sz : sizes) {
                if (sz.k % type.block_elements) continue;
                const int rows = sz.groups * kernels.interleave_rows;
                const QString what = QStringLiteral("%1 interleaved n=%2 rows=%3 k=%4").arg(type.name).arg(sz.n).arg(rows).arg(sz.k);
                const Weights w = make_block_weights(dtype, rows, sz.k, uint32_t(sz.n * 3 + sz.k + int(dtype)));
                const Interleaved g = interleave(kernels, w);
                const std::vector<float> x = random_floats(size_t(sz.n * sz.k), uint32_t(rows + 300));
                if (interleaved.on_groups.superblock_gemm && sz.n <= interleaved.on_groups.superblock_max_tokens) {
                    const Superblocks q = quantize_superblocks(kernels, x, sz.n, sz.k);
                    check_product(what, sz.n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                        interleaved.on_groups.superblock_gemm(q.rows(), sz.n, g.view.data, g.view.row_bytes(), rows, y, ldy);
                    });
                } else {
                    const Quantized q = quantize(kernels, x, sz.n, sz.k);
                    check_product(what, sz.n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                        interleaved.on_groups.quantized_gemm(q.rows(), sz.n, g.view.data, g.view.row_bytes(), rows, sz.k, y, ldy);
                    });
                }
                if (QTest::currentTestFailed()) return;
            }
            if (!(accuracy.relative() <= 1e-2))
                QFAIL(qPrintable(QStringLiteral("%1: relative error %2 against unquantized activations").arg(type.name).arg(accuracy.relative())));
        }
    }

    // Every row of a group reads back as the bytes it was made of (a tied token embedding's lookup).
    void interleaved_rows_read_back_data() { add_isa_rows(); }
    void interleaved_rows_read_back() {
        FETCH_KERNELS(kernels);
        if (!kernels.interleave_rows) QSKIP("this kernel set has no interleaved layout");
        for (DType dtype : kBlockTypes) {
            const InterleavedKernels& interleaved = kernels.interleaved[int(dtype)];
            if (!interleaved.interleave) continue;
            QVERIFY(interleaved.deinterleave_row);
            const int rows = 2 * kernels.interleave_rows, k = 512;
            const Weights w = make_block_weights(dtype, rows, k, uint32_t(int(dtype) + 40));
            const Interleaved g = interleave(kernels, w);
            QVERIFY(g.bytes != w.bytes);
            const int64_t ldw = w.view.row_bytes();
            std::vector<uint8_t> row = std::vector<uint8_t>(size_t(ldw));
            for (int r = 0; r < rows; ++r) {
                const int first = r / kernels.interleave_rows * kernels.interleave_rows;
                interleaved.deinterleave_row(g.view.row(first), r - first, k, row.data());
                QVERIFY2(std::equal(row.begin(), row.end(), w.bytes.begin() + r * ldw),
                         qPrintable(QStringLiteral("%1 row %2").arg(weight_type(dtype).name).arg(r)));
            }
        }
    }

    // Sums kept in 16 bits (maddubs' pair sums without VNNI) must not overflow: every weight at
    // its type's largest magnitude (every byte 0xff, the f16 scales 1) times activations that all
    // quantize to 127, on the plain and the interleaved kernels, for decode, panels and tiles.
    void largest_values_do_not_overflow_data() { add_isa_rows(); }
    void largest_values_do_not_overflow() {
        FETCH_KERNELS(kernels);
        const int rows = 16, k = 512;
        for (DType dtype : kBlockTypes) {
            const WeightType& type = weight_type(dtype);
            Weights w;
            w.bytes.assign(size_t(type.bytes(int64_t(rows) * k)), 0xff);
            for (int64_t block = 0; block < int64_t(rows) * k / type.block_elements; ++block)
                for (const int16_t offset : type.f16_scales)
                    if (offset >= 0) {
                        const uint16_t one = 0x3c00;
                        std::memcpy(w.bytes.data() + block * type.block_bytes + offset, &one, 2);
                    }
            w.values.resize(size_t(rows) * k);
            type.to_f32(w.bytes.data(), w.values.data(), int64_t(w.values.size()));
            w.view = TensorView{"w", dtype, rows, k, w.bytes.data()};
            const bool groups = kernels.interleaved[int(dtype)].interleave != nullptr;
            const Interleaved g = groups ? interleave(kernels, w) : Interleaved{};
            for (int n : {1, 3, 8, 16, 20}) {
                const std::vector<float> x(size_t(n * k), 1.0f);
                for (const bool on_groups : {false, true}) {
                    if (on_groups && !groups) continue;
                    const TypeKernels& kt = on_groups ? kernels.interleaved[int(dtype)].on_groups : kernels.types[int(dtype)];
                    const void* data = on_groups ? g.view.data : w.view.data;
                    const QString what = QStringLiteral("%1%2 n=%3").arg(type.name, on_groups ? " interleaved" : "").arg(n);
                    ErrorNorm accuracy;
                    if (kt.superblock_gemm && n <= kt.superblock_max_tokens) {
                        const Superblocks q = quantize_superblocks(kernels, x, n, k);
                        check_product(what, n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                            kt.superblock_gemm(q.rows(), n, data, w.view.row_bytes(), rows, y, ldy);
                        });
                    } else {
                        const Quantized q = quantize(kernels, x, n, k);
                        check_product(what, n, w, x, q.values, accuracy, [&](float* y, int64_t ldy) {
                            kt.quantized_gemm(q.rows(), n, data, w.view.row_bytes(), rows, k, y, ldy);
                        });
                    }
                    if (QTest::currentTestFailed()) return;
                }
            }
        }
    }

    // The threaded product of block types: products sharing one input (quantized once) and one
    // with its own, over 1..3 threads and token counts across the quantization items.
    void quantized_matmuls_match_reference_data() { add_isa_rows(); }
    void quantized_matmuls_match_reference() {
        FETCH_KERNELS(kernels);
        for (int n_threads = 1; n_threads <= 3; ++n_threads) {
            ThreadPool pool(n_threads);
            for (int n : {1, 5, 40}) {
                const Weights a = make_block_weights(DType::Q4_K, 50, 256, 1), b = make_block_weights(DType::Q6_K, 301, 256, 2);
                const Weights c = make_block_weights(DType::Q4_0, 37, 96, 3), e = make_block_weights(DType::Q8_0, 29, 96, 4);
                const std::vector<float> x1 = random_floats(size_t(n * 256), 5), x2 = random_floats(size_t(n * 96), 6);
                std::vector<float> ya(size_t(n * 50)), yb(size_t(n * 301)), yc(size_t(n * 37)), ye(size_t(n * 29));
                const Matmul products[] = {{x1.data(), 256, &a.view, ya.data(), 50},
                                           {x2.data(), 96, &c.view, yc.data(), 37},
                                           {x1.data(), 256, &b.view, yb.data(), 301},
                                           {x2.data(), 96, &e.view, ye.data(), 29}};
                matmuls(pool, kernels, n, products);
                if (kernels.interleave_rows) {  // groups split between the threads
                    for (DType dtype : {DType::Q4_K, DType::Q4_0}) {
                        const Weights f = make_block_weights(dtype, 5 * kernels.interleave_rows, 256, 8);
                        const Interleaved g = interleave(kernels, f);
                        std::vector<float> yg(size_t(n * f.view.rows));
                        matmul(pool, kernels, n, {x1.data(), 256, &g.view, yg.data(), f.view.rows});
                        compare(yg, reference_gemm(quantized_values(kernels, kernels.interleaved[int(dtype)].on_groups, x1, n, 256), f, n), 1e-4);
                    }
                }
                const std::vector<float> q2 = quantize(kernels, x2, n, 96).values;
                compare(ya, reference_gemm(quantized_values(kernels, kernels.types[int(DType::Q4_K)], x1, n, 256), a, n), 1e-4);
                compare(yb, reference_gemm(quantized_values(kernels, kernels.types[int(DType::Q6_K)], x1, n, 256), b, n), 1e-4);
                compare(yc, reference_gemm(q2, c, n), 1e-4);
                compare(ye, reference_gemm(q2, e, n), 1e-4);
                // other activations of the same shape on the same weights: nothing a kernel keeps
                // from x1 may be used for them
                const std::vector<float> x3 = random_floats(size_t(n * 256), 9);
                matmul(pool, kernels, n, {x3.data(), 256, &a.view, ya.data(), 50});
                compare(ya, reference_gemm(quantized_values(kernels, kernels.types[int(DType::Q4_K)], x3, n, 256), a, n), 1e-4);
            }
        }
    }

    // Values of every float type the KV cache may hold, widened in registers: the sum equals the
    // reference over the values as stored.
    void weighted_rows_matches_reference_data() { add_isa_rows(); }
    void weighted_rows_matches_reference() {
        FETCH_KERNELS(kernels);
        for (DType type : {DType::F32, DType::F16, DType::BF16})
            for (int rows : {1, 2, 3, 5, 8})
                for (int m : {1, 5, 16})
                    for (int n : {1, 7, 8, 33, 64, 100}) {
                        const int ldp = m + 2, ldv = n + 3, ldo = n + 1;
                        const std::vector<float> p = random_floats(size_t(rows * ldp), uint32_t(m), 0.0f, 1.0f);
                        std::vector<float> v = random_floats(size_t(m * ldv), uint32_t(n));
                        std::vector<uint16_t> v16(v.size());
                        for (size_t i = 0; i < v.size() && type != DType::F32; ++i) {
                            v16[i] = type == DType::F16 ? f32_to_f16(v[i]) : f32_to_bf16(v[i]);
                            v[i] = type == DType::F16 ? f16_to_f32(v16[i]) : bf16_to_f32(v16[i]);
                        }
                        std::vector<float> out = random_floats(size_t(rows * ldo), 7);
                        std::vector<double> expected(out.begin(), out.end());
                        for (int r = 0; r < rows; ++r)
                            for (int j = 0; j < m; ++j)
                                for (int d = 0; d < n; ++d)
                                    expected[size_t(r * ldo + d)] +=
                                        double(p[size_t(r * ldp + j)]) * v[size_t(j * ldv + d)];
                        const void* stored = type == DType::F32 ? static_cast<const void*>(v.data()) : v16.data();
                        kernels.types[int(type)].weighted_rows(p.data(), ldp, rows, stored, ldv, m, n, out.data(), ldo);
                        compare(out, expected, 1e-5);
                    }
    }

    // Rounding to f16 for the KV cache: the same bits as the scalar reference (round to nearest
    // even), at every length, so tails shorter than a vector are right too.
    void to_f16_matches_reference_data() { add_isa_rows(); }
    void to_f16_matches_reference() {
        FETCH_KERNELS(kernels);
        for (int n : {1, 7, 8, 15, 16, 33, 64, 100}) {
            std::vector<float> x = random_floats(size_t(n), uint32_t(n), -70000.0f, 70000.0f);
            x[0] = 1e-6f;  // a subnormal in f16
            std::vector<uint16_t> y(size_t(n) + 1, 0xBEEF);
            kernels.to_f16(x.data(), y.data(), n);
            for (int i = 0; i < n; ++i) QCOMPARE(y[size_t(i)], f32_to_f16(x[size_t(i)]));
            QCOMPARE(y[size_t(n)], uint16_t(0xBEEF));  // nothing written past n
        }
    }

    void softmax_matches_reference_data() { add_isa_rows(); }
    void softmax_matches_reference() {
        FETCH_KERNELS(kernels);
        for (int n : {1, 3, 8, 17, 100, 1000}) {
            std::vector<float> x = random_floats(size_t(n), uint32_t(n), -30.0f, 30.0f);
            double max_x = -INFINITY, sum = 0.0;
            for (float v : x) max_x = std::max(max_x, double(v));
            std::vector<double> expected(x.size());
            for (size_t i = 0; i < x.size(); ++i) sum += expected[i] = std::exp(double(x[i]) - max_x);
            for (double& e : expected) e /= sum;
            kernels.softmax(x.data(), n);
            compare(x, expected, 1e-6);
        }
    }

    void swiglu_matches_reference_data() { add_isa_rows(); }
    void swiglu_matches_reference() {
        FETCH_KERNELS(kernels);
        for (int n : {1, 7, 8, 9, 100}) {
            std::vector<float> gate = random_floats(size_t(n), uint32_t(n), -20.0f, 20.0f);
            const std::vector<float> up = random_floats(size_t(n), uint32_t(n + 1), -3.0f, 3.0f);
            std::vector<double> expected(static_cast<size_t>(n));
            for (int i = 0; i < n; ++i)
                expected[size_t(i)] = double(gate[size_t(i)]) / (1.0 + std::exp(-double(gate[size_t(i)]))) * up[size_t(i)];
            kernels.swiglu(gate.data(), up.data(), n);
            compare(gate, expected, 1e-5);
        }
    }

    void sum_squares_matches_reference_data() { add_isa_rows(); }
    void sum_squares_matches_reference() {
        FETCH_KERNELS(kernels);
        for (int n : {1, 15, 16, 17, 768}) {
            const std::vector<float> x = random_floats(size_t(n), uint32_t(n));
            double expected = 0.0;
            for (float v : x) expected += double(v) * v;
            compare(std::vector<float>{kernels.sum_squares(x.data(), n)}, std::vector<double>{expected}, 1e-5);
        }
    }

    // Every item runs exactly once, on a thread index below size(), over many jobs in a row of
    // changing sizes (more threads than cores: workers arrive late, while the next job starts).
    void thread_pool_runs_every_item_once() {
        for (int n_threads : {1, 2, 3, 5}) {
            ThreadPool pool(n_threads);
            for (int job = 0; job < 3000; ++job) {
                const int n_items = 1 + job % 37;
                std::vector<std::atomic<int>> runs(static_cast<size_t>(n_items));
                std::atomic<bool> bad_thread{false};
                pool.parallel_for(n_items, [&](int64_t item, int thread) {
                    runs[size_t(item)].fetch_add(1);
                    if (thread < 0 || thread >= pool.size()) bad_thread = true;
                });
                for (const auto& r : runs) QCOMPARE(r.load(), 1);
                QVERIFY(!bad_thread);
            }
        }
    }

    // The bench's thread-wait figure: with counting on, the pool sums the time its threads spent in
    // items (here items that sleep 20 ms: at least their 8 x 20 ms, at most the threads' wall time);
    // off, it counts nothing.
    void thread_pool_counts_busy_time_when_asked() {
        ThreadPool pool(2);
        auto sleepy = [&pool](int n) {
            pool.parallel_for(n, [](int64_t, int) { std::this_thread::sleep_for(std::chrono::milliseconds(20)); });
        };
        sleepy(4);
        QCOMPARE(pool.busy_ns(), uint64_t(0));
        pool.set_counting(true);
        const auto start = std::chrono::steady_clock::now();
        sleepy(8);
        const auto wall = std::chrono::steady_clock::now() - start;
        pool.set_counting(false);
        const uint64_t busy = pool.busy_ns();
        QVERIFY2(busy >= 8 * 20'000'000ull, qPrintable(QString::number(busy)));
        QVERIFY2(busy <= uint64_t(pool.size()) * uint64_t(std::chrono::nanoseconds(wall).count()),
                 qPrintable(QString::number(busy)));
        sleepy(4);
        QCOMPARE(pool.busy_ns(), busy);
    }

    // LLAMADESK_ISA forces a kernel set everywhere; one this CPU lacks is refused, naming those it runs.
    void chosen_kernels_follow_llamadesk_isa() {
        const QByteArray saved = qgetenv("LLAMADESK_ISA");
        qunsetenv("LLAMADESK_ISA");
        QCOMPARE(&chosen_kernels(), &best_kernels());
        qputenv("LLAMADESK_ISA", "generic");
        QCOMPARE(std::string_view(chosen_kernels().isa), std::string_view("generic"));
        qputenv("LLAMADESK_ISA", "sse9");
        try {
            chosen_kernels();
            QFAIL("an unknown kernel set was accepted");
        } catch (const EngineError& e) {
            QCOMPARE(e.code(), ErrorCode::InvalidArgument);
            QVERIFY2(QString(e.what()).contains(QStringLiteral("LLAMADESK_ISA=sse9")), e.what());
            QVERIFY2(QString(e.what()).contains(QString::fromLatin1(best_kernels().isa)), e.what());
        }
        if (saved.isNull()) qunsetenv("LLAMADESK_ISA");
        else qputenv("LLAMADESK_ISA", saved);
    }

    void best_kernels_is_supported() {
        const Kernels& best = best_kernels();
        QVERIFY(kernels_for(best.isa) == &best);
    }
};

QTEST_APPLESS_MAIN(TestCpuKernels)
#include "test_cpu_kernels.moc"
