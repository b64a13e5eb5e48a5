#include "engine/context_shift.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <vector>

#include "chat/chat_template.h"
#include "core/error.h"
#include "model/parallel_for.h"
#include "model/weight_types.h"

namespace llamadesk {

namespace {

// One pool block's keys and values as the backend stores them; rows (head_dim values of one
// position, layer, K or V and kv head) start on whole quantization blocks, so they move as bytes.
// Its buffer is handed in and taken back (release), since a fresh allocation of a block's size is
// mapped and faulted in page by page, which cost more than the turn itself.
class StoredBlock {
public:
    StoredBlock(const Backend& backend, int32_t block, std::vector<std::byte> buffer)
        : type_(&weight_type(backend.kv_dtype())), bytes_(std::move(buffer)) {
        backend.read_kv_block(block, bytes_);
    }
    StoredBlock(const StoredBlock& other, std::vector<std::byte> buffer) : type_(other.type_), bytes_(std::move(buffer)) {
        std::memcpy(bytes_.data(), other.bytes_.data(), bytes_.size());
    }
    void write(Backend& backend, int32_t block) const { backend.write_kv_block(block, bytes_); }
    std::byte* row(const KvLayout& layout, int layer, int is_value, int kv_head, int in_block) {
        return bytes_.data() + type_->bytes(layout.offset(0, layer, is_value, kv_head, in_block));
    }
    std::vector<std::byte> release() { return std::move(bytes_); }

private:
    const WeightType* type_;
    std::vector<std::byte> bytes_;
};

}  // namespace

void shift_kv(Backend& backend, KvPool& pool, ConversationId id, int keep, int n, const RopeParams& rope) {
    const int cached = pool.n_cached(id);
    if (keep < 0 || n <= 0 || keep + n > cached)
        fail(ErrorCode::Internal, "context shift: cannot drop positions " + std::to_string(keep) + " to " +
                                      std::to_string(keep + n - 1) + " of " + std::to_string(cached) + " cached");
    const KvLayout& layout = pool.layout();
    const int bs = layout.block_size;
    pool.make_private_from(id, keep / bs, [&](int32_t from, int32_t to) {
        std::vector<std::byte> bytes(size_t(backend.kv_bytes_per_block(layout)));
        backend.read_kv_block(from, bytes);
        backend.write_kv_block(to, bytes);
    });
    const std::vector<int32_t> table = pool.block_table(id);
    const WeightType& type = weight_type(backend.kv_dtype());
    const size_t row_bytes = size_t(type.bytes(layout.head_dim));

    // The turn of -n positions, pair by pair (adjacent pairs, as the backends apply RoPE).
    const int half = layout.head_dim / 2;
    std::vector<float> cos_d(static_cast<size_t>(half)), sin_d(static_cast<size_t>(half));
    for (int i = 0; i < half; ++i) {
        const double angle = -double(n) * rope_frequency(i, layout.head_dim, rope);
        cos_d[size_t(i)] = float(std::cos(angle));
        sin_d[size_t(i)] = float(std::sin(angle));
    }

    // Destination blocks in position order; a source lies n positions later, in the same block or
    // a later one, so each block is read before it is written over. Values move as stored; keys
    // go through f32 for the turn.
    std::vector<std::vector<std::byte>> spare;
    auto buffer = [&] {
        if (spare.empty()) return std::vector<std::byte>(size_t(backend.kv_bytes_per_block(layout)));
        std::vector<std::byte> b = std::move(spare.back());
        spare.pop_back();
        return b;
    };
    std::map<int, StoredBlock> sources;
    auto source = [&](int b) -> StoredBlock& {
        auto it = sources.find(b);
        if (it == sources.end()) it = sources.emplace(b, StoredBlock(backend, table[size_t(b)], buffer())).first;
        return it->second;
    };
    const int end = cached - n;  // positions that remain after the move
    for (int b = keep / bs; b * bs < end; ++b) {
        StoredBlock dest(source(b), buffer());
        const int first = std::max(keep, b * bs), last = std::min(end, (b + 1) * bs);  // positions [first, last)
        for (int s = (first + n) / bs; s <= (last - 1 + n) / bs; ++s) source(s);  // read before the threads start
        // Layers are independent: each thread turns whole layers' rows.
        parallel_for(size_t(layout.n_layers), [&](size_t layer_index) {
            const int layer = int(layer_index);
            std::vector<float> key(static_cast<size_t>(layout.head_dim)), turned(key.size());
            for (int q = first; q < last; ++q) {
                const int p = q + n;
                StoredBlock& from = sources.at(p / bs);
                for (int g = 0; g < layout.n_kv_heads; ++g) {
                    type.to_f32(from.row(layout, layer, 0, g, p % bs), key.data(), layout.head_dim);
                    for (int i = 0; i < half; ++i) {
                        const float a = key[size_t(2 * i)], c = key[size_t(2 * i + 1)];
                        turned[size_t(2 * i)] = a * cos_d[size_t(i)] - c * sin_d[size_t(i)];
                        turned[size_t(2 * i + 1)] = a * sin_d[size_t(i)] + c * cos_d[size_t(i)];
                    }
                    type.from_f32(turned.data(), dest.row(layout, layer, 0, g, q % bs), layout.head_dim);
                    std::memcpy(dest.row(layout, layer, 1, g, q % bs), from.row(layout, layer, 1, g, p % bs), row_bytes);
                }
            }
        });
        dest.write(backend, table[size_t(b)]);
        spare.push_back(dest.release());
        for (auto it = sources.begin(); it != sources.upper_bound(b);) {  // no later block reads these
            spare.push_back(it->second.release());
            it = sources.erase(it);
        }
    }
    pool.truncate(id, end);
}

int shift_context(LoadedModel& m, Sequence& conv, int keep, int n) {
    const int total = int(conv.history.size());
    if (keep < 0 || n <= 0 || keep + n > total)
        fail(ErrorCode::Internal, "context shift: cannot drop positions " + std::to_string(keep) + " to " +
                                      std::to_string(keep + n - 1) + " of a history of " + std::to_string(total));
    const int cached = m.pool->n_cached(conv.id);
    // Bounds inside the dropped range land on its start; later ones move down by n.
    auto moved = [&](int x) { return x < keep ? x : x < keep + n ? keep : x - n; };
    int recompute = 0;
    conv.evicted_tokens = moved(conv.evicted_tokens);
    if (keep + n <= cached) {
        shift_kv(*m.backend, *m.pool, conv.id, keep, n, m.checkpoint.config.rope());
    } else if (cached > keep) {
        // Counted as re-prefilled when they are computed again, as evicted positions are.
        recompute = std::max(0, cached - keep - n);
        m.pool->truncate(conv.id, keep);
        conv.evicted_tokens = std::max(conv.evicted_tokens, moved(cached));
    }
    conv.history.erase(conv.history.begin() + keep, conv.history.begin() + keep + n);
    std::vector<Turn> turns;
    for (size_t i = 0; i < conv.turns.size(); ++i) {
        Turn t = conv.turns[i];
        // The last turn may be open (an answer under way, its end not written yet): it stays.
        const bool last = i + 1 == conv.turns.size();
        if (!last && t.end > keep && t.end <= keep + n) continue;  // all it had after the kept front is gone
        t.begin = moved(t.begin);
        t.end = moved(t.end);
        turns.push_back(std::move(t));
    }
    // The kept front (BOS, the system header) now opens the first remaining turn, as it does the
    // first turn of any rendering.
    if (!turns.empty() && turns.front().begin == keep) turns.front().begin = 0;
    conv.turns = std::move(turns);
    return recompute;
}

TurnShift turn_shift(const Tokenizer& tok, const Sequence& conv, int n_turns, const std::string& system_prompt) {
    if (conv.history_stale || n_turns <= 0 || n_turns >= int(conv.turns.size())) return {};
    // Turn n_turns becomes the first: rendered as one, it must be what stays in front (the tokens
    // before the first turn's own text) followed by exactly the tokens it has now.
    const Turn& next = conv.turns[size_t(n_turns)];
    const std::vector<int> as_first = render_user_turn(tok, conv.format, true, system_prompt, next.user, conv.date);
    const std::vector<int> as_later = render_user_turn(tok, conv.format, false, conv.system_prompt, next.user, conv.date);
    const int keep = int(as_first.size()) - int(as_later.size());
    if (keep < 0 || keep >= next.begin || next.begin + int(as_later.size()) > int(conv.history.size()) ||
        !std::equal(as_first.begin() + keep, as_first.end(), conv.history.begin() + next.begin) ||
        !std::equal(as_first.begin(), as_first.begin() + keep, conv.history.begin()))
        return {};
    return {keep, next.begin - keep};
}

}  // namespace llamadesk
