// KvPool, the manager of the block tables: it grows a conversation's table block by block, evicts
// the least recently used others whole when the pool is short and says which, refuses what could
// never fit without evicting anything, frees exactly the blocks past a truncation, and shares the
// full blocks of a common prefix, freeing a shared block only when its last user lets go.
#include <QTest>
#include <functional>

#include "cache/kv_pool.h"
#include "core/error.h"
#include "test_support.h"

using namespace llamadesk;

namespace {

constexpr int kBlock = 16;

KvPool pool_of(int n_blocks) {
    KvLayout layout;
    layout.n_layers = 2;
    layout.n_kv_heads = 1;
    layout.head_dim = 4;
    layout.block_size = kBlock;
    return KvPool(layout, n_blocks, layout.block_elements() * 2);
}

// Tokens 0, 1, 2, ... n - 1, offset by `first` (different firsts give different prefixes).
std::vector<int32_t> tokens(int n, int first = 0) {
    std::vector<int32_t> t(static_cast<size_t>(n));
    for (int i = 0; i < n; ++i) t[size_t(i)] = first + i;
    return t;
}

// Conversation 1 caches two blocks of tokens; conversation 2, the same tokens and one more, shares
// both and reserves a third block of its own. Returns the two histories.
std::pair<std::vector<int32_t>, std::vector<int32_t>> two_sharers(KvPool& pool) {
    const std::vector<int32_t> prompt = tokens(2 * kBlock);
    pool.reserve(1, 2 * kBlock);
    pool.set_cached(1, 2 * kBlock, prompt);
    std::vector<int32_t> longer = prompt;
    longer.push_back(5);
    pool.share_prefix(2, longer, int(longer.size()) - 1);
    pool.reserve(2, int(longer.size()));
    return {prompt, longer};
}

ErrorCode code_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const EngineError& e) {
        return e.code();
    }
    return ErrorCode::Ok;
}

}  // namespace

class TestKvPool : public QObject {
    Q_OBJECT
private slots:
    void reserve_grows_block_by_block() {
        KvPool pool = pool_of(8);
        QVERIFY(pool.reserve(1, 1).empty());
        QCOMPARE(pool.block_table(1).size(), size_t(1));
        QVERIFY(pool.reserve(1, kBlock).empty());  // still one block
        QCOMPARE(pool.block_table(1).size(), size_t(1));
        QVERIFY(pool.reserve(1, kBlock + 1).empty());
        QCOMPARE(pool.block_table(1).size(), size_t(2));
        QCOMPARE(pool.n_cached(1), 0);  // reserved is not cached
        pool.set_cached(1, kBlock + 1, tokens(kBlock + 1));
        QCOMPARE(pool.n_cached(1), kBlock + 1);
        QCOMPARE(pool.stats().blocks_used, 2);
        QCOMPARE(pool.stats().n_conversations, 1);
        QVERIFY(pool.reserve(2, 0).empty());  // nothing to hold: not a holder
        QCOMPARE(pool.stats().n_conversations, 1);
    }

    void least_recently_used_is_evicted_whole_and_named() {
        KvPool pool = pool_of(4);
        pool.reserve(1, 2 * kBlock);
        pool.set_cached(1, 2 * kBlock, tokens(2 * kBlock));
        pool.reserve(2, kBlock);
        pool.set_cached(2, 10, tokens(10, 100));
        pool.reserve(3, kBlock);
        pool.reserve(1, 2 * kBlock);  // 1 used again: 2 is now the least recent
        const std::vector<Eviction> first = pool.reserve(4, kBlock);
        QCOMPARE(first.size(), size_t(1));
        QCOMPARE(first[0].id, ConversationId(2));
        QCOMPARE(first[0].n_cached, 10);
        QCOMPARE(pool.n_cached(2), 0);
        QVERIFY(pool.block_table(2).empty());
        // 4 needs two more blocks: 3, then 1, in LRU order
        const std::vector<Eviction> next = pool.reserve(4, 3 * kBlock);
        QCOMPARE(next.size(), size_t(2));
        QCOMPARE(next[0].id, ConversationId(3));
        QCOMPARE(next[1].id, ConversationId(1));
        QCOMPARE(next[1].n_cached, 2 * kBlock);
        QCOMPARE(pool.stats().evictions, int64_t(3));
        QCOMPARE(pool.stats().n_conversations, 1);
    }

