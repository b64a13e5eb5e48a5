// The machine's memory, as the CPU backend's KV cache and the default context are sized by it.
#pragma once

#include <cstdint>

namespace llamadesk {

int64_t physical_memory_bytes();
// Memory a new allocation can take without swapping: Linux's MemAvailable (free memory plus the
// page cache that can be dropped), or the free pages where /proc/meminfo cannot be read.
int64_t available_memory_bytes();

}  // namespace llamadesk
