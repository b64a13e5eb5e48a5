// A 64-bit checksum of bytes, fast enough to verify every KV block read back from disk: four
// independent multiply-rotate lanes over 8-byte words, then a final mix. Detects corruption; it is
// not a cryptographic hash.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace llamadesk {

inline uint64_t checksum64(const void* data, size_t n, uint64_t seed = 0) {
    constexpr uint64_t kP1 = 0x9E3779B185EBCA87ull, kP2 = 0xC2B2AE3D27D4EB4Full;
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t lane[4] = {seed + kP1, seed + kP2, seed, seed - kP1};
    size_t i = 0;
    for (; i + 32 <= n; i += 32)
        for (int j = 0; j < 4; ++j) {
            uint64_t word;
            std::memcpy(&word, p + i + 8 * size_t(j), 8);
            lane[j] = std::rotl(lane[j] + word * kP2, 31) * kP1;
        }
    uint64_t h = std::rotl(lane[0], 1) + std::rotl(lane[1], 7) + std::rotl(lane[2], 12) + std::rotl(lane[3], 18) + n;
    for (; i < n; ++i) h = std::rotl(h ^ (p[i] * kP1), 11) * kP2;
    h ^= h >> 33;
    h *= kP2;
    h ^= h >> 29;
    h *= kP1;
    return h ^ (h >> 32);
}

}  // namespace llamadesk
