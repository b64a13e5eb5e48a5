// A remote server's figures for one answer, beside the GenerationStats the worker sends with it:
// what was measured here as the answer arrived, and what the server itself reported. Every
// optional left empty is shown as "not reported by the server", never as zero.
#pragma once

#include <QString>
#include <optional>

struct ServerFigures {
    QString server;                        // host:port
    double time_to_first_piece_ms = -1;    // measured here; -1: no text yet
    int pieces = 0;                        // text events received
    std::optional<int> prompt_tokens;      // usage.prompt_tokens
    std::optional<int> completion_tokens;  // usage.completion_tokens
    std::optional<int> cached_tokens;      // usage.prompt_tokens_details.cached_tokens
    std::optional<double> tokens_per_second;  // completion tokens over their arrival time
    // Text events per second after the first, measured here: what there is to show while the
    // server sends no token count (one event is one token on llama.cpp's server, not on every server).
    std::optional<double> pieces_per_second;
    std::optional<double> kv_cache_usage;  // /metrics: the server's whole KV cache in use, [0, 1]
};
