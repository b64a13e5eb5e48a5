// Checkpoint readers on well-formed files: the real stories260K files, GGUF metadata of every
// type, folders, and where the tokenizer comes from.
#include <QDir>
#include <QFileInfo>
#include <QTemporaryDir>
#include <QtTest>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>

#include "reader_fixtures.h"
#include "backends/cpu/cpu_backend.h"
#include "readers/gguf_file.h"
#include "readers/gguf_reader.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

void touch(const QString& path) { write_all(path, "x"); }

// Whether the mapping holding p is anonymous memory rather than a file's: /proc/self/maps names the
// file of a file mapping. (std::ifstream: QFile takes a /proc file's size, 0, for its end.)
bool anonymous(const void* p) {
    std::ifstream maps("/proc/self/maps");
    const auto at = reinterpret_cast<unsigned long long>(p);
    for (std::string line; std::getline(maps, line);) {
        unsigned long long from = 0, to = 0;
        char path[512] = "";
        if (std::sscanf(line.c_str(), "%llx-%llx %*s %*s %*s %*s %511s", &from, &to, path) < 2) continue;
        if (at >= from && at < to) return path[0] != '/';
    }
    QTest::qFail("no mapping holds the address", __FILE__, __LINE__);
    return false;
}

// Whether the mapping holding p was asked for 2 MiB pages (MADV_HUGEPAGE: "hg" in its VmFlags).
// Whether Linux then gave them depends on its settings and free memory; the advice is ours. A
// kernel built without transparent huge pages refuses the advice: there it is true with a word.
bool advised_huge_pages(const void* p) {
    if (!QFileInfo::exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
        qInfo("this kernel has no transparent huge pages: the advice for 2 MiB pages is not checked");
        return true;
    }
    std::ifstream smaps("/proc/self/smaps");
    const auto at = reinterpret_cast<unsigned long long>(p);
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        unsigned long long from = 0, to = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx ", &from, &to) == 2 && line.find(':') > line.find(' '))
            inside = at >= from && at < to;
        else if (inside && line.rfind("VmFlags:", 0) == 0)
            return (line + " ").find(" hg ") != std::string::npos;
    }
    QTest::qFail("no mapping holds the address", __FILE__, __LINE__);
    return false;
}

}  // namespace

