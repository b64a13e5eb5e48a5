// llamadesk-kernel-bench: the CPU products of one weight matrix, per weight type and kernel set,
// with nothing else of a model around them. Prints, for decode (n = 1) and a prefill chunk
// (n = 256 by default), billions of multiply-adds per second and the weights' bytes per second,
// for the weights as stored (layout "rows") and, where the kernel set has one for the type, as the
// CPU backend interleaves them at load ("groups"). With --copies M the products take M copies of
// the matrix in turn, so that weights larger than the caches stream from memory as in a model.
// Each figure is the best of several timed runs, so a busy neighbour on a shared machine shows
// as fewer good runs rather than a slower figure. "of peak" divides the multiply-adds by what the
// same threads reach in a loop of nothing but the set's own multiply instruction (Kernels::
// peak_probe: int8 dots or tile products for block types; bf16 tile products for float types
// where the set multiplies them so, else float FMAs).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/kernels.h"
#include "backends/cpu/matmul.h"
#include "backends/cpu/thread_pool.h"
#include "core/error.h"
#include "model/dtype.h"
#include "model/weight_types.h"
#include "../tool_options.h"

using namespace llamadesk;
using namespace llamadesk::cpu;

namespace {

const char* usage() {
    return "usage: llamadesk-kernel-bench [--threads N] [--isa amx,avx512vnni,avx512,avx2,generic]\n"
           "       [--types f16,q8_0,q4_0,q4_k,...] [--rows R] [--cols K] [--tokens 1,256] [--runs N]\n"
           "       [--copies M]\n"
           "  defaults: 2 threads, every kernel set this CPU runs, f16 q8_0 q4_0 q4_k q5_k q6_k,\n"
           "  2048 x 768 weights (the 110M shape's FFN), 1 and 256 tokens, best of 15 runs, 1 copy\n"
           "  (14336 x 4096 with --copies 30 is about 1 GB of Q4_K: more than any cache)\n";
}

struct Options {
    int threads = 2, rows = 2048, cols = 768, runs = 15, copies = 1;
    std::vector<std::string> isas, types = {"f16", "q8_0", "q4_0", "q4_k", "q5_k", "q6_k"};
    std::vector<int> tokens = {1, 256};
};

Options parse_options(int argc, char** argv) {
    Options o;
    const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
        if (arg == "--threads") o.threads = tools::parse_int(arg, value);
        else if (arg == "--isa") o.isas = tools::split_list(value);
        else if (arg == "--types") o.types = tools::split_list(value);
        else if (arg == "--rows") o.rows = tools::parse_int(arg, value);
        else if (arg == "--cols") o.cols = tools::parse_int(arg, value);
        else if (arg == "--runs") o.runs = tools::parse_int(arg, value);
        else if (arg == "--copies") o.copies = tools::parse_int(arg, value);
        else if (arg == "--tokens") o.tokens = tools::parse_int_list(arg, value);
        else return false;
        return true;
    });
    if (!run) std::exit(0);
    if (o.threads < 1 || o.rows < 1 || o.runs < 1 || o.copies < 1 || o.cols < 256 || o.cols % 256)
        fail(ErrorCode::InvalidArgument,
             "--threads, --rows, --runs and --copies must be positive and --cols a multiple of 256, not " +
                 std::to_string(o.threads) + ", " + std::to_string(o.rows) + ", " + std::to_string(o.runs) + ", " +
                 std::to_string(o.copies) + " and " + std::to_string(o.cols));
    if (o.isas.empty())
        for (const char* isa : kernel_set_names())
            if (kernels_for(isa)) o.isas.emplace_back(isa);
    for (const std::string& isa : o.isas)
        if (!kernels_for(isa.c_str())) fail(ErrorCode::InvalidArgument, "this build or this CPU lacks the kernel set '" + isa + "'");
    for (const std::string& name : o.types)
        if (!weight_type_by_name(name))
            fail(ErrorCode::InvalidArgument, "unknown weight type '" + name + "'; known: " + weight_type_names());
    return o;
}

// Seconds per product: the best of `runs` timed runs, each repeating the products in turn for
// about 20 ms and at least once each.
double time_product(ThreadPool& pool, const Kernels& kernels, int n, const std::vector<Matmul>& products, int runs) {
    using Clock = std::chrono::steady_clock;
    auto seconds = [](Clock::duration d) { return std::chrono::duration<double>(d).count(); };
    const int m = int(products.size());
    for (const Matmul& p : products) matmul(pool, kernels, n, p);  // warm buffers (and caches, where they fit)
    const Clock::time_point probe = Clock::now();
    matmul(pool, kernels, n, products[0]);
    const int reps = std::max(m, int(0.02 / std::max(1e-7, seconds(Clock::now() - probe))));
    double best = 1e30;
    for (int r = 0; r < runs; ++r) {
        const Clock::time_point start = Clock::now();
        for (int i = 0; i < reps; ++i) matmul(pool, kernels, n, products[size_t(i % m)]);
        best = std::min(best, seconds(Clock::now() - start) / reps);
    }
    return best;
}

