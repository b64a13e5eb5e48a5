// The AVX-512 VNNI kernels again, with AMX tile products for the prefill of Q4_K and Q6_K (see
// kernels_avx512.cpp and quant_amx_x86.h). Used only once Linux has granted the process AMX state
// (amx_refusal).
#define LLAMADESK_CPU_VNNI
#define LLAMADESK_CPU_AMX
#include "backends/cpu/kernels_avx512.cpp"  // NOLINT(bugprone-suspicious-include): one body, three flag sets
