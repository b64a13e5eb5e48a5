// The weight type table and its conversions: ggml's ids and block sizes, names, the reference
// quantizers' round trip within a bound each type's block scale implies, our dequantizers against
// the floats ggml's own reference makes of the same blocks (tests/data/ggml_blocks.gguf, written by
// engine/tools/quant/write_ggml_blocks_fixture.py), and WeightMix's choice of type per matrix.
#include <QTest>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <map>
#include <random>
#include <vector>

#include "model/quant/blocks.h"
#include "model/tensor_slots.h"
#include "model/weight_mix.h"
#include "model/weight_types.h"
#include "readers/gguf_file.h"
#include "readers/mapped_file.h"
#include "test_support.h"

using namespace llamadesk;

namespace {

const std::vector<DType> kQuantized = {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0,
                                       DType::Q5_1, DType::Q4_K, DType::Q5_K, DType::Q6_K};

float absmax(const float* x, int n) {
    float a = 0;
    for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
    return a;
}

// The value of largest magnitude, with its sign (the first one on a tie, as the quantizers pick).
float signed_absmax(const float* x, int n) {
    float s = 0;
    for (int i = 0; i < n; ++i)
        if (std::fabs(x[i]) > std::fabs(s)) s = x[i];
    return s;
}

// How far f16 rounding may move a scale of value v: half an ulp, 2^-25 at least (subnormals).
float f16_error(float v) { return std::max(std::fabs(v) * 0x1p-11f, 0x1p-25f); }

// Each bound below is (half) a step of the block's grid plus `slack`, which the f16 rounding of
// the block's scales costs: a scale off by e moves the code n by n * e. A flat block is one code,
// so it comes back within the slack alone.
struct Bounds {
    std::vector<float> element;
    float slack = 0;
};

// Symmetric types (Q8_0, Q4_0, Q5_0): step = |s| / levels_below, s the signed absmax, mapped to the
// lowest code. Codes run to levels_below - 1 on the other side, so a value there beyond
// (levels_below - 1/2) steps is clamped to the top code.
Bounds symmetric_bounds(const float* x, int n, float levels_below) {
    const float s = signed_absmax(x, n), step = std::fabs(s) / levels_below;
    Bounds b{std::vector<float>(size_t(n)), levels_below * f16_error(step)};
    for (int i = 0; i < n; ++i) {
        const bool far_side = (x[i] > 0) != (s > 0) && x[i] != 0;
        const float clamped = far_side ? std::fabs(x[i]) - (levels_below - 1) * step : 0.0f;
        b.element[size_t(i)] = std::max(step / 2, clamped) + b.slack;
    }
    return b;
}

// Q4_1/Q5_1: levels + 1 codes from the block's min (an f16) to its max.
Bounds affine_bounds(const float* x, int n, float levels) {
    const auto [lo, hi] = std::minmax_element(x, x + n);
    const float step = (*hi - *lo) / levels;
    const float slack = levels * f16_error(step) + f16_error(*lo);
    return {std::vector<float>(size_t(n), step / 2 + slack), slack};
}

// Q4_K/Q5_K: each sub-block of 32 spans [min(0, lo), hi] in `levels` steps; the steps are 6-bit
// multiples of d = (largest step) / 63, rounded up (so a step grows by at most d), and the offsets
// 6-bit multiples of dmin = (largest offset) / 63, rounded to nearest (so the grid shifts by at
// most dmin / 2).
Bounds k_bounds(const float* x, float levels) {
    float step[8], largest_step = 0, largest_offset = 0;
    for (int s = 0; s < 8; ++s) {
        const auto [lo, hi] = std::minmax_element(x + 32 * s, x + 32 * s + 32);
        const float offset = -std::min(0.0f, *lo);
        step[s] = (*hi + offset) / levels;
        largest_step = std::max(largest_step, step[s]);
        largest_offset = std::max(largest_offset, offset);
    }
    const float slack = (levels + 1) * 63 * f16_error(largest_step / 63) + 63 * f16_error(largest_offset / 63);
    Bounds b{std::vector<float>(256), slack};
    for (int i = 0; i < 256; ++i)
        b.element[size_t(i)] = (step[i / 32] + largest_step / 63) / 2 + largest_offset / 126 + slack;
    return b;
}

// Q6_K: sub-blocks of 16 with step a/32 (a the signed absmax, mapped to code -32), the steps int8
// multiples of d = (largest step) / 127 rounded to nearest: a grid step is off by at most d / 2,
// which moves code -32 by 16 d. As in Q4_0 the far side lacks code +32.
Bounds q6_k_bounds(const float* x) {
    float largest_step = 0;
    for (int s = 0; s < 16; ++s) largest_step = std::max(largest_step, absmax(x + 16 * s, 16) / 32);
    const float d = largest_step / 127;
    Bounds b{std::vector<float>(256), 33 * 127 * f16_error(d)};
    for (int s = 0; s < 16; ++s) {
        const float a = signed_absmax(x + 16 * s, 16), step = std::fabs(a) / 32;
        for (int l = 0; l < 16; ++l) {
            const float v = x[16 * s + l];
            const bool far_side = (v > 0) != (a > 0) && v != 0;
            b.element[size_t(16 * s + l)] = (far_side ? step : step / 2) + 16 * d + b.slack;
        }
    }
    return b;
}

// How far each element of one block may move in a from_f32 / to_f32 round trip.
Bounds round_trip_bounds(DType t, const float* x) {
    const int n = weight_type(t).block_elements;
    switch (t) {
    case DType::Q8_0: return symmetric_bounds(x, n, 127);
    case DType::Q4_0: return symmetric_bounds(x, n, 8);
    case DType::Q5_0: return symmetric_bounds(x, n, 16);
    case DType::Q4_1: return affine_bounds(x, n, 15);
    case DType::Q5_1: return affine_bounds(x, n, 31);
    case DType::Q4_K: return k_bounds(x, 15);
    case DType::Q5_K: return k_bounds(x, 31);
    case DType::Q6_K: return q6_k_bounds(x);
    default: qFatal("%s is not a block type", dtype_name(t));
    }
}

std::vector<float> round_trip(DType t, const std::vector<float>& x) {
    const WeightType& w = weight_type(t);
    std::vector<uint8_t> stored(size_t(w.bytes(int64_t(x.size()))));
    w.from_f32(x.data(), stored.data(), int64_t(x.size()));
    std::vector<float> back(x.size());
    w.to_f32(stored.data(), back.data(), int64_t(x.size()));
    return back;
}

// Rows of 256 (one super-block, eight 32-blocks) that stress the block scales.
std::map<QString, std::vector<float>> round_trip_inputs() {
    std::mt19937 rng(8);
    std::normal_distribution<float> normal(0.0f, 0.05f);
    std::map<QString, std::vector<float>> in;
    for (int r = 0; r < 16; ++r) {
        std::vector<float> x(256);
        for (float& v : x) v = normal(rng);
        in[QStringLiteral("normal %1").arg(r)] = x;
        x[rng() % 256] = (r % 2 ? 1.0f : -1.0f) * (0.5f + float(r));
        in[QStringLiteral("one outlier %1").arg(r)] = x;
        for (float& v : x) v = -std::fabs(normal(rng)) - 0.01f;
        in[QStringLiteral("negative only %1").arg(r)] = x;
        for (float& v : x) v = std::fabs(normal(rng)) + 0.01f;
        in[QStringLiteral("positive only %1").arg(r)] = x;
    }
    for (float c : {0.3f, -0.7f, 1e-3f, -25.0f}) in[QStringLiteral("constant %1").arg(c)] = std::vector<float>(256, c);
    in[QStringLiteral("zero")] = std::vector<float>(256, 0.0f);
    return in;
}

// The fixture ggml's reference wrote: tensor name -> (type id, bytes).
struct Fixture {
    MappedFile file{LLAMADESK_TEST_DATA_DIR "/ggml_blocks.gguf"};
    GgufFile gguf = parse_gguf(file.data(), file.size(), file.path(), true);

