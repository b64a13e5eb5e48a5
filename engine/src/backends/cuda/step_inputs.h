// What one forward call tells the kernels beyond the weights: start position, token ids, the
// conversation's block table, sampling settings and recent tokens. They live in device memory,
// not in kernel arguments, so a captured decode graph replays with this step's values: the host
// writes a page-locked mirror and one copy moves it before the launch.
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_buffer.h"
#include "backends/cuda/kernels.h"

namespace llamadesk::cuda {

class StepInputs {
public:
    StepInputs() = default;
    StepInputs(int max_tokens, int max_blocks, int max_recent)
        : max_tokens_(max_tokens), max_blocks_(max_blocks), max_recent_(max_recent),
          tokens_at_(align(sizeof(Header))),
          table_at_(align(tokens_at_ + sizeof(int32_t) * size_t(max_tokens))),
          recent_at_(align(table_at_ + sizeof(int32_t) * size_t(max_blocks))),
          out_at_(align(recent_at_ + sizeof(int32_t) * size_t(max_recent))),
          bytes_(align(out_at_ + sizeof(int32_t))),
          host_(bytes_, "step inputs"), device_(bytes_, "step inputs") {}

    int max_tokens() const { return max_tokens_; }
    int max_blocks() const { return max_blocks_; }
    int max_recent() const { return max_recent_; }

    // host side, written before upload()
    int32_t& start_pos() { return header(host_.get())->start_pos; }
    DeviceSampling& sampling() { return header(host_.get())->sampling; }
    int32_t* tokens() { return at<int32_t>(host_.get(), tokens_at_); }
    int32_t* block_table() { return at<int32_t>(host_.get(), table_at_); }
    int32_t* recent() { return at<int32_t>(host_.get(), recent_at_); }
    int32_t sampled_token() const { return *at<int32_t>(host_.get(), out_at_); }

    // device side, read by kernels
    const int32_t* d_start_pos() const { return &header(device_.get())->start_pos; }
    const DeviceSampling* d_sampling() const { return &header(device_.get())->sampling; }
    const int32_t* d_tokens() const { return at<int32_t>(device_.get(), tokens_at_); }
    const int32_t* d_block_table() const { return at<int32_t>(device_.get(), table_at_); }
    const int32_t* d_recent() const { return at<int32_t>(device_.get(), recent_at_); }
    int32_t* d_sampled_token() const { return at<int32_t>(device_.get(), out_at_); }

    void upload(cudaStream_t stream) {
        CUDA_CHECK(cudaMemcpyAsync(device_.get(), host_.get(), out_at_, cudaMemcpyHostToDevice, stream));
    }
    void download_sampled_token(cudaStream_t stream) {
        CUDA_CHECK(cudaMemcpyAsync(at<int32_t>(host_.get(), out_at_), d_sampled_token(), sizeof(int32_t),
                                   cudaMemcpyDeviceToHost, stream));
    }

private:
    struct Header {
        int32_t start_pos;
        DeviceSampling sampling;
    };
    static size_t align(size_t n) { return (n + 15) / 16 * 16; }
    static Header* header(void* base) { return static_cast<Header*>(base); }
    template <typename T> static T* at(void* base, size_t offset) {
        return reinterpret_cast<T*>(static_cast<char*>(base) + offset);
    }

    int max_tokens_ = 0, max_blocks_ = 0, max_recent_ = 0;
    size_t tokens_at_ = 0, table_at_ = 0, recent_at_ = 0, out_at_ = 0, bytes_ = 0;
    PinnedBuffer host_;
    DeviceBuffer device_;
};

}  // namespace llamadesk::cuda
