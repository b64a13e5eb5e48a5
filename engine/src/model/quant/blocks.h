// The byte layouts of llama.cpp's block-quantized weight types, as GGUF stores them (learned from
// the GGUF specification and ggml's public headers). A row of a quantized tensor is a run of
// blocks; a block covers kBlock32 or kBlock256 consecutive elements of the row. `d` is the block's
// scale in f16, `m`/`dmin` its offset. Kernels, readers and writers of every backend use these.
#pragma once

#include <cstdint>

// The CUDA kernels decode blocks with the same helpers.
#include "core/host_device.h"

namespace llamadesk::quant {

inline constexpr int kBlock32 = 32;    // Q8_0, Q4_0, Q4_1, Q5_0, Q5_1
inline constexpr int kBlock256 = 256;  // K-quants: a super-block of sub-blocks

// x[i] = d * q[i]
struct BlockQ8_0 {
    uint16_t d;
    int8_t qs[32];
};

// x[j] = d * ((qs[j] & 15) - 8), x[j + 16] = d * ((qs[j] >> 4) - 8)   for j < 16
struct BlockQ4_0 {
    uint16_t d;
    uint8_t qs[16];
};

// x[j] = d * (qs[j] & 15) + m, x[j + 16] = d * (qs[j] >> 4) + m
struct BlockQ4_1 {
    uint16_t d, m;
    uint8_t qs[16];
};

// As Q4_0 with a fifth bit: bit i of qh (little-endian 32 bits) is the high bit of element i;
// x[i] = d * (q[i] - 16)
struct BlockQ5_0 {
    uint16_t d;
    uint8_t qh[4];
    uint8_t qs[16];
};

// As Q4_1 with a fifth bit as in Q5_0; x[i] = d * q[i] + m
struct BlockQ5_1 {
    uint16_t d, m;
    uint8_t qh[4];
    uint8_t qs[16];
};

// 8 sub-blocks of 32 with 6-bit scales and mins packed in 12 bytes (see unpack_k_scale):
// x = d * scale[s] * q - dmin * min[s]. Elements 64c..64c+31 are the low nibbles of
// qs[32c..32c+31], elements 64c+32..64c+63 their high nibbles.
struct BlockQ4_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qs[128];
};

// Q4_K with a fifth bit: for the 64 elements of chunk c, bit 2c of qh[l] is the high bit of
// element 64c + l and bit 2c + 1 that of element 64c + 32 + l.
struct BlockQ5_K {
    uint16_t d, dmin;
    uint8_t scales[12];
    uint8_t qh[32];
    uint8_t qs[128];
};

// 16 sub-blocks of 16 with int8 scales; x = d * scales[s] * (q - 32), q of 6 bits. For each half h
// (128 elements) and l < 32, with L = ql + 64h, H = qh + 32h:
//   q[128h + l]      = (L[l] & 15)      | ((H[l] >> 0) & 3) << 4
//   q[128h + l + 32] = (L[l + 32] & 15) | ((H[l] >> 2) & 3) << 4
//   q[128h + l + 64] = (L[l] >> 4)      | ((H[l] >> 4) & 3) << 4
//   q[128h + l + 96] = (L[l + 32] >> 4) | ((H[l] >> 6) & 3) << 4
struct BlockQ6_K {
    uint8_t ql[128];
    uint8_t qh[64];
    int8_t scales[16];
    uint16_t d;
};

static_assert(sizeof(BlockQ8_0) == 34 && sizeof(BlockQ4_0) == 18 && sizeof(BlockQ4_1) == 20);
static_assert(sizeof(BlockQ5_0) == 22 && sizeof(BlockQ5_1) == 24);
static_assert(sizeof(BlockQ4_K) == 144 && sizeof(BlockQ5_K) == 176 && sizeof(BlockQ6_K) == 210);

// Sub-block s (< 8) of a Q4_K/Q5_K super-block: its 6-bit scale and min.
LLAMADESK_HOST_DEVICE inline void unpack_k_scale(const uint8_t* scales, int s, uint8_t& scale, uint8_t& min) {
    if (s < 4) {
        scale = scales[s] & 63;
        min = scales[s + 4] & 63;
    } else {
        scale = uint8_t((scales[s + 4] & 15) | ((scales[s - 4] >> 6) << 4));
        min = uint8_t((scales[s + 4] >> 4) | ((scales[s] >> 6) << 4));
    }
}

}  // namespace llamadesk::quant
