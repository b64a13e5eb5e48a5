// How many threads compute when no count is asked for: one per physical core this process may run
// on. std::thread::hardware_concurrency() counts every online logical CPU: the second thread of
// each core (SMT), CPUs outside the process's affinity (taskset, a container's cpuset) and a
// container's CPU quota all inflate it, and a pool of more threads than CPUs slows decode, whose
// every step waits for its slowest thread: llamadesk-bench on an 8B Q4_K_M, 2 Xeon cores, decode at
// 16 took 249-254 ms per token with 8 threads against 164 ms with 2.
#pragma once

#include <span>
#include <string>

namespace llamadesk {

// The default: the CPUs of the process's affinity mask, counted once per physical core (below),
// and no more than its cgroup's CPU quota allows (below); at least 1. Read once per process.
int default_compute_threads();
// `requested` where positive, else default_compute_threads(): every "0: one per core" reads it.
int compute_threads(int requested);

// The distinct physical cores among `cpus` as a sysfs CPU folder (/sys/devices/system/cpu) names
// them: cpuN/topology/physical_package_id and core_id. A CPU without those files counts as a core
// of its own.
int count_physical_cores(const std::string& cpu_dir, std::span<const int> cpus);

// The CPUs a cgroup v2 quota allows (cpu.max: "quota period", or "max"), the lowest along the path
// from the process's cgroup (as /proc/self/cgroup gives it: "0::/a/b") up to the root of the
// cgroup file system at cgroup_root; 0 where no quota applies or nothing can be read.
double cgroup_cpu_quota(const std::string& cgroup_root, const std::string& self_cgroup);

}  // namespace llamadesk
