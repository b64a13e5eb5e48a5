// KV snapshots through the Engine API: a conversation's cache written to disk by one Engine is
// read back by the next (a restart) and gives the very tokens the first would have given; a
// missing, damaged or foreign snapshot is prefilled instead, with the reason logged; saves are
// incremental; the disk budget drops the ends of histories first.
#include <QDir>
#include <QFile>
#include <QTest>

#include <filesystem>

#include "engine_fixtures.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

struct Run {
    std::vector<int> tokens;
    GenerationStats stats;
    int history_before = 0;  // tokens of the restored conversation before the follow-up
};

const std::vector<std::string> kMessages{"tell me about the cache", "and what happens next in the story",
                                         "one more question about blocks and positions"};
constexpr const char* kFollowUp = "and then?";

int64_t bytes_under(const QString& root) {
    int64_t total = 0;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root.toStdString()))
        if (e.is_regular_file()) total += int64_t(e.file_size());
    return total;
}

QStringList block_files(const QString& root) {
    QStringList files;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root.toStdString()))
        if (e.path().extension() == ".kvblock") files << QString::fromStdString(e.path().string());
    files.sort();
    return files;
}

}  // namespace

class TestKvSnapshots : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    QString model_, other_model_;
    std::vector<ChatTurn> turns_;   // the conversation that is saved, as text
    std::vector<int> follow_up_;    // its follow-up's tokens without any restart
    std::vector<std::string> log_;  // what the engine under test logged

    SnapshotSettings settings(const QString& folder, int64_t budget = int64_t(1) << 30) {
        SnapshotSettings s;
        s.folder = folder.toStdString();
        s.budget_bytes = budget;
        s.on_log = [this](const std::string& line) { log_.push_back(line); };
        return s;
    }

    // The conversation of kMessages, saved to folder after every answer (as the app does when a
    // conversation goes idle).
    void write_conversation(Engine& e, const QString& folder, int64_t budget = int64_t(1) << 30) {
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        LLAMADESK_VERIFY_OK(e.set_snapshots(settings(folder, budget)));
        const ConversationId c = e.create_conversation();
        for (const std::string& m : kMessages) {
            const GenerationResult r = e.generate(c, m, greedy(12));
            LLAMADESK_VERIFY_OK(r.status);
            LLAMADESK_VERIFY_OK(e.save_snapshot(c));
        }
    }

    // A new Engine (the restart) on the saved text, asked the follow-up.
    Run restart(const QString& folder, const QString& model) {
        log_.clear();
        Engine e;
        if (!e.load(load_params(model)).ok()) qFatal("load failed");
        if (!folder.isEmpty() && !e.set_snapshots(settings(folder)).ok()) qFatal("set_snapshots failed");
        const ConversationId c = e.create_conversation();
        if (!e.restore_turns(c, turns_, "").ok()) qFatal("restore_turns failed");
        ConversationStats before;
        if (!e.conversation_stats(c, &before).ok()) qFatal("conversation_stats failed");
        const GenerationResult r = e.generate(c, kFollowUp, greedy(12));
        if (!r.status.ok()) qFatal("generate: %s", r.status.message.c_str());
        return {r.tokens, r.stats, before.history_tokens};
    }

    bool logged(const std::string& part) const {
        return std::any_of(log_.begin(), log_.end(), [&](const std::string& l) { return l.find(part) != std::string::npos; });
    }

