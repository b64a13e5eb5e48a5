// Corrupt and hostile checkpoint files: every one must end in an EngineError with the right code
// and a message naming the problem — never a crash, and never an allocation larger than the file.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <atomic>
#include <climits>
#include <cstring>
#include <cstdlib>
#include <new>
#include <random>

#include "reader_fixtures.h"
#include "readers/gguf_file.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

// The largest single allocation while tracking is on: a reader must not trust a size field to
// allocate before checking it against the file.
namespace {
std::atomic<bool> g_tracking{false};
std::atomic<size_t> g_largest_allocation{0};
}  // namespace

void* operator new(size_t n) {
    if (g_tracking.load(std::memory_order_relaxed)) {
        size_t cur = g_largest_allocation.load();
        while (n > cur && !g_largest_allocation.compare_exchange_weak(cur, n)) {}
    }
    if (void* p = std::malloc(n == 0 ? 1 : n)) return p;
    throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

namespace {

using Patch = std::function<void(QByteArray&)>;

struct HostileCase {
    const char* name;
    Patch patch;
    ErrorCode code;
    const char* message;
};

// Opens path with allocation tracking; returns an error description or empty when `code` and
// `substring` came back and no allocation exceeded the file's size.
QString open_expecting(const QString& path, ErrorCode code, const QString& substring,
                       QString* message = nullptr) {
    const qint64 file_size = QFileInfo(path).size();
    g_largest_allocation = 0;
    g_tracking = true;
    QString why = expect_error([&] { validate_weights(open_checkpoint(path.toStdString())); }, code,
                               substring, message);
    g_tracking = false;
    if (why.isEmpty() && qint64(g_largest_allocation.load()) > std::max<qint64>(file_size, 4096))
        why = QStringLiteral("allocated %1 bytes for a file of %2").arg(g_largest_allocation.load()).arg(file_size);
    return why;
}

QByteArray tiny_gguf(const QTemporaryDir& dir, DType dtype = DType::F32) {
    const QString path = dir.filePath("tiny-source.gguf");
    write_gguf(make_synthetic_checkpoint(tiny_config(), dtype, 77, false), path.toStdString());
    return read_all(path);
}

QByteArray tiny_llama2c(const QTemporaryDir& dir) {
    const QString path = dir.filePath("tiny-source.bin");
    write_llama2c(make_synthetic_checkpoint(tiny_config(), DType::F32, 77, true), path.toStdString());
    return read_all(path);
}

// Patches applied to a GGUF's n_dims, dimensions, type or offset of one tensor.
qint64 tensor_field(const QByteArray& f, const char* name, int field) {  // 0 n_dims, 1 ne0, 2 ne1
    const qint64 at = gguf_tensor_info_offset(f, name);
    quint32 n_dims;
    std::memcpy(&n_dims, f.constData() + at, 4);
    if (field == 0) return at;
    if (field <= 2) return at + 4 + 8 * (field - 1);
    return at + 4 + 8 * qint64(n_dims) + (field == 3 ? 0 : 4);  // 3 type, 4 offset
}
constexpr int kNDims = 0, kNe0 = 1, kNe1 = 2, kType = 3, kOffset = 4;

// At the value of a scalar key (after its type).
qint64 value_at(const QByteArray& f, const char* key) { return gguf_value_offset(f, key) + 4; }

std::vector<HostileCase> gguf_cases() {
    const ErrorCode bad = ErrorCode::BadFormat, unsupported = ErrorCode::Unsupported;
    return {
        {"wrong magic", [](QByteArray& f) { f[0] = 'X'; }, bad, "GGUF magic"},
        {"version 1", [](QByteArray& f) { poke<quint32>(f, 4, 1); }, unsupported, "version 1"},
        {"version 7", [](QByteArray& f) { poke<quint32>(f, 4, 7); }, unsupported, "version 7"},
        {"big-endian", [](QByteArray& f) { poke<quint32>(f, 4, 0x03000000u); }, unsupported, "big-endian"},
        {"tensor count 2^40", [](QByteArray& f) { poke<quint64>(f, 8, quint64(1) << 40); }, bad, "tensor count"},
        {"metadata count 2^62", [](QByteArray& f) { poke<quint64>(f, 16, quint64(1) << 62); }, bad, "metadata count"},
        {"n_layers 2^31", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.block_count"), 0x80000000u); }, bad, "block_count"},
        {"n_layers 0", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.block_count"), 0); }, bad, "n_layers is 0"},
        {"n_layers 4 (a layer missing)", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.block_count"), 4); }, bad, "too few for 4 layers"},
        {"dim 2^31-1", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.embedding_length"), 0x7fffffffu); }, bad, "dim is 2147483647"},
        {"heads not dividing dim", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.attention.head_count"), 5); }, bad, "does not divide dim"},
        {"kv heads not dividing heads", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.attention.head_count_kv"), 3); }, bad, "does not divide n_heads"},
        {"vocab 0", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "token_embd.weight", kNe1), 0); }, bad, "absurd dimension 0"},
        {"dimension 2^50", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "token_embd.weight", kNe0), quint64(1) << 50); }, bad, "absurd dimension"},
        {"9 dimensions", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "output.weight", kNDims), 9); }, bad, "9 dimensions"},
        {"huge string length", [](QByteArray& f) { poke<quint64>(f, gguf_value_offset(f, "general.architecture") + 4, quint64(1) << 62); }, bad, "general.architecture"},
        {"huge array length", [](QByteArray& f) { poke<quint64>(f, gguf_value_offset(f, "tokenizer.ggml.tokens") + 8, quint64(1) << 60); }, bad, "array length"},
        {"huge string in array", [](QByteArray& f) { poke<quint64>(f, gguf_value_offset(f, "tokenizer.ggml.tokens") + 16, ~quint64(0)); }, bad, "string array element"},
        {"unknown value type", [](QByteArray& f) { poke<quint32>(f, gguf_value_offset(f, "general.name"), 99); }, bad, "unknown GGUF value type 99"},
        {"unknown array element type", [](QByteArray& f) { poke<quint32>(f, gguf_value_offset(f, "tokenizer.ggml.scores") + 4, 13); }, bad, "unknown GGUF value type 13"},
        {"key of wrong type", [](QByteArray& f) { poke<quint32>(f, gguf_value_offset(f, "llama.block_count"), 6); }, bad, "llama.block_count should be an integer, not float32"},
        {"alignment 3", [](QByteArray& f) { poke<quint32>(f, value_at(f, "general.alignment"), 3); }, bad, "general.alignment"},
        {"architecture falco", [](QByteArray& f) { f.replace(value_at(f, "general.architecture") + 8, 5, "falco"); }, unsupported, "architecture 'falco'"},
        {"tensor data past the end", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "output.weight", kOffset), quint64(1) << 30); }, bad, "output.weight extends past the end of the file"},
        {"tensor offset overflow", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "output.weight", kOffset), ~quint64(31)); }, bad, "extends past the end"},
        {"misaligned tensor", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "blk.1.attn_k.weight", kOffset), 4); }, bad, "not a multiple of the alignment"},
        {"duplicate tensor", [](QByteArray& f) { f.replace(gguf_tensor_info_offset(f, "blk.1.ffn_up.weight") - 15, 1, "0"); }, bad, "blk.0.ffn_up.weight' appears twice"},
        {"missing tensor", [](QByteArray& f) { f.replace(gguf_tensor_info_offset(f, "blk.2.ffn_up.weight") - 9, 2, "UP"); }, bad, "lacks tensor blk.2.ffn_up.weight"},
        {"wrong shape", [](QByteArray& f) { poke<quint64>(f, tensor_field(f, "blk.0.attn_q.weight", kNe0), 8); }, bad, "blk.0.attn_q.weight has shape [8, 16]"},
        {"row not whole Q4_0 blocks", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "blk.1.ffn_down.weight", kType), 2); }, bad,
         "GGUF tensor blk.1.ffn_down.weight has rows of 40 elements, not a multiple of Q4_0's block of 32"},
        {"row not whole Q6_K blocks", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "token_embd.weight", kType), 14); }, bad, "not a multiple of Q6_K's block of 256"},
        {"quantized Q2_K", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "token_embd.weight", kType), 10); }, unsupported,
         "GGUF tensor token_embd.weight has type Q2_K, which this version of LlamaDesk cannot use (it reads f32, f16, bf16, q8_0"},
        {"integer tensor", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "token_embd.weight", kType), 26); }, unsupported, "type I32"},
        {"unknown tensor type 4", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "blk.0.attn_v.weight", kType), 4); }, bad, "unknown tensor type 4"},
        {"unknown tensor type 1000", [](QByteArray& f) { poke<quint32>(f, tensor_field(f, "blk.0.attn_v.weight", kType), 1000); }, bad, "unknown tensor type 1000"},
        {"bos id out of range", [](QByteArray& f) { poke<quint32>(f, value_at(f, "tokenizer.ggml.bos_token_id"), 5000); }, bad, "bos_token_id = 5000"},
        {"token type 9", [](QByteArray& f) { poke<qint32>(f, gguf_value_offset(f, "tokenizer.ggml.token_type") + 16, 9); }, bad, "token_type of token 0 is 9 "},
        {"partial rotary", [](QByteArray& f) { poke<quint32>(f, value_at(f, "llama.rope.dimension_count"), 2); }, unsupported, "rope.dimension_count"},
        {"rope base NaN", [](QByteArray& f) { poke<float>(f, value_at(f, "llama.rope.freq_base"), std::nanf("")); }, bad, "rope_theta"},
    };
}

