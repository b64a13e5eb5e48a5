// A vocabulary carried by a checkpoint (GGUF tokenizer.ggml.*) becomes a SentencePiece model in
// memory: a tiny hand-made vocabulary encodes as SentencePiece would, hostile vocabularies give a
// clear error and never a crash, and real GGUF vocabularies tokenize like their tokenizer.model.
#include <QTemporaryDir>
#include <QTest>
#include <cmath>
#include <fstream>
#include <functional>

#include "readers/gguf_reader.h"
#include "test_support.h"
#include "tokenizer/sentencepiece_proto.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_data.h"

using namespace llamadesk;
using llamadesk::test::engine_error_of;

namespace {

constexpr int kSpace = 259, kA = 260, kB = 261, kC = 262, kAB = 263, kSpaceAB = 264, kSpaceC = 265;

}  // namespace

class TestEmbeddedVocab : public QObject {
    Q_OBJECT

private slots:
    void tinyVocabulary() {
        const auto tok = Tokenizer::from_embedded(test::tiny_vocab());
        QCOMPARE(tok->vocab_size(), 266);
        QCOMPARE(tok->bos_id(), 1);
        QCOMPARE(tok->eos_id(), 2);
        QCOMPARE(tok->encode("ab c", true, true), (std::vector<int>{1, kSpaceAB, kSpaceC, 2}));
        QCOMPARE(tok->encode("cab", false), (std::vector<int>{kSpaceC, kAB}));
        QCOMPARE(tok->encode("ba", false), (std::vector<int>{kSpace, kB, kA}));
        // Runs of spaces are kept, as with Llama 2's normalizer.
        QCOMPARE(tok->encode("ab  c", false), (std::vector<int>{kSpaceAB, kSpace, kSpaceC}));
        // Characters without a piece fall back to their UTF-8 bytes.
        QCOMPARE(tok->encode("é", false), (std::vector<int>{kSpace, 3 + 0xC3, 3 + 0xA9}));
        QCOMPARE(tok->decode({1, kSpaceAB, kSpace, kSpaceC, 3 + 0xC3, 3 + 0xA9, 2}),
                 std::string("ab  cé"));
        QCOMPARE(tok->token_bytes(kA, kSpaceAB), std::string(" ab"));
        QCOMPARE(tok->token_bytes(1, kSpaceAB), std::string("ab"));
    }

    // Without token types, <unk>, BOS, EOS and byte pieces are recognised by id and spelling.
    void typesInferredWhenAbsent() {
        EmbeddedVocab v = test::tiny_vocab();
        v.token_types.clear();
        const auto tok = Tokenizer::from_embedded(v);
        QCOMPARE(tok->encode("ab é", true),
                 (std::vector<int>{1, kSpaceAB, kSpace, 3 + 0xC3, 3 + 0xA9}));
        QCOMPARE(tok->token_bytes(kB, 3 + 0x41), std::string("A"));
    }

    // The serialized vocabulary is a tokenizer.model file like any other.
    void serializedVocabularyAsFile() {
        QTemporaryDir dir;
        const auto write_model = [&](const EmbeddedVocab& v) {
            const std::string path = dir.filePath("tokenizer.model").toStdString();
            std::ofstream(path, std::ios::binary) << serialize_model_proto(v);
            return path;
        };
        const auto tok = Tokenizer::from_file(write_model(test::tiny_vocab()));
        QCOMPARE(tok->encode("ab  cé", true),
                 Tokenizer::from_embedded(test::tiny_vocab())->encode("ab  cé", true));

        EmbeddedVocab no_bos = test::tiny_vocab();
        no_bos.token_types[1] = 1;
        const std::string path = write_model(no_bos);
        const auto error = engine_error_of([&] { Tokenizer::from_file(path); });
        QVERIFY(error);
        QCOMPARE(error->code(), ErrorCode::TokenizerMismatch);
        QVERIFY2(
            QString(error->what()).startsWith(QString::fromStdString(path) + " has no BOS and EOS"),
            error->what());
    }