// M copies of weights of one type: as stored, or interleaved into the kernel set's groups.
struct Copies {
    std::vector<std::vector<uint8_t>> bytes;
    std::vector<TensorView> views;
};

Copies make_copies(const std::vector<uint8_t>& stored, const TensorView& w, const Kernels* interleave, int m) {
    Copies c;
    for (int i = 0; i < m; ++i) {
        c.bytes.push_back(stored);
        TensorView v = w;
        if (interleave) {
            const int group = interleave->interleave_rows;
            for (int64_t g = 0; g < w.rows / group; ++g)
                interleave->interleaved[int(w.dtype)].interleave(w.row(g * group), w.row_bytes(), w.cols,
                                                                 c.bytes.back().data() + g * group * w.row_bytes());
            v.interleaved_rows = group;
        }
        v.data = c.bytes.back().data();
        c.views.push_back(v);
    }
    return c;
}

// Multiply-adds per second of the kernel set's own instruction on every thread at once (the best
// of 3 runs of about 50 ms).
double peak_macs(ThreadPool& pool, const Kernels& kernels, Kernels::Multiply multiply) {
    using Clock = std::chrono::steady_clock;
    std::vector<double> rates(size_t(pool.size()));
    double best = 0.0;
    for (int run = 0; run < 3; ++run) {
        pool.parallel_for(pool.size(), [&](int64_t i, int) {
            const int64_t iterations = multiply == Kernels::Multiply::Float ? 2000000 : 200000;
            const Clock::time_point start = Clock::now();
            const uint64_t macs = kernels.peak_probe(multiply, iterations);
            rates[size_t(i)] = double(macs) / std::chrono::duration<double>(Clock::now() - start).count();
        });
        double total = 0.0;
        for (double r : rates) total += r;
        best = std::max(best, total);
    }
    return best;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse_options(argc, argv);
        ThreadPool pool(o.threads);
        std::mt19937 rng(7);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        std::vector<float> values(size_t(o.rows) * o.cols);
        for (float& v : values) v = dist(rng);
        const int max_n = *std::max_element(o.tokens.begin(), o.tokens.end());
        std::vector<float> x(size_t(max_n) * o.cols), y(size_t(max_n) * o.rows);
        for (float& v : x) v = dist(rng);

        std::printf("%d x %d weights, %d copies, %d threads, best of %d runs\n%-11s %-6s %-7s %6s %12s %8s %12s\n", o.rows,
                    o.cols, o.copies, o.threads, o.runs, "isa", "type", "layout", "tokens", "GMAC/s", "of peak",
                    "weight GB/s");
        for (const std::string& isa : o.isas) {
            const Kernels* kernels = kernels_for(isa.c_str());
            const double peak_int8 = peak_macs(pool, *kernels, Kernels::Multiply::Int8),
                         peak_bf16 = peak_macs(pool, *kernels, Kernels::Multiply::Bf16),
                         peak_float = peak_macs(pool, *kernels, Kernels::Multiply::Float);
            std::printf("%-11s peak: %.0f GMAC/s int8, %.0f GMAC/s bf16, %.0f GMAC/s float\n", isa.c_str(),
                        peak_int8 * 1e-9, peak_bf16 * 1e-9, peak_float * 1e-9);
            for (const std::string& name : o.types) {
                const WeightType* type = weight_type_by_name(name);
                std::vector<uint8_t> bytes(size_t(type->bytes(int64_t(values.size()))));
                type->from_f32(values.data(), bytes.data(), int64_t(values.size()));
                const TensorView w{"w", type->dtype, o.rows, o.cols, bytes.data()};
                const bool groups = kernels->interleaved[int(type->dtype)].interleave && o.rows % kernels->interleave_rows == 0;
                for (const Kernels* interleave : {static_cast<const Kernels*>(nullptr), groups ? kernels : nullptr}) {
                    const Copies copies = make_copies(bytes, w, interleave, o.copies);
                    for (int n : o.tokens) {
                        std::vector<Matmul> products;
                        for (const TensorView& v : copies.views) products.push_back({x.data(), o.cols, &v, y.data(), o.rows});
                        const double s = time_product(pool, *kernels, n, products, o.runs);
                        const double macs = double(n) * o.rows * o.cols / s;
                        const TypeKernels& entry = kernels->types[int(type->dtype)];
                        const double peak = entry.quantized_gemm                               ? peak_int8
                                            : entry.bf16_tile_gemm && n >= kBf16TileMinTokens ? peak_bf16
                                                                                              : peak_float;
                        std::printf("%-11s %-6s %-7s %6d %12.2f %7.1f%% %12.2f\n", isa.c_str(), type->name,
                                    interleave ? "groups" : "rows", n, macs * 1e-9, 100.0 * macs / peak,
                                    double(bytes.size()) / s * 1e-9);
                        std::fflush(stdout);
                    }
                    if (!groups) break;
                }
            }
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-kernel-bench: %s\n", e.what());
        return 1;
    }
}
