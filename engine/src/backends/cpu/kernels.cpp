#include "backends/cpu/kernels.h"

#include <string_view>

#if defined(LLAMADESK_CPU_X86)
#include <cpuid.h>
#endif

namespace llamadesk::cpu {

const Kernels& generic_kernels();
#if defined(LLAMADESK_CPU_X86)
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
const Kernels& avx512vnni_kernels();

namespace {

// What this CPU and its operating system support, read with cpuid and xgetbv: both gcc and clang
// accept these, while clang 14 rejects __builtin_cpu_supports("f16c").
struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
};

CpuFeatures detect() {
    CpuFeatures f;
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return f;
    const bool fma = c & (1u << 12), osxsave = c & (1u << 27), avx = c & (1u << 28), f16c = c & (1u << 29);
    if (!osxsave || !avx) return f;
    unsigned xcr0_lo, xcr0_hi;
    __asm__("xgetbv" : "=a"(xcr0_lo), "=d"(xcr0_hi) : "c"(0));
    const bool ymm = (xcr0_lo & 0x6u) == 0x6u;             // the OS saves SSE and AVX state
    const bool zmm = ymm && (xcr0_lo & 0xe0u) == 0xe0u;    // ... and the AVX-512 state
    if (!ymm || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return f;
    f.avx2 = b & (1u << 5);
    f.fma = fma;
    f.f16c = f16c;
    f.avx512f = zmm && (b & (1u << 16));
    f.avx512bw = zmm && (b & (1u << 30));
    f.avx512vl = zmm && (b & (1u << 31));
    f.avx512vnni = zmm && (c & (1u << 11));
    return f;
}

const CpuFeatures& cpu() {
    static const CpuFeatures features = detect();
    return features;
}

}  // namespace
#endif

const Kernels* kernels_for(const char* isa) {
    const std::string_view name(isa);
    if (name == "generic") return &generic_kernels();
#if defined(LLAMADESK_CPU_X86)
    const CpuFeatures& f = cpu();
    const bool avx2 = f.avx2 && f.fma && f.f16c;
    if (name == "avx2" && avx2) return &avx2_kernels();
    if (name == "avx512" && avx2 && f.avx512f) return &avx512_kernels();
    if (name == "avx512vnni" && avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni)
        return &avx512vnni_kernels();
#endif
    return nullptr;
}

const Kernels& best_kernels() {
    for (const char* isa : {"avx512vnni", "avx512", "avx2"})
        if (const Kernels* k = kernels_for(isa)) return *k;
    return generic_kernels();
}

}  // namespace llamadesk::cpu