    const GgufTensorInfo& tensor(const std::string& name) const {
        for (const GgufTensorInfo& t : gguf.tensors)
            if (t.name == name) return t;
        qFatal("the fixture lacks tensor %s", name.c_str());
    }
    const uint8_t* data(const GgufTensorInfo& t) const { return file.data() + gguf.data_offset + t.offset; }
    std::vector<float> floats(const std::string& name) const {
        const GgufTensorInfo& t = tensor(name);
        std::vector<float> out(size_t(t.ne[0] * t.ne[1]));
        std::memcpy(out.data(), data(t), out.size() * 4);
        return out;
    }
};

std::string upper(const char* s) {
    std::string u(s);
    for (char& c : u) c = char(std::toupper(static_cast<unsigned char>(c)));
    return u;
}

ConstTensorSlot slot(TensorRole role, int layer, int64_t cols) { return {"", role, layer, 64, cols, nullptr}; }

}  // namespace

class TestWeightTypes : public QObject {
    Q_OBJECT

private slots:
    // Ids, block sizes and bytes as ggml defines them (ggml.c's type_traits), and names that
    // parse back.
    void table_matches_ggml() {
        struct Expected {
            DType t;
            const char* name;
            uint32_t id;
            int elements, bytes;
            double bits;
        };
        const Expected expected[] = {
            {DType::F32, "f32", 0, 1, 4, 32},       {DType::F16, "f16", 1, 1, 2, 16},
            {DType::BF16, "bf16", 30, 1, 2, 16},    {DType::Q8_0, "q8_0", 8, 32, 34, 8.5},
            {DType::Q4_0, "q4_0", 2, 32, 18, 4.5},  {DType::Q4_1, "q4_1", 3, 32, 20, 5},
            {DType::Q5_0, "q5_0", 6, 32, 22, 5.5},  {DType::Q5_1, "q5_1", 7, 32, 24, 6},
            {DType::Q4_K, "q4_k", 12, 256, 144, 4.5}, {DType::Q5_K, "q5_k", 13, 256, 176, 5.5},
            {DType::Q6_K, "q6_k", 14, 256, 210, 6.5625},
        };
        QCOMPARE(weight_types().size(), std::size(expected));
        for (const Expected& e : expected) {
            const WeightType& w = weight_type(e.t);
            QCOMPARE(w.dtype, e.t);
            QCOMPARE(w.name, e.name);
            QCOMPARE(w.ggml_id, e.id);
            QCOMPARE(w.block_elements, e.elements);
            QCOMPARE(w.block_bytes, e.bytes);
            QCOMPARE(w.bits_per_weight(), e.bits);
            QCOMPARE(w.quantized(), e.elements > 1);
            QCOMPARE(w.bytes(int64_t(e.elements) * 3), int64_t(e.bytes) * 3);
            QCOMPARE(weight_type_by_ggml_id(e.id), &w);
            QCOMPARE(weight_type_by_name(e.name), &w);
            QCOMPARE(weight_type_by_name(upper(e.name)), &w);
            QVERIFY(weight_type_names().find(e.name) != std::string::npos);
        }
        using namespace quant;
        const std::pair<DType, size_t> structs[] = {
            {DType::Q8_0, sizeof(BlockQ8_0)}, {DType::Q4_0, sizeof(BlockQ4_0)}, {DType::Q4_1, sizeof(BlockQ4_1)},
            {DType::Q5_0, sizeof(BlockQ5_0)}, {DType::Q5_1, sizeof(BlockQ5_1)}, {DType::Q4_K, sizeof(BlockQ4_K)},
            {DType::Q5_K, sizeof(BlockQ5_K)}, {DType::Q6_K, sizeof(BlockQ6_K)},
        };
        for (const auto& [t, size] : structs) QCOMPARE(size_t(weight_type(t).block_bytes), size);
        QVERIFY(weight_type_by_ggml_id(10) == nullptr);  // Q2_K: not read
        QVERIFY(weight_type_by_ggml_id(4) == nullptr);   // removed from ggml
        for (const char* bad : {"q4_k_m", "q4", "", "f32 ", "Q8_O"}) QVERIFY(weight_type_by_name(bad) == nullptr);
    }

