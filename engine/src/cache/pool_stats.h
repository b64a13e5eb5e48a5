// The KV pool's occupancy, as the window and the CLI show it.
#pragma once

#include <cstdint>

namespace llamadesk {

struct PoolStats {
    int block_size = 0;
    int blocks_total = 0;
    int blocks_used = 0;             // a block several conversations share counts once
    int blocks_shared = 0;           // of those, held by more than one conversation
    int64_t bytes_total = 0;
    int64_t bytes_used = 0;
    int n_conversations = 0;         // conversations holding blocks
    int64_t evictions = 0;           // conversations whose blocks were taken back while idle
    int64_t reprefilled_tokens = 0;  // tokens prefilled again because of those evictions
    int64_t shared_tokens = 0;       // tokens taken from other conversations' blocks, not computed
};

}  // namespace llamadesk
