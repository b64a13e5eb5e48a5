// The KV cache occupancy a server publishes on its Prometheus page (/metrics).
#pragma once

#include <QByteArray>
#include <optional>

namespace llamadesk::remote {

// vLLM's vllm:kv_cache_usage_perc (older versions: vllm:gpu_cache_usage_perc), a fraction in
// [0, 1]; with several series (one per engine) the largest. nullopt when the page has neither
// (llama.cpp's server dropped its KV metric).
std::optional<double> kv_cache_usage(const QByteArray& prometheus_text);

}  // namespace llamadesk::remote
