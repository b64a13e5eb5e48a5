#include "tokenizer/sentencepiece_tokenizer.h"

#include <sentencepiece_processor.h>

#include <algorithm>
#include <charconv>
#include <cstring>

#include "core/error.h"
#include "tokenizer/sentencepiece_proto.h"

namespace llamadesk {
namespace {

constexpr std::string_view kSpaceSymbol = "\xE2\x96\x81";  // "▁", SentencePiece's space

constexpr std::string_view kProbeText =
    "Hello, world!  The quick brown fox jumps over the lazy dog: 42 \xC3\xBC\xC3\xA9 \xE4\xBD\xA0\xE5\xA5\xBD \xF0\x9F\x99\x82\n\t<s></s>";

}  // namespace

SentencePieceTokenizer::SentencePieceTokenizer() : sp_(std::make_unique<sentencepiece::SentencePieceProcessor>()) {}
SentencePieceTokenizer::~SentencePieceTokenizer() = default;

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_serialized(
    std::string_view model_proto, const std::string& origin, ErrorCode code,
    const std::vector<int32_t>& extra_eog) {
    std::unique_ptr<SentencePieceTokenizer> tok(new SentencePieceTokenizer());
    const auto status = tok->sp_->LoadFromSerializedProto(model_proto);
    if (!status.ok()) {
        const std::string why = std::strstr(status.message(), "ParseFromArray")
                                    ? "it does not parse as a SentencePiece model protobuf"
                                    : std::string("SentencePiece says: ") + status.message();
        fail(code, origin + " is not a usable SentencePiece tokenizer model (" + why + ")");
    }
    // A model can load and still be unable to encode (SentencePiece checks some of its tables only
    // while segmenting); a probe with every letter, spaces, digits and multi-byte text finds that
    // now rather than at the person's first message.
    std::vector<int> probe_ids;
    const auto probe = tok->sp_->Encode(kProbeText, &probe_ids);
    if (!probe.ok())
        fail(code, origin + " loads but cannot encode text (SentencePiece says: " +
                       probe.message() + "); its vocabulary is damaged");
    // SentencePiece's decode spells the unknown token as the model's unk_surface.
    tok->sp_->Decode(std::vector<int>{tok->sp_->unk_id()}, &tok->unk_surface_);
    std::unordered_map<std::string, int> specials;
    for (int id = 0; id < tok->sp_->GetPieceSize(); ++id)
        if (tok->sp_->IsControl(id))
            specials.emplace(tok->sp_->IdToPiece(id), id);
    tok->set_vocabulary(tok->sp_->GetPieceSize(), tok->sp_->bos_id(), tok->sp_->eos_id(),
                        std::move(specials), extra_eog);
    return tok;
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_model_file(
    std::string_view bytes, const std::string& path) {
    auto tok = from_serialized(bytes, path, ErrorCode::TokenizerMismatch);
    // Llama models need both: without them a prompt cannot be framed nor an answer end.
    if (tok->bos_id() < 0 || tok->eos_id() < 0)
        fail(ErrorCode::TokenizerMismatch, path + " has no BOS and EOS control tokens " +
                                               "(<s>, </s>), which Llama models need");
    return tok;
}

std::unique_ptr<SentencePieceTokenizer> SentencePieceTokenizer::from_embedded(
    const EmbeddedVocab& vocab) {
    auto tok = from_serialized(serialize_model_proto(vocab), "the checkpoint's vocabulary",
                               ErrorCode::BadFormat, vocab.eog_ids);
    // SentencePiece finds BOS and EOS by piece text and accepts them only as control tokens.
    if (tok->bos_id() != vocab.bos_id || tok->eos_id() != vocab.eos_id)
        fail(ErrorCode::BadFormat,
             "the checkpoint's vocabulary marks BOS " + std::to_string(vocab.bos_id) + " and EOS " +
                 std::to_string(vocab.eos_id) +
                 " but they are not both control tokens (tokenizer.ggml.token_type 3)");
    return tok;
}

std::vector<int> SentencePieceTokenizer::encode(std::string_view text, bool add_bos, bool add_eos) const {
    std::vector<int> pieces;
    const auto status = sp_->Encode(text, &pieces);
    if (!status.ok())
        fail(ErrorCode::Internal,
             std::string("SentencePiece could not encode the text: ") + status.message());
    std::vector<int> ids;
    ids.reserve(pieces.size() + 2);
    if (add_bos) ids.push_back(bos_id());
    ids.insert(ids.end(), pieces.begin(), pieces.end());
    if (add_eos) ids.push_back(eos_id());
    return ids;
}

std::vector<int> SentencePieceTokenizer::encode_continuation(std::string_view text) const {
    if (text.empty()) return {};
    const std::vector<int> lead = encode("\n", false);
    std::vector<int> ids = encode("\n" + std::string(text), false);
    if (ids.size() < lead.size() || !std::equal(lead.begin(), lead.end(), ids.begin()))
        fail(ErrorCode::Internal, "this SentencePiece vocabulary merges a newline with the text after it, so a "
                                  "prompt cannot be continued without a leading space");
    ids.erase(ids.begin(), ids.begin() + std::ptrdiff_t(lead.size()));
    return ids;
}

std::string SentencePieceTokenizer::decode(const std::vector<int>& ids) const {
    for (int id : ids) check_id(id);
    std::string text;
    const auto status = sp_->Decode(ids, &text);
    if (!status.ok())
        fail(ErrorCode::Internal,
             std::string("SentencePiece could not decode the tokens: ") + status.message());
    return text;
}

std::string SentencePieceTokenizer::token_bytes(int prev, int id) const {
    check_id(id);
    if (prev >= 0) check_id(prev);
    if (sp_->IsControl(id)) return {};
    if (sp_->IsUnknown(id)) return unk_surface_;
    std::string_view piece = sp_->IdToPiece(id);
    if (sp_->IsByte(id)) {  // "<0xAB>", a form SentencePiece checked when it loaded the model
        unsigned value = 0;
        std::from_chars(piece.data() + 3, piece.data() + 5, value, 16);
        return std::string(1, char(value));
    }

    const bool at_start = prev < 0 || prev == bos_id();
    if (at_start && piece.starts_with(kSpaceSymbol)) piece.remove_prefix(kSpaceSymbol.size());
    std::string bytes;
    for (size_t pos = 0; pos < piece.size();) {
        if (piece.substr(pos).starts_with(kSpaceSymbol)) {
            bytes.push_back(' ');
            pos += kSpaceSymbol.size();
        } else {
            bytes.push_back(piece[pos++]);
        }
    }
    return bytes;
}

std::string SentencePieceTokenizer::piece(int id) const {
    check_id(id);
    return sp_->IdToPiece(id);
}

EmbeddedVocab SentencePieceTokenizer::vocabulary() const {
    EmbeddedVocab v;
    v.model = "llama";
    for (int id = 0; id < vocab_size(); ++id) {
        v.tokens.push_back(sp_->IdToPiece(id));
        v.scores.push_back(sp_->GetScore(id));
        v.token_types.push_back(sp_->IsUnknown(id)   ? kUnknown
                                : sp_->IsControl(id) ? kControl
                                : sp_->IsUnused(id)  ? kUnused
                                : sp_->IsByte(id)    ? kByte
                                                     : kNormal);
    }
    v.bos_id = bos_id();
    v.eos_id = eos_id();
    v.unk_id = sp_->unk_id();
    return v;
}

}  // namespace llamadesk
