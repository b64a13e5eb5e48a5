#include "tokenizer/bpe_tokenizer.h"

#include <algorithm>
#include <climits>
#include <cstdio>
#include <queue>

#include "core/error.h"
#include "tokenizer/byte_level.h"

namespace llamadesk {
namespace {

constexpr int32_t kNormal = 1, kControl = 3, kUserDefined = 4, kUnused = 5;

std::string printable(std::string_view s) {
    std::string out;
    for (const char c : s.substr(0, 64)) {
        if (static_cast<unsigned char>(c) < 0x20) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "\\x%02X", unsigned(static_cast<unsigned char>(c)));
            out += hex;
        } else {
            out.push_back(c);
        }
    }
    return s.size() > 64 ? out + "..." : out;
}

// Words up to this many bytes merge by scanning their pairs, as tiktoken does; longer ones (a run of
// spaces, a long line of one letter) through a heap, so no word costs O(n²).
constexpr size_t kShortWord = 64;

}  // namespace

void BpeTokenizer::MergeTable::reserve(size_t n) {
    size_t size = 16;
    while (size < 2 * n) size *= 2;
    slots_.assign(size, Slot{});
    shift_ = 64 - __builtin_ctzll(size);
}

bool BpeTokenizer::MergeTable::insert(uint64_t key, Merge merge) {
    for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
        if (slots_[i].key == key) return false;
        if (slots_[i].key == kEmpty) {
            slots_[i] = {key, merge};
            return true;
        }
    }
}

const BpeTokenizer::Merge* BpeTokenizer::MergeTable::find(uint64_t key) const {
    for (size_t i = slot_of(key);; i = (i + 1) & (slots_.size() - 1)) {
        if (slots_[i].key == key) return &slots_[i].merge;
        if (slots_[i].key == kEmpty) return nullptr;
    }
}

