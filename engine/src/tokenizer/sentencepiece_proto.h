// Turns a vocabulary carried by a checkpoint (GGUF tokenizer.ggml.*) into the bytes of a
// SentencePiece ModelProto, so SentencePieceProcessor can load it from memory. Debian's
// libsentencepiece-dev ships no generated .pb.h, so the few fields needed are written here by hand.
#pragma once

#include <string>

#include "model/checkpoint.h"

namespace llamadesk {

// SentencePiece's piece types (sentencepiece_model.proto); GGUF's tokenizer.ggml.token_type uses
// the same numbers.
enum PieceType { kNormal = 1, kUnknown = 2, kControl = 3, kUserDefined = 4, kUnused = 5, kByte = 6 };

// A BPE model with byte fallback and the normalizer settings of Llama 2's tokenizer.model
// (identity normalization, dummy-prefix space, runs of spaces kept). Checks the vocabulary first
// and throws EngineError(BadFormat / Unsupported) naming the token and field that is wrong.
std::string serialize_model_proto(const EmbeddedVocab& vocab);

}  // namespace llamadesk
