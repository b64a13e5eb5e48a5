// Hugging Face model folders: write_hf and the reader round-trip every tensor bit for bit (one
// file and shards, tied and untied, F32/F16/BF16); wq and wk are stored in Hugging Face's rotary
// row order, checked against the layout transformers' conversion produces; the real stories260K
// and babyllama give llama2.c's greedy text from an HF folder; hostile headers, indexes and configs
// get clear errors.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>
#include <cstring>

#include "llamadesk/engine.h"
#include "reader_fixtures.h"
#include "readers/json.h"
#include "readers/mapped_file.h"
#include "readers/safetensors_file.h"
#include "synthetic/synthetic_model.h"
#include "synthetic/synthetic_vocab.h"
#include "chat/chat_template.h"
#include "tokenizer/tokenizer.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

Q_DECLARE_METATYPE(llamadesk::DType)

namespace {

// A folder written by write_hf from the tiny synthetic model.
std::string written_folder(const QTemporaryDir& dir, int shards = 1, bool tied = true) {
    const std::string path = dir.filePath("hf").toStdString();
    write_hf(make_synthetic_checkpoint(tiny_config(), DType::F32, 7, tied), path, shards);
    return path;
}

// A safetensors file with this header (padded to 8 bytes) and data.
void write_safetensors(const QString& path, QByteArray header, const QByteArray& data) {
    while (header.size() % 8) header.append(' ');
    QByteArray bytes(8, '\0');
    const quint64 n = quint64(header.size());
    std::memcpy(bytes.data(), &n, 8);
    write_all(path, bytes + header + data);
}

}  // namespace

class TestHfCheckpoints : public QObject {
    Q_OBJECT

private slots:
    void round_trip_data() {
        QTest::addColumn<DType>("dtype");
        QTest::addColumn<bool>("tied");
        QTest::addColumn<int>("shards");
        for (const DType d : {DType::F32, DType::F16, DType::BF16})
            for (const bool tied : {true, false})
                for (const int shards : {1, 3})
                    QTest::addRow("%s %s %d", dtype_name(d), tied ? "tied" : "untied", shards) << d << tied << shards;
    }
    void round_trip() {
        QFETCH(DType, dtype);
        QFETCH(bool, tied);
        QFETCH(int, shards);
        ModelConfig config = tiny_config();
        config.rope_theta = 500000.0f;
        config.norm_eps = 1e-6f;
        const Checkpoint s = make_synthetic_checkpoint(config, dtype, 42, tied);
        QTemporaryDir dir;
        const std::string folder = dir.filePath("hf").toStdString();
        write_hf(s, folder, shards);
        QCOMPARE(QFile::exists(QString::fromStdString(folder + "/model.safetensors.index.json")), shards > 1);
        // the folder, its config.json and one of its weight files all name the model
        const std::string weights = shards > 1 ? "/model-00002-of-00003.safetensors" : "/model.safetensors";
        for (const std::string& path : {folder, folder + "/config.json", folder + weights}) {
            const Checkpoint r = open_checkpoint(path);
            QCOMPARE(r.format, std::string("huggingface"));
            QCOMPARE(r.config.rope_theta, config.rope_theta);
            QCOMPARE(r.config.norm_eps, config.norm_eps);
            QCOMPARE(r.weights.classifier_tied(), tied);
            QCOMPARE(r.tokenizer.model_file, folder + "/tokenizer.model");
            const QString diff = compare_checkpoints(s, r);
            QVERIFY2(diff.isEmpty(), qPrintable(diff));
            validate_weights(r);
        }
    }

