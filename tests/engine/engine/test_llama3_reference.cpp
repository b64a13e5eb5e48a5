// A Llama 3-shaped model with the real vocabulary, against llama.cpp and transformers: the synthetic
// "llama3-test" weights (Llama 3.1 RoPE scaling, rope_theta 500000, 128256 tokens) written as GGUF
// in four types, as Hugging Face folders (tied bf16, untied f32) and as a Meta folder, must give the
// prompt ids, the greedy answer and the text's mean negative log-likelihood that llama.cpp and
// transformers gave for the same weights. Their figures were recorded ahead of time into
// tests/data/reference/llama3-test.json by engine/tools/formats/make_llama3_reference.py, so CI
// needs no Python.
//
// Two programs may rightly pick different tokens where the top two logits are nearly equal, so an
// answer may part from the reference only at a step whose recorded margin is under the type's
// tolerance; after that the answers continue from different texts and are not compared.
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>

#include <cmath>

#include "engine_fixtures.h"
#include "readers/gguf_reader.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

const char* const kRegenerate =
    "if the synthetic writer changed on purpose, record again: python3 engine/tools/formats/make_llama3_reference.py "
    "--bench build/engine/tools/bench/llamadesk-bench --cli build/engine/tools/cli/llamadesk-cli";

std::vector<int> ints(const QJsonValue& v) {
    std::vector<int> out;
    for (const QJsonValue& x : v.toArray()) out.push_back(x.toInt());
    return out;
}

QString ids_text(const std::vector<int>& ids) {
    QStringList parts;
    for (int id : ids) parts << QString::number(id);
    return parts.join(' ');
}

// How far a logit may move between two correct programs: f32-class arithmetic, or quantized
// products whose activations each program rounds to 8 bits in its own blocks. BF16 weights: the
// CPU's AMX-BF16 products round the activations to bf16, as llama.cpp's BF16 products do, while
// transformers' figure keeps them f32 (4.5e-4 apart in mean NLL on this model).
struct Tolerance {
    double margin;  // a step whose top-two margin is below this may pick either token
    double nll;     // |mean NLL difference|
};

Tolerance tolerance_for(const QString& dtype) {
    if (dtype == "q8_0") return {0.05, 2e-3};
    if (dtype == "q4_k_m") return {0.1, 5e-3};
    if (dtype == "bf16") return {0.02, 1e-3};
    return {0.002, 2e-4};  // f32, f16
}

QJsonObject read_record() {
    QFile f(LLAMADESK_TEST_DATA_DIR "/reference/llama3-test.json");
    return f.open(QIODevice::ReadOnly) ? QJsonDocument::fromJson(f.readAll()).object() : QJsonObject{};
}

}  // namespace

class TestLlama3Reference : public QObject {
    Q_OBJECT

    // Read when the test is made: the rows come from it, and -datatags lists them (CTest runs each
    // variant as a test of its own) without running initTestCase.
    const QJsonObject record_ = read_record();
    std::string text_;

private slots:
    void initTestCase() {
        if (shared_path("llama3/ggml-vocab-llama-bpe.gguf").isEmpty())
            QSKIP("reference data not found: llama3/ggml-vocab-llama-bpe.gguf");
        QVERIFY2(!record_["variants"].toObject().isEmpty(), LLAMADESK_TEST_DATA_DIR "/reference/llama3-test.json");
        QFile t(QString(LLAMADESK_TEST_DATA_DIR "/../../") + record_["text"].toString());
        QVERIFY2(t.open(QIODevice::ReadOnly), qPrintable(t.fileName()));
        text_ = t.readAll().toStdString();
    }

    void matches_the_reference_data() {
        QTest::addColumn<QString>("variant");
        for (const QString& name : record_["variants"].toObject().keys()) QTest::newRow(qPrintable(name)) << name;
    }

