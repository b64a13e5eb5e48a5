// F16 rows converted eight values at a time with F16C (built with -mf16c; called only where
// cpu_features() has it): the context shift turns every cached key through f32, and the scalar
// conversion was most of its time.
#include <immintrin.h>

#include <cstdint>

#include "model/dtype.h"

namespace llamadesk::quant {

void to_f32_f16_f16c(const uint16_t* src, float* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i))));
    for (; i < n; ++i) dst[i] = f16_to_f32(src[i]);
}

void from_f32_f16_f16c(const float* src, uint16_t* dst, int64_t n) {
    int64_t i = 0;
    for (; i + 8 <= n; i += 8)
        _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; i < n; ++i) dst[i] = f32_to_f16(src[i]);
}

}  // namespace llamadesk::quant