std::vector<HostileCase> llama2c_cases() {
    const ErrorCode bad = ErrorCode::BadFormat;
    auto field = [](int i, int32_t v) { return [i, v](QByteArray& f) { poke<qint32>(f, 4 * i, v); }; };
    return {
        {"n_layers 2^31", field(2, INT_MIN), bad, "n_layers is -2147483648"},
        {"n_layers 1000", field(2, 1000), bad, "but the file is"},
        {"dim 2^30", field(0, 1 << 30), bad, "dim is 1073741824"},
        {"vocab 0", field(5, 0), bad, "vocab_size is 0"},
        {"vocab -2^31", field(5, INT_MIN), bad, "vocab_size is -2147483648"},
        {"vocab sign flipped", field(5, -300), bad, "separate classifier"},
        {"heads not dividing dim", field(3, 3), bad, "does not divide dim"},
        {"kv heads not dividing heads", field(4, 3), bad, "does not divide n_heads"},
        {"seq_len 0", field(6, 0), bad, "seq_len is 0"},
        {"seq_len 2^31-1", field(6, INT_MAX), bad, "seq_len"},
    };
}

}  // namespace

class TestHostileFiles : public QObject {
    Q_OBJECT

private slots:
    void gguf_patched_data() {
        QTest::addColumn<int>("index");
        const std::vector<HostileCase> cases = gguf_cases();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << int(i);
    }
    void gguf_patched() {
        QFETCH(int, index);
        const HostileCase c = gguf_cases()[size_t(index)];
        QTemporaryDir dir;
        QByteArray bytes = tiny_gguf(dir);
        const qint64 size = bytes.size();
        c.patch(bytes);
        QCOMPARE(bytes.size(), size);  // the patch found its field
        const QString path = dir.filePath("hostile.gguf");
        write_all(path, bytes);
        QString message;
        const QString why = open_expecting(path, c.code, QString::fromUtf8(c.message), &message);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("%s", qPrintable(message));  // what the user would read
    }

