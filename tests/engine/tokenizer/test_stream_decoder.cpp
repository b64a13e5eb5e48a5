// StreamDecoder: text streamed token by token never ends inside a UTF-8 character (emoji and CJK
// arrive as several byte-fallback tokens), and the whole stream equals Tokenizer::decode().
#include <QTest>
#include <random>

#include "test_support.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer_test_data.h"

using namespace llamadesk;

namespace {

constexpr int kFirstByteToken = 3;  // <0x00> in the Llama 2 vocabulary

// Whole, well-formed UTF-8 characters only (QString replaces anything else with U+FFFD).
bool whole_characters(const std::string& s) {
    const QByteArray bytes = QByteArray::fromStdString(s);
    return QString::fromUtf8(bytes).toUtf8() == bytes;
}

struct Streamed {
    std::vector<std::string> steps;  // what each push returned, then what flush returned
    std::string text() const {
        std::string all;
        for (const auto& s : steps) all += s;
        return all;
    }
};

Streamed stream(const Tokenizer& tok, int prev, const std::vector<int>& ids) {
    StreamDecoder decoder(tok, prev);
    Streamed out;
    for (int id : ids) out.steps.push_back(decoder.push(id));
    out.steps.push_back(decoder.flush());
    return out;
}

int count_byte_tokens(const std::vector<int>& ids) {
    return int(std::count_if(ids.begin(), ids.end(), [](int id) {
        return id >= kFirstByteToken && id < kFirstByteToken + 256;
    }));
}

std::unique_ptr<Tokenizer> llama_tokenizer(const QString& path) {
    return Tokenizer::from_file(path.toStdString());
}

}  // namespace

class TestStreamDecoder : public QObject {
    Q_OBJECT

private slots:
    void wholeCharactersAtEachStep_data() {
        QTest::addColumn<QString>("text");
        QTest::newRow("emoji") << QString("Hello 😀🦙 world 🎉");
        QTest::newRow("emoji sequences")
            << QString("family 👨‍👩‍👧 flag 🇫🇷 skin 👍🏽");
        QTest::newRow("cjk") << QString("世界你好，今天天气很好。こんにちは、ヰ 안녕하세요 躑躅");
        QTest::newRow("mixed") << QString(
            "Ünïcödé: 𝔘𝔫𝔦 — «ok»\n\tcode(){ return 1; } 🦙.cpp 龘");
    }

    void wholeCharactersAtEachStep() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        QFETCH(QString, text);
        const auto tok = llama_tokenizer(model);
        const std::string utf8 = text.toStdString();
        const std::vector<int> ids = tok->encode(utf8, /*add_bos=*/false);
        // The point of the test: some characters arrive as several byte-fallback tokens.
        QVERIFY(count_byte_tokens(ids) >= 2);

