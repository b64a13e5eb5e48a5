// Reference data for the tokenizer tests: llama.cpp's tokenizer vectors, and a SentencePiece
// tokenizer.model read back into the EmbeddedVocab form a GGUF checkpoint carries.
#pragma once

#include <QString>
#include <optional>
#include <string>
#include <vector>

#include "core/error.h"
#include "model/checkpoint.h"
#include "tokenizer/tokenizer.h"

namespace llamadesk::test {

struct VectorCase {
    std::string text;
    std::vector<int> ids;  // without BOS
};

// ggml-vocab-*.gguf.inp / .out: inputs end with a line "__ggml_vocab_test__"; each line of
// .out holds one input's ids. Empty when the files do not parse into equally many cases.
std::vector<VectorCase> read_vector_cases(const QString& inp_path, const QString& out_path);

// Every mismatch between the tokenizer's ids (no BOS) and the expected ones, one line each.
QString vector_mismatches(const Tokenizer& tok, const std::vector<VectorCase>& cases);

// A hand-made vocabulary: <unk> <s> </s>, the 256 byte pieces <0x00>..<0xFF> (ids 3..258), then
// "▁" a b c ab "▁ab" "▁c" (ids 259..265), earlier merges scoring higher.
EmbeddedVocab tiny_vocab();

// Every piece, score and type of a tokenizer.model, as tokenizer.ggml.* would hold them.
EmbeddedVocab vocab_from_model_file(const std::string& path);

// Runs f and returns the EngineError it threw, or nullopt when it threw none.
template <class F>
std::optional<EngineError> engine_error_of(F&& f) {
    try {
        f();
    } catch (const EngineError& e) {
        return e;
    }
    return std::nullopt;
}

}  // namespace llamadesk::test
