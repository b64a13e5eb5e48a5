// KV snapshots on a small real filesystem (a tmpfs mounted for the test; mounting needs root, so
// without it the test skips): snapshots are a cache and never fill the disk that conversations are
// saved on, whatever their budget says.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <filesystem>
#include <memory>
#include <string>
#include <vector>

#include "cache/snapshot_store.h"
#include "test_support.h"

using namespace llamadesk;
namespace fs = std::filesystem;

namespace {

constexpr int64_t kMiB = int64_t(1) << 20;

}  // namespace

class TestSnapshotDisk : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;
    std::unique_ptr<test::ScratchMount> mount_;
    std::vector<std::string> log_;

    SnapshotStore store() {
        return SnapshotStore(dir_.filePath("kv").toStdString(), "identity", kMiB, int64_t(1) << 30,  // 1 GiB budget
                             [this](const std::string& line) { log_.push_back(line); });
    }
    int64_t available() const { return int64_t(fs::space(dir_.path().toStdString()).available); }
    bool logged(const std::string& part) const {
        for (const std::string& line : log_)
            if (line.find(part) != std::string::npos) return true;
        return false;
    }

private slots:
    void init() {
        mount_ = std::make_unique<test::ScratchMount>(dir_.path(), 16);
        if (!mount_->mounted()) QSKIP(test::kNoScratchMount);
        log_.clear();
    }
    void cleanup() { mount_.reset(); }

    // A 16 MiB disk and a 1 GiB budget: saving 40 blocks of 1 MiB keeps the disk's reserve (4 MiB)
    // free by evicting the least recently used blocks, the newest block reads back, and a
    // conversation of 3 MiB still fits.
    void snapshots_keep_the_reserve_free() {
        const SnapshotStore s = store();
        std::vector<std::byte> block(size_t(kMiB), std::byte{7}), back(block.size());
        const std::vector<int32_t> prefix{1, 2, 3};
        int written = 0;
        for (uint64_t key = 1; key <= 40; ++key) {
            written += s.write(key, prefix, block) ? 1 : 0;
            QVERIFY2(available() >= 4 * kMiB, qPrintable(QString("%1 bytes free after block %2").arg(available()).arg(key)));
        }
        QCOMPARE(written, 40);
        QVERIFY(logged("(what the disk has free, less its reserve)"));
        std::string why;
        QVERIFY2(s.read(40, prefix, back, &why), why.c_str());
        QVERIFY(!s.contains(1));
        QFile conversation(dir_.filePath("conversation.json"));
        QVERIFY(conversation.open(QIODevice::WriteOnly));
        QCOMPARE(conversation.write(QByteArray(int(3 * kMiB), 'x')), 3 * kMiB);
        QVERIFY(conversation.flush());
    }

    // Other files fill the disk: evicting every snapshot cannot make room, so the block is not
    // written, and the log says how much is free and how much stays free.
    void a_full_disk_gets_no_snapshot() {
        QFile filler(dir_.filePath("filler"));
        QVERIFY(filler.open(QIODevice::WriteOnly));
        QCOMPARE(filler.write(QByteArray(int(13 * kMiB), 'f')), 13 * kMiB);
        QVERIFY(filler.flush());
        const SnapshotStore s = store();
        const std::vector<std::byte> block(static_cast<size_t>(kMiB));
        QVERIFY(!s.write(1, std::vector<int32_t>{1}, block));
        QVERIFY(!s.contains(1));
        QVERIFY(logged("MiB stay free for conversations"));
    }
};

QTEST_GUILESS_MAIN(TestSnapshotDisk)
#include "test_snapshot_disk.moc"