    // A tokenizer.model that loads but cannot encode: its piece "a" is marked control in the file's
    // own bytes (piece field, score field, then type field 3 = 1 becomes 3).
    void fileThatCannotEncodeIsRefused() {
        std::string bytes = serialize_model_proto(test::tiny_vocab());
        const std::string piece_a("\x0A\x01" "a\x15", 4);
        const size_t at = bytes.find(piece_a);
        QVERIFY(at != std::string::npos);
        QCOMPARE(bytes.substr(at + 8, 2), std::string("\x18\x01"));
        bytes[at + 9] = '\x03';
        QTemporaryDir dir;
        const std::string path = dir.filePath("tokenizer.model").toStdString();
        std::ofstream(path, std::ios::binary) << bytes;
        const auto error = engine_error_of([&] { Tokenizer::from_file(path); });
        QVERIFY(error);
        QCOMPARE(error->code(), ErrorCode::TokenizerMismatch);
        QVERIFY2(QString(error->what()).contains("loads but cannot encode text"), error->what());
    }

    void hostileVocabulary_data() {
        using Change = std::function<void(EmbeddedVocab&)>;
        QTest::addColumn<int>("index");
        mutations_.clear();
        const auto add = [&](const char* name, ErrorCode code, const char* says, Change m) {
            QTest::newRow(name) << int(mutations_.size());
            mutations_.push_back({code, says, std::move(m)});
        };
        add("no tokens", ErrorCode::BadFormat, "0 tokens", [](auto& v) { v = EmbeddedVocab{}; });
        add("other tokenizer", ErrorCode::Unsupported, "'bert'", [](auto& v) { v.model = "bert"; });
        add("SentencePiece pieces called gpt2", ErrorCode::BadFormat, "byte-level alphabet",
            [](auto& v) { v.model = "gpt2"; });
        add("too few scores", ErrorCode::BadFormat, "scores", [](auto& v) { v.scores.pop_back(); });
        add("too many types", ErrorCode::BadFormat, "token types",
            [](auto& v) { v.token_types.push_back(1); });
        add("unknown type", ErrorCode::BadFormat, "token 262 has type 9",
            [](auto& v) { v.token_types[262] = 9; });
        add("negative type", ErrorCode::BadFormat, "type -1",
            [](auto& v) { v.token_types[5] = -1; });
        add("NaN score", ErrorCode::BadFormat, "token 260", [](auto& v) { v.scores[260] = NAN; });
        add("empty piece", ErrorCode::BadFormat, "token 261 is empty",
            [](auto& v) { v.tokens[261].clear(); });
        add("BOS past the end", ErrorCode::BadFormat, "BOS id", [](auto& v) { v.bos_id = 266; });
        add("negative EOS", ErrorCode::BadFormat, "EOS id", [](auto& v) { v.eos_id = -5; });
        add("unk past the end", ErrorCode::BadFormat, "unknown-token id",
            [](auto& v) { v.unk_id = 1 << 30; });
        add("BOS not control", ErrorCode::BadFormat, "control",
            [](auto& v) { v.token_types[1] = 1; });
        add("BOS id on a normal piece", ErrorCode::BadFormat, "BOS 260",
            [](auto& v) { v.bos_id = 260; });
        add("duplicate piece", ErrorCode::BadFormat, "SentencePiece says",
            [](auto& v) { v.tokens[262] = "a"; });
        add("malformed byte piece", ErrorCode::BadFormat, "<0xZZ>",
            [](auto& v) { v.tokens[3] = "<0xZZ>"; });
        add("no unknown token", ErrorCode::BadFormat, "SentencePiece says",
            [](auto& v) { v.token_types[0] = 1; });
        add("two unknown tokens", ErrorCode::BadFormat, "SentencePiece says",
            [](auto& v) { v.token_types[262] = 2; });
        add("control token spelled as a character", ErrorCode::BadFormat,
            "token 260 is a control token (type 3) spelled 'a'",
            [](auto& v) { v.token_types[260] = 3; });
        add("BOS spelled as a normal piece", ErrorCode::BadFormat,
            "token 1 is a control token (type 3) spelled 'ab'", [](auto& v) { v.tokens[1] = "ab"; });
    }