    // f16_scales point at the scales: an infinite scale there makes the block non-finite.
    void scale_offsets_point_at_the_scales() {
        for (DType t : kQuantized) {
            const WeightType& w = weight_type(t);
            std::vector<float> x(size_t(w.block_elements), 0.25f);
            x[3] = -0.5f;
            for (int16_t offset : w.f16_scales) {
                if (offset < 0) continue;
                std::vector<uint8_t> block(size_t(w.block_bytes));
                w.from_f32(x.data(), block.data(), w.block_elements);
                const uint16_t inf = 0x7c00;
                std::memcpy(block.data() + offset, &inf, 2);
                std::vector<float> back(x.size());
                w.to_f32(block.data(), back.data(), w.block_elements);
                QVERIFY2(std::any_of(back.begin(), back.end(), [](float v) { return !std::isfinite(v); }),
                         qPrintable(QStringLiteral("%1 scale at %2").arg(w.name).arg(offset)));
            }
        }
    }

    void round_trip_within_bound_data() {
        QTest::addColumn<int>("type");
        for (DType t : kQuantized) QTest::newRow(dtype_name(t)) << int(t);
    }
    // from_f32 then to_f32 moves each value by at most half a step of its block's grid (a whole
    // step where the grid lacks a top code), plus what the f16 scales' rounding costs; a flat
    // block, one code, moves by that rounding alone, and zeros stay zero.
    void round_trip_within_bound() {
        QFETCH(int, type);
        const DType t = DType(type);
        const int block = weight_type(t).block_elements;
        double worst_ratio = 0;
        for (const auto& [name, x] : round_trip_inputs()) {
            const std::vector<float> back = round_trip(t, x);
            const bool flat = name.startsWith(QStringLiteral("constant")) || name == QStringLiteral("zero");
            for (size_t b = 0; b < x.size(); b += size_t(block)) {
                const Bounds bound = round_trip_bounds(t, x.data() + b);
                for (size_t j = 0; j < size_t(block); ++j) {
                    const float err = std::fabs(back[b + j] - x[b + j]);
                    const float allowed = flat ? bound.slack : bound.element[j];
                    worst_ratio = std::max(worst_ratio, double(err / allowed));
                    if (!(err <= allowed))
                        QFAIL(qPrintable(QStringLiteral("%1, element %2: %3 came back as %4 (bound %5)")
                                             .arg(name).arg(b + j).arg(x[b + j]).arg(back[b + j]).arg(allowed)));
                }
            }
            if (name == QStringLiteral("zero"))
                QVERIFY(std::all_of(back.begin(), back.end(), [](float v) { return v == 0.0f; }));
        }
        qInfo("%s: largest error / bound %.3f", dtype_name(t), worst_ratio);
    }

