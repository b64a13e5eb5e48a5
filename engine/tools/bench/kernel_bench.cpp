// llamadesk-kernel-bench: the CPU products of one weight matrix, per weight type and kernel set,
// with nothing else of a model around them. Prints, for decode (n = 1) and a prefill chunk
// (n = 256 by default), billions of multiply-adds per second and the weights' bytes per second.
// Each figure is the best of several timed runs, so a busy neighbour on a shared machine shows
// as fewer good runs rather than a slower figure.
//
// usage: llamadesk-kernel-bench [--threads N] [--isa NAME] [--types q4_0,q4_k,...] [--rows R]
//                               [--cols K] [--tokens 1,256] [--runs N] [--json]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/matmul.h"
#include "backends/cpu/thread_pool.h"
#include "model/dtype.h"
#include "model/weight_types.h"

using namespace llamadesk;
using namespace llamadesk::cpu;

namespace {

std::vector<std::string> split(const std::string& s) {
    std::vector<std::string> out;
    size_t at = 0;
    while (at <= s.size()) {
        const size_t comma = s.find(',', at);
        out.push_back(s.substr(at, comma == std::string::npos ? std::string::npos : comma - at));
        if (comma == std::string::npos) break;
        at = comma + 1;
    }
    return out;
}

[[noreturn]] void usage(const char* why) {
    std::fprintf(stderr,
                 "%s\nusage: llamadesk-kernel-bench [--threads N] [--isa avx512vnni|avx512|avx2|generic]\n"
                 "       [--types f16,q8_0,q4_0,q4_k,...] [--rows R] [--cols K] [--tokens 1,256] [--runs N] [--json]\n",
                 why);
    std::exit(2);
}

struct Options {
    int threads = 2, rows = 2048, cols = 768, runs = 15;
    std::vector<std::string> isas, types = {"f16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"};
    std::vector<int> tokens = {1, 256};
    bool json = false;
};

Options parse(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) usage(("missing value after " + a).c_str());
            return argv[++i];
        };
        if (a == "--threads") o.threads = std::atoi(value().c_str());
        else if (a == "--isa") o.isas = split(value());
        else if (a == "--types") o.types = split(value());
        else if (a == "--rows") o.rows = std::atoi(value().c_str());
        else if (a == "--cols") o.cols = std::atoi(value().c_str());
        else if (a == "--runs") o.runs = std::atoi(value().c_str());
        else if (a == "--tokens") {
            o.tokens.clear();
            for (const std::string& t : split(value())) o.tokens.push_back(std::atoi(t.c_str()));
        } else if (a == "--json") o.json = true;
        else usage(("unknown option " + a).c_str());
    }
    if (o.threads < 1 || o.rows < 1 || o.cols < 256 || o.cols % 256 || o.runs < 1)
        usage("--threads, --rows and --runs must be positive, --cols a multiple of 256");
    for (int n : o.tokens)
        if (n < 1) usage("--tokens must be positive");
    if (o.isas.empty())
        for (const char* isa : {"avx512vnni", "avx512", "avx2", "generic"})
            if (kernels_for(isa)) o.isas.emplace_back(isa);
    return o;
}

// Seconds per product: the best of `runs` timed runs, each repeating the product for about 20 ms.
double time_product(ThreadPool& pool, const Kernels& kernels, int n, const Matmul& product, int runs) {
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    matmul(pool, kernels, n, product);  // warm caches and buffers
    const Clock::time_point probe = Clock::now();
    matmul(pool, kernels, n, product);
    const int reps = std::max(1, int(0.02 / std::max(1e-7, seconds(Clock::now() - probe))));
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const Clock::time_point start = Clock::now();
        for (int i = 0; i < reps; ++i) matmul(pool, kernels, n, product);
        best = std::min(best, seconds(Clock::now() - start) / reps);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    const Options o = parse(argc, argv);
    ThreadPool pool(o.threads);
    std::mt19937 rng(7);
    std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
    std::vector<float> values(size_t(o.rows) * o.cols);
    for (float& v : values) v = dist(rng);
    const int max_n = *std::max_element(o.tokens.begin(), o.tokens.end());
    std::vector<float> x(size_t(max_n) * o.cols), y(size_t(max_n) * o.rows);
    for (float& v : x) v = dist(rng);

    if (o.json) std::printf("{\"threads\": %d, \"rows\": %d, \"cols\": %d, \"results\": [", o.threads, o.rows, o.cols);
    else std::printf("%d x %d weights, %d threads, best of %d runs\n%-11s %-6s %6s %12s %12s\n", o.rows, o.cols,
                     o.threads, o.runs, "isa", "type", "tokens", "GMAC/s", "weight GB/s");
    bool first = true;
    for (const std::string& isa : o.isas) {
        const Kernels* kernels = kernels_for(isa.c_str());
        if (!kernels) usage(("this build or CPU lacks the kernel set " + isa).c_str());
        for (const std::string& name : o.types) {
            const WeightType* type = weight_type_by_name(name);
            if (!type) usage(("unknown weight type " + name + "; known: " + weight_type_names()).c_str());
            std::vector<uint8_t> bytes(size_t(type->bytes(int64_t(values.size()))));
            type->from_f32(values.data(), bytes.data(), int64_t(values.size()));
            const TensorView w{"w", type->dtype, o.rows, o.cols, bytes.data()};
            for (int n : o.tokens) {
                const Matmul product{x.data(), o.cols, &w, y.data(), o.rows};
                const double s = time_product(pool, *kernels, n, product, o.runs);
                const double gmacs = double(n) * o.rows * o.cols / s * 1e-9, gbs = double(bytes.size()) / s * 1e-9;
                if (o.json)
                    std::printf("%s{\"isa\": \"%s\", \"type\": \"%s\", \"tokens\": %d, \"gmac_per_s\": %.3f, \"weight_gb_per_s\": %.3f}",
                                first ? "" : ", ", isa.c_str(), type->name, n, gmacs, gbs);
                else std::printf("%-11s %-6s %6d %12.2f %12.2f\n", isa.c_str(), type->name, n, gmacs, gbs);
                first = false;
                std::fflush(stdout);
            }
        }
    }
    if (o.json) std::printf("]}\n");
    return 0;
}
