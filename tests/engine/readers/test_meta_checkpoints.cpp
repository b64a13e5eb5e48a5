// Meta checkpoint folders (params.json, consolidated.NN.pth, tokenizer.model): write_meta and the
// reader round-trip every tensor (one shard and model-parallel shards joined at load); the real
// stories260K and babyllama give llama2.c's greedy text; the restricted unpickler refuses every
// GLOBAL but the tensor ones by name, and hostile pickles, zips and params get clear errors.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <cstring>

#include "llamadesk/engine.h"
#include "model/tensor_slots.h"
#include "reader_fixtures.h"
#include "readers/meta_reader.h"
#include "readers/torch_pickle.h"
#include "readers/zip_archive.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/zip_writer.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

Q_DECLARE_METATYPE(llamadesk::DType)

namespace {

ModelConfig even_config() {  // every split dimension divides by 2
    ModelConfig c = tiny_config();
    c.vocab_size += c.vocab_size % 2;
    return c;
}

// Pickle bytes, written out opcode by opcode.
struct Pickle {
    QByteArray bytes;
    Pickle& op(const char* ops) { bytes += ops; return *this; }
    Pickle& byte(int b) { bytes += char(b); return *this; }
    Pickle& text(const QByteArray& s) {  // BINUNICODE
        const quint32 n = quint32(s.size());
        bytes += 'X';
        bytes += QByteArray(reinterpret_cast<const char*>(&n), 4);
        bytes += s;
        return *this;
    }
    Pickle& global(const QByteArray& module_and_name) { bytes += "c" + module_and_name; return *this; }
    Pickle& int32(qint32 v) { bytes += 'J'; bytes += QByteArray(reinterpret_cast<const char*>(&v), 4); return *this; }
};

// A protocol-2 pickle of {"w": a 2 x 2 tensor over storage "0" of 4 elements}; the function called
// and the storage type can be swapped for hostile ones.
QByteArray tensor_pickle(const QByteArray& callable = "torch._utils\n_rebuild_tensor_v2\n",
                         const QByteArray& storage = "torch\nFloatStorage\n", qint32 offset = 0) {
    Pickle p;
    p.byte(0x80).byte(2).op("}(").text("w").global(callable).op("((").text("storage").global(storage);
    p.text("0").text("cpu").int32(4).op("tQ").int32(offset);
    p.int32(2).int32(2).byte(0x86).int32(2).int32(1).byte(0x86).byte(0x89).op("NtRu.");
    return p.bytes;
}

QString pth_with(const QTemporaryDir& dir, const QByteArray& pickle, int storage_bytes = 16) {
    const QString path = dir.filePath("x.pth");
    write_stored_zip(path.toStdString(), {{"x/data.pkl", pickle.toStdString()}, {"x/data/0", std::string(size_t(storage_bytes), '\0')}});
    return path;
}

std::vector<PickledTensor> read_pth(const QString& path) {
    QFile f(path);
    f.open(QIODevice::ReadOnly);
    const QByteArray bytes = f.readAll();
    const auto entries = read_zip_entries(reinterpret_cast<const uint8_t*>(bytes.constData()), uint64_t(bytes.size()),
                                          path.toStdString());
    for (const ZipEntry& e : entries)
        if (e.name == "x/data.pkl")
            return read_torch_state_dict(std::string_view(reinterpret_cast<const char*>(e.data), e.size), "data.pkl");
    return {};
}

}  // namespace

class TestMetaCheckpoints : public QObject {
    Q_OBJECT

private slots:
    void ffn_width_is_meta_formula() {
        QCOMPARE(meta_ffn_width(4096, 256, 0), 11008);   // Llama 2 7B
        QCOMPARE(meta_ffn_width(5120, 256, 0), 13824);   // 13B
        QCOMPARE(meta_ffn_width(8192, 4096, 1.3), 28672);  // 70B
    }

