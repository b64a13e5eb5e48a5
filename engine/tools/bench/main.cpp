// llamadesk-bench: prefill and decode speed of a model (a file, or random weights in a named
// shape), decode with and without the KV cache, the sampler's time per token, and weight bytes
// streamed per second against the memory read bandwidth measured in the same run. --write-gguf saves the synthetic model so another
// program (llama.cpp, see compare_llamacpp.py) can time the very same weights.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/cuda/cuda_bench_support.h"
#include "cache/kv_cache_type.h"
#include "bench_runner.h"
#include "core/cpu_threads.h"
#include "core/error.h"
#include "memory_bandwidth.h"
#include "model/weight_types.h"
#include "readers/gguf_reader.h"
#include "synthetic/synthetic_model.h"
#include "../tool_options.h"

using namespace llamadesk;

namespace {

struct Options {
    std::string model, synthetic, backend = "cpu";
    std::string write_gguf, write_hf, write_meta;  // save the synthetic model instead of timing it
    std::string vocab;                             // a GGUF whose vocabulary the synthetic model takes
    bool untied = false;                           // a classifier of its own, not the embedding
    int shards = 1;
    bool writes() const { return !write_gguf.empty() || !write_hf.empty() || !write_meta.empty(); }
    WeightMix mix = DType::F32;
    int threads = 0;
    KvCacheType kv_type = KvCacheType::F16;
    std::vector<int> prefill, decode_at, batch;  // in place of the plan's
    bool json = false;
    bool cuda_graphs = true, cuda_decode_cublas = false;
    bench::BenchPlan plan;
};

const char* usage() {
    return "usage: llamadesk-bench (--model PATH | --synthetic NAME) [options]\n"
           "\n"
           "  --model PATH        checkpoint file or folder\n"
           "  --synthetic NAME    random weights in a named shape: llama2.c's stories models 260K, 15M,\n"
           "                      110M, 110M-gqa; Llama 2 7B; Llama 3 8B; llama3-test (small, Llama 3.1 RoPE)\n"
           "  --vocab FILE.gguf   the synthetic model takes this file's vocabulary (its size must match)\n"
           "  --untied            the synthetic model's classifier is a matrix of its own\n"
           "  --dtype T           the synthetic model's weight types: f32 (default), f16, bf16, q8_0, q4_0,\n"
           "                      q4_1, q5_0, q5_1, q4_k, q5_k, q6_k, or the mixes q4_k_m, q5_k_m\n"
           "  --threads N         CPU threads (default: one per physical core)\n"
           "  --kv-type T         the KV cache's element type: f16 (default), f32 or q8_0\n"
           "  --backend B         cpu or cuda (default cpu)\n"
           "  --cuda-graphs on|off  replay the CUDA decode step as a captured graph (default on)\n"
           "  --cuda-decode gemv|cublas  single-token products: our GEMV or cuBLAS (default gemv)\n"
           "  --repeats N         samples per figure, the median is reported (default 5)\n"
           "  --prefill N,N,...   prompt sizes to time (default 256,1000 on the CPU, 512 on CUDA)\n"
           "  --decode-at N,N,... context positions to time decode at (default 16,256,1000 on the CPU)\n"
           "  --batch N,N,...     sequences per batched decode step (default 1,2,4 on the CPU)\n"
           "  --write-gguf PATH   save the synthetic model as GGUF and exit\n"
           "  --write-hf DIR      ... as a Hugging Face folder (safetensors) and exit\n"
           "  --write-meta DIR    ... as a Meta folder (consolidated.NN.pth) and exit\n"
           "  --shards N          files for --write-hf / --write-meta (default 1)\n"
           "  --cpu-time          time with process CPU time, not the wall clock (for one thread on a\n"
           "                      machine busy with other work)\n"
           "  --json              print the results as one JSON object\n";
}

using tools::parse_int;

Options parse_options(int argc, char** argv) {
    Options o;
    for (int i = 1; i < argc; ++i) {
        const std::string arg = argv[i];
        if (arg == "-h" || arg == "--help") {
            std::fputs(usage(), stdout);
            std::exit(0);
        }
        if (arg == "--untied") {
            o.untied = true;
            continue;
        }
        if (arg == "--json" || arg == "--cpu-time") {
            (arg == "--json" ? o.json : o.plan.cpu_time) = true;
            continue;
        }
        if (i + 1 >= argc) fail(ErrorCode::InvalidArgument, arg + " expects a value (see --help)");
        const std::string value = argv[++i];
        if (arg == "--model") o.model = value;
        else if (arg == "--synthetic") o.synthetic = value;
        else if (arg == "--write-gguf") o.write_gguf = value;
        else if (arg == "--write-hf") o.write_hf = value;
        else if (arg == "--write-meta") o.write_meta = value;
        else if (arg == "--vocab") o.vocab = value;
        else if (arg == "--shards") o.shards = parse_int(arg, value);
        else if (arg == "--backend") o.backend = value;
        else if (arg == "--threads") o.threads = parse_int(arg, value);
        else if (arg == "--kv-type") o.kv_type = tools::parse_kv_type(arg, value);
        else if (arg == "--cuda-graphs" && (value == "on" || value == "off")) o.cuda_graphs = value == "on";
        else if (arg == "--cuda-decode" && (value == "gemv" || value == "cublas")) o.cuda_decode_cublas = value == "cublas";
        else if (arg == "--repeats") o.plan.repeats = std::max(1, parse_int(arg, value));
        else if (arg == "--prefill") o.prefill = tools::parse_int_list(arg, value);
        else if (arg == "--decode-at") o.decode_at = tools::parse_int_list(arg, value);
        else if (arg == "--batch") o.batch = tools::parse_int_list(arg, value);
        else if (arg == "--dtype") {
            o.mix = tools::parse_mix(value);
        } else {
            fail(ErrorCode::InvalidArgument, "unknown option " + arg + " (see --help)");
        }
    }
    if (o.model.empty() == o.synthetic.empty())
        fail(ErrorCode::InvalidArgument, "give exactly one of --model PATH and --synthetic NAME (see --help)");
    if ((!o.vocab.empty() || o.untied) && o.synthetic.empty())
        fail(ErrorCode::InvalidArgument, "--vocab and --untied shape a --synthetic model");
    if (o.writes() && o.synthetic.empty())
        fail(ErrorCode::InvalidArgument, "--write-gguf, --write-hf and --write-meta save a --synthetic model");
    if (o.backend != "cpu" && o.backend != "cuda")
        fail(ErrorCode::InvalidArgument, "--backend expects cpu or cuda, not '" + o.backend + "'");
    return o;
}

std::unique_ptr<Backend> make_backend(const Options& o, const Checkpoint& ckpt) {
    if (o.backend == "cuda") {
        std::string why;
        if (!cuda_backend_available(&why)) fail(ErrorCode::BackendUnavailable, "no CUDA backend: " + why);
        CudaBackendOptions opts;
        opts.use_graphs = o.cuda_graphs;
        opts.decode_with_cublas = o.cuda_decode_cublas;
        opts.kv_dtype = kv_dtype_of(o.kv_type);
        // synthetic weights are made on the GPU itself (ckpt then holds only their shapes)
        if (!o.synthetic.empty()) return make_cuda_backend_synthetic(ckpt.config, o.mix, 1, opts);
        return make_cuda_backend(ckpt, opts);
    }
    CpuBackendOptions opts;
    opts.n_threads = o.threads;
    opts.kv_dtype = kv_dtype_of(o.kv_type);
    return make_cpu_backend(ckpt, opts);
}

void print_text(const Options& o, const Checkpoint& ckpt, const Backend& backend, double bandwidth,
                const bench::BenchResults& r, int threads) {
    const ModelConfig& c = ckpt.config;
    std::printf("model      %s (%s), dim %d, hidden %d, %d layers, %d heads, %d kv heads, vocab %d, context %d\n",
                o.model.empty() ? ("synthetic " + o.synthetic).c_str() : o.model.c_str(), ckpt.describe_weight_types().c_str(),
                c.dim, c.hidden_dim, c.n_layers, c.n_heads, c.n_kv_heads, c.vocab_size, c.seq_len);
    std::printf("backend    %s (%s), %d threads, %s KV cache\n", backend.name().c_str(),
                backend.device_description().c_str(), threads, dtype_name(backend.kv_dtype()));
    if (o.plan.cpu_time) std::printf("clock      process CPU time\n");
    if (o.backend == "cuda")
        std::printf("memory     %.2f GB/s device copy bandwidth (cudaMemcpy, bytes read + written)\n", bandwidth / 1e9);
    else
        std::printf("memory     %.2f GB/s read bandwidth (%d threads, vector XOR over 1 GiB, best of 5)\n", bandwidth / 1e9, threads);
    std::printf("weights    %.1f MB read per decoded token\n\n", double(ckpt.weight_bytes_per_token()) / 1e6);
    for (const auto& p : r.prefill) std::printf("prefill %5d tokens   %9.1f tok/s\n", p.tokens, p.tokens_per_s);
    std::printf("\n%-10s %10s %12s %14s %12s %10s %8s %14s\n", "decode at", "tok/s", "ms/token", "no-cache ms", "cache gain",
                "weight GB/s", "of bw", "threads wait");
    for (const auto& d : r.decode) {
        std::printf("%-10d %10.1f %12.2f %14.2f %11.1fx %10.2f %7.0f%%", d.position, d.tokens_per_s, d.ms_per_token,
                    d.no_cache_ms_per_token, d.no_cache_ms_per_token / d.ms_per_token, d.weight_bytes_per_s / 1e9,
                    100.0 * d.weight_bytes_per_s / bandwidth);
        // summed over the threads: of threads x ms/token, the share they spent not running items
        if (d.thread_wait_ms_per_token >= 0)
            std::printf(" %8.2f ms %3.0f%%", d.thread_wait_ms_per_token,
                        100.0 * d.thread_wait_ms_per_token / (threads * d.ms_per_token));
        std::printf("\n");
    }
    std::printf("\nsampling   %.1f us per token over %d logits (defaults: top-k 40, top-p 0.95, min-p 0.05); "
                "%.1f us with top-p alone; %.1f us greedy\n",
                r.sampling.default_us, c.vocab_size, r.sampling.top_p_only_us, r.sampling.greedy_us);
    if (r.batch.empty()) return;
    std::printf("\nbatched decode at %d: one token of each conversation per step, each over its own blocks\n",
                r.batch.front().position);
    std::printf("%-14s %16s %20s %8s\n", "conversations", "tok/s (all)", "tok/s (each)", "vs 1");
    for (const auto& b : r.batch)
        std::printf("%-14d %16.1f %20.1f %7.2fx\n", b.sequences, b.tokens_per_s, b.per_sequence_tokens_per_s,
                    b.tokens_per_s / r.batch.front().tokens_per_s);
}

void print_json(const Options& o, const Checkpoint& ckpt, const Backend& backend, double bandwidth,
                const bench::BenchResults& r, int threads) {
    const ModelConfig& c = ckpt.config;
    std::printf("{\"model\": \"%s\", \"dtype\": \"%s\", \"weights\": \"%s\", \"backend\": \"%s\", \"device\": \"%s\", \"threads\": %d, "
                "\"kv_dtype\": \"%s\", ",
                o.model.empty() ? ("synthetic " + o.synthetic).c_str() : o.model.c_str(), dtype_name(ckpt.main_weight_dtype()),
                ckpt.describe_weight_types().c_str(),
                backend.name().c_str(), backend.device_description().c_str(), threads, dtype_name(backend.kv_dtype()));
    std::printf("\"dim\": %d, \"n_layers\": %d, \"context\": %d, \"weight_bytes_per_token\": %lld, "
                "\"memory_read_bytes_per_s\": %.0f, \"clock\": \"%s\", ",
                c.dim, c.n_layers, c.seq_len, (long long)ckpt.weight_bytes_per_token(), bandwidth,
                o.plan.cpu_time ? "cpu" : "wall");
    std::printf("\"prefill\": [");
    for (size_t i = 0; i < r.prefill.size(); ++i)
        std::printf("%s{\"tokens\": %d, \"tokens_per_s\": %.2f}", i ? ", " : "", r.prefill[i].tokens,
                    r.prefill[i].tokens_per_s);
    std::printf("], \"decode\": [");
    for (size_t i = 0; i < r.decode.size(); ++i) {
        const auto& d = r.decode[i];
        std::printf("%s{\"position\": %d, \"tokens_per_s\": %.2f, \"ms_per_token\": %.4f, \"no_cache_ms_per_token\": %.4f, "
                    "\"weight_bytes_per_s\": %.0f, \"bandwidth_ratio\": %.4f, \"thread_wait_ms_per_token\": %.4f}",
                    i ? ", " : "", d.position, d.tokens_per_s, d.ms_per_token, d.no_cache_ms_per_token,
                    d.weight_bytes_per_s, d.weight_bytes_per_s / bandwidth, d.thread_wait_ms_per_token);
    }
    std::printf("], \"sampling_us\": {\"default\": %.2f, \"top_p_only\": %.2f, \"greedy\": %.2f}",
                r.sampling.default_us, r.sampling.top_p_only_us, r.sampling.greedy_us);
    std::printf(", \"batch\": [");
    for (size_t i = 0; i < r.batch.size(); ++i)
        std::printf("%s{\"sequences\": %d, \"position\": %d, \"tokens_per_s\": %.2f, \"per_sequence_tokens_per_s\": %.2f}",
                    i ? ", " : "", r.batch[i].sequences, r.batch[i].position, r.batch[i].tokens_per_s,
                    r.batch[i].per_sequence_tokens_per_s);
    std::printf("]}\n");
}

// The real vocabulary in place of the synthetic one, so other programs tokenize as for the real model.
void take_vocabulary(const std::string& path, Checkpoint& ckpt) {
    std::shared_ptr<EmbeddedVocab> vocab = read_gguf_vocabulary(path);
    if (int64_t(vocab->tokens.size()) != ckpt.config.vocab_size)
        fail(ErrorCode::InvalidArgument, "--vocab " + path + " has " + std::to_string(vocab->tokens.size()) +
                                             " tokens; the synthetic model has " +
                                             std::to_string(ckpt.config.vocab_size));
    ckpt.tokenizer.embedded = std::move(vocab);
}

}  // namespace

