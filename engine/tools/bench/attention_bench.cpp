// llamadesk-attention-bench: the CPU's decode attention over a paged KV pool, with nothing else of
// a model around it. For one token at each context length it runs every layer's grouped-query
// attention (the 8B Llama 3 shape by default: 32 layers, 32 query heads, 8 kv heads of 128) and
// prints the time per token and the bytes of keys and values read per second, against what the
// same threads read from memory. The pool holds the context and as much again, read between runs,
// so that none of the context is left in the caches when a run starts; --shuffled gives the context's blocks in random order, as a
// pool shared by many conversations hands them out.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "backends/cpu/attention.h"
#include "backends/cpu/kernels.h"
#include "backends/cpu/kv_storage.h"
#include "backends/cpu/thread_pool.h"
#include "cache/kv_cache_type.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "memory_bandwidth.h"
#include "model/weight_types.h"
#include "../tool_options.h"

using namespace llamadesk;
using namespace llamadesk::cpu;

namespace {

const char* usage() {
    return "usage: llamadesk-attention-bench [--threads N] [--isa SET] [--kv-type f16|f32|q8_0]\n"
           "       [--ctx 16,1000,4096] [--layers L] [--heads H] [--kv-heads H] [--head-dim D]\n"
           "       [--runs N] [--shuffled 0|1] [--block-size B]\n"
           "  defaults: 2 threads, the set LLAMADESK_ISA names or the best, f16, the 8B Llama 3 shape,\n"
           "  best of 5 runs, blocks in order, the engine's block size\n";
}

struct Options {
    int threads = 2, layers = 32, heads = 32, kv_heads = 8, head_dim = 128, runs = 5, block_size = KvLayout{}.block_size;
    bool shuffled = false;
    std::string isa;
    KvCacheType kv_type = KvCacheType::F16;
    std::vector<int> contexts = {16, 1000, 4096};
};

Options parse_options(int argc, char** argv) {
    Options o;
    const bool run = tools::read_options(argc, argv, usage(), [&](const std::string& arg, const std::string& value) {
        if (arg == "--threads") o.threads = tools::parse_int(arg, value);
        else if (arg == "--isa") o.isa = value;
        else if (arg == "--kv-type") o.kv_type = tools::parse_kv_type(arg, value);
        else if (arg == "--ctx") o.contexts = tools::parse_int_list(arg, value);
        else if (arg == "--layers") o.layers = tools::parse_int(arg, value);
        else if (arg == "--heads") o.heads = tools::parse_int(arg, value);
        else if (arg == "--kv-heads") o.kv_heads = tools::parse_int(arg, value);
        else if (arg == "--head-dim") o.head_dim = tools::parse_int(arg, value);
        else if (arg == "--runs") o.runs = tools::parse_int(arg, value);
        else if (arg == "--shuffled") o.shuffled = tools::parse_int(arg, value) != 0;
        else if (arg == "--block-size") o.block_size = tools::parse_int(arg, value);
        else return false;
        return true;
    });
    if (!run) std::exit(0);
    const bool contexts_ok = std::all_of(o.contexts.begin(), o.contexts.end(), [](int c) { return c >= 1; });
    if (o.threads < 1 || o.layers < 1 || o.runs < 1 || o.kv_heads < 1 || o.heads % o.kv_heads || o.head_dim < 1 ||
        o.block_size < 1 || !contexts_ok)
        fail(ErrorCode::InvalidArgument,
             "--threads, --layers, --runs, --head-dim, --block-size and every --ctx must be positive and --heads a multiple of "
             "--kv-heads, not " + std::to_string(o.threads) + ", " + std::to_string(o.layers) + ", " +
                 std::to_string(o.runs) + ", " + std::to_string(o.head_dim) + ", heads " + std::to_string(o.heads) +
                 " over " + std::to_string(o.kv_heads) + ", block size " + std::to_string(o.block_size));
    return o;
}

}  // namespace

