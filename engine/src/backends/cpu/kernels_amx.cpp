// The AVX-512 VNNI kernels again, with AMX tile products for the prefill of the K-quants, F16 and
// BF16 (see kernels_avx512.cpp, quant_amx_x86.h and float_amx_x86.h). Used only once Linux has granted the process AMX state
// (amx_refusal).
#define LLAMADESK_CPU_VNNI
#define LLAMADESK_CPU_AMX
#include "backends/cpu/kernels_avx512.cpp"  // NOLINT(bugprone-suspicious-include): one body, three flag sets
