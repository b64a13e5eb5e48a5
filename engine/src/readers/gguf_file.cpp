#include "readers/gguf_file.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_set>

#include "core/error.h"
#include "readers/byte_cursor.h"
#include "model/weight_types.h"
#include "readers/ggml_types.h"

namespace llamadesk {

namespace {

constexpr int kMaxArrayDepth = 4;

// Bytes of a scalar of this type; 0 for strings, arrays and unknown types.
uint64_t scalar_size(GgufType t) {
    switch (t) {
    case GgufType::UInt8: case GgufType::Int8: case GgufType::Bool: return 1;
    case GgufType::UInt16: case GgufType::Int16: return 2;
    case GgufType::UInt32: case GgufType::Int32: case GgufType::Float32: return 4;
    case GgufType::UInt64: case GgufType::Int64: case GgufType::Float64: return 8;
    default: return 0;
    }
}

bool is_integer(GgufType t) {
    return scalar_size(t) != 0 && t != GgufType::Float32 && t != GgufType::Float64 &&
           t != GgufType::Bool;
}

const char* type_name(GgufType t) {
    static const char* const names[] = {"uint8", "int8",   "uint16", "int16",  "uint32",
                                        "int32", "float32", "bool",  "string", "array",
                                        "uint64", "int64", "float64"};
    return names[uint32_t(t)];  // read_type() admits only these
}

std::string at(uint64_t offset) { return " at offset " + std::to_string(offset); }

GgufType read_type(ByteCursor& in, const char* field) {
    const uint64_t offset = in.offset();
    const uint32_t t = in.read<uint32_t>(field);
    if (t > uint32_t(GgufType::Float64))
        fail(ErrorCode::BadFormat, in.source() + ": unknown GGUF value type " + std::to_string(t) +
                                       " in " + field + at(offset));
    return GgufType(t);
}

std::string_view read_string(ByteCursor& in, const char* field) {
    const uint64_t len = in.read<uint64_t>(field);
    return in.read_bytes(len, field);  // checks len against the bytes left
}

GgufValue read_value(ByteCursor& in, GgufType type, int depth);

// Walks an array's elements, checking that the count can fit in what is left of the file before
// trusting it.
void read_array(ByteCursor& in, GgufValue& v, int depth) {
    v.elem_type = read_type(in, "array element type");
    const uint64_t count_offset = in.offset();
    v.count = in.read<uint64_t>("array length");
    const uint64_t min_elem = v.elem_type == GgufType::String  ? 8
                              : v.elem_type == GgufType::Array ? 12
                                                               : scalar_size(v.elem_type);
    if (v.count > in.remaining() / min_elem)
        fail(ErrorCode::BadFormat, in.source() + ": array length " + std::to_string(v.count) +
                                       at(count_offset) + " cannot fit in the " +
                                       std::to_string(in.remaining()) + " bytes left in the file");
    v.elems = in.here();
    if (v.elem_type == GgufType::String) {
        for (uint64_t i = 0; i < v.count; ++i) read_string(in, "string array element");
    } else if (v.elem_type == GgufType::Array) {
        if (depth + 1 >= kMaxArrayDepth)
            fail(ErrorCode::BadFormat, in.source() + ": arrays nested deeper than " +
                                           std::to_string(kMaxArrayDepth) + at(count_offset));
        for (uint64_t i = 0; i < v.count; ++i) read_value(in, GgufType::Array, depth + 1);
    } else {
        in.skip(v.count * min_elem, "array elements");
    }
}

GgufValue read_value(ByteCursor& in, GgufType type, int depth) {
    GgufValue v;
    v.type = type;
    v.offset = in.offset();
    if (type == GgufType::String) {
        const std::string_view s = read_string(in, "string value");
        v.bytes = reinterpret_cast<const uint8_t*>(s.data());
        v.length = s.size();
    } else if (type == GgufType::Array) {
        read_array(in, v, depth);
    } else {
        v.bytes = in.here();
        in.skip(scalar_size(type), "metadata value");
    }
    return v;
}

template <typename T>
T load(const uint8_t* p) {
    T x;
    std::memcpy(&x, p, sizeof(T));
    return x;
}

// A number of any numeric type, as double (exact for every integer a model field can hold).
double number_at(GgufType t, const uint8_t* p) {
    switch (t) {
    case GgufType::UInt8: return load<uint8_t>(p);
    case GgufType::Int8: return load<int8_t>(p);
    case GgufType::UInt16: return load<uint16_t>(p);
    case GgufType::Int16: return load<int16_t>(p);
    case GgufType::UInt32: return load<uint32_t>(p);
    case GgufType::Int32: return load<int32_t>(p);
    case GgufType::Float32: return load<float>(p);
    case GgufType::UInt64: return double(load<uint64_t>(p));
    case GgufType::Int64: return double(load<int64_t>(p));
    case GgufType::Float64: return load<double>(p);
    case GgufType::Bool: return load<uint8_t>(p) != 0;
    default: return 0;
    }
}

void read_header_and_metadata(ByteCursor& in, GgufFile& f, uint64_t& n_tensors) {
    const std::string_view magic = in.read_bytes(4, "GGUF magic");
    if (magic != "GGUF")
        fail(ErrorCode::BadFormat, f.path + ": not a GGUF file (the first 4 bytes are not 'GGUF')");
    f.version = in.read<uint32_t>("GGUF version");
    if (f.version == 1)
        fail(ErrorCode::Unsupported, f.path + ": GGUF version 1 is not supported (2 and 3 are); "
                                              "convert the model again with a current llama.cpp");
    if (f.version == 0x02000000u || f.version == 0x03000000u)
        fail(ErrorCode::Unsupported, f.path + ": big-endian GGUF files are not supported");
    if (f.version != 2 && f.version != 3)
        fail(ErrorCode::Unsupported, f.path + ": GGUF version " + std::to_string(f.version) +
                                         " is not supported (2 and 3 are)");
    n_tensors = in.read<uint64_t>("tensor count");
    const uint64_t kv_offset = in.offset();
    const uint64_t n_kv = in.read<uint64_t>("metadata count");
    // The smallest key/value takes 13 bytes (empty key, type, one-byte value).
    if (n_kv > in.remaining() / 13)
        fail(ErrorCode::BadFormat, f.path + ": metadata count " + std::to_string(n_kv) +
                                       at(kv_offset) + " cannot fit in a file of " +
                                       std::to_string(in.size()) + " bytes");
    std::unordered_set<std::string_view> keys;
    for (uint64_t i = 0; i < n_kv; ++i) {
        const std::string_view key = read_string(in, "metadata key");
        try {
            const GgufType type = read_type(in, "metadata value type");
            f.metadata.emplace_back(key, read_value(in, type, 0));
        } catch (const EngineError& e) {
            fail(e.code(), std::string(e.what()) + " (metadata key '" + gguf_printable(key) + "')");
        }
        if (!keys.insert(key).second)
            fail(ErrorCode::BadFormat, f.path + ": metadata key '" + gguf_printable(key) +
                                           "' appears twice");
    }
}

void read_tensor_infos(ByteCursor& in, GgufFile& f, uint64_t n_tensors) {
    // The smallest tensor info takes 28 bytes (empty name, 1 dim, type, offset).
    if (n_tensors > in.remaining() / 28)
        fail(ErrorCode::BadFormat, f.path + ": tensor count " + std::to_string(n_tensors) +
                                       " cannot fit in a file of " + std::to_string(in.size()) +
                                       " bytes");
    std::unordered_set<std::string_view> names;
    for (uint64_t i = 0; i < n_tensors; ++i) {
        GgufTensorInfo t;
        t.info_offset = in.offset();
        t.name = read_string(in, "tensor name");
        const std::string where = f.path + ": tensor '" + gguf_printable(t.name) + "'";
        t.n_dims = in.read<uint32_t>("tensor dimension count");
        if (t.n_dims < 1 || t.n_dims > 4)
            fail(ErrorCode::BadFormat, where + " has " + std::to_string(t.n_dims) +
                                           " dimensions (1 to 4 expected)" + at(t.info_offset));
        uint64_t n_elements = 1;
        for (uint32_t d = 0; d < t.n_dims; ++d) {
            const uint64_t ne = in.read<uint64_t>("tensor dimension");
            if (ne == 0 || ne > (uint64_t(1) << 40) || n_elements > (uint64_t(1) << 60) / ne)
                fail(ErrorCode::BadFormat, where + " has an absurd dimension " + std::to_string(ne) +
                                               at(t.info_offset));
            t.ne[d] = int64_t(ne);
            n_elements *= ne;
        }
        t.type = in.read<uint32_t>("tensor type");
        t.offset = in.read<uint64_t>("tensor data offset");
        if (!names.insert(t.name).second)
            fail(ErrorCode::BadFormat, where + " appears twice");
        f.tensors.push_back(t);
    }
    if (in.offset() > std::numeric_limits<uint64_t>::max() - f.alignment)
        fail(ErrorCode::BadFormat, f.path + ": data section offset overflows");
    f.data_offset = (in.offset() + f.alignment - 1) / f.alignment * f.alignment;
}

void check_tensor_data(const GgufFile& f, uint64_t file_size) {
    for (const GgufTensorInfo& t : f.tensors) {
        const std::string where = f.path + ": GGUF tensor " + gguf_printable(t.name);
        const char* type_name = ggml_type_name(t.type);
        if (type_name == nullptr)
            fail(ErrorCode::BadFormat, where + " has unknown tensor type " + std::to_string(t.type));
        const WeightType* wt = weight_type_by_ggml_id(t.type);
        if (wt == nullptr)
            fail(ErrorCode::Unsupported, where + " has type " + type_name +
                                             ", which this version of LlamaDesk cannot use (it reads " +
                                             weight_type_names() + ")");
        if (t.ne[0] % wt->block_elements != 0)
            fail(ErrorCode::BadFormat, where + " has rows of " + std::to_string(t.ne[0]) + " elements, not a multiple of " +
                                           type_name + "'s block of " + std::to_string(wt->block_elements));
        const uint64_t n_bytes = uint64_t(wt->bytes(t.ne[0])) * uint64_t(t.ne[1]) * uint64_t(t.ne[2] * t.ne[3]);
        if (t.offset % f.alignment != 0)
            fail(ErrorCode::BadFormat, where + " has data offset " + std::to_string(t.offset) +
                                           ", not a multiple of the alignment " +
                                           std::to_string(f.alignment));
        if (f.data_offset > file_size || t.offset > file_size - f.data_offset ||
            n_bytes > file_size - f.data_offset - t.offset)
            fail(ErrorCode::BadFormat,
                 where + " extends past the end of the file (offset " +
                     std::to_string(f.data_offset) + " + " + std::to_string(t.offset) + ", size " +
                     std::to_string(n_bytes) + ", file size " + std::to_string(file_size) + ")");
    }
}

}  // namespace

std::string gguf_printable(std::string_view s) {
    std::string out;
    for (const char c : s.substr(0, 64)) out += (c >= 0x20 && c < 0x7f) ? c : '?';
    return s.size() > 64 ? out + "..." : out;
}

const GgufValue* GgufFile::find(std::string_view key) const {
    for (const auto& [k, v] : metadata)
        if (k == key) return &v;
    return nullptr;
}

GgufFile parse_gguf(const uint8_t* data, uint64_t size, const std::string& path, bool with_tensors) {
    GgufFile f;
    f.path = path;
    ByteCursor in(data, size, path);
    uint64_t n_tensors = 0;
    read_header_and_metadata(in, f, n_tensors);
    if (const std::optional<int64_t> a = gguf_int(f, "general.alignment")) {
        if (*a < 1 || *a > (1 << 20) || (*a & (*a - 1)) != 0)
            fail(ErrorCode::BadFormat, path + ": general.alignment " + std::to_string(*a) +
                                           " is not a power of two up to 1 MiB");
        f.alignment = uint64_t(*a);
    }
    if (with_tensors) {
        read_tensor_infos(in, f, n_tensors);
        check_tensor_data(f, size);
    }
    return f;
}

std::optional<int64_t> gguf_int(const GgufFile& f, std::string_view key) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    if (!is_integer(v->type))
        fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) +
                                       " should be an integer, not " + type_name(v->type));
    if (v->type == GgufType::UInt64) {
        const uint64_t u = load<uint64_t>(v->bytes);
        if (u > uint64_t(std::numeric_limits<int64_t>::max()))
            fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) + " = " +
                                           std::to_string(u) + " is out of range");
        return int64_t(u);
    }
    if (v->type == GgufType::Int64) return load<int64_t>(v->bytes);
    return int64_t(number_at(v->type, v->bytes));
}