int main(int argc, char** argv) {
    try {
        const Options o = parse_options(argc, argv);
        const Kernels* kernels = o.isa.empty() ? &chosen_kernels() : kernels_for(o.isa.c_str());
        if (!kernels) fail(ErrorCode::InvalidArgument, "this CPU or build has no kernel set '" + o.isa + "'");
        const WeightType* type = &weight_type(kv_dtype_of(o.kv_type));

        ModelConfig config;
        config.n_layers = o.layers;
        config.n_heads = o.heads;
        config.n_kv_heads = o.kv_heads;
        config.dim = o.heads * o.head_dim;
        const KvLayout layout{o.layers, o.kv_heads, o.head_dim, o.block_size};
        const int max_ctx = *std::max_element(o.contexts.begin(), o.contexts.end());
        const int64_t n_blocks = 2 * layout.blocks_for(max_ctx);
        const int64_t pool_bytes = type->bytes(n_blocks * layout.block_elements());

        std::mt19937 rng(7);
        std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
        const MappedMemory pool_memory(static_cast<size_t>(pool_bytes));  // as the CPU backend allocates its pool
        if (!pool_memory.data())
            fail(ErrorCode::OutOfMemory, "no memory for a pool of " + std::to_string(pool_bytes) + " bytes");
        {
            std::vector<float> values(size_t(layout.block_elements()));
            for (float& v : values) v = dist(rng);
            for (int64_t b = 0; b < n_blocks; ++b)
                type->from_f32(values.data(), pool_memory.data() + b * type->bytes(int64_t(values.size())),
                               int64_t(values.size()));
        }
        const KvStorage kv{pool_memory.data(), type->dtype, layout};
        std::vector<int32_t> blocks(static_cast<size_t>(n_blocks));
        std::iota(blocks.begin(), blocks.end(), 0);
        if (o.shuffled) std::shuffle(blocks.begin(), blocks.end(), rng);

        ThreadPool pool(o.threads);
        Attention attention(config, o.threads);
        std::vector<float> q(size_t(config.dim)), out(size_t(config.dim));
        for (float& v : q) v = dist(rng);
        const double bandwidth = bench::measure_read_bandwidth(o.threads);

        std::printf("%d layers, %d query heads, %d kv heads of %d, %s cache, kernel set %s, %d threads, blocks of %d %s\n"
                    "memory: %.2f GB/s read by %d threads\n%8s %12s %14s %10s %8s\n",
                    o.layers, o.heads, o.kv_heads, o.head_dim, type->name, kernels->isa, o.threads,
                    o.block_size, o.shuffled ? "shuffled" : "in order", bandwidth * 1e-9, o.threads, "context", "ms/token",
                    "KV MB/token", "GB/s", "of bw");
        using Clock = std::chrono::steady_clock;
        for (int ctx : o.contexts) {
            const BlockTableView table{blocks.data(), int(layout.blocks_for(ctx))};
            // The other half of the pool, read between runs, pushes this context out of the caches.
            const BlockTableView other{blocks.data() + n_blocks / 2, int(n_blocks / 2)};
            const double bytes = double(type->bytes(int64_t(ctx) * o.head_dim)) * 2 * o.kv_heads * o.layers;
            double best = 1e30;
            for (int r = 0; r < o.runs; ++r) {
                for (int layer = 0; layer < o.layers; ++layer)
                    attention.run(pool, *kernels, layer, q.data(), 1, other.n_blocks * layout.block_size - 1, kv, other, out.data());
                const Clock::time_point start = Clock::now();
                for (int layer = 0; layer < o.layers; ++layer)
                    attention.run(pool, *kernels, layer, q.data(), 1, ctx - 1, kv, table, out.data());
                best = std::min(best, std::chrono::duration<double>(Clock::now() - start).count());
            }
            std::printf("%8d %12.3f %14.1f %10.2f %7.0f%%\n", ctx, best * 1e3, bytes * 1e-6, bytes / best * 1e-9,
                        100.0 * bytes / best / bandwidth);
            std::fflush(stdout);
        }
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-attention-bench: %s\n", e.what());
        return 1;
    }
}
