// Owning handles for device memory and page-locked host memory.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

namespace llamadesk::cuda {

// cudaMalloc'd bytes; throws EngineError(OutOfMemory) naming `what`, the size and the free memory.
class DeviceBuffer {
public:
    DeviceBuffer() = default;
    DeviceBuffer(size_t bytes, const std::string& what);
    ~DeviceBuffer();
    DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
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

// cudaHostAlloc'd bytes, so copies to and from the device are asynchronous and capturable.
class PinnedBuffer {
public:
    PinnedBuffer() = default;
    PinnedBuffer(size_t bytes, const std::string& what);
    ~PinnedBuffer();
    PinnedBuffer(PinnedBuffer&& o) noexcept : ptr_(std::exchange(o.ptr_, nullptr)), bytes_(o.bytes_) {}
    PinnedBuffer& operator=(PinnedBuffer&& o) noexcept {
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

std::string mib(size_t bytes);  // "123.4 MiB"

}  // namespace llamadesk::cuda