std::optional<double> gguf_float(const GgufFile& f, std::string_view key) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    if (scalar_size(v->type) == 0 || v->type == GgufType::Bool)
        fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) + " should be a number");
    return number_at(v->type, v->bytes);
}

std::optional<std::string_view> gguf_string(const GgufFile& f, std::string_view key) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::String)
        fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) + " should be a string");
    return std::string_view(reinterpret_cast<const char*>(v->bytes), size_t(v->length));
}

std::optional<bool> gguf_bool(const GgufFile& f, std::string_view key) {
    const GgufValue* v = f.find(key);
    if (!v) return std::nullopt;
    if (v->type != GgufType::Bool)
        fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) + " should be a bool");
    return load<uint8_t>(v->bytes) != 0;
}

const GgufValue* gguf_array(const GgufFile& f, std::string_view key, bool want_numbers) {
    const GgufValue* v = f.find(key);
    if (!v) return nullptr;
    const bool ok = v->type == GgufType::Array &&
                    (want_numbers ? scalar_size(v->elem_type) != 0 && v->elem_type != GgufType::Bool
                                  : v->elem_type == GgufType::String);
    if (!ok)
        fail(ErrorCode::BadFormat, f.path + ": metadata " + std::string(key) + " should be an array of " +
                                       (want_numbers ? "numbers" : "strings"));
    return v;
}

double gguf_array_number(const GgufValue& array, uint64_t i) {
    return number_at(array.elem_type, array.elems + i * scalar_size(array.elem_type));
}

void gguf_for_each_string(const GgufValue& array, const std::function<void(std::string_view)>& fn) {
    const uint8_t* p = array.elems;
    for (uint64_t i = 0; i < array.count; ++i) {
        const uint64_t len = load<uint64_t>(p);
        fn(std::string_view(reinterpret_cast<const char*>(p + 8), size_t(len)));
        p += 8 + len;
    }
}

}  // namespace llamadesk
