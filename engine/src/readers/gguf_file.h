// The structure of a GGUF file (v2/v3, little-endian): header, metadata key/values, tensor infos
// and where the data section starts. Parsing checks every length, count and offset against the
// file's size; values point into the mapped bytes and are never copied.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace llamadesk {

enum class GgufType : uint32_t {
    UInt8 = 0, Int8 = 1, UInt16 = 2, Int16 = 3, UInt32 = 4, Int32 = 5, Float32 = 6, Bool = 7,
    String = 8, Array = 9, UInt64 = 10, Int64 = 11, Float64 = 12,
};

struct GgufValue {
    GgufType type = GgufType::UInt8;
    uint64_t offset = 0;          // in the file, for messages
    const uint8_t* bytes = nullptr;  // scalars: the value; strings: the characters
    uint64_t length = 0;          // strings: byte length
    GgufType elem_type = GgufType::UInt8;  // arrays
    uint64_t count = 0;           // arrays: number of elements
    const uint8_t* elems = nullptr;        // arrays: first element (strings: length-prefixed)
};

struct GgufTensorInfo {
    std::string_view name;
    uint32_t n_dims = 0;
    int64_t ne[4] = {1, 1, 1, 1};  // ne[0] is the contiguous (column) dimension
    uint32_t type = 0;             // GGML type id
    uint64_t offset = 0;           // relative to the data section
    uint64_t info_offset = 0;      // where this info sits in the file, for messages
};

struct GgufFile {
    std::string path;
    uint32_t version = 0;
    std::vector<std::pair<std::string_view, GgufValue>> metadata;
    std::vector<GgufTensorInfo> tensors;
    uint64_t alignment = 32;
    uint64_t data_offset = 0;      // absolute; tensor data at data_offset + info.offset

    const GgufValue* find(std::string_view key) const;
};

// Parses the header and metadata, and with_tensors also the tensor infos: names unique, types
// F32/F16/BF16 (others refused), data inside the file and aligned. Throws EngineError.
GgufFile parse_gguf(const uint8_t* data, uint64_t size, const std::string& path, bool with_tensors);

// A string from the file made safe for a message: printable ASCII, at most 64 bytes (a hostile
// name may be as long as the file).
std::string gguf_printable(std::string_view s);

// Typed access to metadata; nullopt when the key is absent, EngineError(BadFormat) naming the key
// when it has the wrong type or an out-of-range value.
std::optional<int64_t> gguf_int(const GgufFile& f, std::string_view key);
std::optional<double> gguf_float(const GgufFile& f, std::string_view key);  // ints accepted
std::optional<std::string_view> gguf_string(const GgufFile& f, std::string_view key);
std::optional<bool> gguf_bool(const GgufFile& f, std::string_view key);
// An array of the given kind (strings, or any number type when want_numbers); nullptr if absent.
const GgufValue* gguf_array(const GgufFile& f, std::string_view key, bool want_numbers);
// Element i of a numeric array, as double.
double gguf_array_number(const GgufValue& array, uint64_t i);
// Calls fn for each element of a string array, in order (lengths were checked while parsing).
void gguf_for_each_string(const GgufValue& array, const std::function<void(std::string_view)>& fn);

}  // namespace llamadesk
