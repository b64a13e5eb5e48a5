#include "backends/cpu/kernels.h"

#include <cstdlib>
#include <string>
#include <string_view>

#include "core/cpu_features.h"
#include "core/error.h"

namespace llamadesk::cpu {

const Kernels& generic_kernels();
#if defined(LLAMADESK_CPU_X86)
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();
const Kernels& avx512vnni_kernels();
const Kernels& amx_kernels();
#endif

const Kernels* kernels_for(const char* isa) {
    const std::string_view name(isa);
    if (name == "generic") return &generic_kernels();
#if defined(LLAMADESK_CPU_X86)
    const CpuFeatures& f = cpu_features();
    const bool avx2 = f.avx2 && f.fma && f.f16c;
    if (name == "avx2" && avx2) return &avx2_kernels();
    if (name == "avx512" && avx2 && f.avx512f) return &avx512_kernels();
    const bool vnni = avx2 && f.avx512f && f.avx512bw && f.avx512vl && f.avx512vnni;
    if (name == "avx512vnni" && vnni) return &avx512vnni_kernels();
    if (name == "amx" && vnni && !amx_refusal()) return &amx_kernels();
#endif
    return nullptr;
}

namespace {
constexpr const char* kIsas[] = {"amx", "avx512vnni", "avx512", "avx2", "generic"};
}

std::span<const char* const> kernel_set_names() { return kIsas; }

const Kernels& best_kernels() {
    for (const char* isa : kIsas)
        if (const Kernels* k = kernels_for(isa)) return *k;
    return generic_kernels();
}

const Kernels& chosen_kernels() {
    const char* chosen = std::getenv("LLAMADESK_ISA");
    if (chosen == nullptr || *chosen == '\0') return best_kernels();
    if (const Kernels* k = kernels_for(chosen)) return *k;
    std::string runs;
    for (const char* isa : kIsas)
        if (kernels_for(isa)) runs += std::string(runs.empty() ? "" : ", ") + isa;
    fail(ErrorCode::InvalidArgument, "LLAMADESK_ISA=" + std::string(chosen) +
                                         " names a CPU kernel set this CPU or build lacks; this one runs " + runs);
}

}  // namespace llamadesk::cpu