    // The local server's conversations go before the window's, whatever their age; among
    // themselves, least recently used first. The mark stays through release().
    void evict_first_goes_before_any_other() {
        KvPool pool = pool_of(4);
        pool.reserve(1, kBlock);  // the window's, least recent
        pool.reserve(2, kBlock);  // the server's
        pool.reserve(3, kBlock);  // the server's
        pool.set_evict_first(2, true);
        pool.set_evict_first(3, true);
        pool.reserve(2, kBlock);  // 2 used again: 3 is the least recent of the server's
        pool.reserve(4, kBlock);
        std::vector<Eviction> evicted = pool.reserve(5, kBlock);
        QCOMPARE(evicted.size(), size_t(1));
        QCOMPARE(evicted[0].id, ConversationId(3));
        evicted = pool.reserve(5, 2 * kBlock);
        QCOMPARE(evicted.size(), size_t(1));
        QCOMPARE(evicted[0].id, ConversationId(2));
        pool.release(4);
        QVERIFY(pool.reserve(2, kBlock).empty());  // back in 4's block, still marked
        evicted = pool.reserve(6, kBlock);  // 2 goes although 1 is older
        QCOMPARE(evicted.size(), size_t(1));
        QCOMPARE(evicted[0].id, ConversationId(2));
        pool.set_evict_first(2, false);
        evicted = pool.reserve(2, kBlock);  // now plain LRU: 1 goes
        QCOMPARE(evicted.size(), size_t(1));
        QCOMPARE(evicted[0].id, ConversationId(1));
    }

    void what_cannot_fit_evicts_nothing() {
        KvPool pool = pool_of(3);
        pool.reserve(1, kBlock);
        pool.reserve(2, kBlock);
        QCOMPARE(code_of([&] { pool.reserve(3, 4 * kBlock); }), ErrorCode::OutOfMemory);
        QCOMPARE(pool.block_table(1).size(), size_t(1));
        QCOMPARE(pool.block_table(2).size(), size_t(1));
        QCOMPARE(pool.stats().evictions, int64_t(0));
        // All three blocks are reachable by evicting both others.
        QCOMPARE(pool.reserve(3, 3 * kBlock).size(), size_t(2));
    }

    void truncate_and_release_free_exactly_their_blocks() {
        KvPool pool = pool_of(8);
        pool.reserve(1, 5 * kBlock);
        pool.set_cached(1, 5 * kBlock, tokens(5 * kBlock));
        const std::vector<int32_t> before = pool.block_table(1);
        pool.truncate(1, 2 * kBlock + 1);
        QCOMPARE(pool.n_cached(1), 2 * kBlock + 1);
        QCOMPARE(pool.block_table(1), std::vector<int32_t>(before.begin(), before.begin() + 3));
        QCOMPARE(pool.stats().blocks_used, 3);
        pool.truncate(1, 4 * kBlock);  // longer than cached: nothing changes
        QCOMPARE(pool.n_cached(1), 2 * kBlock + 1);
        pool.release(1);
        QCOMPARE(pool.stats().blocks_used, 0);
        QCOMPARE(pool.stats().n_conversations, 0);
        pool.release(1);  // releasing what holds nothing is harmless
        QVERIFY(pool.block_table(1).empty());
    }

    void preconditions_are_checked() {
        KvPool pool = pool_of(2);
        pool.reserve(1, kBlock);
        QCOMPARE(code_of([&] { pool.set_cached(1, kBlock + 1, tokens(kBlock + 1)); }), ErrorCode::Internal);  // beyond reserved
        QCOMPARE(code_of([&] { pool.set_cached(2, 1, tokens(1)); }), ErrorCode::Internal);  // never reserved
        QCOMPARE(code_of([&] { pool.set_cached(1, 4, tokens(3)); }), ErrorCode::Internal);  // fewer tokens
        QCOMPARE(code_of([&] { pool.reserve(1, -1); }), ErrorCode::Internal);
        QCOMPARE(code_of([&] { pool.truncate(1, -1); }), ErrorCode::Internal);
        QCOMPARE(pool.n_cached(1), 0);
    }

