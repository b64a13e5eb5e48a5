// GGUF checkpoints (architecture "llama") and GGUF vocabularies.
#pragma once

#include <memory>
#include <string>

#include "model/checkpoint.h"

namespace llamadesk {

class MappedFile;

// The tokenizer.ggml.* vocabulary of a GGUF file, reading only its metadata (a vocab-only GGUF
// with 0 tensors works). Throws EngineError: TokenizerMismatch when the file has no vocabulary.
std::shared_ptr<EmbeddedVocab> read_gguf_vocabulary(const std::string& path);

// A checkpoint whose tensors point into `file`. With with_vocabulary, tokenizer.embedded is the
// file's vocabulary (null when it has none); without, the vocabulary is not even read, so a
// tokenizer given by the user replaces one this version could not use.
Checkpoint read_gguf_checkpoint(std::shared_ptr<const MappedFile> file, bool with_vocabulary);

}  // namespace llamadesk