        const Streamed out = stream(*tok, tok->bos_id(), ids);
        int held = 0;
        for (const auto& step : out.steps) {
            QVERIFY2(whole_characters(step), step.c_str());
            held += step.empty();
        }
        QVERIFY(held >= 1);  // bytes of a character were held back at least once
        QCOMPARE(out.steps.back(), std::string());  // nothing left over for flush
        QCOMPARE(out.text(), utf8);
        std::vector<int> with_bos = ids;
        with_bos.insert(with_bos.begin(), tok->bos_id());
        QCOMPARE(out.text(), tok->decode(with_bos));
        QCOMPARE(stream(*tok, -1, ids).text(), tok->decode(ids));
    }

    // With a vocabulary of bytes and a few merges, every non-ASCII character arrives byte by byte.
    void wholeCharactersFromByteTokens() {
        const auto tok = Tokenizer::from_embedded(test::tiny_vocab());
        const std::string text = "ab é 中文 😀🦙 c\n";
        const std::vector<int> ids = tok->encode(text, /*add_bos=*/true);
        QCOMPARE(count_byte_tokens(ids), 17);  // é 2, 中文 6, 😀🦙 8, newline 1
        const Streamed out = stream(*tok, -1, ids);
        int held = 0;
        for (const auto& step : out.steps) {
            QVERIFY2(whole_characters(step), step.c_str());
            held += step.empty();
        }
        // Held back: 1 byte of é, 2 of each CJK character, 3 of each emoji; BOS and flush give "".
        QCOMPARE(held, 1 + 2 * 2 + 2 * 3 + 2);
        QCOMPARE(out.text(), text);
        QCOMPARE(out.text(), tok->decode(ids));
    }

    // The answer after a prompt keeps its leading space; prompt + answer is the whole text.
    void answerContinuesThePrompt() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        const auto tok = llama_tokenizer(model);
        const std::string prompt = "Once upon a time", whole = "Once upon a time, there was a 🐉.";
        const std::vector<int> prompt_ids = tok->encode(prompt, true);
        const std::vector<int> all_ids = tok->encode(whole, true, true);
        QVERIFY(std::equal(prompt_ids.begin(), prompt_ids.end(), all_ids.begin()));
        const std::vector<int> answer(all_ids.begin() + qsizetype(prompt_ids.size()),
                                      all_ids.end());
        QCOMPARE(stream(*tok, prompt_ids.back(), answer).text(), whole.substr(prompt.size()));
        QCOMPARE(stream(*tok, -1, all_ids).text(), whole);
    }

    // Byte tokens that form no valid character: U+FFFD per byte, exactly as decode() does.
    void invalidBytesAsDecode_data() {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<int>("replacements");
        QTest::newRow("truncated emoji") << QByteArray("\xF0\x9F\x98") << 3;
        QTest::newRow("truncated cjk") << QByteArray("\xE4\xB8") << 2;
        QTest::newRow("stray continuation") << QByteArray("\x80") << 1;
        QTest::newRow("overlong") << QByteArray("\xC0\x80") << 2;
        QTest::newRow("overlong 3") << QByteArray("\xE0\x80\x80") << 3;
        QTest::newRow("surrogate") << QByteArray("\xED\xA0\x80") << 3;
        QTest::newRow("past U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << 4;
        QTest::newRow("five bytes") << QByteArray("\xF8\x88\x80\x80\x80") << 5;
        QTest::newRow("lead then ascii") << QByteArray(
                                                "\xE4\xB8"
                                                "A")
                                         << 2;
        QTest::newRow("two leads") << QByteArray("\xE4\xB8\xE4\xB8\xAD") << 2;
        QTest::newRow("valid U+FFFF") << QByteArray("\xEF\xBF\xBF") << 0;
    }

    void invalidBytesAsDecode() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        QFETCH(QByteArray, bytes);
        QFETCH(int, replacements);
        const auto tok = llama_tokenizer(model);
        std::vector<int> ids;
        for (char b : bytes) ids.push_back(kFirstByteToken + static_cast<unsigned char>(b));
        ids.push_back(15043);  // "▁Hello" after the bytes
        const Streamed out = stream(*tok, -1, ids);
        for (const auto& step : out.steps) QVERIFY2(whole_characters(step), step.c_str());
        QCOMPARE(out.text(), tok->decode(ids));
        const QString text = QString::fromStdString(out.text());
        QCOMPARE(int(text.count(QChar(0xFFFD))), replacements);
        QVERIFY(text.endsWith(" Hello"));

        ids.pop_back();  // unfinished at the end: flush emits the rest
        QCOMPARE(stream(*tok, -1, ids).text(), tok->decode(ids));
    }

    // Random pieces, with byte tokens over-represented, after BOS: every step whole characters
    // and the total equal to decode().
    void randomTokensAsDecode() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        const auto tok = llama_tokenizer(model);
        std::mt19937 rng(1234);
        std::uniform_int_distribution<int> any_piece(kFirstByteToken, tok->vocab_size() - 1);
        std::uniform_int_distribution<int> byte(0x80, 0xFF);  // high bytes: partial characters
        std::uniform_int_distribution<int> coin(0, 2);
        for (int round = 0; round < 200; ++round) {
            std::vector<int> ids{tok->bos_id()};
            for (int i = 0; i < 24; ++i)
                ids.push_back(coin(rng) == 0 ? any_piece(rng) : kFirstByteToken + byte(rng));
            if (round % 2) ids.push_back(tok->eos_id());
            const Streamed out = stream(*tok, -1, ids);
            for (const auto& step : out.steps) QVERIFY2(whole_characters(step), step.c_str());
            QCOMPARE(out.text(), tok->decode(ids));
        }
    }

    // Every tokenizer vector streamed after BOS gives decode() of its ids.
    void vectorsAsDecode() {
        LLAMADESK_REQUIRE_SHARED(model, "models/llama2-tokenizer/tokenizer.model");
        LLAMADESK_REQUIRE_SHARED(vectors, "tokenizer-vectors");
        const auto tok = llama_tokenizer(model);
        const auto cases = test::read_vector_cases(vectors + "/ggml-vocab-llama-spm.gguf.inp",
                                                   vectors + "/ggml-vocab-llama-spm.gguf.out");
        QCOMPARE(cases.size(), size_t(46));
        for (const auto& c : cases) {
            QCOMPARE(stream(*tok, tok->bos_id(), c.ids).text(), c.text);
            QCOMPARE(stream(*tok, -1, c.ids).text(), tok->decode(c.ids));
        }
    }
};

QTEST_GUILESS_MAIN(TestStreamDecoder)
#include "test_stream_decoder.moc"
