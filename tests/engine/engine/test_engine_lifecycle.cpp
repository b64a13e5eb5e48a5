// Engine behaviour around the cache: loading (failed loads keep the old model, successful ones
// keep the conversations), the context limit, cancellation, restoring and dropping turns, and the
// errors of the public API.
#include <QFile>
#include <QFileInfo>
#include <QTest>

#include <unistd.h>

#include <map>
#include <random>

#include "backends/backend.h"
#include "synthetic/synthetic_model.h"
#include "engine_fixtures.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

ConversationStats stats_of(const Engine& e, ConversationId id) {
    ConversationStats s;
    const Status st = e.conversation_stats(id, &s);
    if (!st.ok()) qFatal("conversation_stats: %s", st.message.c_str());
    return s;
}

std::vector<int> tokens_of(Engine& e, ConversationId id, const std::string& text, const GenerateParams& g) {
    const GenerationResult r = e.generate(id, text, g);
    if (!r.status.ok()) qFatal("generate: %s", r.status.message.c_str());
    return r.tokens;
}

double resident_megabytes() {
    QFile statm("/proc/self/statm");
    if (!statm.open(QIODevice::ReadOnly)) return -1;
    const QList<QByteArray> fields = statm.readAll().split(' ');
    return fields.size() > 1 ? fields[1].toDouble() * double(sysconf(_SC_PAGESIZE)) / 1e6 : -1;
}

bool same(const ConversationStats& a, const ConversationStats& b) {
    return a.history_tokens == b.history_tokens && a.cached_tokens == b.cached_tokens &&
           a.cache_blocks == b.cache_blocks && a.n_turns == b.n_turns;
}

}  // namespace

