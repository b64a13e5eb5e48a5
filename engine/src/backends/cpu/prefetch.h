#pragma once

// Software prefetches that survive the optimizer. GCC 12 deletes a loop whose body is only
// __builtin_prefetch, as a loop without effects (at -O2 always, at -O3 where it is inlined into
// the kernels): every decode kernel's look-ahead was compiled away so. An empty volatile asm that
// takes the address keeps each one.

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