    // transformers' conversion: w.view(n_heads, head_dim / 2, 2, cols).transpose(1, 2), i.e. Hugging
    // Face's row (head, half, i) holds Meta's row (head, i, half).
    void rotary_rows_in_hugging_face_order() {
        const Checkpoint s = make_synthetic_checkpoint(tiny_config(), DType::F32, 3);
        QTemporaryDir dir;
        const std::string folder = dir.filePath("hf").toStdString();
        write_hf(s, folder);
        const SafetensorsFile f = read_safetensors(std::make_shared<const MappedFile>(folder + "/model.safetensors"));
        const int head_dim = s.config.head_dim();
        for (const auto& [name, meta] : {std::pair{"model.layers.1.self_attn.q_proj.weight", &s.weights.layers[1].wq},
                                         std::pair{"model.layers.1.self_attn.k_proj.weight", &s.weights.layers[1].wk}}) {
            const auto it = std::find_if(f.tensors.begin(), f.tensors.end(), [key = name](auto& t) { return t.name == key; });  // clang 14 cannot capture a structured binding
            QVERIFY(it != f.tensors.end());
            const int64_t row_bytes = meta->row_bytes();
            for (int64_t j = 0; j < meta->rows; ++j) {
                const int64_t head = j / head_dim, half = (j % head_dim) / (head_dim / 2), i = j % (head_dim / 2);
                const int64_t meta_row = head * head_dim + 2 * i + half;
                QVERIFY2(std::memcmp(it->data + j * row_bytes, meta->row(meta_row), size_t(row_bytes)) == 0,
                         qPrintable(QString("%1 row %2").arg(name).arg(j)));
            }
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
        const QString diff = greedy_text_differs(bin_path, tokenizer_path, shards, dir.filePath("hf"),
                                                 [](const Checkpoint& c, const std::string& d, int n) { write_hf(c, d, n); });
        QVERIFY2(diff.isEmpty(), qPrintable(diff));
    }

    // A Llama 3 folder carries tokenizer.json, not tokenizer.model: its vocabulary, merges, special
    // tokens and chat template are read from it.
    void tokenizer_json_alone_opens() {
        QTemporaryDir dir;
        const EmbeddedVocab vocab = make_bpe_vocab({"a b", "ab c", "Ġ a", "Ġa b"});
        ModelConfig c = tiny_config();
        c.vocab_size = int(vocab.tokens.size());
        Checkpoint s = make_synthetic_checkpoint(c, DType::F32, 7, true);
        s.tokenizer.embedded = std::make_shared<EmbeddedVocab>(vocab);
        s.chat_template = "{{ bos_token }}{% for m in messages %}<|start_header_id|>{{ m.role }}";
        const std::string folder = dir.filePath("hf").toStdString();
        write_hf(s, folder);
        QVERIFY(!QFile::exists(QString::fromStdString(folder + "/tokenizer.model")));
        const Checkpoint back = open_checkpoint(folder);
        QVERIFY(back.tokenizer.embedded);
        QCOMPARE(back.tokenizer.embedded->model, std::string("gpt2"));
        QCOMPARE(back.chat_template, s.chat_template);
        const auto tok = Tokenizer::from_source(back.tokenizer);
        QCOMPARE(tok->vocab_size(), c.vocab_size);
        QCOMPARE(tok->encode("abc", true), (std::vector<int>{260, 257}));
        QCOMPARE(suggested_chat_format(back.chat_template, "x", *tok).format, ChatFormat::Llama3Chat);
    }

    void hostile_headers_data() {
        QTest::addColumn<QByteArray>("header");
        QTest::addColumn<int>("data_bytes");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const int bad = int(ErrorCode::BadFormat), unsupported = int(ErrorCode::Unsupported);
        QTest::newRow("overlap") << QByteArray(R"({"a":{"dtype":"F32","shape":[4],"data_offsets":[0,16]},"b":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})")
                                 << 16 << bad << "overlap in the file";
        QTest::newRow("past the data") << QByteArray(R"({"a":{"dtype":"F32","shape":[8],"data_offsets":[0,32]}})") << 16 << bad
                                       << "outside the data section of 16 bytes";
        QTest::newRow("shape and bytes disagree") << QByteArray(R"({"a":{"dtype":"F16","shape":[4],"data_offsets":[0,16]}})") << 16
                                                  << bad << "holds 16 bytes, its shape and dtype need 8";
        QTest::newRow("unknown dtype") << QByteArray(R"({"a":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})") << 16
                                       << unsupported << "has dtype I64, which LlamaDesk does not read";
        QTest::newRow("negative offset") << QByteArray(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[-8,0]}})") << 16 << bad
                                         << "must be a whole number >= 0";
        QTest::newRow("absurd shape") << QByteArray(R"({"a":{"dtype":"F32","shape":[1099511627777,2],"data_offsets":[0,16]}})")
                                      << 16 << bad << "absurd shape";
        QTest::newRow("duplicate name") << QByteArray(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"a":{"dtype":"F32","shape":[2],"data_offsets":[8,16]}})")
                                        << 16 << bad << "appears twice";
        QTest::newRow("not an object") << QByteArray("[1,2]") << 0 << bad << "is not a JSON object";
        QTest::newRow("too deep") << QByteArray(100, '[') + QByteArray(100, ']') << 0 << bad << "nested deeper than 64";
        QTest::newRow("truncated json") << QByteArray("{\"a\":{\"dtype\":\"F32\"") << 0 << bad << "invalid JSON";
    }
    void hostile_headers() {
        QFETCH(QByteArray, header);
        QFETCH(int, data_bytes);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const QString path = dir.filePath("x.safetensors");
        write_safetensors(path, header, QByteArray(data_bytes, '\0'));
        LLAMADESK_REQUIRE_ERROR(read_safetensors(std::make_shared<const MappedFile>(path.toStdString())), ErrorCode(code),
                                message);
    }

    void header_length_past_the_end() {
        QTemporaryDir dir;
        const QString path = dir.filePath("x.safetensors");
        QByteArray bytes(8, '\0');
        const quint64 n = quint64(1) << 40;
        std::memcpy(bytes.data(), &n, 8);
        write_all(path, bytes + "{}");
        LLAMADESK_REQUIRE_ERROR(read_safetensors(std::make_shared<const MappedFile>(path.toStdString())),
                                ErrorCode::BadFormat, "the safetensors header claims 1099511627776 bytes; the file has 2");
    }

    void hostile_folders_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<int>("code");
        QTest::addColumn<QString>("message");
        const int bad = int(ErrorCode::BadFormat), unsupported = int(ErrorCode::Unsupported);
        QTest::newRow("size as a string") << "config.json" << R"("hidden_size": 16)" << R"("hidden_size": "16")" << bad
                                          << "\"hidden_size\" is a string, expected a number";
        QTest::newRow("absurd layers") << "config.json" << R"("num_hidden_layers": 3)" << R"("num_hidden_layers": 4000000000)"
                                       << bad << "\"num_hidden_layers\" is 4000000000";
        QTest::newRow("layers disagree with the tensors") << "config.json" << R"("num_hidden_layers": 3)"
                                                          << R"("num_hidden_layers": 4)" << bad << "lacks tensor model.layers.3.";
        QTest::newRow("another architecture") << "config.json" << "LlamaForCausalLM" << "MistralForCausalLM" << unsupported
                                              << "architecture MistralForCausalLM is not supported";
        QTest::newRow("rope scaling") << "config.json" << R"("rope_scaling": null)" << R"("rope_scaling": {"rope_type": "linear", "factor": 2.0})"
                                      << unsupported << "rope_scaling linear is not supported";
        QTest::newRow("wrong width") << "config.json" << R"("intermediate_size": 40)" << R"("intermediate_size": 48)" << bad
                                     << "has shape [40, 16], config.json implies [48, 16]";
        QTest::newRow("index escapes the folder") << "model.safetensors.index.json" << "\"model-00001-of-00002.safetensors\""
                                                  << "\"../model-00001-of-00002.safetensors\"" << bad
                                                  << "mapped to something other than a .safetensors file in this folder";
    }
    void hostile_folders() {
        QFETCH(QString, file);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(int, code);
        QFETCH(QString, message);
        QTemporaryDir dir;
        const std::string folder = written_folder(dir, file.contains("index") ? 2 : 1);
        const QString path = QString::fromStdString(folder) + "/" + file;
        QByteArray text = read_all(path);
        QVERIFY2(text.contains(from.toUtf8()), text.constData());
        write_all(path, text.replace(from.toUtf8(), to.toUtf8()));
        LLAMADESK_REQUIRE_ERROR(open_checkpoint(folder), ErrorCode(code), message);
    }

    void json_strings_and_numbers() {
        const JsonValue v = parse_json("{\"s\":\"a\\\"b\\\\c\\u00e9\\ud83d\\ude00\\n\",\"i\":-42,\"f\":2.5e-3,"
                                      "\"big\":12345678901234567890,\"t\":true,\"n\":null}",
                                      "test");
        QCOMPARE(v.find("s")->string, std::string("a\"b\\c\xc3\xa9\xf0\x9f\x98\x80\n"));
        QCOMPARE(*v.find("i")->integer, int64_t(-42));
        QCOMPARE(v.find("f")->number, 2.5e-3);
        QVERIFY(!v.find("f")->integer);
        QVERIFY(!v.find("big")->integer);  // too long for int64: a double only
        QVERIFY(v.find("t")->boolean);
        QCOMPARE(v.find("n")->kind, JsonValue::Kind::Null);
        for (const char* broken : {R"({"a":01})", "{\"a\":\"\\ud800\"}", "{\"a\":\"\x01\"}", R"([1,])", R"({"a":1} x)", R"({"a" 1})"})
            LLAMADESK_REQUIRE_ERROR(parse_json(broken, "test"), ErrorCode::BadFormat, "test: invalid JSON at byte");
    }
};

QTEST_GUILESS_MAIN(TestHfCheckpoints)
#include "test_hf_checkpoints.moc"
