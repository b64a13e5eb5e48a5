#include "readers/hf_tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/error.h"
#include "readers/json.h"
#include "tokenizer/pretokenizer.h"

namespace fs = std::filesystem;

namespace llamadesk {
namespace {

// Llama 3's tokenizer.json is 9 MB; its values (128256 tokens, 280147 merges as pairs, the added
// tokens' fields) number about 1.1 million.
constexpr std::uintmax_t kMaxTokenizerJsonBytes = 64ull << 20;
constexpr int64_t kMaxTokenizerJsonValues = int64_t(1) << 23;

std::optional<std::string> read_text(const fs::path& path, std::uintmax_t max_bytes) {
    std::error_code ec;
    if (!fs::is_regular_file(path, ec)) return std::nullopt;
    if (fs::file_size(path, ec) > max_bytes)
        fail(ErrorCode::BadFormat, path.string() + " is larger than " + std::to_string(max_bytes >> 20) +
                                       " MiB, far more than any tokenizer needs");
    std::ifstream in(path, std::ios::binary);
    std::ostringstream text;
    text << in.rdbuf();
    if (!in.good() && !in.eof()) fail(ErrorCode::FileNotFound, "cannot read " + path.string());
    return text.str();
}

const JsonValue& member(const JsonValue& object, std::string_view key, JsonValue::Kind kind,
                        const std::string& where) {
    const JsonValue* v = object.find(key);
    if (!v) fail(ErrorCode::BadFormat, where + " lacks \"" + std::string(key) + "\"");
    if (v->kind != kind)
        fail(ErrorCode::BadFormat, where + ": \"" + std::string(key) + "\" is " + json_kind_name(v->kind) +
                                       ", expected " + json_kind_name(kind));
    return *v;
}

// A special token as tokenizer_config.json writes it: "<|x|>" or {"content": "<|x|>", ...}.
std::string token_text(const JsonValue* v) {
    if (!v) return {};
    if (v->kind == JsonValue::Kind::String) return v->string;
    if (const JsonValue* c = v->is_object() ? v->find("content") : nullptr;
        c && c->kind == JsonValue::Kind::String)
        return c->string;
    return {};
}

// The Split pattern of a ByteLevel tokenizer's pre-tokenizer: Sequence[Split(Regex), ByteLevel]
// as Llama 3's is, or ByteLevel alone with use_regex (GPT-2's pattern, which is not supported).
std::string split_pattern(const JsonValue& pre, const std::string& where) {
    const JsonValue* type = pre.find("type");
    const std::string t = type && type->kind == JsonValue::Kind::String ? type->string : "";
    if (t == "Sequence") {
        const JsonValue* list = pre.find("pretokenizers");
        if (list && list->is_array())
            for (const JsonValue& p : list->items)
                if (const JsonValue* pt = p.find("type"); pt && pt->string == "Split")
                    if (const JsonValue* pattern = p.find("pattern"))
                        if (const JsonValue* regex = pattern->find("Regex");
                            regex && regex->kind == JsonValue::Kind::String)
                            return regex->string;
    }
    fail(ErrorCode::Unsupported, where + ": pre_tokenizer " + (t.empty() ? "(none)" : t.substr(0, 32)) +
                                     " is not supported; supported: " + Pretokenizer::supported() +
                                     ", a Split on Llama 3's pattern followed by ByteLevel");
}

void add_eos_ids(const fs::path& path, std::vector<int32_t>& ids) {
    const std::optional<std::string> text = read_text(path, 1 << 20);
    if (!text) return;
    const JsonValue root = parse_json(*text, path.string());
    const JsonValue* eos = root.find("eos_token_id");
    if (!eos) return;
    auto add = [&](const JsonValue& v) {
        if (v.integer && *v.integer >= 0 && *v.integer <= INT32_MAX) ids.push_back(int32_t(*v.integer));
    };
    if (eos->is_array())
        for (const JsonValue& v : eos->items) add(v);
    else
        add(*eos);
}

}  // namespace

std::shared_ptr<EmbeddedVocab> parse_hf_tokenizer_json(std::string_view text, const std::string& where) {
    const JsonValue root = parse_json(text, where, kMaxTokenizerJsonValues);
    if (!root.is_object()) fail(ErrorCode::BadFormat, where + " is not a JSON object");

    const JsonValue& model = member(root, "model", JsonValue::Kind::Object, where);
    const JsonValue* type = model.find("type");
    if (!type || type->string != "BPE")
        fail(ErrorCode::Unsupported, where + ": model type " + (type ? type->string.substr(0, 32) : "(none)") +
                                         " is not supported; supported: BPE (byte-level)");
    const JsonValue* pre = root.find("pre_tokenizer");
    if (!pre || !pre->is_object())
        fail(ErrorCode::Unsupported, where + " has no pre_tokenizer; supported: " + Pretokenizer::supported());
    const std::string pattern = split_pattern(*pre, where);
    auto vocab = std::make_shared<EmbeddedVocab>();
    vocab->model = "gpt2";
    vocab->pre = Pretokenizer::pre_of_pattern(pattern);
    if (vocab->pre.empty())
        fail(ErrorCode::Unsupported, where + ": the pre-tokenizer's Split pattern '" + pattern.substr(0, 80) +
                                         "' is not one LlamaDesk knows; supported: " + Pretokenizer::supported());

    // model.vocab {token: id}, then added_tokens [{id, content, special}], which may extend it.
    const JsonValue& entries = member(model, "vocab", JsonValue::Kind::Object, where + ": model");
    std::vector<std::optional<std::string>> tokens(entries.members.size());
    std::vector<int32_t> types(entries.members.size(), 1);
    auto place = [&](int64_t id, const std::string& token, int32_t token_type, bool may_repeat) {
        if (id < 0 || id >= int64_t(1) << 22)
            fail(ErrorCode::BadFormat, where + ": token '" + token.substr(0, 64) + "' has id " +
                                           std::to_string(id) + " (0 to 4194303 expected)");
        if (size_t(id) >= tokens.size()) tokens.resize(size_t(id) + 1), types.resize(size_t(id) + 1, 1);
        if (tokens[size_t(id)] && !(may_repeat && *tokens[size_t(id)] == token))
            fail(ErrorCode::BadFormat, where + ": id " + std::to_string(id) + " is given to both '" +
                                           tokens[size_t(id)]->substr(0, 64) + "' and '" + token.substr(0, 64) + "'");
        tokens[size_t(id)] = token;
        types[size_t(id)] = token_type;
    };
    for (const JsonMember& m : entries.members) {
        if (!m.value.integer)
            fail(ErrorCode::BadFormat, where + ": model.vocab's '" + m.key.substr(0, 64) + "' has no whole-number id");
        place(*m.value.integer, m.key, 1, false);
    }
    if (const JsonValue* added = root.find("added_tokens"); added && added->is_array())
        for (const JsonValue& t : added->items) {
            const JsonValue* id = t.find("id");
            const JsonValue* content = t.find("content");
            if (!id || !id->integer || !content || content->kind != JsonValue::Kind::String)
                fail(ErrorCode::BadFormat, where + ": an added_tokens entry lacks its id or content");
            const JsonValue* special = t.find("special");
            place(*id->integer, content->string, special && special->boolean ? 3 : 4, true);
        }
    for (size_t id = 0; id < tokens.size(); ++id) {
        if (!tokens[id])
            fail(ErrorCode::BadFormat, where + ": no token has id " + std::to_string(id) + " (ids run 0 to " +
                                           std::to_string(tokens.size() - 1) + ")");
        vocab->tokens.push_back(std::move(*tokens[id]));
    }
    vocab->token_types = std::move(types);

    // Merges: "left right" strings, or [left, right] pairs in newer files.
    const JsonValue& merges = member(model, "merges", JsonValue::Kind::Array, where + ": model");
    vocab->merges.reserve(merges.items.size());
    for (const JsonValue& m : merges.items) {
        if (m.kind == JsonValue::Kind::String) {
            vocab->merges.push_back(m.string);
        } else if (m.is_array() && m.items.size() == 2 && m.items[0].kind == JsonValue::Kind::String &&
                   m.items[1].kind == JsonValue::Kind::String) {
            vocab->merges.push_back(m.items[0].string + " " + m.items[1].string);
        } else {
            fail(ErrorCode::BadFormat, where + ": merges entry " + std::to_string(vocab->merges.size()) +
                                           " is neither \"left right\" nor [left, right]");
        }
    }
    vocab->bos_id = vocab->eos_id = vocab->unk_id = -1;
    return vocab;
}

HfTokenizer read_hf_tokenizer(const std::string& dir) {
    const fs::path json_path = fs::path(dir) / "tokenizer.json";
    const std::optional<std::string> text = read_text(json_path, kMaxTokenizerJsonBytes);
    if (!text) fail(ErrorCode::FileNotFound, json_path.string() + " does not exist");
    std::shared_ptr<EmbeddedVocab> vocab = parse_hf_tokenizer_json(*text, json_path.string());

    HfTokenizer out;
    auto id_of = [&](const std::string& text) -> int32_t {
        for (size_t id = 0; id < vocab->tokens.size(); ++id)
            if (vocab->token_types[id] != 1 && vocab->tokens[id] == text) return int32_t(id);
        return -1;
    };
    const fs::path config_path = fs::path(dir) / "tokenizer_config.json";
    if (const std::optional<std::string> config = read_text(config_path, 16 << 20)) {
        const JsonValue c = parse_json(*config, config_path.string());
        vocab->bos_id = id_of(token_text(c.find("bos_token")));
        vocab->eos_id = id_of(token_text(c.find("eos_token")));
        if (const JsonValue* add_bos = c.find("add_bos_token"); add_bos && add_bos->kind == JsonValue::Kind::Bool)
            vocab->add_bos = add_bos->boolean;
        if (const JsonValue* t = c.find("chat_template"); t && t->kind == JsonValue::Kind::String)
            out.chat_template = t->string;
    }
    for (const char* name : {"generation_config.json", "config.json"}) add_eos_ids(fs::path(dir) / name, vocab->eog_ids);
    out.vocab = std::move(vocab);
    return out;
}

}  // namespace llamadesk
