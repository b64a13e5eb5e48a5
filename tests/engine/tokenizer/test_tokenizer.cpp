// Tokenizer: llama.cpp's 46 tokenizer vectors with the real Llama 2 tokenizer.model and with the
// same vocabulary turned into an in-memory model; BOS/EOS; token bytes; where the vocabulary
// comes from; and clear errors for missing or garbage tokenizer files.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_data.h"

using namespace llamadesk;
using llamadesk::test::engine_error_of;

namespace {

std::vector<test::VectorCase> llama_vectors(const QString& dir) {
    return test::read_vector_cases(dir + "/ggml-vocab-llama-spm.gguf.inp",
                                   dir + "/ggml-vocab-llama-spm.gguf.out");
}

}  // namespace

class TestTokenizer : public QObject {
    Q_OBJECT

private slots:
    void vectorsMatchTokenizerModel() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        LLAMADESK_REQUIRE_SHARED(vectors, "tokenizer-vectors");
        const auto cases = llama_vectors(vectors);
        QCOMPARE(cases.size(), size_t(46));
        const auto tok = Tokenizer::from_file(model.toStdString());
        const QString mismatches = test::vector_mismatches(*tok, cases);
        QVERIFY2(mismatches.isEmpty(), qPrintable(mismatches));
    }

    // The pieces, scores and types of tokenizer.model, serialized by us, behave like the file.
    void vectorsMatchInMemoryModelOfTokenizerModelPieces() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        LLAMADESK_REQUIRE_SHARED(vectors, "tokenizer-vectors");
        const EmbeddedVocab vocab = test::vocab_from_model_file(model.toStdString());
        QCOMPARE(vocab.tokens.size(), size_t(32000));
        const auto tok = Tokenizer::from_embedded(vocab);
        QCOMPARE(tok->vocab_size(), 32000);
        QCOMPARE(tok->bos_id(), 1);
        QCOMPARE(tok->eos_id(), 2);
        const QString mismatches = test::vector_mismatches(*tok, llama_vectors(vectors));
        QVERIFY2(mismatches.isEmpty(), qPrintable(mismatches));
    }

    void decodeRestoresTheText() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        LLAMADESK_REQUIRE_SHARED(vectors, "tokenizer-vectors");
        const auto tok = Tokenizer::from_file(model.toStdString());
        for (const auto& c : llama_vectors(vectors))
            QCOMPARE(tok->decode(tok->encode(c.text, /*add_bos=*/true)), c.text);
    }

    void bosAndEos() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        const auto tok = Tokenizer::from_file(model.toStdString());
        QCOMPARE(tok->vocab_size(), 32000);
        QCOMPARE(tok->bos_id(), 1);
        QCOMPARE(tok->eos_id(), 2);
        QCOMPARE(tok->encode("Hello world", false), (std::vector<int>{15043, 3186}));
        QCOMPARE(tok->encode("Hello world", true), (std::vector<int>{1, 15043, 3186}));
        QCOMPARE(tok->encode("Hello world", true, true), (std::vector<int>{1, 15043, 3186, 2}));
        QCOMPARE(tok->encode("", true), (std::vector<int>{1}));
        QCOMPARE(tok->encode("", false), (std::vector<int>{}));
        // Control tokens are framing, never text: "<s>" typed by a user is not BOS.
        const auto typed = tok->encode("<s>", false);
        QVERIFY(std::find(typed.begin(), typed.end(), 1) == typed.end());
        QCOMPARE(tok->decode({1, 15043, 3186, 2}), std::string("Hello world"));
        QCOMPARE(tok->piece(1), std::string("<s>"));
        QCOMPARE(tok->piece(15043), std::string("\xE2\x96\x81Hello"));
    }

    void tokenBytes() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        const auto tok = Tokenizer::from_file(model.toStdString());
        const int hello = 15043, world = 3186, byte_A = 3 + 0x41, byte_F0 = 3 + 0xF0;
        QCOMPARE(tok->token_bytes(tok->bos_id(), hello), std::string("Hello"));  // after BOS
        QCOMPARE(tok->token_bytes(-1, hello), std::string("Hello"));             // at the start
        QCOMPARE(tok->token_bytes(hello, world), std::string(" world"));
        QCOMPARE(tok->token_bytes(world, 259), std::string("  "));  // "▁▁"
        QCOMPARE(tok->token_bytes(hello, byte_A), std::string("A"));
        QCOMPARE(tok->token_bytes(hello, byte_F0), std::string("\xF0"));
        QCOMPARE(tok->token_bytes(byte_A, world), std::string(" world"));
        QCOMPARE(tok->token_bytes(hello, tok->bos_id()), std::string());
        QCOMPARE(tok->token_bytes(hello, tok->eos_id()), std::string());
        QCOMPARE(tok->token_bytes(hello, 0), std::string(" \xE2\x81\x87 "));  // <unk>, as decode()

        const auto out_of_range = engine_error_of([&] { tok->token_bytes(hello, 32000); });
        QVERIFY(out_of_range);
        QCOMPARE(out_of_range->code(), ErrorCode::InvalidArgument);
        QVERIFY(QString(out_of_range->what()).contains("32000"));
        QVERIFY(engine_error_of([&] { tok->decode({-1}); }));
        QVERIFY(engine_error_of([&] { tok->piece(40000); }));
    }

    void fromSourcePrefersTheModelFile() {
        LLAMADESK_REQUIRE_SHARED(llama, "models/llama2-tokenizer/tokenizer.model");
        LLAMADESK_REQUIRE_SHARED(tok512, "models/stories260K/tok512.model");
        TokenizerSource source;
        source.embedded =
            std::make_shared<EmbeddedVocab>(test::vocab_from_model_file(llama.toStdString()));
        QCOMPARE(Tokenizer::from_source(source)->vocab_size(), 32000);
        source.model_file = tok512.toStdString();
        QCOMPARE(Tokenizer::from_source(source)->vocab_size(), 512);
    }

    void fromSourceWithoutVocabulary() {
        const auto error = engine_error_of([] { Tokenizer::from_source(TokenizerSource{}); });
        QVERIFY(error);
        QCOMPARE(error->code(), ErrorCode::TokenizerMismatch);
        QCOMPARE(std::string(error->what()),
                 std::string("this checkpoint has no vocabulary; choose its tokenizer.model"));
    }

    void missingFile() {
        const std::string path = "/nonexistent/folder/tokenizer.model";
        const auto error = engine_error_of([&] { Tokenizer::from_file(path); });
        QVERIFY(error);
        QCOMPARE(error->code(), ErrorCode::FileNotFound);
        QVERIFY2(std::string(error->what()).find(path) != std::string::npos, error->what());
    }

    void notATokenizerFile_data() {
        QTest::addColumn<QByteArray>("content");
        QTest::addColumn<QString>("says");
        const QString unusable = "is not a usable SentencePiece tokenizer model";
        QTest::newRow("empty") << QByteArray() << "is empty";
        QTest::newRow("text") << QByteArray("this is not a tokenizer\n")
                              << unusable + " (it does not parse";
        QTest::newRow("binary") << QByteArray("\x0a\xff\xff\xff\xff\x0f\x01", 7) << unusable;
        QTest::newRow("gguf header") << QByteArray("GGUF\x03\0\0\0\0\0\0\0", 12)
                                     << "is a GGUF file, not a SentencePiece tokenizer.model";
        QTest::newRow("no pieces")
            << QByteArray("\x1a\x00", 2) << unusable + " (SentencePiece says";
    }

    void notATokenizerFile() {
        QFETCH(QByteArray, content);
        QFETCH(QString, says);
        QTemporaryDir dir;
        const QString path = dir.filePath("tokenizer.model");
        QFile file(path);
        QVERIFY(file.open(QIODevice::WriteOnly));
        file.write(content);
        file.close();
        const auto error = engine_error_of([&] { Tokenizer::from_file(path.toStdString()); });
        QVERIFY(error);
        QCOMPARE(error->code(), ErrorCode::TokenizerMismatch);
        const QString message = error->what();
        QVERIFY2(message.startsWith(path) && message.contains(says), qPrintable(message));
    }

    void folderOrHugeFile() {
        QTemporaryDir dir;
        const auto folder =
            engine_error_of([&] { Tokenizer::from_file(dir.path().toStdString()); });
        QVERIFY(folder);
        QCOMPARE(folder->code(), ErrorCode::TokenizerMismatch);
        QVERIFY2(QString(folder->what()).contains("folder"), folder->what());

        // A sparse 100 MiB file (weights chosen by mistake) is refused before it is read.
        QFile big(dir.filePath("model.bin"));
        QVERIFY(big.open(QIODevice::WriteOnly));
        QVERIFY(big.resize(100ll << 20));
        big.close();
        const auto huge =
            engine_error_of([&] { Tokenizer::from_file(big.fileName().toStdString()); });
        QVERIFY(huge);
        QCOMPARE(huge->code(), ErrorCode::TokenizerMismatch);
        QVERIFY2(QString(huge->what()).contains("100 MiB"), huge->what());
    }
};

QTEST_GUILESS_MAIN(TestTokenizer)
#include "test_tokenizer.moc"
