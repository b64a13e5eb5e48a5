// A made-up SentencePiece-style vocabulary of any size, so synthetic models are fully usable.
#pragma once

#include <memory>

#include "model/checkpoint.h"

namespace llamadesk {

// <unk>, <s>, </s>, then (when they fit) the 256 byte-fallback pieces <0x00>..<0xFF>, then unique
// filler pieces ("▁", "a", ..., "▁a", ...) with decreasing scores.
std::shared_ptr<EmbeddedVocab> make_synthetic_vocab(int vocab_size);

}  // namespace llamadesk
