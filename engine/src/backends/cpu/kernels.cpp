#include "backends/cpu/kernels.h"

#include <string_view>

namespace llamadesk::cpu {

const Kernels& generic_kernels();
#if defined(LLAMADESK_CPU_X86)
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
const Kernels& avx512vnni_kernels();
#endif

const Kernels* kernels_for(const char* isa) {
    const std::string_view name(isa);
    if (name == "generic") return &generic_kernels();
#if defined(LLAMADESK_CPU_X86)
    if (name == "avx2" && __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
        __builtin_cpu_supports("f16c"))
        return &avx2_kernels();
    if (name == "avx512" && __builtin_cpu_supports("avx512f")) return &avx512_kernels();
    if (name == "avx512vnni" && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512vl") && __builtin_cpu_supports("avx512vnni"))
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