    // Our to_f32 of blocks ggml's quantizer wrote (and of random blocks) gives ggml's floats.
    void dequantize_matches_ggml_data() { round_trip_within_bound_data(); }
    void dequantize_matches_ggml() {
        QFETCH(int, type);
        const WeightType& w = weight_type(DType(type));
        const Fixture fx;
        const GgufTensorInfo& blocks = fx.tensor(upper(w.name) + ".blocks");
        QCOMPARE(blocks.type, w.ggml_id);
        const std::vector<float> expected = fx.floats(upper(w.name) + ".expected");
        QCOMPARE(int64_t(expected.size()), blocks.ne[0] * blocks.ne[1]);
        // Blocks in a GGUF are only 2-byte aligned relative to each other: copy to be safe.
        std::vector<uint8_t> bytes(size_t(w.bytes(int64_t(expected.size()))));
        std::memcpy(bytes.data(), fx.data(blocks), bytes.size());
        std::vector<float> ours(expected.size());
        w.to_f32(bytes.data(), ours.data(), int64_t(ours.size()));
        for (size_t i = 0; i < ours.size(); ++i)
            if (ours[i] != expected[i])
                QFAIL(qPrintable(QStringLiteral("element %1: ours %2, ggml %3").arg(i).arg(ours[i]).arg(expected[i])));
    }

    // On the 32-element types our reference quantizer is ggml's method: its error on the same
    // floats is ggml's, up to ties and the f16 rounding of the scale it divides by.
    void quantizer_error_matches_ggml_data() {
        QTest::addColumn<int>("type");
        for (DType t : {DType::Q8_0, DType::Q4_0, DType::Q4_1, DType::Q5_0, DType::Q5_1})
            QTest::newRow(dtype_name(t)) << int(t);
    }
    void quantizer_error_matches_ggml() {
        QFETCH(int, type);
        const DType t = DType(type);
        const Fixture fx;
        const std::vector<float> source = fx.floats("source");
        const std::vector<float> ggml = fx.floats(upper(dtype_name(t)) + ".expected");  // row 0
        const std::vector<float> ours = round_trip(t, source);
        double ours_sq = 0, ggml_sq = 0;
        int same = 0;
        for (size_t i = 0; i < source.size(); ++i) {
            ours_sq += std::pow(double(ours[i]) - source[i], 2);
            ggml_sq += std::pow(double(ggml[i]) - source[i], 2);
            same += ours[i] == ggml[i];
        }
        const double ours_rms = std::sqrt(ours_sq / double(source.size())), ggml_rms = std::sqrt(ggml_sq / double(source.size()));
        qInfo("%s: rms error ours %.3g, ggml %.3g; %d of %zu values identical", dtype_name(t), ours_rms,
              ggml_rms, same, source.size());
        QVERIFY(ours_rms <= ggml_rms * 1.02 + 1e-9);
        QVERIFY(same >= int(source.size()) * 9 / 10);
    }