int main(int argc, char** argv) {
    try {
        Options o = parse_options(argc, argv);
        // synthetic weights for the GPU are made there (blocks: a short run quantized on the host,
        // repeated): quantizing 7B's 6.7 G weights on the host would take minutes
        const bool on_gpu_weights = o.backend == "cuda" && !o.synthetic.empty() && !o.writes();
        Checkpoint ckpt = !o.model.empty() ? open_checkpoint(o.model)
                          : on_gpu_weights ? synthetic_shapes(synthetic_config(o.synthetic), o.mix)
                                           : make_synthetic_checkpoint(synthetic_config(o.synthetic), o.mix, 1, !o.untied);
        if (!o.vocab.empty()) take_vocabulary(o.vocab, ckpt);
        if (o.backend == "cuda") {  // the CUDA rows: long contexts, a 512-token prompt
            o.plan.prefill_tokens = {512};
            o.plan.decode_positions = {16, 1024, 4000};
            o.plan.batch_sizes = {};  // CUDA runs a batch one sequence after another
        }
        if (!o.prefill.empty()) o.plan.prefill_tokens = o.prefill;
        if (!o.decode_at.empty()) o.plan.decode_positions = o.decode_at;
        if (!o.batch.empty()) o.plan.batch_sizes = o.batch;
        if (o.writes()) {
            if (!o.write_gguf.empty()) write_gguf(ckpt, o.write_gguf);
            if (!o.write_hf.empty()) write_hf(ckpt, o.write_hf, o.shards);
            if (!o.write_meta.empty()) write_meta(ckpt, o.write_meta, o.shards);
            std::fprintf(stderr, "wrote %s%s%s\n", o.write_gguf.c_str(), o.write_hf.c_str(), o.write_meta.c_str());
            return 0;
        }
        const int threads = compute_threads(o.threads);
        std::unique_ptr<Backend> backend = make_backend(o, ckpt);
        const double bandwidth = o.backend == "cuda" ? cuda_copy_bandwidth() : bench::measure_read_bandwidth(threads, o.plan.cpu_time);
        const bench::BenchResults results = bench::run_benchmarks(*backend, ckpt, o.plan);
        (o.json ? print_json : print_text)(o, ckpt, *backend, bandwidth, results, threads);
        return 0;
    } catch (const std::exception& e) {
        std::fprintf(stderr, "llamadesk-bench: %s\n", e.what());
        return 1;
    }
}
