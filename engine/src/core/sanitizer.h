// Whether this build runs under AddressSanitizer (installer/test.sh's second build). The compiler
// says so (-fsanitize=address: gcc's macro, clang's feature test), so no build can get it wrong.
#pragma once

namespace llamadesk {

#if defined(__SANITIZE_ADDRESS__)
inline constexpr bool kAddressSanitizer = true;
#elif defined(__has_feature)
inline constexpr bool kAddressSanitizer = __has_feature(address_sanitizer);
#else
inline constexpr bool kAddressSanitizer = false;
#endif

}  // namespace llamadesk