    void mix_names() {
        const std::optional<WeightMix> m = WeightMix::parse("Q4_K_M");
        QVERIFY(m && m->base == DType::Q4_K && m->medium);
        QCOMPARE(m->label(), std::string("Q4_K_M"));
        const std::optional<WeightMix> m5 = WeightMix::parse("q5_k_m");
        QVERIFY(m5 && m5->base == DType::Q5_K && m5->medium);
        QCOMPARE(m5->label(), std::string("Q5_K_M"));
        for (const WeightType& w : weight_types()) {
            const std::optional<WeightMix> one = WeightMix::parse(w.name);
            QVERIFY(one && one->base == w.dtype && !one->medium);
            const bool k_alone = w.dtype == DType::Q4_K || w.dtype == DType::Q5_K;
            QCOMPARE(one->label(), k_alone ? std::string() : upper(w.name));  // llama.cpp has no plain Q4_K file type
            QVERIFY(WeightMix::names().find(w.name) != std::string::npos);
        }
        for (const char* bad : {"q6_k_m", "q8_0_m", "q4_k_s", "", "q4"}) QVERIFY(!WeightMix::parse(bad));
    }

    // A matrix whose rows do not fit the type's block falls back as llama.cpp's quantizer does.
    void mix_falls_back_on_short_rows() {
        struct Case {
            DType base;
            int64_t cols;
            DType expected;
        };
        const Case cases[] = {
            {DType::Q4_K, 256, DType::Q4_K}, {DType::Q4_K, 96, DType::Q5_0}, {DType::Q4_K, 40, DType::F16},
            {DType::Q5_K, 512, DType::Q5_K}, {DType::Q5_K, 64, DType::Q5_1}, {DType::Q6_K, 128, DType::Q8_0},
            {DType::Q6_K, 172, DType::F16},  {DType::Q8_0, 32, DType::Q8_0}, {DType::Q8_0, 40, DType::F16},
            {DType::Q4_0, 352, DType::Q4_0}, {DType::F32, 3, DType::F32},    {DType::BF16, 7, DType::BF16},
        };
        for (const Case& c : cases)
            QVERIFY2(WeightMix(c.base).type_for(slot(TensorRole::FfnUp, 0, c.cols), 4) == c.expected,
                     qPrintable(QStringLiteral("%1 on rows of %2").arg(dtype_name(c.base)).arg(c.cols)));
        for (DType t : kQuantized)
            QCOMPARE(WeightMix(t).type_for(slot(TensorRole::AttentionNorm, 0, 256), 4), DType::F32);
    }

    // The _M recipe on Llama 2 7B's shapes: Q6_K for the classifier and for attn_v and ffn_down on
    // layers 0-3, 6, 9, ..., 27 and 28-31 (16 of 32); llama.cpp's Q4_K_M 7B holds 33 Q6_K matrices.
    void medium_recipe() {
        const std::vector<int> more_bits = {0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31};
        for (DType base : {DType::Q4_K, DType::Q5_K}) {
            WeightMix mix(base);
            mix.medium = true;
            int q6 = 0;
            for (int layer = 0; layer < 32; ++layer) {
                const bool more = std::count(more_bits.begin(), more_bits.end(), layer) == 1;
                for (TensorRole r : {TensorRole::Query, TensorRole::Key, TensorRole::Value, TensorRole::AttentionOutput,
                                     TensorRole::FfnGate, TensorRole::FfnDown, TensorRole::FfnUp}) {
                    const DType t = mix.type_for(slot(r, layer, 4096), 32);
                    const bool expect_q6 = more && (r == TensorRole::Value || r == TensorRole::FfnDown);
                    QVERIFY2(t == (expect_q6 ? DType::Q6_K : base), qPrintable(QStringLiteral("layer %1").arg(layer)));
                    q6 += t == DType::Q6_K;
                }
            }
            QCOMPARE(mix.type_for(slot(TensorRole::TokenEmbedding, -1, 4096), 32), base);
            q6 += mix.type_for(slot(TensorRole::Output, -1, 4096), 32) == DType::Q6_K;
            QCOMPARE(q6, 33);
            // The classifier of a model with rows of 64 cannot be Q6_K: Q8_0, as llama.cpp does.
            QCOMPARE(mix.type_for(slot(TensorRole::Output, -1, 64), 32), DType::Q8_0);
        }
        // stories260K's 5 layers: layers 2 and 4.
        WeightMix mix(DType::Q4_K);
        mix.medium = true;
        for (int layer = 0; layer < 5; ++layer)
            QCOMPARE(mix.type_for(slot(TensorRole::FfnDown, layer, 512), 5), layer == 2 || layer == 4 ? DType::Q6_K : DType::Q4_K);
    }
};

QTEST_GUILESS_MAIN(TestWeightTypes)
#include "test_weight_types.moc"