class TestEngineLifecycle : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_a_, model_b_, short_context_, llama3_;

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_a_ = write_synthetic_gguf(dir_, "a", small_config(4, 2, 16, 256), 21);
        model_b_ = write_synthetic_gguf(dir_, "b", small_config(4, 1, 8, 256), 22);
        short_context_ = write_synthetic_gguf(dir_, "short", small_config(2, 2, 16, 64), 23);
        // Llama 3's special tokens on a byte-level vocabulary: a model that writes the Llama 3
        // formats, which model_a_ and model_b_ (SentencePiece pieces) cannot
        llama3_ = dir_.filePath("l3.gguf");
        write_gguf(make_synthetic_bpe_checkpoint(small_config(4, 2, 16, 256), {"h e", "Ġ t", "l l"}, 24),
                   llama3_.toStdString());
    }

    void no_model_and_unknown_conversation() {
        Engine e;
        QVERIFY(!e.has_model());
        const ConversationId c = e.create_conversation();
        QVERIFY(c > 0);
        QCOMPARE(e.generate(c, "hi", sampled(4)).status.code, ErrorCode::NoModel);
        std::vector<int> ids;
        QCOMPARE(e.tokenize("hi", true, &ids).code, ErrorCode::NoModel);
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        QCOMPARE(e.generate(c + 100, "hi", sampled(4)).status.code, ErrorCode::UnknownConversation);
        QCOMPARE(e.reset_conversation(c + 100).code, ErrorCode::UnknownConversation);
        ConversationStats s;
        QCOMPARE(e.conversation_stats(c + 100, &s).code, ErrorCode::UnknownConversation);
        QCOMPARE(QString(error_code_name(ErrorCode::ContextFull)), QString("ContextFull"));
        QCOMPARE(QString(stop_reason_name(StopReason::Cancelled)), QString("cancelled"));
    }

    void invalid_sampling_changes_nothing() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const ConversationId c = e.create_conversation();
        GenerateParams g = sampled(4);
        g.sampling.repeat_penalty = 0.0f;
        QCOMPARE(e.generate(c, "hi", g).status.code, ErrorCode::InvalidArgument);
        QCOMPARE(stats_of(e, c).history_tokens, 0);
    }

    void pieces_and_figures() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const ConversationId c = e.create_conversation();
        std::string streamed;
        int calls = 0, last_generated = 0;
        bool figures_monotonic = true;
        const GenerationResult r = e.generate(c, "stream this", sampled(24), [&](const std::string& piece,
                                                                               const GenerationStats& s) {
            streamed += piece;
            ++calls;
            figures_monotonic &= s.generated_tokens >= last_generated;
            last_generated = s.generated_tokens;
        });
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(streamed, r.text);
        QVERIFY(calls >= r.stats.generated_tokens);  // one call per token at least
        QVERIFY(figures_monotonic);
        QCOMPARE(int(r.tokens.size()), r.stats.generated_tokens);
        QVERIFY(r.stats.prefill_ms > 0 && r.stats.prefill_tokens_per_s > 0);
        QVERIFY(r.stats.time_to_first_token_ms >= r.stats.prefill_ms);
        if (r.stats.generated_tokens > 1) QVERIFY(r.stats.decode_tokens_per_s > 0);
        QCOMPARE(r.stats.conversation.cached_tokens, stats_of(e, c).cached_tokens);
        QCOMPARE(r.stats.pool.blocks_used, e.pool_stats().blocks_used);
    }

    void context_full_changes_nothing() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(short_context_)));
        QCOMPARE(e.model_info().context_length, 64);
        const ConversationId c = e.create_conversation();
        tokens_of(e, c, "hi", sampled(6));
        const ConversationStats before = stats_of(e, c);
        const PoolStats pool_before = e.pool_stats();

        const GenerationResult r = e.generate(c, std::string(80, 'x'), sampled(6));
        QCOMPARE(r.status.code, ErrorCode::ContextFull);
        QCOMPARE(r.stop_reason, StopReason::ContextFull);
        QVERIFY(r.status.message.find("64") != std::string::npos);
        QVERIFY(same(stats_of(e, c), before));
        QCOMPARE(e.pool_stats().blocks_used, pool_before.blocks_used);

        // Still usable; an answer that runs into the limit stops with ContextFull.
        const GenerationResult full = e.generate(c, "go on", sampled(0, 5));
        LLAMADESK_VERIFY_OK(full.status);
        QCOMPARE(full.stop_reason, StopReason::ContextFull);
        QCOMPARE(stats_of(e, c).history_tokens, 64);
        QCOMPARE(e.generate(c, "more", sampled(4)).status.code, ErrorCode::ContextFull);
    }

    void cancel_stops_within_one_token() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const ConversationId c = e.create_conversation();
        std::atomic<bool> cancel{false};
        std::string streamed;
        const GenerationResult r = e.generate(
            c, "a long answer please", sampled(100),
            [&](const std::string& piece, const GenerationStats&) {
                streamed += piece;
                cancel = true;
            },
            &cancel);
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stop_reason, StopReason::Cancelled);
        QCOMPARE(r.stats.generated_tokens, 1);
        const ConversationStats s = stats_of(e, c);
        QCOMPARE(s.n_turns, 1);  // the partial answer is kept
        QCOMPARE(streamed, r.text);
        // The conversation goes on after a cancelled answer.
        cancel = false;
        QVERIFY(!tokens_of(e, c, "go on", sampled(5)).empty());
    }

    void failed_load_keeps_the_old_model() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const ConversationId c = e.create_conversation();
        tokens_of(e, c, "before", sampled(5));
        const ConversationStats before = stats_of(e, c);
        const ConversationId probe = e.create_conversation();
        const std::vector<int> expected = tokens_of(e, probe, "probe", sampled(8, 3));
        LLAMADESK_VERIFY_OK(e.delete_conversation(probe));

        const QString garbage = dir_.filePath("garbage.gguf");
        {
            QFile f(garbage);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray(4096, '\x5a'));
        }
        const Status bad = e.load(load_params(garbage));
        QVERIFY(!bad.ok());
        QVERIFY(!bad.message.empty());
        QCOMPARE(e.load(load_params(dir_.filePath("missing.gguf"))).code, ErrorCode::FileNotFound);

        // A tokenizer whose vocabulary does not fit the model.
        const QString other_tok = llamadesk::test::shared_path("models/babyllama/tok105.model");
        if (!other_tok.isEmpty()) {
            LoadParams p = load_params(model_b_);
            p.tokenizer_path = other_tok.toStdString();
            const Status mismatch = e.load(p);
            QCOMPARE(mismatch.code, ErrorCode::TokenizerMismatch);
            QVERIFY(mismatch.message.find("105") != std::string::npos);
        }

        QVERIFY(e.has_model());
        QCOMPARE(QString::fromStdString(e.model_info().path), model_a_);
        QVERIFY(same(stats_of(e, c), before));  // its cache is intact
        const ConversationId again = e.create_conversation();
        QCOMPARE(tokens_of(e, again, "probe", sampled(8, 3)), expected);
    }

    void conversations_survive_a_new_model() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const ConversationId c = e.create_conversation();
        GenerateParams g = sampled(6);
        g.system_prompt = "be kind";
        tokens_of(e, c, "first", g);
        tokens_of(e, c, "second", sampled(6));

        std::vector<std::string> stages;
        LoadParams p = load_params(model_b_);
        p.on_progress = [&](float, const std::string& stage) { stages.push_back(stage); };
        LLAMADESK_VERIFY_OK(e.load(p));
        QVERIFY(stages.size() >= 3);
        QCOMPARE(e.model_info().n_kv_heads, 1);
        QCOMPARE(e.pool_stats().blocks_used, 0);
        const ConversationStats s = stats_of(e, c);
        QCOMPARE(s.n_turns, 2);
        QCOMPARE(s.cached_tokens, 0);
        QVERIFY(s.history_tokens > 0);

        const GenerationResult r = e.generate(c, "third", sampled(6));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stats.prefilled_tokens, s.history_tokens + r.stats.prompt_tokens);
    }

    // A model whose vocabulary cannot write a conversation's format still loads, whole: the
    // conversation keeps its text, takes the model's own format and says so; asked for the old
    // format again, it gives way to the model's own again.
    void a_conversation_takes_the_format_a_new_model_can_write() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(llama3_)));
        const ConversationId c = e.create_conversation(ChatFormat::Llama3Chat);
        tokens_of(e, c, "hello there", sampled(4));
        QCOMPARE(stats_of(e, c).format, ChatFormat::Llama3Chat);
        QVERIFY(stats_of(e, c).format_note.empty());

        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        QCOMPARE(QString::fromStdString(e.model_info().path), model_a_);
        const ConversationStats s = stats_of(e, c);
        QCOMPARE(s.n_turns, 1);
        QVERIFY(s.history_tokens > 0);
        QCOMPARE(s.format, e.model_info().chat_format);
        QVERIFY2(s.format_note.find("Llama 3") != std::string::npos, s.format_note.c_str());
        LLAMADESK_VERIFY_OK(e.generate(c, "and again", sampled(4)).status);

        // asked for again, it gives way to the model's own again, and says so
        LLAMADESK_VERIFY_OK(e.set_chat_format(c, ChatFormat::Llama3Chat));
        QCOMPARE(stats_of(e, c).format, s.format);
        QCOMPARE(stats_of(e, c).format_note, s.format_note);
        QCOMPARE(stats_of(e, c).n_turns, 2);
        LLAMADESK_VERIFY_OK(e.generate(c, "once more", sampled(4)).status);

        // Back on a model that writes both, the conversation keeps the format it took; the note,
        // which named the model before, goes.
        LLAMADESK_VERIFY_OK(e.load(load_params(llama3_)));
        QCOMPARE(stats_of(e, c).format, s.format);
        QVERIFY(stats_of(e, c).format_note.empty());
        QCOMPARE(stats_of(e, c).n_turns, 3);
    }

    // Random loads (good, hostile, missing, of a vocabulary that cannot write a conversation's
    // format), answers, new conversations and format changes: after every step the engine names
    // the model last loaded, every conversation keeps its turns, and a refused answer changes nothing.
    void random_loads_and_answers_leave_the_engine_whole() {
        const QString garbage = dir_.filePath("hostile.gguf");
        {
            QFile f(garbage);
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(QByteArray("GGUF") + QByteArray(600, '\x7f'));
        }
        const QString models[] = {llama3_, model_a_, model_b_, garbage, dir_.filePath("missing.gguf")};
        const ChatFormat formats[] = {ChatFormat::Llama3Chat, ChatFormat::Llama31Chat, ChatFormat::Llama2Chat,
                                      ChatFormat::Completion, ChatFormat::ChatML};
        for (uint32_t seed = 1; seed <= 6; ++seed) {
            std::mt19937 rng(seed);
            Engine e;
            QString loaded = llama3_;
            LLAMADESK_VERIFY_OK(e.load(load_params(loaded)));
            std::vector<ConversationId> conversations{e.create_conversation(ChatFormat::Llama3Chat)};
            std::map<ConversationId, int> turns{{conversations[0], 0}};
            for (int step = 0; step < 24; ++step) {
                const QString where = QStringLiteral("seed %1, step %2").arg(seed).arg(step);
                const ConversationId c = conversations[rng() % conversations.size()];
                switch (rng() % 4) {
                    case 0: {
                        const QString& path = models[rng() % std::size(models)];
                        const bool good = path == llama3_ || path == model_a_ || path == model_b_;
                        const Status st = e.load(load_params(path));
                        QVERIFY2(st.ok() == good, qPrintable(where + ": " + QString::fromStdString(st.message)));
                        if (good) loaded = path;
                        break;
                    }
                    case 1: {
                        const ConversationStats before = stats_of(e, c);
                        const GenerationResult r = e.generate(c, "step " + std::to_string(step), sampled(3, step));
                        if (r.status.ok()) {
                            ++turns[c];
                        } else {  // only a format this model cannot write, on a conversation with no text yet
                            QVERIFY2(r.status.code == ErrorCode::InvalidArgument && before.n_turns == 0,
                                     qPrintable(where + ": " + QString::fromStdString(r.status.message)));
                            QCOMPARE(stats_of(e, c).format, before.format);
                        }
                        break;
                    }
                    case 2: {
                        const ConversationId fresh = e.create_conversation(formats[rng() % std::size(formats)]);
                        conversations.push_back(fresh);
                        turns[fresh] = 0;
                        break;
                    }
                    default: {
                        const ChatFormat f = formats[rng() % std::size(formats)];
                        LLAMADESK_VERIFY_OK(e.set_chat_format(c, f));
                        const ConversationStats after = stats_of(e, c);
                        // one this model cannot write gives way to its own, and says so
                        if (after.format != f) {
                            QCOMPARE(after.format, e.model_info().chat_format);
                            QVERIFY2(!after.format_note.empty(), qPrintable(where));
                        }
                        break;
                    }
                }
                QVERIFY2(e.has_model(), qPrintable(where));
                QCOMPARE(QString::fromStdString(e.model_info().path), loaded);
                for (const ConversationId id : conversations) QCOMPARE(stats_of(e, id).n_turns, turns[id]);
                if (QTest::currentTestFailed()) return;
            }
        }
    }

    void cuda_request_without_a_device_falls_back_to_cpu() {
        std::string why;
        if (cuda_backend_available(&why)) QSKIP("a CUDA device is present here");
        Engine e;
        LoadParams p = load_params(model_a_);
        p.backend = BackendKind::Cuda;
        LLAMADESK_VERIFY_OK(e.load(p));
        QCOMPARE(QString::fromStdString(e.model_info().backend), QString("CPU"));
        QVERIFY2(e.model_info().device.find("CUDA requested but unavailable") != std::string::npos,
                 e.model_info().device.c_str());
        // Auto too says why it runs on the CPU (for the header).
        p.backend = BackendKind::Auto;
        LLAMADESK_VERIFY_OK(e.load(p));
        QVERIFY2(e.model_info().device.find("CUDA unavailable: " + why) != std::string::npos,
                 e.model_info().device.c_str());
        // Without a device the CUDA module, whose cuBLAS alone made about 150 MB resident, is never
        // loaded: a CPU-only machine does not pay for it.
        QFile maps("/proc/self/maps");
        QVERIFY(maps.open(QIODevice::ReadOnly));
        QVERIFY2(!maps.readAll().contains("libcublas"), why.c_str());
    }

    // A file of a few kilobytes that claims a context of 2^21 positions and 32 query heads per kv
    // head: scratch memory follows the positions used, not the claim (it once cost 4 GiB).
    void a_huge_claimed_context_costs_nothing_up_front() {
        const QString path = write_synthetic_gguf(dir_, "huge_context", small_config(32, 1, 2, 1 << 21), 24);
        QVERIFY(QFileInfo(path).size() < 1 << 20);
        const double before = resident_megabytes();
        Engine e;
        LoadParams p = load_params(path, int64_t(64) << 20);
        p.n_threads = 2;
        LLAMADESK_VERIFY_OK(e.load(p));
        QCOMPARE(e.model_info().context_length, 1 << 21);
        LLAMADESK_VERIFY_OK(e.generate(e.create_conversation(ChatFormat::Completion), "hello", greedy(8)).status);
        const double grown = resident_megabytes() - before;
        QVERIFY2(grown < 150, qPrintable(QString("resident memory grew by %1 MB").arg(grown)));
    }

    // The KV pool's memory is reserved, not touched: it becomes resident as blocks are first
    // written, so a pool of 1 GiB costs what the conversations in it use.
    void the_kv_pool_takes_memory_as_blocks_are_written() {
        // Under AddressSanitizer resident memory also holds its shadow of every allocation, so
        // only the normal build can measure what the pool itself makes resident.
        if (llamadesk::test::kSanitizerBuild) QSKIP("resident memory is measured in the normal build");
        const double before = resident_megabytes();
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_, int64_t(1) << 30)));
        if (e.pool_stats().bytes_total < int64_t(256) << 20) QSKIP("less than 256 MiB of memory is available here");
        const double loaded = resident_megabytes() - before;
        QVERIFY2(loaded < 64, qPrintable(QString("loading a model with a 1 GiB pool took %1 MB").arg(loaded)));
        LLAMADESK_VERIFY_OK(e.generate(e.create_conversation(), "hello", greedy(8)).status);
        const double used = double(e.pool_stats().bytes_used) / 1e6;
        const double grown = resident_megabytes() - before;
        QVERIFY2(grown < 64 + used, qPrintable(QString("%1 MB resident for %2 MB of cache").arg(grown).arg(used)));
    }

    void restore_and_drop_turns() {
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_a_)));
        const std::vector<ChatTurn> turns{{"hello", "hi there"}, {"how are you", "fine"}, {"bye", "see you"}};
        const ConversationId c = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.restore_turns(c, turns, "sys"));
        ConversationStats s = stats_of(e, c);
        QCOMPARE(s.n_turns, 3);
        QCOMPARE(s.cached_tokens, 0);  // nothing computed

        // The history is the reference encoding of the dialog: each exchange one string with
        // BOS and EOS, the system prompt merged into the first.
        auto exchange = [&](const std::string& user, const std::string& answer) {
            std::vector<int> ids;
            if (!e.tokenize("[INST] " + user + " [/INST] " + answer + " ", true, &ids).ok()) qFatal("tokenize");
            return int(ids.size()) + 1;  // EOS
        };
        const int expected = exchange("<<SYS>>\nsys\n<</SYS>>\n\nhello", "hi there") +
                             exchange("how are you", "fine") + exchange("bye", "see you");
        QCOMPARE(s.history_tokens, expected);

        const GenerationResult r = e.generate(c, "again", sampled(4));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stats.prefilled_tokens, expected + r.stats.prompt_tokens);

        // Dropping the oldest turn: the second becomes the first and takes the system prompt.
        LLAMADESK_VERIFY_OK(e.drop_oldest_turns(c, 1, "sys"));
        s = stats_of(e, c);
        QCOMPARE(s.n_turns, 3);
        QCOMPARE(s.cached_tokens, 0);
        QCOMPARE(s.cache_blocks, 0);
        const ConversationId ref = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.restore_turns(ref, {turns[1], turns[2], {"again", r.text}}, "sys"));
        QCOMPARE(s.history_tokens, stats_of(e, ref).history_tokens);
        QCOMPARE(e.drop_oldest_turns(c, -1, "").code, ErrorCode::InvalidArgument);
    }
};

QTEST_GUILESS_MAIN(TestEngineLifecycle)
#include "test_engine_lifecycle.moc"
