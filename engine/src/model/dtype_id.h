// The element types alone, without the conversions of dtype.h, for headers compiled under other
// instruction sets (the CPU kernels), which must not pull in inline code.
#pragma once

#include <cstdint>

namespace llamadesk {

enum class DType : uint8_t { F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K };
inline constexpr int kDTypeCount = int(DType::Q6_K) + 1;

}  // namespace llamadesk
