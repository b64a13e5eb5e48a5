// What this CPU and its operating system support, read once with cpuid and xgetbv (both gcc and
// clang accept these, while clang 14 rejects __builtin_cpu_supports("f16c")). All false elsewhere
// than x86. The CPU backend chooses its kernel set by it; f16 conversions use F16C by it.
#pragma once

namespace llamadesk {

struct CpuFeatures {
    bool avx2 = false, fma = false, f16c = false;
    bool avx512f = false, avx512bw = false, avx512vl = false, avx512vnni = false;
    bool amx_int8 = false;  // the CPU has AMX tiles and their int8 products, and the OS saves tile state
    bool amx_bf16 = false;  // ... and their bf16 products
};

const CpuFeatures& cpu_features();

// Linux hands a process AMX's tile data only once asked (arch_prctl ARCH_REQ_XCOMP_PERM); using a
// tile before that is SIGILL. Asks once per process, on the first call: call it before starting
// threads that may use tiles. Null when AMX may be used, else why not (the CPU lacks it, or the
// kernel refused, with its error).
const char* amx_refusal();

}  // namespace llamadesk
