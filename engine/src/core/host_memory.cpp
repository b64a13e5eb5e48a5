#include "core/host_memory.h"

#include <unistd.h>

#include <fstream>
#include <string>

namespace llamadesk {

int64_t physical_memory_bytes() { return int64_t(sysconf(_SC_PHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE)); }

int64_t available_memory_bytes() {
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    int64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    return int64_t(sysconf(_SC_AVPHYS_PAGES)) * int64_t(sysconf(_SC_PAGESIZE));
}

}  // namespace llamadesk