std::unique_ptr<BpeTokenizer> BpeTokenizer::from_vocab(const EmbeddedVocab& vocab,
                                                       const std::string& origin) {
    const std::string where = origin + ": ";
    std::unique_ptr<BpeTokenizer> tok(new BpeTokenizer(vocab.pre.empty() ? "llama-bpe" : vocab.pre));
    const size_t n = vocab.tokens.size();
    if (n == 0 || n > size_t(INT32_MAX))
        fail(ErrorCode::BadFormat, where + "the vocabulary has " + std::to_string(n) + " tokens");
    if (!vocab.token_types.empty() && vocab.token_types.size() != n)
        fail(ErrorCode::BadFormat, where + "token_type has " +
                                       std::to_string(vocab.token_types.size()) + " entries for " +
                                       std::to_string(n) + " tokens");
    tok->types_ = vocab.token_types.empty() ? std::vector<int32_t>(n, kNormal) : vocab.token_types;
    tok->bytes_.resize(n);
    tok->id_of_bytes_.reserve(n);
    tok->byte_id_.fill(-1);
    std::unordered_map<std::string, int> specials;
    for (size_t id = 0; id < n; ++id) {
        const std::string& text = vocab.tokens[id];
        const int32_t type = tok->types_[id];
        if (type == kControl || type == kUserDefined || type == kUnused) {
            tok->bytes_[id] = text;
            if (!specials.emplace(text, int(id)).second)
                fail(ErrorCode::BadFormat, where + "special token '" + printable(text) +
                                               "' appears twice (ids " +
                                               std::to_string(specials[text]) + " and " +
                                               std::to_string(id) + ")");
            continue;
        }
        std::optional<std::string> bytes = byte_level_to_bytes(text);
        if (!bytes || bytes->empty())
            fail(ErrorCode::BadFormat, where + "token " + std::to_string(id) + " '" + printable(text) +
                                           "' is not in GPT-2's byte-level alphabet (is this a "
                                           "SentencePiece vocabulary?)");
        if (!tok->id_of_bytes_.emplace(*bytes, int32_t(id)).second)
            fail(ErrorCode::BadFormat, where + "token " + std::to_string(id) + " '" + printable(text) +
                                           "' repeats token " +
                                           std::to_string(tok->id_of_bytes_[*bytes]));
        if (bytes->size() == 1) tok->byte_id_[static_cast<unsigned char>((*bytes)[0])] = int32_t(id);
        tok->bytes_[id] = std::move(*bytes);
    }
    for (int b = 0; b < 256; ++b)
        if (tok->byte_id_[size_t(b)] < 0) {
            char hex[8];
            std::snprintf(hex, sizeof hex, "0x%02X", unsigned(b));
            fail(ErrorCode::BadFormat, where + "the vocabulary has no token for byte " + hex +
                                           " (a byte-level BPE vocabulary holds all 256)");
        }

    tok->merges_.reserve(vocab.merges.size());
    for (size_t rank = 0; rank < vocab.merges.size(); ++rank) {
        const std::string& merge = vocab.merges[rank];
        const size_t space = merge.find(' ');
        auto bad = [&](const std::string& why) {
            fail(ErrorCode::BadFormat, where + "merges entry " + std::to_string(rank) + " '" +
                                           printable(merge) + "' " + why);
        };
        if (space == std::string::npos || space == 0 || space + 1 == merge.size() ||
            merge.find(' ', space + 1) != std::string::npos)
            bad("is not two tokens separated by one space");
        auto id_of = [&](std::string_view text) -> int32_t {
            const std::optional<std::string> bytes = byte_level_to_bytes(text);
            const auto it = bytes ? tok->id_of_bytes_.find(*bytes) : tok->id_of_bytes_.end();
            if (it == tok->id_of_bytes_.end()) bad("names '" + printable(text) + "', which is not a token");
            return it->second;
        };
        const std::string_view m(merge);
        const int32_t left = id_of(m.substr(0, space)), right = id_of(m.substr(space + 1));
        const auto merged = tok->id_of_bytes_.find(tok->bytes_[size_t(left)] + tok->bytes_[size_t(right)]);
        if (merged == tok->id_of_bytes_.end()) bad("makes a string that is not a token");
        if (!tok->merges_.insert(pair_key(left, right), Merge{int32_t(rank), merged->second}))
            bad("repeats the pair of merges entry " +
                std::to_string(tok->merges_.find(pair_key(left, right))->rank) + " (each pair has one rank)");
    }

    auto check = [&](const char* what, int32_t id) {
        if (id >= int64_t(n))
            fail(ErrorCode::BadFormat, where + what + " " + std::to_string(id) +
                                           " is outside the vocabulary of " + std::to_string(n));
    };
    check("BOS id", vocab.bos_id);
    check("EOS id", vocab.eos_id);
    for (int32_t id : vocab.eog_ids) check("end-of-generation id", id);
    tok->set_vocabulary(int(n), vocab.bos_id, vocab.eos_id, std::move(specials), vocab.eog_ids);
    return tok;
}

std::vector<int> BpeTokenizer::encode(std::string_view text, bool add_bos, bool add_eos) const {
    std::vector<int> ids;
    ids.reserve(text.size() / 3 + 2);
    if (add_bos && bos_id() >= 0) ids.push_back(bos_id());
    pretokenizer_.split(text, [&](std::string_view word) { encode_word(word, ids); });
    if (add_eos && eos_id() >= 0) ids.push_back(eos_id());
    return ids;
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int>& ids) const {
    if (const auto whole = id_of_bytes_.find(word); whole != id_of_bytes_.end()) {
        ids.push_back(whole->second);
        return;
    }
    if (word.size() <= kShortWord) merge_short(word, ids);
    else merge_long(word, ids);
}

// The leftmost pair of lowest rank merges, until none can: each step scans the word's pairs.
void BpeTokenizer::merge_short(std::string_view word, std::vector<int>& ids) const {
    constexpr int32_t kNone = INT32_MAX;
    int32_t symbols[kShortWord], ranks[kShortWord];  // ranks[i]: the pair (i, i + 1)
    size_t n = word.size();
    for (size_t i = 0; i < n; ++i) symbols[i] = byte_id_[static_cast<unsigned char>(word[i])];
    auto rank_at = [&](size_t i) {
        const Merge* m = merges_.find(pair_key(symbols[i], symbols[i + 1]));
        return m ? m->rank : kNone;
    };
    for (size_t i = 0; i + 1 < n; ++i) ranks[i] = rank_at(i);
    while (n > 1) {
        size_t best = 0;
        for (size_t i = 1; i + 1 < n; ++i)
            if (ranks[i] < ranks[best]) best = i;
        if (ranks[best] == kNone) break;
        symbols[best] = merges_.find(pair_key(symbols[best], symbols[best + 1]))->id;
        std::copy(symbols + best + 2, symbols + n, symbols + best + 1);
        if (best + 2 < n - 1) std::copy(ranks + best + 2, ranks + n - 1, ranks + best + 1);
        --n;
        if (best + 1 < n) ranks[best] = rank_at(best);
        if (best > 0) ranks[best - 1] = rank_at(best - 1);
    }
    ids.insert(ids.end(), symbols, symbols + n);
}

