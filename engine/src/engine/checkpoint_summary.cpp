// inspect_checkpoint() and reads_gguf_file_type(): what the Models page says of a file on disk,
// from its header alone, and of a file on the Hub, from its name.
#include <cctype>

#include "core/exception_status.h"
#include "llamadesk/engine.h"
#include "model/checkpoint.h"
#include "model/dtype.h"
#include "model/weight_types.h"

namespace llamadesk {

Status inspect_checkpoint(const std::string& path, CheckpointSummary* out) {
    try {
        // Opening maps the file and parses its header (a GGUF's vocabulary too); no weight is read.
        const Checkpoint ckpt = open_checkpoint(path);
        validate_shapes(ckpt);
        const ModelConfig& c = ckpt.config;
        CheckpointSummary s;
        s.format = ckpt.format;
        s.name = ckpt.name;
        s.weight_dtype = dtype_name(ckpt.main_weight_dtype());
        s.weight_types = ckpt.describe_weight_types();
        s.n_params = ckpt.n_params();
        s.shape.weight_bytes = ckpt.weight_bytes();
        s.shape.n_layers = c.n_layers;
        s.shape.n_kv_heads = c.n_kv_heads;
        s.shape.head_dim = c.head_dim();
        s.shape.context_length = c.seq_len;
        *out = std::move(s);
        return Status::success();
    } catch (...) {
        return status_from_current_exception();
    }
}

bool reads_gguf_file_type(const std::string& label, std::string* why) {
    // A K-quant mix is named for its main type and its size (Q4_K_M: mostly Q4_K); the others are
    // named for their one type (Q8_0, F16).
    std::string type = label;
    for (char& c : type) c = char(std::tolower(static_cast<unsigned char>(c)));
    const size_t k = type.find("_k_");
    if (k != std::string::npos && type.size() == k + 4) type.resize(k + 2);
    if (weight_type_by_name(type) != nullptr) return true;
    if (why) *why = label + " files hold " + type + " weights, which LlamaDesk does not read (it reads " +
                    weight_type_names() + ")";
    return false;
}

}  // namespace llamadesk
