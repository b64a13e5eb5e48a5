#include "backends/backend.h"

#include <algorithm>

#include "cache/kv_cache_type.h"
#include "core/error.h"
#include "core/host_memory.h"
#include "model/weight_types.h"
#include "sampling/sampler.h"

namespace llamadesk {

Backend::Backend(const ModelConfig& config, int chunk_tokens, DType kv_dtype, BackendKind kind)
    : config_(config), chunk_tokens_(std::max(1, std::min(chunk_tokens, config.seq_len))), kv_dtype_(kv_dtype) {
    const std::vector<DType> supported = kv_dtypes_held(kind);
    std::string names;
    for (DType t : supported) names += std::string(names.empty() ? "" : ", ") + dtype_name(t);
    if (std::find(supported.begin(), supported.end(), kv_dtype) == supported.end())
        fail(ErrorCode::InvalidArgument, std::string("this backend cannot keep a ") + dtype_name(kv_dtype) +
                                             " KV cache; it keeps " + names);
    const int block = weight_type(kv_dtype).block_elements;
    if (config.head_dim() % block != 0)
        fail(ErrorCode::InvalidArgument, std::string("a ") + dtype_name(kv_dtype) + " KV cache needs head_dim a multiple of " +
                                             std::to_string(block) + "; this model's is " +
                                             std::to_string(config.head_dim()) + ", so use f16");
}

std::string Backend::name() const {
    return kind() == BackendKind::Cuda ? "CUDA" : "CPU";
}

int64_t Backend::kv_memory_available() const { return available_memory_bytes(); }

void Backend::limit_context(int n_ctx) {
    if (n_ctx < 1 || n_ctx > config_.seq_len)
        fail(ErrorCode::Internal, "a context of " + std::to_string(n_ctx) + " positions is outside 1.." +
                                      std::to_string(config_.seq_len));
    config_.seq_len = n_ctx;
    chunk_tokens_ = std::min(chunk_tokens_, n_ctx);
}

void Backend::allocate_kv_pool(const KvLayout& layout, int n_blocks) {
    if (layout.n_layers != config_.n_layers || layout.n_kv_heads != config_.n_kv_heads ||
        layout.head_dim != config_.head_dim() || layout.block_size <= 0 || n_blocks < 0)
        fail(ErrorCode::InvalidArgument, "KV layout does not match the model");
    allocate_kv_storage(layout, n_blocks);
    has_kv_pool_ = true;
    layout_ = layout;
    n_pool_blocks_ = n_blocks;
}

void Backend::check_kv_block(int32_t block, size_t bytes) const {
    if (!has_kv_pool_ || block < 0 || block >= n_pool_blocks_)
        fail(ErrorCode::Internal, "KV block " + std::to_string(block) + " is outside the pool of " +
                                      std::to_string(n_pool_blocks_) + " blocks");
    if (int64_t(bytes) != kv_bytes_per_block(layout_))
        fail(ErrorCode::Internal, "a KV block has " + std::to_string(kv_bytes_per_block(layout_)) + " bytes, not " +
                                      std::to_string(bytes));
}

void Backend::read_kv_block(int32_t block, std::span<std::byte> out) const {
    check_kv_block(block, out.size());
    copy_kv_block_out(block, out.data());
}

void Backend::write_kv_block(int32_t block, std::span<const std::byte> in) {
    check_kv_block(block, in.size());
    copy_kv_block_in(block, in.data());
}

void Backend::check_call(std::span<const int32_t> tokens, int start_pos, BlockTableView table) const {
    if (!has_kv_pool_) fail(ErrorCode::Internal, "forward called before the KV pool was allocated");
    if (tokens.empty()) fail(ErrorCode::InvalidArgument, "forward called without tokens");
    const int64_t end = int64_t(start_pos) + int64_t(tokens.size());
    if (start_pos < 0 || end > config_.seq_len)
        fail(ErrorCode::ContextFull, "positions " + std::to_string(start_pos) + ".." + std::to_string(end) +
                                         " exceed the model's context of " + std::to_string(config_.seq_len));
    const int64_t n_blocks = layout_.blocks_for(end);
    if (table.n_blocks < n_blocks)
        fail(ErrorCode::Internal, "block table of " + std::to_string(table.n_blocks) + " blocks does not cover " +
                                      std::to_string(end) + " positions");
    for (int64_t i = 0; i < n_blocks; ++i)
        if (table.blocks[i] < 0 || table.blocks[i] >= n_pool_blocks_)
            fail(ErrorCode::Internal, "block table entry " + std::to_string(table.blocks[i]) +
                                          " is outside the pool of " + std::to_string(n_pool_blocks_) + " blocks");
    for (int32_t t : tokens)
        if (t < 0 || t >= config_.vocab_size)
            fail(ErrorCode::InvalidArgument, "token id " + std::to_string(t) + " is outside the vocabulary of " +
                                                 std::to_string(config_.vocab_size));
}

void Backend::forward(std::span<const int32_t> tokens, int start_pos, BlockTableView table, float* logits,
                      bool all_logits) {
    if (!logits) fail(ErrorCode::InvalidArgument, "forward called without a logits buffer");
    check_call(tokens, start_pos, table);
    const size_t n = tokens.size(), chunk = size_t(chunk_tokens_);
    for (size_t begin = 0; begin < n; begin += chunk) {
        const size_t count = std::min(chunk, n - begin);
        const bool last = begin + count == n;
        float* chunk_logits = all_logits ? logits + begin * size_t(config_.vocab_size) : last ? logits : nullptr;
        forward_chunk(tokens.subspan(begin, count), start_pos + int(begin), table, chunk_logits, all_logits);
    }
}

void Backend::decode_batch(std::span<const BatchToken> batch, float* logits) {
    if (!logits) fail(ErrorCode::InvalidArgument, "decode_batch called without a logits buffer");
    for (const BatchToken& t : batch) check_call(std::span<const int32_t>(&t.token, 1), t.pos, t.table);
    const size_t chunk = size_t(chunk_tokens_), vocab = size_t(config_.vocab_size);
    for (size_t begin = 0; begin < batch.size(); begin += chunk)
        decode_batch_chunk(batch.subspan(begin, std::min(chunk, batch.size() - begin)), logits + begin * vocab);
}

void Backend::decode_batch_chunk(std::span<const BatchToken> batch, float* logits) {
    for (size_t i = 0; i < batch.size(); ++i)
        forward_chunk(std::span<const int32_t>(&batch[i].token, 1), batch[i].pos, batch[i].table,
                      logits + i * size_t(config_.vocab_size), false);
}

int32_t Backend::decode_and_sample(int32_t token, int pos, BlockTableView table, Sampler& sampler,
                                   std::span<const int32_t> recent_tokens) {
    decode_logits_.resize(size_t(sampler.vocab_size()));
    forward(std::span<const int32_t>(&token, 1), pos, table, decode_logits_.data());
    return sampler.sample(decode_logits_.data(), recent_tokens);
}

}  // namespace llamadesk
