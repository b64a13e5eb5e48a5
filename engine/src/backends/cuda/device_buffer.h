// Owning handles for device memory and page-locked host memory.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace llamadesk::cuda {

enum class Memory { Device, Pinned };

// Owns bytes of device memory (cudaMalloc) or page-locked host memory (cudaHostAlloc, so copies
// to and from the device are asynchronous and capturable). Throws EngineError(OutOfMemory)
// naming `what`, the size and, for the device, the free memory.
template <Memory kind>
class CudaBytes {
public:
    CudaBytes() = default;
    CudaBytes(size_t bytes, const std::string& what);
    ~CudaBytes();
    CudaBytes(CudaBytes&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    CudaBytes& operator=(CudaBytes&& o) noexcept {
        std::swap(ptr_, o.ptr_);
        std::swap(bytes_, o.bytes_);
        return *this;
    }

    void* get() const { return ptr_; }
    template <typename T> T* as() const { return static_cast<T*>(ptr_); }
    size_t bytes() const { return bytes_; }

private:
    void* ptr_ = nullptr;
    size_t bytes_ = 0;
};

using DeviceBuffer = CudaBytes<Memory::Device>;
using PinnedBuffer = CudaBytes<Memory::Pinned>;

std::string mib(size_t bytes);  // "123.4 MiB"

}  // namespace llamadesk::cuda