    // A full block's chain key names its tokens and all before them: computed once as the block is
    // filled, continued for the blocks a history would have next, and never given for a block a
    // context shift rewrote.
    void chain_keys_name_whole_prefixes() {
        KvPool pool = pool_of(16);
        const std::vector<int32_t> history = tokens(3 * kBlock + 5);
        QVERIFY(pool.chain_keys(1).empty());
        const std::vector<uint64_t> ahead = pool.next_chain_keys(1, history, int(history.size()));
        QCOMPARE(ahead.size(), size_t(3));  // whole blocks only
        QCOMPARE(pool.next_chain_keys(1, history, 2 * kBlock + 3).size(), size_t(2));  // ending by the limit
        pool.reserve(1, int(history.size()));
        pool.set_cached(1, int(history.size()), history);
        QVERIFY(std::equal(ahead.begin(), ahead.end(), pool.chain_keys(1).begin(), pool.chain_keys(1).end()));
        QVERIFY(pool.next_chain_keys(1, history, int(history.size())).empty());  // its cache ends mid-block

        // Another history with the same first block: the same first key, then others.
        std::vector<int32_t> other = history;
        other[size_t(kBlock) + 1] += 1000;
        const std::vector<uint64_t> theirs = pool.next_chain_keys(2, other, int(other.size()));
        QCOMPARE(theirs[0], ahead[0]);
        QVERIFY(theirs[1] != ahead[1] && theirs[2] != ahead[2]);  // a change names every later block anew

        // Cut back to two blocks: the next key continues the chain where it ends.
        pool.truncate(1, 2 * kBlock);
        QCOMPARE(pool.chain_keys(1).size(), size_t(2));
        QCOMPARE(pool.next_chain_keys(1, history, int(history.size())), std::vector<uint64_t>({ahead[2]}));

        // After a shift from block 1 on, only block 0 keeps its key.
        pool.make_private_from(1, 1, [](int32_t, int32_t) {});
        QCOMPARE(pool.chain_keys(1).size(), size_t(1));
        QVERIFY(pool.next_chain_keys(1, history, int(history.size())).empty());
    }

    void a_common_prefix_is_held_once() {
        KvPool pool = pool_of(16);
        const std::vector<int32_t> prompt = tokens(3 * kBlock + 5);
        pool.reserve(1, int(prompt.size()));
        pool.set_cached(1, int(prompt.size()), prompt);
        // Conversation 2 begins with the same 53 tokens then diverges: it takes the three full
        // blocks, never the partial fourth, and never the block holding its last position.
        std::vector<int32_t> other = prompt;
        other.resize(3 * kBlock + 2);
        other.push_back(999);
        QCOMPARE(pool.share_prefix(2, other, int(other.size()) - 1), 3 * kBlock);
        QVERIFY(pool.reserve(2, int(other.size())).empty());
        for (int b = 0; b < 3; ++b) {
            QCOMPARE(pool.block_table(2)[size_t(b)], pool.block_table(1)[size_t(b)]);
            QCOMPARE(pool.users(pool.block_table(1)[size_t(b)]), 2);
        }
        QVERIFY(pool.block_table(2)[3] != pool.block_table(1)[3]);
        QCOMPARE(pool.stats().blocks_used, 4 + 1);  // shared blocks count once
        QCOMPARE(pool.stats().blocks_shared, 3);
        QCOMPARE(pool.stats().shared_tokens, int64_t(3 * kBlock));
        // limit: a prefix that would reach the position to be rewritten is cut a block short
        QCOMPARE(pool.share_prefix(3, prompt, 3 * kBlock - 1), 2 * kBlock);
        // another beginning shares nothing
        QCOMPARE(pool.share_prefix(4, tokens(40, 7), 39), 0);
        QVERIFY(pool.block_table(4).empty());
    }