    void gguf_hostile_metadata_data() {
        QTest::addColumn<int>("which");
        QTest::newRow("arrays nested 5 deep") << 0;
        QTest::newRow("array of 2^58 arrays") << 1;
        QTest::newRow("duplicate key") << 2;
    }
    void gguf_hostile_metadata() {
        QFETCH(int, which);
        KvBytes kv;
        QString expected;
        if (which == 0) {
            kv.key("t.deep", GgufType::Array);
            for (int depth = 0; depth < 5; ++depth) {
                kv.raw<quint32>(quint32(depth < 4 ? GgufType::Array : GgufType::UInt8));
                kv.raw<quint64>(1);
            }
            kv.raw<quint8>(7);
            expected = "nested deeper";
        } else if (which == 1) {
            kv.key("t.many", GgufType::Array);
            kv.raw<quint32>(quint32(GgufType::Array));
            kv.raw<quint64>(quint64(1) << 58);
            expected = "array length 288230376151711744";
        } else {
            kv.key("general.architecture", GgufType::String);
            kv.str("llama");
            expected = "'general.architecture' appears twice";
        }
        QTemporaryDir dir;
        const QString path = dir.filePath("hostile.gguf");
        write_all(path, with_extra_metadata(tiny_gguf(dir), kv));
        const QString why = open_expecting(path, ErrorCode::BadFormat, expected);
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void unusable_vocabulary_replaced_by_tokenizer_path() {
        QTemporaryDir dir;
        QByteArray bytes = tiny_gguf(dir);
        bytes.replace(value_at(bytes, "tokenizer.ggml.model") + 8, 5, "gpt2x");
        const QString path = dir.filePath("gpt2.gguf");
        write_all(path, bytes);
        const QString why = open_expecting(path, ErrorCode::Unsupported, "tokenizer.ggml.model is 'gpt2x'");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        write_all(dir.filePath("tokenizer.model"), "x");
        const Checkpoint c = open_checkpoint(path.toStdString(), dir.filePath("tokenizer.model").toStdString());
        QVERIFY(!c.tokenizer.embedded);
    }

    void llama2c_patched_data() {
        QTest::addColumn<int>("index");
        const std::vector<HostileCase> cases = llama2c_cases();
        for (size_t i = 0; i < cases.size(); ++i) QTest::newRow(cases[i].name) << int(i);
    }
    void llama2c_patched() {
        QFETCH(int, index);
        const HostileCase c = llama2c_cases()[size_t(index)];
        QTemporaryDir dir;
        QByteArray bytes = tiny_llama2c(dir);
        c.patch(bytes);
        const QString path = dir.filePath("hostile.bin");
        write_all(path, bytes);
        QString message;
        const QString why = open_expecting(path, c.code, QString::fromUtf8(c.message), &message);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("%s", qPrintable(message));  // what the user would read
    }

    void llama2c_versioned_header() {
        QTemporaryDir dir;
        QByteArray header(256, '\0');
        poke<quint32>(header, 0, 0x616b3432u);
        poke<qint32>(header, 4, 2);
        const QString path = dir.filePath("q80.bin");
        write_all(path, header);
        QString why = open_expecting(path, ErrorCode::Unsupported, "version 2");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        poke<qint32>(header, 4, 9);
        write_all(path, header);
        why = open_expecting(path, ErrorCode::Unsupported, "version 9");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        poke<qint32>(header, 4, 1);  // version 1 with an all-zero config
        write_all(path, header);
        why = open_expecting(path, ErrorCode::BadFormat, "dim is 0");
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void other_formats_and_empty_files() {
        QTemporaryDir dir;
        write_all(dir.filePath("empty.bin"), {});
        QString why = open_expecting(dir.filePath("empty.bin"), ErrorCode::BadFormat, "file ends inside");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        write_all(dir.filePath("model.safetensors"), QByteArray(64, 'x'));
        why = open_expecting(dir.filePath("model.safetensors"), ErrorCode::BadFormat, "is not in a Hugging Face model folder");
        QVERIFY2(why.isEmpty(), qPrintable(why));
        write_all(dir.filePath("text.bin"), QByteArray("Once upon a time there was a file of text."));
        why = open_expecting(dir.filePath("text.bin"), ErrorCode::BadFormat, "text.bin");
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    // A Q4_K_M file (Q4_K; Q6_K on the classifier and on ffn_down of the last layer): a quantized tensor
    // whose bytes the file does not hold, because the file was cut or its type claims more bytes a
    // row than were written, or whose rows are not whole blocks, is refused naming the tensor.
    void gguf_quantized_tensor_bytes_data() {
        QTest::addColumn<int>("which");
        QTest::newRow("cut inside the last tensor") << 0;
        QTest::newRow("cut inside a middle tensor") << 1;
        QTest::newRow("Q6_K classifier claims Q8_0") << 2;
        QTest::newRow("Q4_K rows of 320") << 3;
    }
    void gguf_quantized_tensor_bytes() {
        QFETCH(int, which);
        QTemporaryDir dir;
        const ModelConfig c{256, 512, 2, 4, 2, 300, 64};
        WeightMix mix(DType::Q4_K);
        mix.medium = true;
        const QString source = dir.filePath("q4_k_m.gguf");
        write_gguf(make_synthetic_checkpoint(c, mix, 5, false), source.toStdString());
        QByteArray bytes = read_all(source);
        const GgufFile parsed = parse_gguf(reinterpret_cast<const uint8_t*>(bytes.constData()),
                                           uint64_t(bytes.size()), "q4_k_m", true);
        auto tensor = [&](std::string_view name) {
            for (const GgufTensorInfo& t : parsed.tensors)
                if (t.name == name) return t;
            qFatal("no tensor %s", std::string(name).c_str());
        };
        const GgufTensorInfo output = tensor("output.weight"), down = tensor("blk.1.ffn_down.weight");
        QCOMPARE(output.type, 14u);  // Q6_K
        QCOMPARE(down.type, 14u);
        QCOMPARE(tensor("blk.0.attn_q.weight").type, 12u);  // Q4_K
        QString expected;
        if (which == 0) {
            bytes.truncate(qsizetype(parsed.data_offset + output.offset + 210 * 100));
            expected = "output.weight extends past the end of the file";
        } else if (which == 1) {
            bytes.truncate(qsizetype(parsed.data_offset + down.offset + 5));
            expected = "blk.1.ffn_down.weight extends past the end of the file";
        } else if (which == 2) {
            poke<quint32>(bytes, tensor_field(bytes, "output.weight", kType), 8);
            expected = "output.weight extends past the end of the file";
        } else {
            poke<quint64>(bytes, tensor_field(bytes, "blk.1.attn_k.weight", kNe0), 320);
            expected = "blk.1.attn_k.weight has rows of 320 elements, not a multiple of Q4_K's block of 256";
        }
        const QString path = dir.filePath("hostile.gguf");
        write_all(path, bytes);
        QString message;
        const QString why = open_expecting(path, ErrorCode::BadFormat, expected, &message);
        QVERIFY2(why.isEmpty(), qPrintable(why));
        qInfo("%s", qPrintable(message));
    }

    // Every truncation inside the header, metadata and tensor infos, then a sample of the data.
    void gguf_truncated_everywhere() {
        QTemporaryDir dir;
        const QByteArray full = tiny_gguf(dir, DType::F16);
        const GgufFile parsed = parse_gguf(reinterpret_cast<const uint8_t*>(full.constData()),
                                           uint64_t(full.size()), "full", true);
        qint64 needed = 0;  // the end of the last tensor's data: trailing padding may be cut
        for (const GgufTensorInfo& t : parsed.tensors)
            needed = std::max<qint64>(needed, qint64(parsed.data_offset + t.offset) +
                                                  t.ne[0] * t.ne[1] * 2);
        const QString path = dir.filePath("cut.gguf");
        write_all(path, full);
        QFile file(path);
        int checked = 0;
        for (qint64 n = needed - 1; n >= 0; --n) {
            if (n > qint64(parsed.data_offset) && n % 61 != 0 && n != needed - 1) continue;
            QVERIFY(file.resize(n));
            const QString why = open_expecting(path, ErrorCode::BadFormat, "cut.gguf");
            QVERIFY2(why.isEmpty(), qPrintable(QStringLiteral("cut at %1: %2").arg(n).arg(why)));
            ++checked;
        }
        QVERIFY(checked > 5000);
        write_all(path, full.left(needed));
        validate_weights(open_checkpoint(path.toStdString()));
    }

    void llama2c_truncated_everywhere() {
        QTemporaryDir dir;
        const QByteArray full = tiny_llama2c(dir);
        const QString path = dir.filePath("cut.bin");
        write_all(path, full);
        QFile file(path);
        for (qint64 n = full.size() - 1; n >= 0; --n) {
            if (n > 512 && n % 97 != 0 && n != full.size() - 1) continue;
            QVERIFY(file.resize(n));
            const QString why = open_expecting(path, ErrorCode::BadFormat, "cut.bin");
            QVERIFY2(why.isEmpty(), qPrintable(QStringLiteral("cut at %1: %2").arg(n).arg(why)));
        }
    }

    // Random bytes overwritten in the header, metadata and tensor infos: whatever the result, it
    // is a clean success or an EngineError, without a huge allocation.
    void gguf_random_corruption() {
        QTemporaryDir dir;
        const QByteArray full = tiny_gguf(dir);
        const GgufFile parsed = parse_gguf(reinterpret_cast<const uint8_t*>(full.constData()),
                                           uint64_t(full.size()), "full", true);
        const QString path = dir.filePath("corrupt.gguf");
        std::mt19937 rng(1234);
        int failures = 0;
        for (int trial = 0; trial < 2000; ++trial) {
            QByteArray bytes = full;
            const int n_bytes = 1 + int(rng() % 4);
            for (int i = 0; i < n_bytes; ++i)
                bytes[qsizetype(rng() % parsed.data_offset)] = char(rng());
            write_all(path, bytes);
            g_largest_allocation = 0;
            g_tracking = true;
            try {
                validate_weights(open_checkpoint(path.toStdString()));
            } catch (const EngineError&) {
                ++failures;
            } catch (const std::exception& e) {
                g_tracking = false;
                QFAIL(qPrintable(QStringLiteral("trial %1: %2").arg(trial).arg(e.what())));
            }
            g_tracking = false;
            QVERIFY2(qint64(g_largest_allocation.load()) <= full.size(),
                     qPrintable(QStringLiteral("trial %1 allocated %2 bytes").arg(trial).arg(g_largest_allocation.load())));
        }
        QVERIFY(failures > 100);  // the corruption does hit fields that matter
    }

    void non_finite_weights_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<bool>("nan");
        for (const DType d : {DType::F32, DType::F16, DType::BF16}) {
            QTest::addRow("%s NaN", dtype_name(d)) << d << true;
            QTest::addRow("%s Inf", dtype_name(d)) << d << false;
        }
    }
    void non_finite_weights() {
        QFETCH(DType, dtype);
        QFETCH(bool, nan);
        QTemporaryDir dir;
        QByteArray bytes = tiny_gguf(dir, dtype);
        const GgufFile parsed = parse_gguf(reinterpret_cast<const uint8_t*>(bytes.constData()),
                                           uint64_t(bytes.size()), "f", true);
        for (const GgufTensorInfo& t : parsed.tensors) {
            if (t.name != "blk.2.ffn_up.weight") continue;
            const qint64 at = qint64(parsed.data_offset + t.offset) + qint64(weight_type(dtype).bytes(123));
            if (dtype == DType::F32) poke<quint32>(bytes, at, nan ? 0x7fc00001u : 0xff800000u);
            if (dtype == DType::F16) poke<quint16>(bytes, at, nan ? 0x7e01 : 0x7c00);
            if (dtype == DType::BF16) poke<quint16>(bytes, at, nan ? 0xffc1 : 0x7f80);
        }
        const QString path = dir.filePath("nan.gguf");
        write_all(path, bytes);
        const QString why = open_expecting(
            path, ErrorCode::BadFormat,
            QStringLiteral("tensor blk.2.ffn_up.weight contains %1 at element 123").arg(nan ? "NaN" : "Inf"));
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }

    void non_finite_norm_in_llama2c() {
        QTemporaryDir dir;
        QByteArray bytes = tiny_llama2c(dir);
        const ModelConfig c = tiny_config();
        // Legacy layout: header, token embedding, then the attention norms of all layers.
        const qint64 at = 28 + 4 * (qint64(c.vocab_size) * c.dim + c.dim + 7);
        poke<float>(bytes, at, std::nanf(""));
        const QString path = dir.filePath("nan.bin");
        write_all(path, bytes);
        const QString why = open_expecting(path, ErrorCode::BadFormat,
                                           "tensor blk.1.attn_norm.weight contains NaN at element 7");
        QVERIFY2(why.isEmpty(), qPrintable(why));
    }
};

QTEST_APPLESS_MAIN(TestHostileFiles)
#include "test_hostile_files.moc"