    void matches_the_reference() {
        QFETCH(QString, variant);
        const QJsonObject v = record_["variants"].toObject()[variant].toObject();
        const QString dtype = v["dtype"].toString();
        const QString format = v["format"].toString();
        const std::optional<WeightMix> mix = WeightMix::parse(dtype.toStdString());
        QVERIFY2(mix, qPrintable(dtype));

        Checkpoint ckpt = make_synthetic_checkpoint(synthetic_config(record_["shape"].toString().toStdString()), *mix,
                                                    uint64_t(record_["seed"].toInt()), v["tied"].toBool());
        ckpt.tokenizer.embedded = read_gguf_vocabulary(shared_path("llama3/ggml-vocab-llama-bpe.gguf").toStdString());
        QTemporaryDir dir;
        const QString path = dir.filePath(format == "gguf" ? "model.gguf" : "model");
        if (format == "gguf") write_gguf(ckpt, path.toStdString());
        else if (format == "hf") write_hf(ckpt, path.toStdString());
        else write_meta(ckpt, path.toStdString());
        ckpt = Checkpoint{};  // the engine maps its own copy

        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(path)));
        const std::string prompt = record_["prompt"].toString().toStdString();
        std::vector<int> prompt_ids;
        LLAMADESK_VERIFY_OK(e.tokenize(prompt, true, &prompt_ids));
        QCOMPARE(ids_text(prompt_ids), ids_text(ints(v["prompt_ids"])));

        const Tolerance tol = tolerance_for(dtype);
        const ConversationId c = e.create_conversation(ChatFormat::Completion);
        const GenerationResult r = e.generate(c, prompt, greedy(record_["answer_tokens"].toInt()));
        LLAMADESK_VERIFY_OK(r.status);
        const std::vector<int> expected = ints(v["greedy_ids"]);
        const QJsonArray margins = v["margins"].toArray();
        size_t step = 0;
        while (step < expected.size() && step < r.tokens.size() && r.tokens[step] == expected[step]) ++step;
        if (step < expected.size()) {
            // the reference's last token may be an end of generation, which the answer does not keep
            const bool ended_alike = step == r.tokens.size() && step + 1 == expected.size() &&
                                     r.stop_reason == StopReason::Eos;
            const double margin = margins[int(step)].toDouble();
            QVERIFY2(ended_alike || margin < tol.margin,
                     qPrintable(QString("%1: the answer parts from %2's at step %3, where its top two logits are %4 "
                                        "apart (at most %5 may part)\n  ours:   %6\n  theirs: %7\n%8")
                                    .arg(variant, v["reference"].toString()).arg(step).arg(margin).arg(tol.margin)
                                    .arg(ids_text(r.tokens), ids_text(expected), kRegenerate)));
        }
        qInfo("%s: %zu of %zu greedy tokens as %s's%s", qPrintable(variant), step, expected.size(),
              qPrintable(v["reference"].toString()),
              step < expected.size() ? qPrintable(QString(", then a step of margin %1").arg(margins[int(step)].toDouble()))
                                     : "");

        PerplexityResult p;
        LLAMADESK_VERIFY_OK(e.perplexity(text_, &p));
        QCOMPARE(p.windows, 1);
        const double diff = std::abs(p.mean_nll - v["mean_nll"].toDouble());
        qInfo("%s: mean NLL %.7f, %s's %.7f, |diff| %.2e", qPrintable(variant), p.mean_nll,
              qPrintable(v["reference"].toString()), v["mean_nll"].toDouble(), diff);
        QVERIFY2(diff <= tol.nll, qPrintable(QString("%1: mean NLL %2 against %3's %4 (at most %5 apart)\n%6")
                                                 .arg(variant).arg(p.mean_nll, 0, 'f', 7)
                                                 .arg(v["reference"].toString()).arg(v["mean_nll"].toDouble(), 0, 'f', 7)
                                                 .arg(tol.nll).arg(kRegenerate)));
    }
};

QTEST_GUILESS_MAIN(TestLlama3Reference)
#include "test_llama3_reference.moc"
