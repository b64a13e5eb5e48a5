#include "reader_fixtures.h"

#include <QFile>
#include <QTest>
#include <cstring>

#include "llamadesk/engine.h"
#include "model/tensor_slots.h"

namespace llamadesk::test {

ModelConfig tiny_config() {
    ModelConfig c;
    c.dim = 16;
    c.hidden_dim = 40;
    c.n_layers = 3;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.vocab_size = 300;
    c.seq_len = 64;
    return c;
}

int64_t expected_params(const ModelConfig& c, bool tied) {
    const int64_t dim = c.dim, kv = int64_t(c.n_kv_heads) * c.head_dim();
    const int64_t layer = 2 * dim + 2 * dim * dim + 2 * dim * kv + 3 * dim * int64_t(c.hidden_dim);
    return int64_t(c.vocab_size) * dim * (tied ? 1 : 2) + c.n_layers * layer + dim;
}

QString expect_error(const std::function<void()>& fn, ErrorCode code, const QString& substring,
                     QString* message_out) {
    try {
        fn();
    } catch (const EngineError& e) {
        const QString message = QString::fromUtf8(e.what());
        if (message_out) *message_out = message;
        if (e.code() != code)
            return QStringLiteral("expected error %1, got %2: %3")
                .arg(error_code_name(code), error_code_name(e.code()), message);
        if (!message.contains(substring))
            return QStringLiteral("message lacks '%1': %2").arg(substring, message);
        return {};
    } catch (const std::exception& e) {
        return QStringLiteral("expected EngineError, got std::exception: %1").arg(e.what());
    }
    return QStringLiteral("expected error %1 ('%2'), but it succeeded")
        .arg(error_code_name(code), substring);
}

std::string greedy_text(const std::string& model, const std::string& prompt, int n_tokens) {
    Engine e;
    LoadParams p;
    p.model_path = model;
    const Status loaded = e.load(p);
    if (!loaded.ok()) return "load failed: " + loaded.message;
    GenerateParams g;
    g.sampling.temperature = 0;
    g.max_new_tokens = n_tokens;
    const GenerationResult r = e.generate(e.create_conversation(ChatFormat::Completion), prompt, g);
    return r.status.ok() ? prompt + r.text : "generate failed: " + r.status.message;
}

void add_real_model_rows() {
    QTest::addColumn<QString>("bin");
    QTest::addColumn<QString>("tokenizer");
    QTest::addColumn<int>("shards");
    QTest::newRow("stories260K") << "models/stories260K/stories260K.bin" << "models/stories260K/tok512.model" << 1;
    QTest::newRow("babyllama two shards") << "models/babyllama/model5000.bin" << "models/babyllama/tok105.model" << 2;
}

QString greedy_text_differs(const QString& bin_path, const QString& tokenizer_path, int shards, const QString& folder,
                            FolderWriter write) {
    write(open_checkpoint(bin_path.toStdString()), folder.toStdString(), shards);
    if (!QFile::copy(tokenizer_path, folder + "/tokenizer.model")) return "cannot copy " + tokenizer_path;
    const std::string expected = greedy_text(bin_path.toStdString(), "Once upon a time", 60);
    const std::string got = greedy_text(folder.toStdString(), "Once upon a time", 60);
    if (expected.size() <= 60) return "the llama2.c model wrote nothing: " + QString::fromStdString(expected);
    if (got != expected)
        return "llama2.c file: " + QString::fromStdString(expected) + "\nfolder: " + QString::fromStdString(got);
    return {};
}

QByteArray read_all(const QString& path) {
    QFile f(path);
    if (!f.open(QIODevice::ReadOnly)) return {};
    return f.readAll();
}

void write_all(const QString& path, const QByteArray& bytes) {
    QFile f(path);
    if (f.open(QIODevice::WriteOnly | QIODevice::Truncate)) f.write(bytes);
}

QString compare_checkpoints(const Checkpoint& a, const Checkpoint& b) {
    const ModelConfig &x = a.config, &y = b.config;
    if (x.dim != y.dim || x.hidden_dim != y.hidden_dim || x.n_layers != y.n_layers ||
        x.n_heads != y.n_heads || x.n_kv_heads != y.n_kv_heads || x.vocab_size != y.vocab_size)
        return QStringLiteral("configs differ");
    ModelWeights wa = a.weights, wb = b.weights;
    const std::vector<TensorSlot> sa = tensor_slots(a.config, wa, true);
    const std::vector<TensorSlot> sb = tensor_slots(b.config, wb, true);
    for (size_t i = 0; i < sa.size(); ++i) {
        const TensorView &ta = *sa[i].view, &tb = *sb[i].view;
        if (ta.dtype != tb.dtype || ta.rows != tb.rows || ta.cols != tb.cols)
            return QStringLiteral("%1: dtype or shape differs").arg(sa[i].name.c_str());
        if (std::memcmp(ta.data, tb.data, size_t(ta.n_bytes())) != 0)
            return QStringLiteral("%1: data differs").arg(sa[i].name.c_str());
    }
    return {};
}

QByteArray with_extra_metadata(QByteArray file, KvBytes kv) {
    const qsizetype min_pad_kv = 8 + 8 + 4 + 8;  // key length, "test.pad", type, string length
    const qsizetype pad = (32 - (kv.bytes.size() + min_pad_kv) % 32) % 32;
    kv.key("test.pad", GgufType::String);
    kv.str(QByteArray(pad, 'p'));
    quint64 n_kv;
    std::memcpy(&n_kv, file.constData() + 16, 8);
    poke<quint64>(file, 16, n_kv + kv.count);
    file.insert(24, kv.bytes);
    return file;
}

namespace {

qint64 find_length_prefixed(const QByteArray& file, const char* s) {
    const quint64 len = std::strlen(s);
    QByteArray needle(reinterpret_cast<const char*>(&len), 8);
    needle.append(s);
    const qint64 at = file.indexOf(needle);
    return at < 0 ? -1 : at + needle.size();
}

}  // namespace

qint64 gguf_value_offset(const QByteArray& file, const char* key) {
    return find_length_prefixed(file, key);
}

qint64 gguf_tensor_info_offset(const QByteArray& file, const char* name) {
    return find_length_prefixed(file, name);
}

}  // namespace llamadesk::test
