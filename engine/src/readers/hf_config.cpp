#include "readers/hf_config.h"

#include <cmath>

#include "core/error.h"
#include "readers/json.h"

namespace llamadesk {

namespace {

class Fields {
public:
    Fields(const JsonValue& root, const std::string& path) : root_(root), path_(path) {}

    const JsonValue* get(const char* key, JsonValue::Kind kind) const {
        const JsonValue* v = root_.find(key);
        if (v == nullptr || v->kind == JsonValue::Kind::Null) return nullptr;
        if (v->kind != kind)
            fail(ErrorCode::BadFormat, path_ + ": \"" + key + "\" is " + json_kind_name(v->kind) + ", expected " +
                                           json_kind_name(kind));
        return v;
    }

    int integer(const char* key, int fallback, bool required = false) const {
        const JsonValue* v = get(key, JsonValue::Kind::Number);
        if (v == nullptr) {
            if (required) fail(ErrorCode::BadFormat, path_ + " lacks \"" + key + "\"");
            return fallback;
        }
        if (!v->integer || *v->integer < 0 || *v->integer > (int64_t(1) << 30))
            fail(ErrorCode::BadFormat, path_ + ": \"" + key + "\" is " + std::to_string(v->number) +
                                           ", expected a whole number from 0 to 2^30");
        return int(*v->integer);
    }

    float real(const JsonValue* v, const char* key, float fallback) const {
        if (v == nullptr) return fallback;
        if (v->kind != JsonValue::Kind::Number)
            fail(ErrorCode::BadFormat, path_ + ": \"" + key + "\" is " + json_kind_name(v->kind) + ", expected a number");
        return float(v->number);
    }

    bool boolean(const char* key, bool fallback) const {
        const JsonValue* v = get(key, JsonValue::Kind::Bool);
        return v ? v->boolean : fallback;
    }

private:
    const JsonValue& root_;
    const std::string& path_;
};

void check_architecture(const JsonValue& root, const Fields& f, const std::string& path) {
    if (const JsonValue* archs = f.get("architectures", JsonValue::Kind::Array)) {
        bool llama = false;
        std::string names;
        for (const JsonValue& a : archs->items) {
            if (a.kind != JsonValue::Kind::String) continue;
            llama |= a.string == "LlamaForCausalLM";
            names += (names.empty() ? "" : ", ") + a.string.substr(0, 64);
        }
        if (!llama)
            fail(ErrorCode::Unsupported, path + ": architecture " + (names.empty() ? "(none)" : names) +
                                             " is not supported (LlamaForCausalLM is)");
    }
    if (const JsonValue* type = f.get("model_type", JsonValue::Kind::String); type && type->string != "llama")
        fail(ErrorCode::Unsupported, path + ": model_type " + type->string.substr(0, 64) + " is not supported (llama is)");
    if (const JsonValue* act = f.get("hidden_act", JsonValue::Kind::String); act && act->string != "silu")
        fail(ErrorCode::Unsupported, path + ": hidden_act " + act->string.substr(0, 64) + " is not supported (silu is)");
    for (const char* bias : {"attention_bias", "mlp_bias"})
        if (f.boolean(bias, false)) fail(ErrorCode::Unsupported, path + ": " + bias + " is true; Llama 2 has no biases");
    if (const JsonValue* scaling = root.find("rope_scaling"); scaling && scaling->kind != JsonValue::Kind::Null) {
        const JsonValue* type = scaling->is_object() ? scaling->find("rope_type") : nullptr;
        if (type == nullptr && scaling->is_object()) type = scaling->find("type");
        const bool known = type && type->kind == JsonValue::Kind::String &&
                           (type->string == "default" || type->string == "llama3");
        if (!known)
            fail(ErrorCode::Unsupported, path + ": rope_scaling " +
                                             (type && type->kind == JsonValue::Kind::String ? type->string.substr(0, 32) : "") +
                                             " is not supported (plain RoPE and Llama 3.1's \"llama3\")");
    }
}

}  // namespace

HfConfig parse_hf_config(const std::string& text, const std::string& path) {
    const JsonValue root = parse_json(text, path);
    if (!root.is_object()) fail(ErrorCode::BadFormat, path + " is not a JSON object");
    const Fields f(root, path);
    check_architecture(root, f, path);

    HfConfig out;
    ModelConfig& c = out.config;
    c.dim = f.integer("hidden_size", 0, true);
    c.hidden_dim = f.integer("intermediate_size", 0, true);
    c.n_layers = f.integer("num_hidden_layers", 0, true);
    c.n_heads = f.integer("num_attention_heads", 0, true);
    c.n_kv_heads = f.integer("num_key_value_heads", c.n_heads);
    c.vocab_size = f.integer("vocab_size", 0, true);
    c.seq_len = f.integer("max_position_embeddings", 0, true);
    c.norm_eps = f.real(root.find("rms_norm_eps"), "rms_norm_eps", c.norm_eps);
    // transformers 4.x writes rope_theta at the top; 5.x inside rope_parameters
    const JsonValue* theta = root.find("rope_theta");
    if (const JsonValue* params = f.get("rope_parameters", JsonValue::Kind::Object); params && !theta)
        theta = params->find("rope_theta");
    c.rope_theta = f.real(theta, "rope_theta", c.rope_theta);
    // Llama 3.1: {"rope_type": "llama3", "factor", "low_freq_factor", "high_freq_factor",
    // "original_max_position_embeddings"}.
    if (const JsonValue* scaling = f.get("rope_scaling", JsonValue::Kind::Object)) {
        const JsonValue* type = scaling->find("rope_type");
        if (!type) type = scaling->find("type");
        if (type && type->string == "llama3") {
            const Fields s(*scaling, path);
            RopeScaling& r = c.rope_scaling;
            r.factor = s.real(scaling->find("factor"), "rope_scaling.factor", 8.0f);
            r.low_freq_factor = s.real(scaling->find("low_freq_factor"), "rope_scaling.low_freq_factor", r.low_freq_factor);
            r.high_freq_factor = s.real(scaling->find("high_freq_factor"), "rope_scaling.high_freq_factor", r.high_freq_factor);
            r.original_context = s.integer("original_max_position_embeddings", r.original_context);
        }
    }
    out.tie_word_embeddings = f.boolean("tie_word_embeddings", false);
    validate_config(c, path);
    if (const int head_dim = f.integer("head_dim", c.head_dim()); head_dim != c.head_dim())
        fail(ErrorCode::Unsupported, path + ": head_dim " + std::to_string(head_dim) + " differs from hidden_size / "
                                            "num_attention_heads = " + std::to_string(c.head_dim()));
    return out;
}

}  // namespace llamadesk
