#pragma once

// Software prefetches that survive the optimizer. GCC 12 may delete a loop whose body is only
// __builtin_prefetch, as a loop without effects (a lone such loop at -O2; at -O3, every decode
// kernel's look-ahead, inlined into the kernels). An empty volatile asm that takes the address
// keeps each one.

namespace llamadesk::cpu {

// The line at p, into L1 (and the caches below it).
inline void prefetch_to_l1(const void* p) {
    __builtin_prefetch(p, 0, 3);
    asm volatile("" : : "r"(p));
}

// The line at p, into L2 (x86's prefetcht1).
inline void prefetch_to_l2(const void* p) {
    __builtin_prefetch(p, 0, 2);
    asm volatile("" : : "r"(p));
}

}  // namespace llamadesk::cpu
