#include "core/cpu_features.h"

#include <string>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif
#if defined(__linux__) && defined(__x86_64__)
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#endif

namespace llamadesk {

namespace {

#if defined(__x86_64__) || defined(__i386__)
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
    const bool tile_state = (xcr0_lo & 0x60000u) == 0x60000u;  // XTILECFG and XTILEDATA
    f.amx_int8 = tile_state && (d & (1u << 24)) && (d & (1u << 25));  // AMX-TILE, AMX-INT8
    f.amx_bf16 = f.amx_int8 && (d & (1u << 22));                       // AMX-BF16
    return f;
}
#else
CpuFeatures detect() { return {}; }
#endif

}  // namespace

const CpuFeatures& cpu_features() {
    static const CpuFeatures features = detect();
    return features;
}

const char* amx_refusal() {
    static const std::string refusal = []() -> std::string {
        if (!cpu_features().amx_int8) return "this CPU has no AMX-INT8";
#if defined(__linux__) && defined(__x86_64__)
        constexpr long kArchRequestPermission = 0x1023;  // ARCH_REQ_XCOMP_PERM
        constexpr long kTileData = 18;                   // XFEATURE_XTILEDATA
        if (syscall(SYS_arch_prctl, kArchRequestPermission, kTileData) != 0)
            return std::string("Linux refused AMX tile state (arch_prctl: ") + std::strerror(errno) + ")";
        return {};
#else
        return "AMX is used only on Linux";
#endif
    }();
    return refusal.empty() ? nullptr : refusal.c_str();
}

}  // namespace llamadesk
