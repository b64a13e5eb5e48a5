// The split of text into words before BPE, by the regular expression of the vocabulary's `pre`
// type (llama.cpp's tokenizer.ggml.pre names), run by PCRE2 with Unicode properties and JIT.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace llamadesk {

class Pretokenizer {
public:
    // Throws EngineError(Unsupported) naming the supported types when `pre` is not one of them.
    explicit Pretokenizer(const std::string& pre);
    ~Pretokenizer();
    Pretokenizer(const Pretokenizer&) = delete;
    Pretokenizer& operator=(const Pretokenizer&) = delete;

    // Calls word(piece) for each word in order; the words cover the text exactly. Bytes that are
    // not valid UTF-8 match no pattern and come out as words of their own.
    template <class F>
    void split(std::string_view text, F&& word) const {
        for (size_t pos = 0; pos < text.size();) {
            const auto [begin, end] = next_match(text, pos);
            if (begin > pos) word(text.substr(pos, begin - pos));
            if (end == begin) break;  // no match left (every pattern consumes a character)
            word(text.substr(begin, end - begin));
            pos = end;
        }
    }

    static std::string supported();  // "llama-bpe (also named llama3, llama-v3)"
    // The pre type whose pattern is `regex` (a Hugging Face tokenizer.json names the pattern, not
    // the type), or "" when none is.
    static std::string pre_of_pattern(std::string_view regex);

private:
    // The first match at or after pos, or {text.size(), text.size()} when there is none.
    std::pair<size_t, size_t> next_match(std::string_view text, size_t pos) const;

    struct Regex;
    std::unique_ptr<Regex> regex_;
};

}  // namespace llamadesk
