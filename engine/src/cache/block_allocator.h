// Bookkeeping of the KV pool's blocks: which are free. Knows nothing of tensors or devices.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

namespace llamadesk {

class BlockAllocator {
public:
    explicit BlockAllocator(int n_blocks = 0);

    std::optional<int32_t> allocate();  // nullopt when the pool is full
    void release(int32_t block);        // precondition: block was allocated and not yet released

    int n_total() const { return int(in_use_.size()); }
    int n_used() const { return n_used_; }
    int n_free() const { return n_total() - n_used_; }

private:
    std::vector<int32_t> free_;   // stack of free block ids
    std::vector<bool> in_use_;
    int n_used_ = 0;
};

}  // namespace llamadesk