// The same order through a heap of candidate pairs by (rank, position), each checked when taken
// (its symbols may have merged since): O(n log n) for a word of n bytes.
void BpeTokenizer::merge_long(std::string_view word, std::vector<int>& ids) const {
    struct Symbol {
        int32_t id;
        int32_t prev, next;  // -1 at the ends
    };
    std::vector<Symbol> symbols(word.size());
    for (size_t i = 0; i < word.size(); ++i)
        symbols[i] = {byte_id_[static_cast<unsigned char>(word[i])], int32_t(i) - 1,
                      i + 1 < word.size() ? int32_t(i + 1) : -1};

    struct Candidate {
        int32_t rank, left, left_id, right_id;
        bool operator>(const Candidate& o) const {
            return rank != o.rank ? rank > o.rank : left > o.left;
        }
    };
    std::priority_queue<Candidate, std::vector<Candidate>, std::greater<>> heap;
    auto offer = [&](int32_t left) {
        if (left < 0) return;
        const int32_t right = symbols[size_t(left)].next;
        if (right < 0) return;
        if (const Merge* m = merges_.find(pair_key(symbols[size_t(left)].id, symbols[size_t(right)].id)))
            heap.push({m->rank, left, symbols[size_t(left)].id, symbols[size_t(right)].id});
    };
    for (size_t i = 0; i + 1 < word.size(); ++i) offer(int32_t(i));
    while (!heap.empty()) {
        const Candidate c = heap.top();
        heap.pop();
        Symbol& left = symbols[size_t(c.left)];
        if (left.id != c.left_id || left.next < 0) continue;  // merged away since it was offered
        Symbol& right = symbols[size_t(left.next)];
        if (right.id != c.right_id) continue;
        left.id = merges_.find(pair_key(c.left_id, c.right_id))->id;
        right.id = -1;
        left.next = right.next;
        if (left.next >= 0) symbols[size_t(left.next)].prev = c.left;
        offer(left.prev);
        offer(c.left);
    }
    for (int32_t i = 0; i >= 0; i = symbols[size_t(i)].next) ids.push_back(symbols[size_t(i)].id);
}

std::string BpeTokenizer::decode(const std::vector<int>& ids) const {
    StreamDecoder stream(*this, -1);
    std::string text;
    for (int id : ids) text += stream.push(id);
    return text + stream.flush();
}

std::string BpeTokenizer::token_bytes(int prev, int id) const {
    check_id(id);
    if (prev >= 0) check_id(prev);
    const int32_t type = types_[size_t(id)];
    return type == kControl || type == kUnused ? std::string() : bytes_[size_t(id)];
}

std::string BpeTokenizer::piece(int id) const {
    check_id(id);
    const int32_t type = types_[size_t(id)];
    return type == kControl || type == kUserDefined || type == kUnused
               ? bytes_[size_t(id)]
               : bytes_to_byte_level(bytes_[size_t(id)]);
}

EmbeddedVocab BpeTokenizer::vocabulary() const {
    EmbeddedVocab v;
    v.model = "gpt2";
    v.pre = pre_;
    for (int id = 0; id < vocab_size(); ++id) v.tokens.push_back(piece(id));
    v.token_types = types_;
    std::vector<std::pair<int32_t, uint64_t>> by_rank;
    merges_.for_each([&](uint64_t key, const Merge& merge) { by_rank.emplace_back(merge.rank, key); });
    std::sort(by_rank.begin(), by_rank.end());
    for (const auto& [rank, key] : by_rank)
        v.merges.push_back(piece(int(key >> 32)) + " " + piece(int(uint32_t(key))));
    v.bos_id = bos_id();
    v.eos_id = eos_id();
    v.unk_id = -1;
    v.eog_ids = end_of_generation_ids();
    v.add_bos = true;
    return v;
}

}  // namespace llamadesk