class TestReaders : public QObject {
    Q_OBJECT

private slots:
    void stories260K_bin_and_gguf_agree() {
        LLAMADESK_REQUIRE_SHARED(bin_path, "models/stories260K/stories260K.bin");
        LLAMADESK_REQUIRE_SHARED(gguf_path, "models/stories260K/stories260K.gguf");
        const Checkpoint bin = open_checkpoint(bin_path.toStdString());
        const Checkpoint gguf = open_checkpoint(gguf_path.toStdString());
        for (const Checkpoint* c : {&bin, &gguf}) {
            QCOMPARE(c->config.dim, 64);
            QCOMPARE(c->config.hidden_dim, 172);
            QCOMPARE(c->config.n_layers, 5);
            QCOMPARE(c->config.n_heads, 8);
            QCOMPARE(c->config.n_kv_heads, 4);
            QCOMPARE(c->config.vocab_size, 512);
            QCOMPARE(c->config.rope_theta, 10000.0f);
            QCOMPARE(c->main_weight_dtype(), DType::F32);
            validate_weights(*c);
        }
        QCOMPARE(bin.config.seq_len, 512);
        QCOMPARE(gguf.config.seq_len, 2048);
        QCOMPARE(bin.format, std::string("llama2c"));
        QCOMPARE(gguf.format, std::string("gguf"));
        // The .bin shares its classifier with the embedding; the .gguf stores a copy.
        QVERIFY(bin.weights.output.data == bin.weights.token_embedding.data);
        QVERIFY(gguf.weights.output.data != gguf.weights.token_embedding.data);
        QCOMPARE(bin.n_params(), expected_params(bin.config, true));
        QCOMPARE(bin.n_params(), int64_t(260032));
        const QString diff = compare_checkpoints(bin, gguf);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));

        QVERIFY(QString::fromStdString(bin.tokenizer.model_file).endsWith("tok512.model"));
        QVERIFY(!bin.tokenizer.embedded);
        QVERIFY(gguf.tokenizer.model_file.empty());
        QVERIFY(gguf.tokenizer.embedded);
        QCOMPARE(gguf.tokenizer.embedded->tokens.size(), size_t(512));
        QCOMPARE(gguf.tokenizer.embedded->tokens[1], std::string("<s>"));
        QCOMPARE(gguf.tokenizer.embedded->bos_id, 1);
        QCOMPARE(gguf.tokenizer.embedded->eos_id, 2);
        QVERIFY(QString::fromStdString(gguf.tokenizer.describe()).contains("512 tokens"));
    }

    void folder_picks_its_checkpoint() {
        LLAMADESK_REQUIRE_SHARED(stories, "models/stories260K");
        // stories260K/ holds a .gguf, a .bin and a llama2.c tokenizer.bin: the GGUF wins.
        const Checkpoint a = open_checkpoint(stories.toStdString());
        QVERIFY(QString::fromStdString(a.path).endsWith("stories260K.gguf"));
        LLAMADESK_REQUIRE_SHARED(baby, "models/babyllama");
        // babyllama/ holds model5000.bin and tok105.bin: only the first is a checkpoint.
        const Checkpoint b = open_checkpoint(baby.toStdString());
        QVERIFY(QString::fromStdString(b.path).endsWith("model5000.bin"));
        QCOMPARE(b.config.dim, 128);
        QCOMPARE(b.config.vocab_size, 105);
        QVERIFY(QString::fromStdString(b.tokenizer.model_file).endsWith("tok105.model"));
    }

    void folder_skips_vocabulary_only_gguf() {
        QTemporaryDir dir;
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 1);
        write_gguf(s, dir.filePath("vocab.gguf").toStdString());
        QByteArray vocab_only = read_all(dir.filePath("vocab.gguf"));
        poke<quint64>(vocab_only, 8, 0);  // tensor count
        write_all(dir.filePath("vocab.gguf"), vocab_only);
        write_llama2c(s, dir.filePath("model.bin").toStdString());
        const Checkpoint r = open_checkpoint(dir.path().toStdString());
        QCOMPARE(r.path, dir.filePath("model.bin").toStdString());
    }

    void folder_with_several_or_no_checkpoints() {
        QTemporaryDir dir;
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 1);
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(dir.path().toStdString()), ErrorCode::FileNotFound,
                                "no checkpoint");
        write_gguf(s, dir.filePath("a.gguf").toStdString());
        write_gguf(s, dir.filePath("b.gguf").toStdString());
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(dir.path().toStdString()),
                                ErrorCode::InvalidArgument, "b.gguf");
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(dir.filePath("missing.gguf").toStdString()),
                                ErrorCode::FileNotFound, "missing.gguf");
    }

    void gguf_vocabulary_only_file() {
        LLAMADESK_REQUIRE_SHARED(path, "models/llama2-tokenizer/ggml-vocab-llama-spm.gguf");
        const std::shared_ptr<EmbeddedVocab> v = read_gguf_vocabulary(path.toStdString());
        QCOMPARE(v->model, std::string("llama"));
        QCOMPARE(v->tokens.size(), size_t(32000));
        QCOMPARE(v->scores.size(), size_t(32000));
        QCOMPARE(v->token_types.size(), size_t(32000));
        QCOMPARE(v->tokens[0], std::string("<unk>"));
        QCOMPARE(v->tokens[3], std::string("<0x00>"));
        QCOMPARE(v->token_types[3], 6);
        QCOMPARE(v->token_types[1], 3);
        QCOMPARE(v->bos_id, 1);
        QCOMPARE(v->eos_id, 2);
        QCOMPARE(v->unk_id, 0);
        // As a model it is refused: it has no tensors.
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(path.toStdString()), ErrorCode::BadFormat,
                                "no tensors");
    }

    void gguf_metadata_of_every_type() {
        KvBytes kv;
        kv.key("t.u8", GgufType::UInt8); kv.raw<quint8>(200);
        kv.key("t.i8", GgufType::Int8); kv.raw<qint8>(-100);
        kv.key("t.u16", GgufType::UInt16); kv.raw<quint16>(60000);
        kv.key("t.i16", GgufType::Int16); kv.raw<qint16>(-30000);
        kv.key("t.i32", GgufType::Int32); kv.raw<qint32>(-2000000000);
        kv.key("t.u64", GgufType::UInt64); kv.raw<quint64>(quint64(1) << 40);
        kv.key("t.i64", GgufType::Int64); kv.raw<qint64>(-(qint64(1) << 40));
        kv.key("t.f64", GgufType::Float64); kv.raw<double>(0.125);
        kv.key("t.bool", GgufType::Bool); kv.raw<quint8>(1);
        kv.key("t.nested", GgufType::Array);  // [[1, 2], ["a"]]
        kv.raw<quint32>(quint32(GgufType::Array)); kv.raw<quint64>(2);
        kv.raw<quint32>(quint32(GgufType::Int16)); kv.raw<quint64>(2); kv.raw<qint16>(1); kv.raw<qint16>(2);
        kv.raw<quint32>(quint32(GgufType::String)); kv.raw<quint64>(1); kv.str("a");
        kv.key("t.empty", GgufType::Array);
        kv.raw<quint32>(quint32(GgufType::Float64)); kv.raw<quint64>(0);

        QTemporaryDir dir;
        const QString path = dir.filePath("m.gguf");
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 4);
        write_gguf(s, path.toStdString());
        const QByteArray bytes = with_extra_metadata(read_all(path), kv);
        write_all(path, bytes);
        const GgufFile f = parse_gguf(reinterpret_cast<const uint8_t*>(bytes.constData()),
                                      uint64_t(bytes.size()), "m", true);
        QCOMPARE(*gguf_int(f, "t.u8"), int64_t(200));
        QCOMPARE(*gguf_int(f, "t.i8"), int64_t(-100));
        QCOMPARE(*gguf_int(f, "t.u16"), int64_t(60000));
        QCOMPARE(*gguf_int(f, "t.i16"), int64_t(-30000));
        QCOMPARE(*gguf_int(f, "t.i32"), int64_t(-2000000000));
        QCOMPARE(*gguf_int(f, "t.u64"), int64_t(1) << 40);
        QCOMPARE(*gguf_int(f, "t.i64"), -(int64_t(1) << 40));
        QCOMPARE(*gguf_float(f, "t.f64"), 0.125);
        QCOMPARE(*gguf_bool(f, "t.bool"), true);
        QCOMPARE(f.find("t.nested")->count, uint64_t(2));
        QVERIFY(!gguf_int(f, "t.absent"));
        LLAMADESK_REQUIRE_ERROR(gguf_string(f, "t.u8"), ErrorCode::BadFormat, "t.u8 should be a string");
        const QString diff = compare_checkpoints(s, open_checkpoint(path.toStdString()));
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    // Moved to memory for the CPU, a GGUF file keeps every tensor at its address with its bytes;
    // its pages become the process's own (anonymous), but for an untied token embedding's.
    void gguf_moves_to_memory_in_place() {
        for (const bool tied : {true, false}) {
            ModelConfig config = tiny_config();
            config.dim = 256;  // tensors of whole pages: only those move
            config.hidden_dim = 512;
            const Checkpoint s = make_synthetic_checkpoint(config, DType::F32, 5, tied);
            QTemporaryDir dir;
            const std::string path = dir.filePath("m.gguf").toStdString();
            write_gguf(s, path);
            const Checkpoint c = open_checkpoint(path);
            QVERIFY(c.move_to_memory);
            const TensorView& wq = c.weights.layers[0].wq;
            const TensorView& embedding = c.weights.token_embedding;
            const std::vector<uint8_t> before(static_cast<const uint8_t*>(wq.data),
                                              static_cast<const uint8_t*>(wq.data) + wq.n_bytes());
            // a page the tensor shares with its neighbour may stay mapped: look at its middle
            QVERIFY(!anonymous(wq.row(wq.rows / 2)));
            c.move_to_memory({});
            QVERIFY(std::equal(before.begin(), before.end(), static_cast<const uint8_t*>(wq.data)));
            QVERIFY(anonymous(wq.row(wq.rows / 2)));
            QVERIFY(advised_huge_pages(wq.row(wq.rows / 2)));  // decode streams it: fewer TLB misses
            QCOMPARE(anonymous(embedding.row(embedding.rows / 2)), tied);
        }
    }

    // On x86, the CPU backend keeps its own interleaved copy of every Q4_K, Q5_K, Q6_K and Q4_0 matrix whose rows
    // fill whole groups; the checkpoint's views of them stay the file's plain rows, mapped and not
    // moved, so the bytes are not held twice.
    void gguf_k_quant_matrices_are_held_once() {
        const cpu::Kernels& kernels = cpu::best_kernels();
        if (!kernels.interleave_rows) QSKIP("this CPU's kernels keep every matrix as stored");
        const ModelConfig config{256, 512, 2, 4, 2, 320, 48};  // an untied classifier of whole groups
        const Checkpoint s = make_synthetic_checkpoint(config, *WeightMix::parse("q4_k_m"), 3, false);
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.gguf").toStdString();
        write_gguf(s, path);
        const Checkpoint c = open_checkpoint(path);
        const TensorView& w1 = c.weights.layers[0].w1;
        const std::vector<uint8_t> before(static_cast<const uint8_t*>(w1.data),
                                          static_cast<const uint8_t*>(w1.data) + w1.n_bytes());
        cpu::CpuBackend backend(c, {1}, kernels);
        QCOMPARE(int(backend.copied_weights().size()), 7 * config.n_layers + 1);
        for (const TensorView& t : backend.copied_weights()) {
            QVERIFY(t.dtype == DType::Q4_K || t.dtype == DType::Q6_K);
            QCOMPARE(t.interleaved_rows, 0);
        }
        c.move_to_memory(backend.copied_weights());
        QVERIFY(std::equal(before.begin(), before.end(), static_cast<const uint8_t*>(w1.data)));
        QVERIFY(!anonymous(w1.row(w1.rows / 2)));
        // the backend's own memory, its copies and its KV pool, is asked for 2 MiB pages too
        backend.allocate_kv_pool(KvLayout{config.n_layers, config.n_kv_heads, config.head_dim(), 16}, 8);
        if (llamadesk::test::kSanitizerBuild)
            qInfo("the sanitizer build takes the KV pool from its heap (red zones), not a mapping: not checked here");
        else
            QVERIFY(advised_huge_pages(backend.kv_pool_data()));
    }

    void gguf_without_vocabulary() {
        Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 4);
        s.tokenizer.embedded.reset();
        QTemporaryDir dir;
        const std::string path = dir.filePath("novocab.gguf").toStdString();
        write_gguf(s, path);
        LLAMADESK_REQUIRE_ERROR(read_gguf_vocabulary(path), ErrorCode::TokenizerMismatch,
                                "no vocabulary");
        QVERIFY(!open_checkpoint(path).tokenizer.embedded);
        touch(dir.filePath("tokenizer.model"));
        QCOMPARE(open_checkpoint(path).tokenizer.model_file, dir.filePath("tokenizer.model").toStdString());
    }

    void tokenizer_found_beside_checkpoint() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 1);
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.bin").toStdString();
        write_llama2c(s, path);
        touch(dir.filePath("other.model"));
        QCOMPARE(open_checkpoint(path).tokenizer.model_file, dir.filePath("other.model").toStdString());
        touch(dir.filePath("second.model"));  // two unnamed candidates: neither is guessed
        QVERIFY(open_checkpoint(path).tokenizer.model_file.empty());
        touch(dir.filePath("tok300.model"));
        QCOMPARE(open_checkpoint(path).tokenizer.model_file, dir.filePath("tok300.model").toStdString());
        touch(dir.filePath("tokenizer.model"));
        QCOMPARE(open_checkpoint(path).tokenizer.model_file,
                 dir.filePath("tokenizer.model").toStdString());
    }

    void explicit_tokenizer_overrides() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 1);
        QTemporaryDir dir;
        const std::string gguf = dir.filePath("m.gguf").toStdString();
        write_gguf(s, gguf);
        touch(dir.filePath("my.model"));
        const Checkpoint a = open_checkpoint(gguf, dir.filePath("my.model").toStdString());
        QCOMPARE(a.tokenizer.model_file, dir.filePath("my.model").toStdString());
        QCOMPARE(a.tokenizer.describe(), "tokenizer model " + a.tokenizer.model_file);
        QVERIFY(!a.tokenizer.embedded);
        // A GGUF file can serve as the vocabulary of a llama2.c model.
        const std::string bin = dir.filePath("m.bin").toStdString();
        write_llama2c(s, bin);
        const Checkpoint b = open_checkpoint(bin, gguf);
        QVERIFY(b.tokenizer.embedded);
        QCOMPARE(b.tokenizer.embedded->tokens.size(), size_t(300));
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(bin, dir.filePath("nope.model").toStdString()),
                                ErrorCode::FileNotFound, "nope.model");
        LLAMADESK_REQUIRE_ERROR(read_gguf_vocabulary(bin), ErrorCode::BadFormat, "GGUF");
        write_all(dir.filePath("tok300.bin"), "llama2.c tokenizer");
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(gguf, dir.filePath("tok300.bin").toStdString()),
                                ErrorCode::Unsupported, "SentencePiece .model");
    }

};

QTEST_APPLESS_MAIN(TestReaders)
#include "test_readers.moc"
