#include "cache/block_allocator.h"

#include "core/error.h"

namespace llamadesk {

BlockAllocator::BlockAllocator(int n_blocks) : in_use_(size_t(n_blocks), false) {
    free_.reserve(size_t(n_blocks));
    for (int32_t b = n_blocks - 1; b >= 0; --b) free_.push_back(b);  // low ids first
}

std::optional<int32_t> BlockAllocator::allocate() {
    if (free_.empty()) return std::nullopt;
    const int32_t b = free_.back();
    free_.pop_back();
    in_use_[size_t(b)] = true;
    ++n_used_;
    return b;
}

void BlockAllocator::release(int32_t block) {
    if (block < 0 || block >= n_total() || !in_use_[size_t(block)])
        fail(ErrorCode::Internal, "KV cache block " + std::to_string(block) + " released twice or never allocated");
    in_use_[size_t(block)] = false;
    free_.push_back(block);
    --n_used_;
}

}  // namespace llamadesk
