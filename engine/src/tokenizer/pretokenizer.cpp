#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include "core/error.h"

namespace llamadesk {
namespace {

// Meta's Llama 3 pattern (tokenizer.py), which tiktoken runs and llama.cpp's llama-bpe spells
// out: contractions in either case, letters with one leading non-letter, digits in runs of 1-3,
// punctuation with its line breaks, line breaks, spaces not followed by a non-space, spaces.
constexpr const char* kLlama3Pattern =
    R"((?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+)";

bool is_llama3(const std::string& pre) {
    return pre == "llama-bpe" || pre == "llama3" || pre == "llama-v3";
}

}  // namespace

struct Pretokenizer::Regex {
    pcre2_code* code = nullptr;
    // Match data is per call (split may run on several threads); the JIT stack is PCRE2's default.
    ~Regex() { pcre2_code_free(code); }
};

Pretokenizer::Pretokenizer(const std::string& pre) : regex_(std::make_unique<Regex>()) {
    if (!is_llama3(pre))
        fail(ErrorCode::Unsupported, "pre-tokenizer '" + pre + "' is not supported; supported: " +
                                         supported());
    int error = 0;
    PCRE2_SIZE offset = 0;
    regex_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(kLlama3Pattern), PCRE2_ZERO_TERMINATED,
                                 PCRE2_UTF | PCRE2_UCP | PCRE2_MATCH_INVALID_UTF, &error, &offset,
                                 nullptr);
    if (!regex_->code) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(error, message, sizeof message);
        fail(ErrorCode::Internal, "PCRE2 cannot compile the Llama 3 pattern at offset " +
                                      std::to_string(offset) + ": " +
                                      reinterpret_cast<const char*>(message));
    }
    // Without JIT (a PCRE2 built without it) the interpreter gives the same matches, slower.
    pcre2_jit_compile(regex_->code, PCRE2_JIT_COMPLETE);
}

Pretokenizer::~Pretokenizer() = default;

std::string Pretokenizer::supported() { return "llama-bpe (also named llama3, llama-v3)"; }

std::string Pretokenizer::pre_of_pattern(std::string_view regex) {
    return regex == kLlama3Pattern ? "llama-bpe" : "";
}

std::pair<size_t, size_t> Pretokenizer::next_match(std::string_view text, size_t pos) const {
    thread_local std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> data(
        pcre2_match_data_create(1, nullptr), &pcre2_match_data_free);
    const int rc = pcre2_match(regex_->code, reinterpret_cast<PCRE2_SPTR>(text.data()), text.size(),
                               pos, 0, data.get(), nullptr);
    if (rc == PCRE2_ERROR_NOMATCH) return {text.size(), text.size()};
    if (rc < 0) {
        PCRE2_UCHAR message[256];
        pcre2_get_error_message(rc, message, sizeof message);
        fail(ErrorCode::Internal, std::string("the pre-tokenizer failed at byte ") +
                                      std::to_string(pos) + ": " +
                                      reinterpret_cast<const char*>(message));
    }
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(data.get());
    return {size_t(ovector[0]), size_t(ovector[1])};
}

}  // namespace llamadesk