private slots:
    void initTestCase() {
        QVERIFY(dir_.isValid());
        model_ = write_synthetic_gguf(dir_, "model", small_config(6, 2, 12, 1024), 21);
        other_model_ = write_synthetic_gguf(dir_, "other", small_config(6, 2, 12, 1024), 22);
        // The reference: the same conversation and follow-up in one Engine, no snapshots.
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        const ConversationId c = e.create_conversation();
        for (const std::string& m : kMessages) {
            const GenerationResult r = e.generate(c, m, greedy(12));
            LLAMADESK_VERIFY_OK(r.status);
            turns_.push_back({m, r.text});
        }
        follow_up_ = e.generate(c, kFollowUp, greedy(12)).tokens;
        QVERIFY(!follow_up_.empty());
    }

    // After a restart the history's full blocks come from disk: only the tail after the last full
    // block and the follow-up run, and the tokens are those of the conversation that never stopped.
    void a_restart_reads_the_cache_back() {
        const QString folder = dir_.filePath("restart");
        Engine first;
        write_conversation(first, folder);
        const Run plain = restart("", model_);
        const Run restored = restart(folder, model_);
        QCOMPARE(plain.stats.restored_tokens, 0);
        // The text tokenized again is not what the model sampled, so without the saved history even
        // a plain restart would answer otherwise.
        QVERIFY(plain.tokens != follow_up_);
        QCOMPARE(restored.tokens, follow_up_);
        // Every full block of the saved history but the one the answer's uncomputed last tokens
        // (at most 2) fall in comes back.
        const GenerationStats& s = restored.stats;
        const int history = restored.history_before;
        QVERIFY2(s.restored_tokens >= history - 2 - 15 && s.restored_tokens % 16 == 0,
                 qPrintable(QString("restored %1 of %2").arg(s.restored_tokens).arg(history)));
        QCOMPARE(s.prefilled_tokens + s.restored_tokens, history + s.prompt_tokens);
        QVERIFY(logged("restored " + std::to_string(restored.stats.restored_tokens) + " positions"));

        // The inspector can tell restored blocks from computed ones.
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        LLAMADESK_VERIFY_OK(e.set_snapshots(settings(folder)));
        const ConversationId c = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.restore_turns(c, turns_, ""));
        LLAMADESK_VERIFY_OK(e.generate(c, kFollowUp, greedy(2)).status);
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(e.cache_layout(c, &layout));
        QCOMPARE(layout.block_restored.size(), layout.block_table.size());
        const auto n_restored = std::count(layout.block_restored.begin(), layout.block_restored.end(), true);
        QCOMPARE(int(n_restored) * layout.block_size, restored.stats.restored_tokens);
        QVERIFY(layout.block_restored.front() && !layout.block_restored.back());
    }

    // Damage of every kind: the damaged block and those after it are prefilled, the reason is
    // logged, the damaged file is deleted, and the tokens do not change.
    void a_damaged_snapshot_is_prefilled_data() {
        QTest::addColumn<QString>("damage");
        QTest::addColumn<QString>("reason");
        QTest::newRow("bit flip in the keys and values") << "flip" << "corrupt (checksum)";
        QTest::newRow("truncated") << "truncate" << "truncated";
        QTest::newRow("garbage") << "garbage" << "not a LlamaDesk KV block";
        QTest::newRow("another block's file") << "swap" << "holds a prefix of 64 tokens, not 48";
    }

    void a_damaged_snapshot_is_prefilled() {
        QFETCH(QString, damage);
        QFETCH(QString, reason);
        const QString folder = dir_.filePath("damaged-" + damage);
        Engine first;
        write_conversation(first, folder);
        // Find block 2's file: restore block by block and see which file it read.
        const Run whole = restart(folder, model_);
        QVERIFY(whole.stats.restored_tokens >= 4 * 16);
        Engine probe;
        LLAMADESK_VERIFY_OK(probe.load(load_params(model_)));
        QStringList files = block_files(folder);
        // Files are named by the key of their whole prefix; block 2's is the one whose prefix has 48
        // tokens: its header records the count right after the magic and the identity's length.
        QString target, other;
        for (const QString& f : files) {
            QFile file(f);
            QVERIFY(file.open(QIODevice::ReadOnly));
            const QByteArray head = file.read(16);
            const uint32_t n_prefix = *reinterpret_cast<const uint32_t*>(head.constData() + 12);
            if (n_prefix == 48) target = f;
            if (n_prefix == 64) other = f;
        }
        QVERIFY(!target.isEmpty() && !other.isEmpty());
        QFile file(target);
        if (damage == "flip") {
            QVERIFY(file.open(QIODevice::ReadWrite));
            file.seek(file.size() - 100);
            char byte = 0;
            file.getChar(&byte);
            file.seek(file.size() - 100);
            file.putChar(char(byte ^ 0x10));
        } else if (damage == "truncate") {
            QVERIFY(file.resize(file.size() / 2));
        } else if (damage == "garbage") {
            QVERIFY(file.open(QIODevice::WriteOnly | QIODevice::Truncate));
            file.write(QByteArray(4096, 'x'));
        } else {
            QVERIFY(QFile::remove(target) && QFile::copy(other, target));
        }
        file.close();

        const Run damaged = restart(folder, model_);
        QCOMPARE(damaged.tokens, follow_up_);
        QCOMPARE(damaged.stats.restored_tokens, 2 * 16);
        QVERIFY2(logged(reason.toStdString()) && logged("prefilling positions 32"),
                 log_.empty() ? "nothing logged" : log_.back().c_str());
        QVERIFY(!QFile::exists(target));
    }

    // Blocks of another checkpoint (same shape, other weights) are never used.
    void another_models_snapshot_is_not_used() {
        const QString folder = dir_.filePath("foreign");
        Engine first;
        write_conversation(first, folder);
        const Run other = restart(folder, other_model_);
        QCOMPARE(other.stats.restored_tokens, 0);
        QVERIFY(logged("none on disk"));
    }

    // A save writes only blocks that are not on disk yet; conversations that begin alike share files.
    void saves_are_incremental_and_shared() {
        const QString folder = dir_.filePath("incremental");
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(model_)));
        LLAMADESK_VERIFY_OK(e.set_snapshots(settings(folder)));
        const ConversationId a = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.generate(a, kMessages[0], greedy(40)).status);
        LLAMADESK_VERIFY_OK(e.save_snapshot(a));
        const QStringList first = block_files(folder);
        ConversationStats s;
        LLAMADESK_VERIFY_OK(e.conversation_stats(a, &s));
        QCOMPARE(int(first.size()), s.cached_tokens / 16);
        QHash<QString, QDateTime> written;
        for (const QString& f : first) written[f] = QFileInfo(f).birthTime();

        LLAMADESK_VERIFY_OK(e.generate(a, kMessages[1], greedy(40)).status);
        LLAMADESK_VERIFY_OK(e.save_snapshot(a));
        LLAMADESK_VERIFY_OK(e.conversation_stats(a, &s));
        QCOMPARE(int(block_files(folder).size()), s.cached_tokens / 16);
        for (const QString& f : first) QCOMPARE(QFileInfo(f).birthTime(), written[f]);  // not rewritten

        // b asks the same first question: its blocks are a's (shared in memory, one file on disk).
        const ConversationId b = e.create_conversation();
        LLAMADESK_VERIFY_OK(e.generate(b, kMessages[0], greedy(40)).status);
        LLAMADESK_VERIFY_OK(e.save_snapshot(b));
        QCOMPARE(int(block_files(folder).size()), s.cached_tokens / 16);
    }

    // Under a budget smaller than the conversation, the beginning of its history stays on disk (the
    // part a restore can use) and the files fit the budget.
    void the_budget_keeps_the_beginnings() {
        const QString roomy = dir_.filePath("budget-roomy"), tight = dir_.filePath("budget-tight");
        Engine all;
        write_conversation(all, roomy);
        const int64_t bytes = bytes_under(roomy);
        Engine some;
        log_.clear();
        write_conversation(some, tight, bytes / 2);
        QVERIFY(logged("least recently used"));
        QVERIFY(bytes_under(tight) <= bytes / 2);
        const int kept = int(block_files(tight).size());
        QVERIFY2(kept > 0 && kept < int(block_files(roomy).size()), qPrintable(QString::number(kept)));
        const Run run = restart(tight, model_);
        QCOMPARE(run.stats.restored_tokens, kept * 16);
        QCOMPARE(run.tokens, follow_up_);
    }

    // A conversation evicted from a full pool reads its blocks back from disk rather than computing
    // them again, and answers as it would have without the eviction.
    void an_evicted_conversation_reads_its_blocks_back() {
        const QString folder = dir_.filePath("evicted");
        const std::string a_text = "the first conversation has a story to tell about blocks";
        const std::string b_text = "a second conversation with a story of its own, long enough to need the room";
        Engine roomy;
        LLAMADESK_VERIFY_OK(roomy.load(load_params(model_)));
        const ConversationId ra = roomy.create_conversation(), rb = roomy.create_conversation();
        LLAMADESK_VERIFY_OK(roomy.generate(ra, a_text, greedy(20)).status);
        LLAMADESK_VERIFY_OK(roomy.generate(rb, b_text, greedy(20)).status);
        const GenerationResult expected = roomy.generate(ra, kFollowUp, greedy(12));
        ConversationStats a, b;
        LLAMADESK_VERIFY_OK(roomy.conversation_stats(ra, &a));
        LLAMADESK_VERIFY_OK(roomy.conversation_stats(rb, &b));
        CacheLayout layout;
        LLAMADESK_VERIFY_OK(roomy.cache_layout(ra, &layout));

        Engine tight;  // room for the larger conversation alone
        LLAMADESK_VERIFY_OK(tight.load(load_params(model_, std::max(a.cache_blocks, b.cache_blocks) * layout.bytes_per_block)));
        LLAMADESK_VERIFY_OK(tight.set_snapshots(settings(folder)));
        const ConversationId ta = tight.create_conversation(), tb = tight.create_conversation();
        LLAMADESK_VERIFY_OK(tight.generate(ta, a_text, greedy(20)).status);
        LLAMADESK_VERIFY_OK(tight.save_snapshot(ta));
        ConversationStats before;
        LLAMADESK_VERIFY_OK(tight.conversation_stats(ta, &before));
        LLAMADESK_VERIFY_OK(tight.generate(tb, b_text, greedy(20)).status);
        QCOMPARE(tight.pool_stats().evictions, int64_t(1));
        const GenerationResult again = tight.generate(ta, kFollowUp, greedy(12));
        LLAMADESK_VERIFY_OK(again.status);
        QCOMPARE(again.tokens, expected.tokens);
        QVERIFY(again.stats.restored_tokens >= 32);
        // What the eviction took is read back, but for the last partial block, which is computed.
        QCOMPARE(again.stats.reprefilled_tokens + again.stats.restored_tokens, before.cached_tokens);
        QCOMPARE(again.stats.restored_tokens, before.cached_tokens / 16 * 16);
    }

    void a_budget_must_be_positive() {
        Engine e;
        SnapshotSettings s = settings(dir_.filePath("none"), 0);
        QCOMPARE(e.set_snapshots(s).code, ErrorCode::InvalidArgument);
    }
};

QTEST_GUILESS_MAIN(TestKvSnapshots)
#include "test_kv_snapshots.moc"
