#include "engine/context_size.h"

#include <algorithm>
#include <cstdio>

#include "core/error.h"

namespace llamadesk {

std::string gib(double bytes) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f GiB", bytes / double(int64_t(1) << 30));
    return text;
}

ContextChoice choose_context(const LoadParams& params, int trained, double bytes_per_token, int64_t available,
                             const char* kv_type) {
    auto cache = [&](int n) { return gib(bytes_per_token * n) + " of " + kv_type + " KV cache"; };
    if (params.context_length < 0)
        fail(ErrorCode::InvalidArgument, "the context cannot be negative (" + std::to_string(params.context_length) + ")");
    if (params.context_length > 0 && params.context_length < trained)
        return {params.context_length, "as chosen (" + cache(params.context_length) + "); the model's own is " +
                                           std::to_string(trained)};
    const double quarter = double(available) / 4;
    const std::string room = gib(double(available)) + " of memory available";
    if (params.context_length > 0 || bytes_per_token * trained <= quarter)
        return {trained, "the model's own (" + cache(trained) + ", with " + room + ")"};
    int n = std::min(256, trained);
    while (n * 2 < trained && bytes_per_token * n * 2 <= quarter) n *= 2;
    return {n, "the model's " + std::to_string(trained) + " would need " + cache(trained) + "; " +
                   std::to_string(n) + " fits in a quarter of the " + room + ". Choose a context to change it"};
}

}  // namespace llamadesk