    void hostileVocabulary() {
        QFETCH(int, index);
        const Mutation& m = mutations_[size_t(index)];
        EmbeddedVocab v = test::tiny_vocab();
        m.apply(v);
        const auto error = engine_error_of([&] { Tokenizer::from_embedded(v); });
        QVERIFY(error);
        QCOMPARE(error->code(), m.code);
        QVERIFY2(QString(error->what()).contains(m.says), error->what());
    }

    void vectorsMatchGgufVocabulary() {
        LLAMADESK_REQUIRE_SHARED(gguf, "models/llama2-tokenizer/ggml-vocab-llama-spm.gguf");
        LLAMADESK_REQUIRE_SHARED(vectors, "tokenizer-vectors");
        const auto cases = test::read_vector_cases(vectors + "/ggml-vocab-llama-spm.gguf.inp",
                                                   vectors + "/ggml-vocab-llama-spm.gguf.out");
        QCOMPARE(cases.size(), size_t(46));
        const auto tok = Tokenizer::from_embedded(*read_gguf_vocabulary(gguf.toStdString()));
        QCOMPARE(tok->vocab_size(), 32000);
        QCOMPARE(tok->bos_id(), 1);
        QCOMPARE(tok->eos_id(), 2);
        for (const auto& c : cases) QCOMPARE(tok->encode(c.text, false), c.ids);
    }

    // The GGUF vocabulary and tokenizer.model are the same 32000 pieces, scores and types.
    void ggufVocabularyEqualsTokenizerModel() {
        LLAMADESK_REQUIRE_SHARED(gguf, "models/llama2-tokenizer/ggml-vocab-llama-spm.gguf");
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        const EmbeddedVocab from_gguf = *read_gguf_vocabulary(gguf.toStdString());
        const EmbeddedVocab from_model = test::vocab_from_model_file(model.toStdString());
        QCOMPARE(from_gguf.model, std::string("llama"));
        QVERIFY(from_gguf.tokens == from_model.tokens);
        QVERIFY(from_gguf.scores == from_model.scores);
        QVERIFY(from_gguf.token_types == from_model.token_types);
    }

    // stories260K: its GGUF's vocabulary and tok512.model give the same ids. (tok512.model
    // collapses runs of spaces, a normalizer setting a GGUF vocabulary does not carry, so the
    // texts have single spaces.)
    void stories260kGgufMatchesTok512() {
        LLAMADESK_REQUIRE_SHARED(gguf, "models/stories260K/stories260K.gguf");
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/tok512.model");
        const auto from_gguf = Tokenizer::from_embedded(*read_gguf_vocabulary(gguf.toStdString()));
        const auto from_model = Tokenizer::from_file(model.toStdString());
        QCOMPARE(from_gguf->vocab_size(), 512);
        QCOMPARE(from_gguf->bos_id(), from_model->bos_id());
        QCOMPARE(from_gguf->eos_id(), from_model->eos_id());
        for (const char* text : {
                 "Once upon a time, there was a little girl named Lily.",
                 "She loved to play outside in the park. One day, she saw a big, red ball.",
                 "\"Mom, can I have the ball?\" asked Tim. \"Yes!\"",
                 "Numbers 1234567890 and symbols ~!@#$%^&*()_+-=[]{};':,./<>?",
                 "Üñíçødé and emoji 🦙 and 世界, all through bytes",
                 "Line one.\nLine two.\n\tTabbed.",
                 "",
             }) {
            QCOMPARE(from_gguf->encode(text, true, true), from_model->encode(text, true, true));
        }
    }

private:
    struct Mutation {
        ErrorCode code;
        const char* says;
        std::function<void(EmbeddedVocab&)> apply;
    };
    std::vector<Mutation> mutations_;
};

QTEST_GUILESS_MAIN(TestEmbeddedVocab)
#include "test_embedded_vocab.moc"
