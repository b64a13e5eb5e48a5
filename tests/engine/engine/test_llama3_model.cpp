// A Llama 3-shaped model with the real 128256-token vocabulary, end to end through the Engine:
// it opens as GGUF, suggests Llama 3 chat, and an answer stops on any end-of-generation token
// without showing it. The weights are rigged so the first answer token is the one under test:
// with every layer's output projections zeroed, the last position's state is the embedding of the
// prompt's last token, and the classifier row of the chosen token is that embedding, scaled.
#include <QTemporaryDir>
#include <QTest>
#include <cstring>

#include "chat/chat_template.h"
#include "engine_fixtures.h"
#include "readers/gguf_reader.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

float* writable(const TensorView& t) { return static_cast<float*>(const_cast<void*>(t.data)); }

}  // namespace

class TestLlama3Model : public QObject {
    Q_OBJECT

    // A GGUF whose first answer token, after a Llama 3 chat turn, is `answer_token`.
    QString write_model(const QTemporaryDir& dir, int answer_token) {
        const auto vocab = read_gguf_vocabulary(test::shared_path("llama3/ggml-vocab-llama-bpe.gguf").toStdString());
        ModelConfig c = small_config(4, 2, 16, 256);
        c.vocab_size = int(vocab->tokens.size());
        c.rope_theta = 500000.0f;
        Checkpoint ckpt = make_synthetic_checkpoint(c, DType::F32, 11, /*tied_classifier=*/false);
        ckpt.tokenizer.embedded = vocab;
        for (const LayerWeights& l : ckpt.weights.layers) {
            std::memset(writable(l.wo), 0, size_t(l.wo.n_bytes()));
            std::memset(writable(l.w2), 0, size_t(l.w2.n_bytes()));
        }
        const auto tok = Tokenizer::from_embedded(*vocab);
        const int last = render_user_turn(*tok, ChatFormat::Llama3Chat, true, "", "Hi").back();
        const float* from = static_cast<const float*>(ckpt.weights.token_embedding.row(last));
        float* to = writable(ckpt.weights.output) + int64_t(answer_token) * c.dim;
        for (int i = 0; i < c.dim; ++i) to[i] = 50.0f * from[i];
        const QString path = dir.filePath("Llama-3-test.gguf");
        write_gguf(ckpt, path.toStdString());
        return path;
    }

private slots:
    void initTestCase() {
        if (test::shared_path("llama3/ggml-vocab-llama-bpe.gguf").isEmpty())
            QSKIP("reference data not found: llama3/ggml-vocab-llama-bpe.gguf");
    }

    void answerStopsOnEveryEndOfGeneration_data() {
        QTest::addColumn<int>("token");
        QTest::newRow("<|eot_id|>") << 128009;
        QTest::newRow("<|end_of_text|>") << 128001;
    }
    void answerStopsOnEveryEndOfGeneration() {
        QFETCH(int, token);
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_model(dir, token))));
        const ModelInfo info = e.model_info();
        QCOMPARE(info.chat_format, ChatFormat::Llama3Chat);
        QVERIFY2(QString::fromStdString(info.tokenizer).startsWith("byte-level BPE (llama-bpe)"), info.tokenizer.c_str());
        const ConversationId c = e.create_conversation(info.chat_format);
        const GenerationResult r = e.generate(c, "Hi", greedy(8));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stop_reason, StopReason::Eos);
        QCOMPARE(r.text, std::string());
        QVERIFY(r.tokens.empty());
        // The turn is closed with <|eot_id|>, so a follow-up begins with the next header.
        const GenerationResult again = e.generate(c, "Again", greedy(4));
        LLAMADESK_VERIFY_OK(again.status);
    }

    // A control token that ends nothing is not shown either (only the first answer token is rigged).
    void controlTokensAreNotShown() {
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_model(dir, 128255))));
        const GenerationResult r = e.generate(e.create_conversation(ChatFormat::Llama3Chat), "Hi", greedy(1));
        LLAMADESK_VERIFY_OK(r.status);
        QCOMPARE(r.stop_reason, StopReason::MaxTokens);
        QCOMPARE(QString::fromStdString(r.text), QString());
        QCOMPARE(r.tokens, (std::vector<int32_t>{128255}));
    }

    // Through the engine, text is text: BOS then plain pieces, never <|eot_id|>.
    void tokenizeKeepsSpecialTextPlain() {
        QTemporaryDir dir;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(load_params(write_model(dir, 128009))));
        std::vector<int> ids;
        LLAMADESK_VERIFY_OK(e.tokenize("<|eot_id|>", true, &ids));
        QCOMPARE(ids, (std::vector<int>{128000, 27, 91, 68, 354, 851, 91, 29}));
    }
};

QTEST_GUILESS_MAIN(TestLlama3Model)
#include "test_llama3_model.moc"
