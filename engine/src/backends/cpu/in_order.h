#pragma once

// Integer sums formed in the order written. GCC reassociates a chain of integer vector adds
// (maddubs' pair sums, madd's products) into a tree, which keeps every product of a step live at
// once: with 16 registers the AVX2 panel tile spilled 18 vectors per chunk to the stack. An empty
// asm that takes and gives back the running sum ends each add of the chain. llamadesk-kernel-bench
// --isa avx2 --rows 14336 --cols 4096 --tokens 512, 2 Xeon cores, GMAC/s: Q4_K 132 -> 185, Q4_0
// 132 -> 185, Q5_K 115 -> 152, Q6_K 106 -> 126, Q8_0 97 -> 113; decode unchanged.

namespace llamadesk::cpu {

template <class V>
inline V in_order(V sum) {
    asm("" : "+v"(sum));
    return sum;
}

}  // namespace llamadesk::cpu