    void a_shared_block_is_freed_by_its_last_user() {
        KvPool pool = pool_of(8);
        const std::vector<int32_t> prompt = tokens(2 * kBlock + 1);
        pool.reserve(1, int(prompt.size()));
        pool.set_cached(1, int(prompt.size()), prompt);
        pool.share_prefix(2, prompt, int(prompt.size()) - 1);
        pool.reserve(2, int(prompt.size()));
        QCOMPARE(pool.stats().blocks_used, 4);
        pool.release(1);
        QCOMPARE(pool.stats().blocks_used, 3);  // 1's own third block only
        QCOMPARE(pool.n_cached(2), 2 * kBlock);
        // the blocks still hold the prefix: a third conversation finds them through 2
        QCOMPARE(pool.share_prefix(3, prompt, int(prompt.size()) - 1), 2 * kBlock);
        pool.release(2);
        pool.release(3);
        QCOMPARE(pool.stats().blocks_used, 0);
        QCOMPARE(pool.share_prefix(4, prompt, int(prompt.size()) - 1), 0);  // gone with them
    }

    void eviction_spares_blocks_still_in_use() {
        KvPool pool = pool_of(4);
        const auto [prompt, longer] = two_sharers(pool);  // 3 blocks used: 2 shared, 1 of 2's own
        // 3 needs two blocks: evicting 1 (least recent) frees nothing, so 2 goes too
        const std::vector<Eviction> evicted = pool.reserve(3, 2 * kBlock);
        QCOMPARE(evicted.size(), size_t(2));
        QCOMPARE(pool.stats().blocks_used, 2);
        // Evicting a sharer frees only its own blocks; the shared ones stay with the other user.
        KvPool small = pool_of(3);
        small.reserve(1, 2 * kBlock + 1);
        small.set_cached(1, 2 * kBlock + 1, longer);
        small.share_prefix(2, longer, 2 * kBlock);
        QCOMPARE(code_of([&] { small.reserve(2, 4 * kBlock); }), ErrorCode::OutOfMemory);
        QCOMPARE(small.reserve(2, 3 * kBlock).size(), size_t(1));
        QCOMPARE(small.n_cached(2), 2 * kBlock);
        QCOMPARE(small.users(small.block_table(2)[0]), 1);
    }

    void writing_into_a_shared_block_takes_a_fresh_one() {
        KvPool pool = pool_of(8);
        const auto [prompt, longer] = two_sharers(pool);
        const int32_t shared = pool.block_table(1)[1];
        // 1 rewrites its last position (a continued answer): the shared block is given up
        std::vector<Eviction> evicted;
        QCOMPARE(pool.prepare_write(1, 2 * kBlock - 1, 2 * kBlock, &evicted), kBlock);
        QVERIFY(pool.block_table(1)[1] != shared);
        QCOMPARE(pool.users(shared), 1);
        QCOMPARE(pool.block_table(2)[1], shared);
        QCOMPARE(pool.n_cached(1), kBlock);
        // a registered block that only its owner holds now is unregistered and written in place
        QCOMPARE(pool.prepare_write(2, 2 * kBlock - 1, 2 * kBlock + 1, &evicted), 2 * kBlock - 1);
        QCOMPARE(pool.block_table(2)[1], shared);
        QVERIFY(evicted.empty());
        // truncating into a shared block drops it rather than writing into it later
        pool.set_cached(1, 2 * kBlock, prompt);
        pool.share_prefix(3, longer, int(longer.size()) - 1);
        QCOMPARE(pool.users(pool.block_table(3)[0]), 3);
        pool.truncate(3, kBlock + 3);
        QCOMPARE(pool.n_cached(3), kBlock);
        QCOMPARE(pool.block_table(3).size(), size_t(1));
    }
};

QTEST_APPLESS_MAIN(TestKvPool)
#include "test_kv_pool.moc"
