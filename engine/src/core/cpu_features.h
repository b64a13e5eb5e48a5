// What this CPU and its operating system support, read once with cpuid and xgetbv (both gcc and
// clang accept these, while clang 14 rejects __builtin_cpu_supports("f16c")). All false elsewhere
// than x86. The CPU backend chooses its kernel set by it; f16 conversions use F16C by it.
#pragma once

namespace llamadesk {

struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
};

const CpuFeatures& cpu_features();

}  // namespace llamadesk
