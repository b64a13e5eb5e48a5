// Bounds-checked little-endian reading of a file's bytes. Every read checks the remaining size
// first, so a truncated or lying file ends in an EngineError(BadFormat) naming field and offset.
#pragma once

#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <type_traits>

#include "core/error.h"

namespace llamadesk {

class ByteCursor {
public:
    ByteCursor(const uint8_t* data, uint64_t size, std::string source)
        : data_(data), size_(size), source_(std::move(source)) {}

    uint64_t offset() const { return pos_; }
    uint64_t size() const { return size_; }
    uint64_t remaining() const { return size_ - pos_; }
    const uint8_t* here() const { return data_ + pos_; }
    const std::string& source() const { return source_; }

    template <typename T>
    T read(const char* field) {
        static_assert(std::is_trivially_copyable_v<T>);
        require(sizeof(T), field);
        T value;
        std::memcpy(&value, data_ + pos_, sizeof(T));
        pos_ += sizeof(T);
        return value;
    }

    std::string_view read_bytes(uint64_t n, const char* field) {
        require(n, field);
        std::string_view s(reinterpret_cast<const char*>(data_ + pos_), size_t(n));
        pos_ += n;
        return s;
    }

    void skip(uint64_t n, const char* field) {
        require(n, field);
        pos_ += n;
    }

    void require(uint64_t n, const char* field) const {
        if (n > remaining())
            fail(ErrorCode::BadFormat,
                 source_ + ": file ends inside " + field + " (offset " + std::to_string(pos_) +
                     ", needs " + std::to_string(n) + " bytes, " + std::to_string(remaining()) +
                     " left; the file is truncated or corrupt)");
    }

private:
    const uint8_t* data_;
    uint64_t size_;
    uint64_t pos_ = 0;
    std::string source_;
};

}  // namespace llamadesk
