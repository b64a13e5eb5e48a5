// llama2.c checkpoints (fp32): the legacy header of run.c, and export.py's versioned export
// (magic "ak42", version 1).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "model/checkpoint.h"

namespace llamadesk {

class MappedFile;

// Whether the file's header and size are those of a llama2.c checkpoint (used to pick the
// checkpoint out of a folder that also holds a llama2.c tokenizer.bin).
bool looks_like_llama2c(const MappedFile& file);

// Tensor groups in file order for version 0 (legacy header) or 1 ("ak42"): a global tensor name
// ("token_embd.weight"), or a per-layer part ("attn_q") stored for all layers one after the other.
// "freq_cis" is the legacy format's obsolete RoPE table: seq_len x head_dim/2 cosines, then sines.
std::vector<std::string> llama2c_file_order(int version, bool shared_classifier);

// A checkpoint whose tensors point into `file`; tokenizer left empty. Throws EngineError.
Checkpoint read_llama2c_checkpoint(std::shared_ptr<const MappedFile> file);

}  // namespace llamadesk
