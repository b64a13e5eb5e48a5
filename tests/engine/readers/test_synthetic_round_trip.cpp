// Synthetic models and the writers: shapes, determinism and scale of the random weights, the
// made-up vocabulary, and bit-exact round trips through write_gguf, write_llama2c and llama2.c's
// versioned export.
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>
#include <set>

#include "reader_fixtures.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

Q_DECLARE_METATYPE(llamadesk::DType)

namespace {

// llama2.c export.py's version1_export, written out here independently of the reader.
void write_ak42(const Checkpoint& ckpt, const QString& path, bool shared_classifier) {
    const ModelConfig& c = ckpt.config;
    const ModelWeights& w = ckpt.weights;
    QByteArray out(256, '\0');
    const int32_t header[9] = {0x616b3432, 1, c.dim, c.hidden_dim, c.n_layers, c.n_heads,
                               c.n_kv_heads, c.vocab_size, c.seq_len};
    std::memcpy(out.data(), header, sizeof(header));
    out[36] = char(shared_classifier ? 1 : 0);
    auto add = [&](const TensorView& t) {
        out.append(static_cast<const char*>(t.data), qsizetype(t.n_bytes()));
    };
    for (const LayerWeights& l : w.layers) add(l.attention_norm);
    for (const LayerWeights& l : w.layers) add(l.ffn_norm);
    add(w.final_norm);
    add(w.token_embedding);
    for (const LayerWeights& l : w.layers) add(l.wq);
    for (const LayerWeights& l : w.layers) add(l.wk);
    for (const LayerWeights& l : w.layers) add(l.wv);
    for (const LayerWeights& l : w.layers) add(l.wo);
    for (const LayerWeights& l : w.layers) add(l.w1);
    for (const LayerWeights& l : w.layers) add(l.w2);
    for (const LayerWeights& l : w.layers) add(l.w3);
    if (!shared_classifier) add(w.output);
    write_all(path, out);
}

}  // namespace

