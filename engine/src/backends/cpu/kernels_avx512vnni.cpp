// The AVX-512 kernels again, with VNNI for the block types (see kernels_avx512.cpp).
#define LLAMADESK_CPU_VNNI
#include "backends/cpu/kernels_avx512.cpp"  // NOLINT(bugprone-suspicious-include): one body, three flag sets
