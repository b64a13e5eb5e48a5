#include "backends/cpu/kernels.h"

#include <string_view>

#include "core/cpu_features.h"

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
    const CpuFeatures& f = cpu_features();
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
