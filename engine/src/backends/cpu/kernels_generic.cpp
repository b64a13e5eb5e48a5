// Portable kernels: the same bodies over plain 8-float arrays (the compiler vectorizes what it can
// for the baseline instruction set). Used on CPUs without AVX2.
#include "backends/cpu/kernels.h"

#include "model/dtype.h"

namespace llamadesk::cpu {
namespace {

struct Simd {
    struct V {
        float v[8];
    };
    static constexpr int W = 8;
    static constexpr int TM = 4;
    static constexpr int TN = 2;

    template <class F>
    static V each(F f) {
        V r;
        for (int i = 0; i < W; ++i) r.v[i] = f(i);
        return r;
    }
    static V zero() { return set1(0.0f); }
    static V set1(float a) { return each([&](int) { return a; }); }
    static V load(const float* p) { return each([&](int i) { return p[i]; }); }
    static void store(float* p, V a) { for (int i = 0; i < W; ++i) p[i] = a.v[i]; }
    static V load_f16(const uint16_t* p) { return each([&](int i) { return f16_to_f32(p[i]); }); }
    static V load_bf16(const uint16_t* p) { return each([&](int i) { return bf16_to_f32(p[i]); }); }
    static float f16_scalar(uint16_t h) { return f16_to_f32(h); }
    static V fma(V a, V b, V c) { return each([&](int i) { return a.v[i] * b.v[i] + c.v[i]; }); }
    static V add(V a, V b) { return each([&](int i) { return a.v[i] + b.v[i]; }); }
    static V mul(V a, V b) { return each([&](int i) { return a.v[i] * b.v[i]; }); }
    static V div(V a, V b) { return each([&](int i) { return a.v[i] / b.v[i]; }); }
    static V max(V a, V b) { return each([&](int i) { return a.v[i] > b.v[i] ? a.v[i] : b.v[i]; }); }
    static V min(V a, V b) { return each([&](int i) { return a.v[i] < b.v[i] ? a.v[i] : b.v[i]; }); }
    static V round(V a) { return each([&](int i) { return __builtin_nearbyintf(a.v[i]); }); }
    static V pow2n(V n) {
        return each([&](int i) {
            const uint32_t bits = uint32_t(int32_t(n.v[i]) + 127) << 23;
            float f;
            __builtin_memcpy(&f, &bits, 4);
            return f;
        });
    }
    static V select_gt(V a, V b, V x, V y) { return each([&](int i) { return a.v[i] > b.v[i] ? x.v[i] : y.v[i]; }); }
    static float hsum(V a) {
        float s = 0.0f;
        for (int i = 0; i < W; ++i) s += a.v[i];
        return s;
    }
    static void hsum4(V a, V b, V c, V d, float* out) {
        out[0] = hsum(a);
        out[1] = hsum(b);
        out[2] = hsum(c);
        out[3] = hsum(d);
    }
    static float hmax(V a) {
        float m = a.v[0];
        for (int i = 1; i < W; ++i) m = a.v[i] > m ? a.v[i] : m;
        return m;
    }
};

#include "backends/cpu/kernels_impl.h"

}  // namespace

const Kernels& generic_kernels() {
    static const Kernels kernels = make_kernels("generic");
    return kernels;
}

}  // namespace llamadesk::cpu