class TestSyntheticRoundTrip : public QObject {
    Q_OBJECT

private slots:
    void gguf_round_trip_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<bool>("tied");
        for (const DType d : {DType::F32, DType::F16, DType::BF16})
            for (const bool tied : {true, false})
                QTest::addRow("%s %s", dtype_name(d), tied ? "tied" : "separate") << d << tied;
    }
    void gguf_round_trip() {
        QFETCH(DType, dtype);
        QFETCH(bool, tied);
        ModelConfig config = tiny_config();
        config.rope_theta = 500000.0f;
        config.norm_eps = 1e-6f;
        const Checkpoint s = make_synthetic_checkpoint(config, dtype, 42, tied);
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.gguf").toStdString();
        write_gguf(s, path);
        const Checkpoint r = open_checkpoint(path);
        QCOMPARE(r.main_weight_dtype(), dtype);
        QCOMPARE(r.config.seq_len, config.seq_len);
        QCOMPARE(r.config.rope_theta, config.rope_theta);
        QCOMPARE(r.config.norm_eps, config.norm_eps);
        QCOMPARE(r.weights.output.data == r.weights.token_embedding.data, tied);
        QCOMPARE(r.n_params(), expected_params(config, tied));
        QCOMPARE(r.n_params(), s.n_params());
        const QString diff = compare_checkpoints(s, r);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(r.tokenizer.embedded);
        QVERIFY(r.tokenizer.embedded->tokens == s.tokenizer.embedded->tokens);
        QVERIFY(r.tokenizer.embedded->scores == s.tokenizer.embedded->scores);
        QVERIFY(r.tokenizer.embedded->token_types == s.tokenizer.embedded->token_types);
        validate_weights(r);
    }

    void gguf_version_2() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::BF16, 4);
        QTemporaryDir dir;
        const QString path = dir.filePath("v2.gguf");
        write_gguf(s, path.toStdString());
        QByteArray bytes = read_all(path);
        poke<quint32>(bytes, 4, 2);  // v2 and v3 share the little-endian layout
        write_all(path, bytes);
        const Checkpoint r = open_checkpoint(path.toStdString());
        const QString diff = compare_checkpoints(s, r);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    void gguf_norms_widened_to_f32() {
        // GGUF files may store norms in F16; in memory they are always F32.
        Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F16, 3);
        std::vector<uint16_t> half(size_t(tiny_config().dim));
        for (size_t i = 0; i < half.size(); ++i) half[i] = f32_to_f16(0.5f + 0.25f * float(i));
        s.weights.layers[1].ffn_norm.dtype = DType::F16;
        s.weights.layers[1].ffn_norm.data = half.data();
        QTemporaryDir dir;
        const std::string path = dir.filePath("m.gguf").toStdString();
        write_gguf(s, path);
        const Checkpoint r = open_checkpoint(path);
        const TensorView& norm = r.weights.layers[1].ffn_norm;
        QCOMPARE(norm.dtype, DType::F32);
        for (size_t i = 0; i < half.size(); ++i)
            QCOMPARE(static_cast<const float*>(norm.data)[i], 0.5f + 0.25f * float(i));
    }

    void llama2c_round_trip_data() {
        QTest::addColumn<bool>("tied");
        QTest::newRow("shared classifier") << true;
        QTest::newRow("separate classifier") << false;
    }
    void llama2c_round_trip() {
        QFETCH(bool, tied);
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 9, tied);
        QTemporaryDir dir;
        const std::string path = dir.filePath("model.bin").toStdString();
        write_llama2c(s, path);
        int32_t header[7];
        std::memcpy(header, read_all(QString::fromStdString(path)).constData(), sizeof(header));
        QCOMPARE(header[5], tied ? 300 : -300);
        const Checkpoint r = open_checkpoint(path);
        QCOMPARE(r.format, std::string("llama2c"));
        QCOMPARE(r.config.seq_len, 64);
        QCOMPARE(r.weights.output.data == r.weights.token_embedding.data, tied);
        const QString diff = compare_checkpoints(s, r);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        QVERIFY(r.tokenizer.model_file.empty());
        QVERIFY(!r.tokenizer.embedded);
        QCOMPARE(r.tokenizer.describe(), std::string("none"));
    }

    void llama2c_writer_refuses_f16() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F16, 9);
        QTemporaryDir dir;
        LLAMADESK_REQUIRE_ERROR(write_llama2c(s, dir.filePath("m.bin").toStdString()),
                                ErrorCode::Unsupported, "f16");
    }

    void llama2c_versioned_export_data() {
        QTest::addColumn<bool>("shared");
        QTest::newRow("shared classifier") << true;
        QTest::newRow("separate classifier") << false;
    }
    void llama2c_versioned_export() {
        QFETCH(bool, shared);
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 5, shared);
        QTemporaryDir dir;
        const QString path = dir.filePath("ak42.bin");
        write_ak42(s, path, shared);
        const Checkpoint r = open_checkpoint(path.toStdString());
        QCOMPARE(r.config.seq_len, 64);
        QCOMPARE(r.weights.output.data == r.weights.token_embedding.data, shared);
        const QString diff = compare_checkpoints(s, r);
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
        validate_weights(r);
    }

    void synthetic_configs() {
        const ModelConfig c = synthetic_config("110M-gqa");
        QCOMPARE(c.dim, 768);
        QCOMPARE(c.hidden_dim, 2048);
        QCOMPARE(c.n_layers, 12);
        QCOMPARE(c.n_heads, 12);
        QCOMPARE(c.n_kv_heads, 4);
        QCOMPARE(c.vocab_size, 32000);
        QCOMPARE(c.seq_len, 1024);
        QCOMPARE(synthetic_config("260K").n_kv_heads, 4);
        QCOMPARE(synthetic_config("15M").dim, 288);
        QCOMPARE(synthetic_config("110M").n_kv_heads, 12);
        QCOMPARE(synthetic_config("7B").hidden_dim, 11008);
        for (const char* name : {"260K", "15M", "110M", "110M-gqa", "7B"})
            validate_config(synthetic_config(name), name);
        LLAMADESK_REQUIRE_ERROR(synthetic_config("3B"), ErrorCode::InvalidArgument, "3B");
    }

    void synthetic_weights_are_deterministic_and_scaled() {
        const ModelConfig c = synthetic_config("15M");
        const Checkpoint a = make_synthetic_checkpoint(c, DType::F32, 11);
        const Checkpoint b = make_synthetic_checkpoint(c, DType::F32, 11);
        const Checkpoint d = make_synthetic_checkpoint(c, DType::F32, 12);
        QVERIFY(compare_checkpoints(a, b).isEmpty());
        QVERIFY(!compare_checkpoints(a, d).isEmpty());
        // w2 (dim, hidden): standard deviation about 1/sqrt(hidden), mean about 0.
        const TensorView& w2 = a.weights.layers[2].w2;
        double sum = 0, sum_sq = 0;
        for (int64_t i = 0; i < w2.n_elements(); ++i) {
            const double x = static_cast<const float*>(w2.data)[i];
            sum += x;
            sum_sq += x * x;
        }
        const double n = double(w2.n_elements());
        const double std_dev = std::sqrt(sum_sq / n - (sum / n) * (sum / n));
        QVERIFY(std::abs(sum / n) < 1e-3);
        QVERIFY2(std::abs(std_dev * std::sqrt(double(c.hidden_dim)) - 1.0) < 0.05,
                 qPrintable(QString::number(std_dev)));
        const TensorView& norm = a.weights.final_norm;
        for (int64_t i = 0; i < norm.n_elements(); ++i) {
            const float x = static_cast<const float*>(norm.data)[i];
            QVERIFY(x >= 0.9f && x <= 1.1f);
        }
        QCOMPARE(a.n_params(), expected_params(c, true));
    }

    void synthetic_vocabulary() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 1);
        const EmbeddedVocab& v = *s.tokenizer.embedded;
        QCOMPARE(v.tokens.size(), size_t(300));
        QCOMPARE(v.tokens[0], std::string("<unk>"));
        QCOMPARE(v.token_types[0], 2);
        QCOMPARE(v.tokens[1], std::string("<s>"));
        QCOMPARE(v.tokens[2], std::string("</s>"));
        QCOMPARE(v.tokens[3], std::string("<0x00>"));
        QCOMPARE(v.tokens[258], std::string("<0xFF>"));
        QCOMPARE(v.token_types[258], 6);
        QCOMPARE(v.tokens[259], std::string("\xe2\x96\x81"));
        QCOMPARE(v.token_types[259], 1);
        const std::set<std::string> unique(v.tokens.begin(), v.tokens.end());
        QCOMPARE(unique.size(), v.tokens.size());
        ModelConfig tiny = tiny_config();
        tiny.vocab_size = 40;  // too small for byte tokens: still unique pieces
        const Checkpoint small_model = make_synthetic_checkpoint(tiny, DType::F32, 1);
        const EmbeddedVocab& small = *small_model.tokenizer.embedded;
        QCOMPARE(std::set<std::string>(small.tokens.begin(), small.tokens.end()).size(), size_t(40));
    }
};

QTEST_APPLESS_MAIN(TestSyntheticRoundTrip)
#include "test_synthetic_round_trip.moc"
