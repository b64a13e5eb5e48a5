#include "core/cpu_threads.h"

#include <sched.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <set>
#include <sstream>
#include <thread>
#include <utility>
#include <vector>

namespace llamadesk {

namespace {

// The first whitespace-separated word of a file, or "" where it cannot be read.
std::string first_word(const std::string& path) {
    std::ifstream in(path);
    std::string word;
    in >> word;
    return word;
}

// The CPUs this process may run on; all online ones where the mask cannot be read.
std::vector<int> allowed_cpus() {
    std::vector<int> cpus;
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0)
        for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
            if (CPU_ISSET(cpu, &set)) cpus.push_back(cpu);
    if (cpus.empty())
        for (int cpu = 0; cpu < int(std::max(1u, std::thread::hardware_concurrency())); ++cpu) cpus.push_back(cpu);
    return cpus;
}

}  // namespace

int count_physical_cores(const std::string& cpu_dir, std::span<const int> cpus) {
    std::set<std::pair<std::string, std::string>> cores;
    for (int cpu : cpus) {
        const std::string topology = cpu_dir + "/cpu" + std::to_string(cpu) + "/topology/";
        std::string package = first_word(topology + "physical_package_id"), core = first_word(topology + "core_id");
        if (package.empty() || core.empty()) package = "cpu", core = std::to_string(cpu);  // a core of its own
        cores.insert({package, core});
    }
    return int(cores.size());
}

double cgroup_cpu_quota(const std::string& cgroup_root, const std::string& self_cgroup) {
    // the unified hierarchy's line is "0::<path>"
    std::istringstream lines(self_cgroup);
    std::string line, path;
    while (std::getline(lines, line))
        if (line.rfind("0::", 0) == 0) path = line.substr(3);
    if (path.empty() || path[0] != '/') return 0.0;
    double lowest = 0.0;
    for (;;) {
        std::ifstream in(cgroup_root + (path == "/" ? "" : path) + "/cpu.max");
        std::string quota;
        double period = 0.0;
        if (in >> quota >> period && quota != "max" && period > 0.0) {
            const double cpus = std::strtod(quota.c_str(), nullptr) / period;
            if (cpus > 0.0 && (lowest == 0.0 || cpus < lowest)) lowest = cpus;
        }
        if (path == "/") break;
        const size_t slash = path.find_last_of('/');
        path = slash == 0 ? "/" : path.substr(0, slash);
    }
    return lowest;
}

int default_compute_threads() {
    static const int threads = [] {
        const std::vector<int> cpus = allowed_cpus();
        int n = count_physical_cores("/sys/devices/system/cpu", cpus);
        std::ifstream self("/proc/self/cgroup");
        const std::string cgroup((std::istreambuf_iterator<char>(self)), std::istreambuf_iterator<char>());
        // a quota of 1.5 CPUs still lets 2 threads run at once, part of the time
        if (const double quota = cgroup_cpu_quota("/sys/fs/cgroup", cgroup); quota > 0.0)
            n = std::min(n, int(std::ceil(quota)));
        return std::max(1, n);
    }();
    return threads;
}

int compute_threads(int requested) { return requested > 0 ? requested : default_compute_threads(); }

}  // namespace llamadesk
