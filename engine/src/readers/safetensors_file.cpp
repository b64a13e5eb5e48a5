#include "readers/safetensors_file.h"

#include <algorithm>
#include <cstring>
#include <string_view>

#include "core/error.h"
#include "model/weight_types.h"
#include "readers/gguf_file.h"
#include "readers/json.h"

namespace llamadesk {

namespace {

// The dtypes LlamaDesk reads; safetensors' others (F64, I8 ... I64, U8, BOOL, F8_*) are refused.
constexpr std::pair<std::string_view, DType> kDtypes[] = {
    {"F32", DType::F32}, {"F16", DType::F16}, {"BF16", DType::BF16}};

uint64_t unsigned_at(const JsonValue& v, const std::string& where) {
    if (!v.integer || *v.integer < 0)
        fail(ErrorCode::BadFormat, where + " must be a whole number >= 0");
    return uint64_t(*v.integer);
}

SafetensorsTensor tensor_of(const std::string& path, const std::string& name, const JsonValue& info,
                            const uint8_t* data, uint64_t data_size) {
    const std::string where = path + ": tensor " + gguf_printable(name);
    if (!info.is_object()) fail(ErrorCode::BadFormat, where + " is described by " + json_kind_name(info.kind) + ", not an object");
    const JsonValue* dtype = info.find("dtype");
    const JsonValue* shape = info.find("shape");
    const JsonValue* offsets = info.find("data_offsets");
    if (!dtype || dtype->kind != JsonValue::Kind::String || !shape || !shape->is_array() || !offsets ||
        !offsets->is_array() || offsets->items.size() != 2)
        fail(ErrorCode::BadFormat, where + " needs \"dtype\" (a string), \"shape\" (an array) and \"data_offsets\" "
                                           "(two numbers)");
    SafetensorsTensor t;
    t.name = name;
    const auto known = std::find_if(std::begin(kDtypes), std::end(kDtypes),
                                    [&](const auto& d) { return d.first == dtype->string; });
    if (known == std::end(kDtypes))
        fail(ErrorCode::Unsupported, where + " has dtype " + dtype->string.substr(0, 16) +
                                         ", which LlamaDesk does not read (F32, F16, BF16)");
    t.dtype = known->second;
    if (shape->items.size() > 4) fail(ErrorCode::BadFormat, where + " has " + std::to_string(shape->items.size()) + " dimensions");
    uint64_t n_elements = 1;
    for (const JsonValue& d : shape->items) {
        const uint64_t n = unsigned_at(d, where + "'s shape");
        if (n > (uint64_t(1) << 40) || (n != 0 && n_elements > (uint64_t(1) << 60) / n))
            fail(ErrorCode::BadFormat, where + " has an absurd shape");
        t.shape.push_back(int64_t(n));
        n_elements *= n;
    }
    const uint64_t begin = unsigned_at(offsets->items[0], where + "'s data_offsets");
    const uint64_t end = unsigned_at(offsets->items[1], where + "'s data_offsets");
    if (begin > end || end > data_size)
        fail(ErrorCode::BadFormat, where + " has data_offsets [" + std::to_string(begin) + ", " + std::to_string(end) +
                                       "] outside the data section of " + std::to_string(data_size) + " bytes");
    t.n_bytes = end - begin;
    const uint64_t expected = uint64_t(weight_type(t.dtype).bytes(int64_t(n_elements)));
    if (t.n_bytes != expected)
        fail(ErrorCode::BadFormat, where + " holds " + std::to_string(t.n_bytes) + " bytes, its shape and dtype need " +
                                       std::to_string(expected));
    t.data = data + begin;
    return t;
}

}  // namespace

SafetensorsFile read_safetensors(std::shared_ptr<const MappedFile> file) {
    const std::string& path = file->path();
    uint64_t header_size = 0;
    if (file->size() < 8) fail(ErrorCode::BadFormat, path + " is too short for a safetensors file (" + std::to_string(file->size()) + " bytes)");
    std::memcpy(&header_size, file->data(), 8);
    if (header_size > file->size() - 8 || header_size > kMaxSafetensorsHeader)
        fail(ErrorCode::BadFormat, path + ": the safetensors header claims " + std::to_string(header_size) +
                                       " bytes; the file has " + std::to_string(file->size() - 8) + " after the length (at most " +
                                       std::to_string(kMaxSafetensorsHeader) + " are accepted)");
    const std::string_view text(reinterpret_cast<const char*>(file->data() + 8), size_t(header_size));
    const JsonValue header = parse_json(text, path + " (safetensors header)");
    if (!header.is_object()) fail(ErrorCode::BadFormat, path + ": the safetensors header is not a JSON object");

    SafetensorsFile out;
    const uint8_t* data = file->data() + 8 + header_size;
    const uint64_t data_size = file->size() - 8 - header_size;
    for (const auto& [name, info] : header.members)
        if (name != "__metadata__") out.tensors.push_back(tensor_of(path, name, info, data, data_size));

    std::vector<const SafetensorsTensor*> by_offset;
    for (const SafetensorsTensor& t : out.tensors) by_offset.push_back(&t);
    std::sort(by_offset.begin(), by_offset.end(), [](auto* a, auto* b) { return a->data < b->data; });
    for (size_t i = 1; i < by_offset.size(); ++i)
        if (by_offset[i]->data < by_offset[i - 1]->data + by_offset[i - 1]->n_bytes)
            fail(ErrorCode::BadFormat, path + ": tensors " + by_offset[i - 1]->name + " and " + by_offset[i]->name +
                                           " overlap in the file");
    out.file = std::move(file);
    return out;
}

}  // namespace llamadesk