    void round_trip_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<bool>("tied");
        QTest::addColumn<int>("shards");
        for (const DType d : {DType::F32, DType::BF16, DType::F16})
            for (const bool tied : {true, false})
                for (const int shards : {1, 2})
                    QTest::addRow("%s %s %d", dtype_name(d), tied ? "tied" : "untied", shards) << d << tied << shards;
    }
    void round_trip() {
        QFETCH(DType, dtype);
        QFETCH(bool, tied);
        QFETCH(int, shards);
        ModelConfig config = even_config();
        config.rope_theta = 500000.0f;
        config.norm_eps = 1e-6f;
        const Checkpoint s = make_synthetic_checkpoint(config, dtype, 42, tied);
        QTemporaryDir dir;
        const std::string folder = dir.filePath("meta").toStdString();
        write_meta(s, folder, shards);
        for (const std::string& path : {folder, folder + "/params.json", folder + "/consolidated.00.pth"}) {
            const Checkpoint r = open_checkpoint(path);
            QCOMPARE(r.format, std::string("meta"));
            QCOMPARE(r.config.hidden_dim, config.hidden_dim);
            QCOMPARE(r.config.vocab_size, config.vocab_size);
            QCOMPARE(r.config.rope_theta, config.rope_theta);
            QCOMPARE(r.config.norm_eps, config.norm_eps);
            QCOMPARE(r.weights.classifier_tied(), tied);
            QCOMPARE(r.tokenizer.model_file, folder + "/tokenizer.model");
            // matrices bit for bit; norms went through the matrices' type, as Meta stores them
            const auto a = tensor_slots(s.config, s.weights, !tied), b = tensor_slots(r.config, r.weights, !tied);
            QCOMPARE(a.size(), b.size());
            for (size_t i = 0; i < a.size(); ++i) {
                const TensorView &x = *a[i].view, &y = *b[i].view;
                QCOMPARE(y.rows, x.rows);
                QCOMPARE(y.cols, x.cols);
                if (!a[i].is_norm()) {
                    QCOMPARE(y.dtype, x.dtype);
                    QVERIFY2(std::memcmp(x.data, y.data, size_t(x.n_bytes())) == 0, qPrintable(QString::fromStdString(a[i].name)));
                } else {
                    for (int64_t j = 0; j < x.cols; ++j) {
                        const float u = static_cast<const float*>(x.data)[j], v = static_cast<const float*>(y.data)[j];
                        QVERIFY2(std::abs(u - v) <= 1e-2f * std::abs(u), qPrintable(QString::fromStdString(a[i].name)));
                    }
                }
            }
            validate_weights(r);
        }
    }

    void real_models_give_llama2c_greedy_text_data() { add_real_model_rows(); }
    void real_models_give_llama2c_greedy_text() {
        QFETCH(QString, bin);
        QFETCH(QString, tokenizer);
        QFETCH(int, shards);
        LLAMADESK_REQUIRE_SHARED(bin_path, bin);
        LLAMADESK_REQUIRE_SHARED(tokenizer_path, tokenizer);
        QTemporaryDir dir;
        const QString diff = greedy_text_differs(bin_path, tokenizer_path, shards, dir.filePath("meta"),
                                                 [](const Checkpoint& c, const std::string& d, int n) { write_meta(c, d, n); });
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    void pickle_reads_a_tensor() {
        QTemporaryDir dir;
        const std::vector<PickledTensor> t = read_pth(pth_with(dir, tensor_pickle()));
        QCOMPARE(t.size(), size_t(1));
        QCOMPARE(t[0].name, std::string("w"));
        QCOMPARE(t[0].storage_key, std::string("0"));
        QCOMPARE(t[0].storage_numel, int64_t(4));
        QCOMPARE(t[0].shape, (std::vector<int64_t>{2, 2}));
        QCOMPARE(t[0].stride, (std::vector<int64_t>{2, 1}));
    }

    void hostile_pickles_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<QString>("message");
        QTest::newRow("os.system") << tensor_pickle("os\nsystem\n") << "refusing pickle GLOBAL os.system: only tensor data is read";
        QTest::newRow("builtins.eval") << tensor_pickle("builtins\neval\n") << "refusing pickle GLOBAL builtins.eval";
        QTest::newRow("subprocess storage") << tensor_pickle("torch._utils\n_rebuild_tensor_v2\n", "subprocess\nPopen\n")
                                            << "refusing pickle GLOBAL subprocess.Popen";
        QTest::newRow("stack global") << QByteArray("\x80\x04\x8c\x02os\x8c\x06system\x93.", 16) << "refusing pickle GLOBAL os.system";
        QTest::newRow("reduce of a storage type") << tensor_pickle("torch\nFloatStorage\n") << "REDUCE of torch.FloatStorage is not allowed";
        QTest::newRow("huge string") << QByteArray("\x80\x02X\xff\xff\xff\x7f", 7) << "file ends inside pickle string";
        QTest::newRow("memo never stored") << QByteArray("\x80\x02h\x05.", 5) << "memo entry 5, which was never stored";
        QTest::newRow("unknown opcode") << QByteArray("\x80\x02\x01.", 4) << "unsupported pickle opcode 0x01";
        QTest::newRow("not a dict") << QByteArray("\x80\x02K\x05.", 5) << "does not hold a dict of tensors";
        QTest::newRow("no stop") << QByteArray("\x80\x02}", 3) << "file ends inside pickle opcode";
    }
    void hostile_pickles() {
        QFETCH(QByteArray, pickle);
        QFETCH(QString, message);
        QTemporaryDir dir;
        LLAMADESK_REQUIRE_ERROR(read_pth(pth_with(dir, pickle)), ErrorCode::BadFormat, message);
    }

    void hostile_tensors_data() {
        QTest::addColumn<QByteArray>("pickle");
        QTest::addColumn<int>("storage_bytes");
        QTest::addColumn<QString>("message");
        QTest::newRow("storage shorter than declared") << tensor_pickle() << 12 << "its storage holds 12 bytes, the pickle says 4 elements";
        QTest::newRow("offset past the storage") << tensor_pickle("torch._utils\n_rebuild_tensor_v2\n", "torch\nFloatStorage\n", 2) << 16
                                                 << "reaches past its storage (offset 2 + 4 elements of 4)";
    }
    void hostile_tensors() {
        QFETCH(QByteArray, pickle);
        QFETCH(int, storage_bytes);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string folder = dir.filePath("meta").toStdString();
        write_meta(make_synthetic_checkpoint(even_config(), DType::F32, 1), folder, 1);
        // a second shard whose one tensor is hostile
        write_stored_zip(folder + "/consolidated.01.pth", {{"x/data.pkl", pickle.toStdString()},
                                                           {"x/data/0", std::string(size_t(storage_bytes), '\0')}});
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(folder), ErrorCode::BadFormat, message);
    }

    void hostile_zips() {
        QTemporaryDir dir;
        const QString path = pth_with(dir, tensor_pickle());
        const QByteArray good = read_all(path);
        const qint64 directory = good.indexOf(QByteArray("PK\x01\x02", 4));
        auto expect = [&](QByteArray bytes, ErrorCode code, const QString& message) {
            write_all(path, bytes);
            LLAMADESK_REQUIRE_ERROR(read_pth(path), code, message);
        };
        QByteArray b = good;
        poke<quint32>(b, directory + 42, 0x7fffffff);  // the first entry's local header far outside
        expect(b, ErrorCode::BadFormat, "has its header outside the file");
        b = good;
        poke<quint16>(b, directory + 10, 8);  // deflated
        expect(b, ErrorCode::Unsupported, "is compressed (method 8)");
        b = good;
        poke<quint32>(b, directory + 20, 0x7ffffff0);  // stored size past the end
        poke<quint32>(b, directory + 24, 0x7ffffff0);
        expect(b, ErrorCode::BadFormat, "extends past the end of the file");
        b = good;
        const qint64 end = good.lastIndexOf(QByteArray("PK\x05\x06", 4));
        poke<quint32>(b, end + 16, 0xffffffffu);  // zip64 marker without a zip64 record
        expect(b, ErrorCode::BadFormat, "zip64");
        b = good;
        const qint64 second = good.indexOf(QByteArray("PK\x01\x02", 4), directory + 4);
        poke<quint32>(b, second + 42, 0);  // the second entry claims the first one's header
        expect(b, ErrorCode::BadFormat, "overlap");
        expect(QByteArray("not a zip at all, just some bytes"), ErrorCode::BadFormat, "is not a zip archive");
    }

    void hostile_params_data() {
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("message");
        QTest::newRow("dim as a string") << "\"dim\": 16" << "\"dim\": \"16\"" << "\"dim\" is a string, expected a number";
        QTest::newRow("ffn formula") << "\"ffn_dim_multiplier\": 0.9642857142857143" << "\"ffn_dim_multiplier\": 1.3"
                                     << "w1 is 40 wide in all, but Meta's formula on params.json";
        QTest::newRow("absurd layers") << "\"n_layers\": 3" << "\"n_layers\": 1e12" << "expected a whole number";
        QTest::newRow("vocab disagrees") << "\"vocab_size\": -1" << "\"vocab_size\": 7" << "params.json says vocab_size 7";
    }
    void hostile_params() {
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string folder = dir.filePath("meta").toStdString();
        write_meta(make_synthetic_checkpoint(even_config(), DType::F32, 1), folder, 1);
        const QString path = QString::fromStdString(folder + "/params.json");
        QByteArray text = read_all(path);
        QVERIFY2(text.contains(from.toUtf8()), text.constData());
        write_all(path, text.replace(from.toUtf8(), to.toUtf8()));
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(folder), ErrorCode::BadFormat, message);
    }
};

QTEST_GUILESS_MAIN(TestMetaCheckpoints)
#include "test_meta_checkpoints.moc"
