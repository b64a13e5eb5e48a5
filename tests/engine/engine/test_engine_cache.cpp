// The per-conversation KV cache seen through the Engine API, on synthetic models written to GGUF:
// whatever the cache does (interleaving, reset, follow-ups, truncation, eviction), the tokens are
// those of a conversation computed from scratch, and the counts say exactly what was prefilled.
#include <QTest>

#include <algorithm>

#include "engine_fixtures.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

struct Exchange {
    std::vector<int> tokens;
    GenerationStats stats;
};

ConversationStats stats_of(const Engine& e, ConversationId id) {
    ConversationStats s;
    const Status st = e.conversation_stats(id, &s);
    if (!st.ok()) qFatal("conversation_stats: %s", st.message.c_str());
    return s;
}

}  // namespace

class TestEngineCache : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString gqa_path_, mha_path_;  // n_rep 3 with head_dim 12; n_rep 1 with head_dim 20

    Exchange say(Engine& e, ConversationId id, const std::string& text, const GenerateParams& g) {
        GenerationResult r = e.generate(id, text, g);
        if (!r.status.ok()) qFatal("generate: %s", r.status.message.c_str());
        return {r.tokens, r.stats};
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        gqa_path_ = write_synthetic_gguf(dir_, "gqa", small_config(6, 2, 12, 256), 11);
        mha_path_ = write_synthetic_gguf(dir_, "mha", small_config(4, 4, 20, 256), 12);
    }

    void interleaved_equals_alone_data() {
        QTest::addColumn<QString>("model");
        QTest::newRow("n_rep 3") << gqa_path_;
        QTest::newRow("n_rep 1") << mha_path_;
    }

    void interleaved_equals_alone() {
        QFETCH(QString, model);
        const std::vector<std::string> a_msgs{"hello there", "and then", "what next"};
        const std::vector<std::string> b_msgs{"a different story", "go on"};

        Engine alone;
        LLAMADESK_VERIFY_OK(alone.load(load_params(model)));
        std::vector<std::vector<int>> a_alone, b_alone;
        ConversationId a = alone.create_conversation();
        for (size_t i = 0; i < a_msgs.size(); ++i) a_alone.push_back(say(alone, a, a_msgs[i], sampled(12, int64_t(i))).tokens);
        ConversationId b = alone.create_conversation();
        for (size_t i = 0; i < b_msgs.size(); ++i) b_alone.push_back(say(alone, b, b_msgs[i], sampled(12, int64_t(10 + i))).tokens);

        Engine mixed;
        LLAMADESK_VERIFY_OK(mixed.load(load_params(model)));
        a = mixed.create_conversation();
        b = mixed.create_conversation();
        QCOMPARE(say(mixed, a, a_msgs[0], sampled(12, 0)).tokens, a_alone[0]);
        QCOMPARE(say(mixed, b, b_msgs[0], sampled(12, 10)).tokens, b_alone[0]);
        QCOMPARE(say(mixed, a, a_msgs[1], sampled(12, 1)).tokens, a_alone[1]);
        QCOMPARE(say(mixed, b, b_msgs[1], sampled(12, 11)).tokens, b_alone[1]);
        QCOMPARE(say(mixed, a, a_msgs[2], sampled(12, 2)).tokens, a_alone[2]);
        QVERIFY(!a_alone[0].empty());
    }

    void reset_equals_new_conversation() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId fresh = e.create_conversation();
        const std::vector<int> expected = say(e, fresh, "one more time", sampled(10, 5)).tokens;

        const ConversationId c = e.create_conversation();
        say(e, c, "something else first", sampled(10, 6));
        say(e, c, "and more", sampled(10, 7));
        const int used_before = e.pool_stats().blocks_used;
        LLAMADESK_VERIFY_OK(e.reset_conversation(c));
        const ConversationStats s = stats_of(e, c);
        QCOMPARE(s.cached_tokens, 0);
        QCOMPARE(s.history_tokens, 0);
        QCOMPARE(s.cache_blocks, 0);
        QCOMPARE(s.n_turns, 0);
        QVERIFY(e.pool_stats().blocks_used < used_before);
        QCOMPARE(say(e, c, "one more time", sampled(10, 5)).tokens, expected);
    }

    void follow_up_prefills_only_what_the_cache_lacks() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        GenerateParams g = sampled(8);
        g.system_prompt = "be brief";
        const Exchange first = say(e, c, "hello", g);
        QCOMPARE(first.stats.prefilled_tokens, first.stats.prompt_tokens);  // empty cache: everything
        QCOMPARE(first.stats.context_tokens, first.stats.prompt_tokens);

        for (const std::string& msg : {"tell me more", "and?"}) {
            const ConversationStats before = stats_of(e, c);
            // The previous answer's tail that was sampled but never run through the model: its
            // EOS, and its last token when the answer stopped at max tokens.
            const int pending = before.history_tokens - before.cached_tokens;
            QVERIFY(pending >= 1 && pending <= 2);
            std::vector<int> turn;
            LLAMADESK_VERIFY_OK(e.tokenize("[INST] " + std::string(msg) + " [/INST]", true, &turn));
            const Exchange next = say(e, c, msg, sampled(8));
            QCOMPARE(next.stats.prompt_tokens, int(turn.size()));
            QCOMPARE(next.stats.prefilled_tokens, pending + int(turn.size()));
            QCOMPARE(next.stats.context_tokens, before.history_tokens + int(turn.size()));  // what the answer follows
            QCOMPARE(next.stats.reprefilled_tokens, 0);
            const ConversationStats after = stats_of(e, c);
            QCOMPARE(after.history_tokens,
                     before.history_tokens + int(turn.size()) + next.stats.generated_tokens + 1 /* EOS */);
        }
    }

    void truncate_then_generate_equals_fresh() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        say(e, c, "first question", sampled(9, 1));
        say(e, c, "second question", sampled(9, 2));
        say(e, c, "third question", sampled(9, 3));
        const ConversationStats full = stats_of(e, c);

        LLAMADESK_VERIFY_OK(e.truncate_turns(c, 1));
        const ConversationStats cut = stats_of(e, c);
        QCOMPARE(cut.n_turns, 1);
        QVERIFY(cut.history_tokens < full.history_tokens);
        QCOMPARE(cut.cached_tokens, cut.history_tokens);  // the cut falls after the computed EOS
        QCOMPARE(cut.cache_blocks, (cut.cached_tokens + 15) / 16);
        const Exchange edited = say(e, c, "another second question", sampled(9, 4));
        QCOMPARE(edited.stats.prefilled_tokens, edited.stats.prompt_tokens);  // nothing recomputed

        const ConversationId fresh = e.create_conversation();
        say(e, fresh, "first question", sampled(9, 1));
        QCOMPARE(say(e, fresh, "another second question", sampled(9, 4)).tokens, edited.tokens);
    }

    void eviction_then_reprefill_gives_the_same_tokens() {
        const std::string a_msg1 = "the story of a", a_msg2 = "continue a";
        // b begins differently, so it shares no block with a
        const std::string b_msg = "b has a story too, which is a much longer story than the one about a";
        // Reference with a roomy pool; its figures size the tight pool below.
        Engine roomy;
        LLAMADESK_VERIFY_OK(roomy.load(load_params(gqa_path_)));
        const ConversationId ra = roomy.create_conversation(), rb = roomy.create_conversation();
        const std::vector<int> a1 = say(roomy, ra, a_msg1, sampled(20, 1)).tokens;
        const int a1_blocks = stats_of(roomy, ra).cache_blocks;
        const std::vector<int> b1 = say(roomy, rb, b_msg, sampled(20, 2)).tokens;
        const int b1_blocks = stats_of(roomy, rb).cache_blocks;
        const std::vector<int> a2 = say(roomy, ra, a_msg2, sampled(20, 3)).tokens;
        const int a2_blocks = stats_of(roomy, ra).cache_blocks;
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(roomy.cache_layout(ra, &layout));

        // Both first turns together do not fit, each conversation alone does.
        const int n_blocks = a1_blocks + b1_blocks - 1;
        QVERIFY(n_blocks >= a2_blocks && n_blocks >= b1_blocks);
        Engine tight;
        LLAMADESK_VERIFY_OK(tight.load(load_params(gqa_path_, n_blocks * layout.bytes_per_block)));
        QCOMPARE(tight.pool_stats().blocks_total, n_blocks);
        const ConversationId ta = tight.create_conversation(), tb = tight.create_conversation();
        QCOMPARE(say(tight, ta, a_msg1, sampled(20, 1)).tokens, a1);
        const ConversationStats a_before = stats_of(tight, ta);
        QCOMPARE(say(tight, tb, b_msg, sampled(20, 2)).tokens, b1);
        QCOMPARE(tight.pool_stats().evictions, int64_t(1));
        QCOMPARE(stats_of(tight, ta).cached_tokens, 0);
        QCOMPARE(stats_of(tight, ta).cache_blocks, 0);
        QCOMPARE(stats_of(tight, ta).times_evicted, int64_t(1));

        const Exchange again = say(tight, ta, a_msg2, sampled(20, 3));
        QCOMPARE(again.tokens, a2);
        QCOMPARE(again.stats.reprefilled_tokens, a_before.cached_tokens);
        QCOMPARE(again.stats.prefilled_tokens, a_before.history_tokens + again.stats.prompt_tokens);
        QCOMPARE(tight.pool_stats().reprefilled_tokens, int64_t(a_before.cached_tokens));
    }

    void pool_exhausted_while_decoding() {
        // Two blocks and nothing to evict: the answer stops with OutOfMemory, what was
        // generated so far stays in the conversation.
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(e.cache_layout(e.create_conversation(), &layout));
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_, 2 * layout.bytes_per_block)));
        const ConversationId c = e.create_conversation(ChatFormat::Completion);
        const GenerationResult r = e.generate(c, "short", sampled(100));
        QCOMPARE(r.status.code, ErrorCode::OutOfMemory);
        QCOMPARE(r.stop_reason, StopReason::Error);
        QVERIFY(!r.tokens.empty());
        QCOMPARE(stats_of(e, c).n_turns, 1);
        QCOMPARE(stats_of(e, c).cached_tokens, 32);
    }

    void too_small_a_pool_is_a_clear_error() {
        Engine e;
        const Status s = e.load(load_params(gqa_path_, 100));  // less than one block
        QCOMPARE(s.code, ErrorCode::OutOfMemory);
        QVERIFY(s.message.find("block") != std::string::npos);
        QVERIFY(!e.has_model());

        // One block (16 tokens) cannot hold a turn of more than 16 tokens even after evicting all.
        const int64_t bytes_per_block = 2 * 2 * 2 * 16 * 12 * 2;  // layers, K|V, kv heads, block, head_dim, f16
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_, bytes_per_block)));
        const ConversationId c = e.create_conversation();
        const GenerationResult r = e.generate(c, "a message longer than one block", sampled(4));
        QCOMPARE(r.status.code, ErrorCode::OutOfMemory);
        QCOMPARE(stats_of(e, c).history_tokens, 0);  // nothing changed
        QCOMPARE(e.pool_stats().blocks_used, 0);
    }

    void blocks_return_to_zero_after_deletes() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(mha_path_)));
        std::vector<ConversationId> ids;
        for (int i = 0; i < 4; ++i) {
            ids.push_back(e.create_conversation(i % 2 ? ChatFormat::Completion : ChatFormat::Llama2Chat));
            say(e, ids.back(), "message number " + std::to_string(i), sampled(10 + 7 * i, i));
        }
        QVERIFY(e.pool_stats().blocks_used > 0);
        QCOMPARE(e.pool_stats().n_conversations, 4);
        for (ConversationId id : ids) LLAMADESK_VERIFY_OK(e.delete_conversation(id));
        QCOMPARE(e.pool_stats().blocks_used, 0);
        QCOMPARE(e.pool_stats().bytes_used, int64_t(0));
        QCOMPARE(e.pool_stats().n_conversations, 0);
        QCOMPARE(e.delete_conversation(ids[0]).code, ErrorCode::UnknownConversation);
    }

    // An answer cut short and continued is the answer that was never cut: the closing EOS leaves
    // the history and decoding goes on from the cache.
    void continue_equals_uninterrupted_data() {
        QTest::addColumn<int>("format");
        QTest::newRow("llama 2 chat") << int(ChatFormat::Llama2Chat);
        QTest::newRow("completion") << int(ChatFormat::Completion);
    }

    void continue_equals_uninterrupted() {
        QFETCH(int, format);
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId whole = e.create_conversation(ChatFormat(format));
        const Exchange full = say(e, whole, "tell me a story", greedy(20));
        QCOMPARE(int(full.tokens.size()), 20);

        const ConversationId cut = e.create_conversation(ChatFormat(format));
        const Exchange head = say(e, cut, "tell me a story", greedy(8));
        const ConversationStats before = stats_of(e, cut);
        const GenerationResult tail = e.continue_answer(cut, greedy(12));
        LLAMADESK_VERIFY_OK(tail.status);
        QCOMPARE(tail.stats.prompt_tokens, 0);
        // Only the uncomputed last token runs again; the closing EOS is gone from the history.
        QCOMPARE(tail.stats.prefilled_tokens, 1);
        std::vector<int> joined = head.tokens;
        joined.insert(joined.end(), tail.tokens.begin(), tail.tokens.end());
        QCOMPARE(joined, full.tokens);
        const ConversationStats after = stats_of(e, cut);
        QCOMPARE(after.n_turns, 1);
        QCOMPARE(after.history_tokens, stats_of(e, whole).history_tokens);
        QCOMPARE(after.history_tokens, before.history_tokens + 12);

        // The next turn follows the continued answer as it would the uninterrupted one.
        QCOMPARE(say(e, cut, "and then?", greedy(6)).tokens, say(e, whole, "and then?", greedy(6)).tokens);
    }

    void continue_needs_an_answer() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        const GenerationResult r = e.continue_answer(c, greedy(4));
        QCOMPARE(r.status.code, ErrorCode::InvalidArgument);
        QCOMPARE(stats_of(e, c).history_tokens, 0);
    }

    // A restored answer (text from disk) goes on too.
    void continue_after_restore() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.restore_turns(c, {{"tell me a story", "once upon"}}, ""));
        const int restored = stats_of(e, c).history_tokens;
        const GenerationResult r = e.continue_answer(c, greedy(5));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(int(r.tokens.size()), 5);
        QCOMPARE(r.stats.prefilled_tokens, restored - 1);  // all but the EOS that was taken off
        QCOMPARE(stats_of(e, c).n_turns, 1);
    }

    // Turns restored over a conversation's own (a version switched to in the window) keep the
    // cache of the full blocks they begin with, and the next answer is the one a fresh restore gives.
    void restore_keeps_the_cache_of_a_common_beginning() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        const std::string question = "tell me a story about " + std::string(200, 'a');
        const GenerationResult first = e.generate(c, question, greedy(8));
        LLAMADESK_VERIFY_OK(first.status);
        LLAMADESK_VERIFY_OK(e.generate(c, "and the second part", greedy(8)).status);
        // Another version of the second turn: the same first turn, another second one.
        const std::vector<ChatTurn> version{{question, first.text}, {"something else", "a reply"}};
        LLAMADESK_VERIFY_OK(e.restore_turns(c, version, ""));
        const ConversationStats after = stats_of(e, c);
        QVERIFY2(after.cached_tokens >= 16 && after.cached_tokens < after.history_tokens,
                 qPrintable(QString("cached %1 of %2").arg(after.cached_tokens).arg(after.history_tokens)));

        const ConversationId fresh = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.restore_turns(fresh, version, ""));
        const GenerationResult kept = e.generate(c, "and then?", greedy(6));
        const GenerationResult anew = e.generate(fresh, "and then?", greedy(6));
        LLAMADESK_VERIFY_OK(kept.status);
        LLAMADESK_VERIFY_OK(anew.status);
        QCOMPARE(kept.tokens, anew.tokens);
        QCOMPARE(kept.stats.prefilled_tokens, kept.stats.context_tokens - after.cached_tokens);
    }

    // measure_turn counts what generate() will add, and its fit rule is the one generate() applies.
    void measure_turn_predicts_generate() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        TurnSize size;
        LLAMADESK_VERIFY_OK(e.measure_turn(c, "hello there", "be brief", &size));
        QCOMPARE(size.history_tokens, 0);
        QCOMPARE(size.alone_tokens, size.message_tokens);
        QCOMPARE(size.context_length, 256);
        GenerateParams g = greedy(4);
        g.system_prompt = "be brief";
        const Exchange first = say(e, c, "hello there", g);
        QCOMPARE(first.stats.prompt_tokens, size.message_tokens);

        LLAMADESK_VERIFY_OK(e.measure_turn(c, "and then", "be brief", &size));
        QCOMPARE(size.history_tokens, stats_of(e, c).history_tokens);
        QVERIFY(size.alone_tokens > size.message_tokens);  // alone, it would carry the system prompt
        QCOMPARE(say(e, c, "and then", greedy(4)).stats.prompt_tokens, size.message_tokens);

        // A message exactly one token too long is refused by both.
        std::string text = "a";
        for (;;) {
            LLAMADESK_VERIFY_OK(e.measure_turn(c, text, "", &size));
            if (!size.fits()) break;
            text += " a";
        }
        QCOMPARE(size.history_tokens + size.message_tokens, size.context_length);
        const GenerationResult refused = e.generate(c, text, greedy(4));
        QCOMPARE(refused.status.code, ErrorCode::ContextFull);
        QCOMPARE(stats_of(e, c).history_tokens, size.history_tokens);
    }

    // Switching a conversation's format renders its history again; the cache is rebuilt.
    void chat_format_can_change() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation(ChatFormat::Llama2Chat);
        say(e, c, "tell me a story", greedy(6));
        const ConversationStats chat = stats_of(e, c);
        LLAMADESK_VERIFY_OK(e.set_chat_format(c, ChatFormat::Completion));
        const ConversationStats plain = stats_of(e, c);
        QCOMPARE(plain.n_turns, 1);
        QCOMPARE(plain.cached_tokens, 0);
        QVERIFY(plain.history_tokens < chat.history_tokens);  // no [INST] markers, no EOS
        const Exchange next = say(e, c, " and then", greedy(4));
        QCOMPARE(next.stats.prefilled_tokens, plain.history_tokens + next.stats.prompt_tokens);
    }

    void cache_layout_describes_the_block_table() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(gqa_path_)));
        const ConversationId c = e.create_conversation();
        say(e, c, "show me the cache", sampled(30));
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(e.cache_layout(c, &layout));
        const ConversationStats s = stats_of(e, c);
        QCOMPARE(layout.n_layers, 2);
        QCOMPARE(layout.n_kv_heads, 2);
        QCOMPARE(layout.head_dim, 12);
        QCOMPARE(layout.block_size, 16);
        QCOMPARE(layout.cached_tokens, s.cached_tokens);
        QCOMPARE(int(layout.block_table.size()), s.cache_blocks);
        QCOMPARE(layout.bytes_per_block, int64_t(2 * 2 * 2 * 16 * 12) * (layout.dtype == "f32" ? 4 : 2));
        QCOMPARE(layout.bytes_used, layout.bytes_per_block * s.cache_blocks);
    }

    // The cache type is chosen at load. q8_0 keeps blocks of 32 with an f16 scale (34 bytes per 32
    // elements); a model whose heads are not whole blocks is refused with the reason, and the model
    // that was loaded stays.
    void cache_type_is_chosen_at_load() {
        const QString hd32 = write_synthetic_gguf(dir_, "hd32", small_config(4, 2, 32, 256), 14);
        Engine e;
        LoadParams params = load_params(hd32);
        params.kv_cache_type = KvCacheType::Q8_0;
        LLAMADESK_VERIFY_OK(e.load(params));
        const ConversationId c = e.create_conversation();
        QVERIFY(!say(e, c, "hello there", greedy(8)).tokens.empty());
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(e.cache_layout(c, &layout));
        QCOMPARE(layout.dtype, std::string("q8_0"));
        QCOMPARE(layout.bytes_per_block, int64_t(2 * 2 * 2 * 16 * 32) / 32 * 34);  // layers, K|V, kv heads, block, head_dim

        LoadParams narrow = load_params(gqa_path_);  // head_dim 12
        narrow.kv_cache_type = KvCacheType::Q8_0;
        const Status s = e.load(narrow);
        QCOMPARE(s.code, ErrorCode::InvalidArgument);
        QVERIFY2(s.message.find("head_dim") != std::string::npos, s.message.c_str());
        QCOMPARE(QString::fromStdString(e.model_info().path), hd32);
        QVERIFY(!say(e, c, "still here", greedy(4)).tokens.empty());
    }

    // Ten conversations that begin with the same long system prompt hold one copy of its blocks,
    // and each answers exactly as it would alone.
    void a_shared_system_prompt_is_held_once() {
        const QString model = write_synthetic_gguf(dir_, "long", small_config(6, 2, 12, 1024), 13);
        std::string system;
        while (system.size() < 500) system += "You are a careful assistant. ";
        GenerateParams g = greedy(8);
        g.system_prompt = system;
        auto message = [](int i) { return "question number " + std::to_string(i); };

        std::vector<std::vector<int>> alone;
        for (int i = 0; i < 10; ++i) {
            Engine e;
            LLAMADESK_VERIFY_OK(e.load(load_params(model)));
            alone.push_back(say(e, e.create_conversation(), message(i), g).tokens);
        }

        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model)));
        std::vector<ConversationId> ids;
        int prompt_tokens = 0;
        for (int i = 0; i < 10; ++i) {
            ids.push_back(e.create_conversation());
            const Exchange x = say(e, ids.back(), message(i), g);
            prompt_tokens = x.stats.prompt_tokens;
            QCOMPARE(x.tokens, alone[size_t(i)]);
            if (i > 0)  // the prefix came shared: only the message and the block it starts in run
                QVERIFY2(x.stats.prompt_tokens > 500 && x.stats.prefilled_tokens <= 40,
                         qPrintable(QString("prefilled %1 of %2").arg(x.stats.prefilled_tokens).arg(x.stats.prompt_tokens)));
            QCOMPARE(x.stats.prefilled_tokens + x.stats.shared_tokens, x.stats.prompt_tokens);  // every token told
        }
        std::vector<CacheLayout> layouts(ids.size());
        for (size_t i = 0; i < ids.size(); ++i) LLAMADESK_VERIFY_OK(e.cache_layout(ids[i], &layouts[i]));
        int prefix_blocks = 0;
        while (layouts[0].block_users[size_t(prefix_blocks)] == 10) ++prefix_blocks;
        // every whole block before the message: at most the message and one partial block are not shared
        QVERIFY2(prefix_blocks * 16 >= prompt_tokens - 32, qPrintable(QString::number(prefix_blocks)));
        int own_blocks = 0;
        for (const CacheLayout& l : layouts) {
            QVERIFY(std::equal(layouts[0].block_table.begin(), layouts[0].block_table.begin() + prefix_blocks,
                               l.block_table.begin()));
            own_blocks += int(l.block_table.size()) - prefix_blocks;
        }
        const PoolStats pool = e.pool_stats();
        QVERIFY(pool.blocks_shared >= prefix_blocks);
        QVERIFY(pool.blocks_used <= prefix_blocks + own_blocks);  // the prefix counted once
        QVERIFY(pool.shared_tokens >= int64_t(9) * prefix_blocks * 16);

        // Deleting the first conversation frees none of the shared blocks; the last one does.
        LLAMADESK_VERIFY_OK(e.delete_conversation(ids[0]));
        CacheLayout second;
        LLAMADESK_VERIFY_OK(e.cache_layout(ids[1], &second));
        QCOMPARE(second.block_users[0], 9);
        for (size_t i = 1; i < ids.size(); ++i) LLAMADESK_VERIFY_OK(e.delete_conversation(ids[i]));
        QCOMPARE(e.pool_stats().blocks_used, 0);
    }
};

QTEST_GUILESS_MAIN(TestEngineCache)
#include "test_engine_cache.moc"
