#include "tokenizer/sentencepiece_proto.h"

#include <cctype>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string_view>
#include <unordered_set>

#include "core/error.h"

namespace llamadesk {
namespace {

// Field numbers of sentencepiece_model.proto (ModelProto, SentencePiece, TrainerSpec,
// NormalizerSpec) used below.
enum ModelProtoField { kPieces = 1, kTrainerSpec = 2, kNormalizerSpec = 3 };
enum PieceField { kPiece = 1, kScore = 2, kType = 3 };
enum TrainerField {
    kModelType = 3, kVocabSize = 4, kByteFallback = 35,
    kUnkId = 40, kBosId = 41, kEosId = 42, kPadId = 43,
    kUnkPiece = 45, kBosPiece = 46, kEosPiece = 47,
};
enum NormalizerField {
    kName = 1, kAddDummyPrefix = 3, kRemoveExtraWhitespaces = 4, kEscapeWhitespaces = 5,
};
constexpr int kModelTypeBpe = 2;

// Protocol buffers wire format: each field is a varint key (field << 3 | wire type) followed by
// a varint, 4 little-endian bytes, or a varint length and that many bytes.
class ProtoWriter {
public:
    void varint_field(int field, uint64_t value) {
        key(field, 0);
        varint(value);
    }
    // int32 fields are sign-extended to 64 bits, so -1 takes ten bytes.
    void int32_field(int field, int32_t value) { varint_field(field, uint64_t(int64_t(value))); }
    void float_field(int field, float value) {
        key(field, 5);
        uint32_t bits;
        std::memcpy(&bits, &value, 4);
        for (int i = 0; i < 4; ++i) out_.push_back(char((bits >> (8 * i)) & 0xFF));
    }
    void bytes_field(int field, std::string_view bytes) {
        key(field, 2);
        varint(bytes.size());
        out_.append(bytes);
    }
    std::string& bytes() { return out_; }

private:
    void key(int field, int wire_type) { varint(uint64_t(field) << 3 | uint64_t(wire_type)); }
    void varint(uint64_t v) {
        while (v >= 0x80) {
            out_.push_back(char((v & 0x7F) | 0x80));
            v >>= 7;
        }
        out_.push_back(char(v));
    }
    std::string out_;
};

bool is_byte_piece(const std::string& piece) {  // "<0xAB>"
    return piece.size() == 6 && piece.starts_with("<0x") && piece.back() == '>' &&
           std::isxdigit(static_cast<unsigned char>(piece[3])) &&
           std::isxdigit(static_cast<unsigned char>(piece[4]));
}

// Without tokenizer.ggml.token_type, types follow from the special ids and the byte pieces.
int inferred_type(const EmbeddedVocab& vocab, int32_t id) {
    if (id == vocab.unk_id) return kUnknown;
    if (id == vocab.bos_id || id == vocab.eos_id) return kControl;
    return is_byte_piece(vocab.tokens[size_t(id)]) ? kByte : kNormal;
}

// True when `text` is exactly one UTF-8 encoded character.
bool is_one_character(std::string_view text) {
    if (text.empty()) return false;
    const auto lead = static_cast<unsigned char>(text[0]);
    const size_t length = lead < 0x80 ? 1 : (lead >> 5) == 0x6 ? 2 : (lead >> 4) == 0xE ? 3
                          : (lead >> 3) == 0x1E ? 4 : 0;
    return length == text.size();
}

// SentencePiece looks a segmented piece up among control tokens first. A control token spelled
// like ordinary text (one character, or a normal piece) is therefore emitted for that text but
// consumes none of it, and every later encode fails; the file is refused instead.
void check_control_texts(const EmbeddedVocab& vocab) {
    const auto type_of = [&](size_t id) {
        return vocab.token_types.empty() ? inferred_type(vocab, int32_t(id)) : vocab.token_types[id];
    };
    std::unordered_set<std::string_view> ordinary;
    for (size_t id = 0; id < vocab.tokens.size(); ++id)
        if (type_of(id) == kNormal || type_of(id) == kUserDefined) ordinary.insert(vocab.tokens[id]);
    for (size_t id = 0; id < vocab.tokens.size(); ++id) {
        const std::string& text = vocab.tokens[id];
        if (type_of(id) == kControl && (is_one_character(text) || ordinary.contains(text)))
            fail(ErrorCode::BadFormat,
                 "vocabulary token " + std::to_string(id) + " is a control token (type 3) spelled '" +
                     text + "', which is also ordinary text, so no text containing it could be "
                     "encoded; the vocabulary (tokenizer.ggml.tokens / token_type) is damaged");
    }
}

void check_vocab(const EmbeddedVocab& vocab) {
    if (!vocab.model.empty() && vocab.model != "llama")
        fail(ErrorCode::Unsupported,
             "vocabulary type '" + vocab.model + "' (tokenizer.ggml.model) is not supported: only "
             "SentencePiece vocabularies ('llama') are; choose the model's tokenizer.model instead");
    const size_t n = vocab.tokens.size();
    if (n == 0 || n > size_t(INT32_MAX))
        fail(ErrorCode::BadFormat, "vocabulary has " + std::to_string(n) +
                                       " tokens (tokenizer.ggml.tokens)");
    if (!vocab.scores.empty() && vocab.scores.size() != n)
        fail(ErrorCode::BadFormat, "vocabulary has " + std::to_string(n) + " tokens but " +
                                       std::to_string(vocab.scores.size()) +
                                       " scores (tokenizer.ggml.scores)");
    if (!vocab.token_types.empty() && vocab.token_types.size() != n)
        fail(ErrorCode::BadFormat, "vocabulary has " + std::to_string(n) + " tokens but " +
                                       std::to_string(vocab.token_types.size()) +
                                       " token types (tokenizer.ggml.token_type)");
    const auto check_id = [&](int32_t id, const char* what) {
        if (id < 0 || size_t(id) >= n)
            fail(ErrorCode::BadFormat, std::string("vocabulary ") + what + " " +
                                           std::to_string(id) + " is outside the " +
                                           std::to_string(n) + " tokens");
    };
    check_id(vocab.bos_id, "BOS id (tokenizer.ggml.bos_token_id)");
    check_id(vocab.eos_id, "EOS id (tokenizer.ggml.eos_token_id)");
    check_id(vocab.unk_id, "unknown-token id (tokenizer.ggml.unknown_token_id)");
    for (size_t i = 0; i < n; ++i) {
        if (vocab.tokens[i].empty())
            fail(ErrorCode::BadFormat, "vocabulary token " + std::to_string(i) + " is empty");
        if (!vocab.scores.empty() && !std::isfinite(vocab.scores[i]))
            fail(ErrorCode::BadFormat, "vocabulary token " + std::to_string(i) +
                                           " has a score that is not a finite number");
        if (!vocab.token_types.empty() &&
            (vocab.token_types[i] < kNormal || vocab.token_types[i] > kByte))
            fail(ErrorCode::BadFormat, "vocabulary token " + std::to_string(i) + " has type " +
                                           std::to_string(vocab.token_types[i]) +
                                           " (tokenizer.ggml.token_type); known types are 1 to 6");
    }
    check_control_texts(vocab);
}

}  // namespace

std::string serialize_model_proto(const EmbeddedVocab& vocab) {
    check_vocab(vocab);
    const int32_t n = int32_t(vocab.tokens.size());

    ProtoWriter model;
    bool has_byte_pieces = false;
    for (int32_t id = 0; id < n; ++id) {
        const int type =
            vocab.token_types.empty() ? inferred_type(vocab, id) : vocab.token_types[size_t(id)];
        has_byte_pieces |= type == kByte;
        ProtoWriter piece;
        piece.bytes_field(kPiece, vocab.tokens[size_t(id)]);
        piece.float_field(kScore, vocab.scores.empty() ? 0.0f : vocab.scores[size_t(id)]);
        piece.varint_field(kType, uint64_t(type));
        model.bytes_field(kPieces, piece.bytes());
    }

    // SentencePiece finds BOS, EOS and unknown by their piece text, so name them too.
    ProtoWriter trainer;
    trainer.varint_field(kModelType, kModelTypeBpe);
    trainer.int32_field(kVocabSize, n);
    trainer.varint_field(kByteFallback, has_byte_pieces);
    trainer.int32_field(kUnkId, vocab.unk_id);
    trainer.int32_field(kBosId, vocab.bos_id);
    trainer.int32_field(kEosId, vocab.eos_id);
    trainer.int32_field(kPadId, -1);
    trainer.bytes_field(kUnkPiece, vocab.tokens[size_t(vocab.unk_id)]);
    trainer.bytes_field(kBosPiece, vocab.tokens[size_t(vocab.bos_id)]);
    trainer.bytes_field(kEosPiece, vocab.tokens[size_t(vocab.eos_id)]);
    model.bytes_field(kTrainerSpec, trainer.bytes());

    // As in Llama 2's tokenizer.model: no Unicode normalization, a space before the text, and
    // runs of spaces kept (they are tokens of their own, e.g. "▁▁" for code indentation).
    ProtoWriter normalizer;
    normalizer.bytes_field(kName, "identity");
    normalizer.varint_field(kAddDummyPrefix, 1);
    normalizer.varint_field(kRemoveExtraWhitespaces, 0);
    normalizer.varint_field(kEscapeWhitespaces, 1);
    model.bytes_field(kNormalizerSpec, normalizer.bytes());

    return std::move(model.bytes());
}

}  // namespace llamadesk
