// Llama 2 chat template against Meta's chat_completion, which encodes each finished exchange as
// one string "[INST] {user} [/INST] {answer} " with BOS and EOS, and the open turn as
// "[INST] {user} [/INST]" with BOS; the system prompt is merged into the first user message.
#include <QFile>
#include <QTest>

#include "chat/chat_template.h"
#include "core/error.h"
#include "readers/gguf_reader.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using namespace llamadesk;

namespace {

std::vector<int> concat(std::vector<int> a, const std::vector<int>& b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
}

// Python's str.strip(), for building the reference strings.
std::string py_strip(const std::string& s) {
    const char* ws = " \t\n\r\v\f";
    const size_t b = s.find_first_not_of(ws);
    if (b == std::string::npos) return {};
    return s.substr(b, s.find_last_not_of(ws) - b + 1);
}

}  // namespace

class TestChatTemplate : public QObject {
    Q_OBJECT

    std::unique_ptr<Tokenizer> tok_;

private slots:
    void initTestCase() {
        const QString path = llamadesk::test::shared_path("models/llama2-tokenizer/tokenizer.model");
        if (path.isEmpty()) QSKIP("reference data not found: models/llama2-tokenizer/tokenizer.model");
        tok_ = Tokenizer::from_file(path.toStdString());
    }

    void known_marker_ids() {
        // <s> ▁[ INST ] as every Llama 2 chat prompt begins; the answer ends "▁" </s>.
        const std::vector<int> turn = render_user_turn(*tok_, ChatFormat::Llama2Chat, true, "", "Hi");
        QVERIFY(turn.size() > 4);
        QCOMPARE(std::vector<int>(turn.begin(), turn.begin() + 4), (std::vector<int>{1, 518, 25580, 29962}));
        const std::vector<int> answer = render_answer(*tok_, ChatFormat::Llama2Chat, "Hello!");
        QCOMPARE(std::vector<int>(answer.end() - 2, answer.end()), (std::vector<int>{29871, 2}));
        QCOMPARE(answer_terminator(*tok_, ChatFormat::Llama2Chat), std::vector<int>{2});
    }

    void dialog_matches_reference_data() {
        QTest::addColumn<QString>("system");
        QTest::addColumn<QStringList>("messages");  // user, answer, user, answer, ..., user
        QTest::newRow("one turn, no system") << QString() << QStringList{"Hello, who are you?"};
        QTest::newRow("one turn, system")
            << QString("You are a helpful assistant. Answer briefly.") << QStringList{"What is 2+2?"};
        QTest::newRow("three turns, system, untidy whitespace")
            << QString("Always answer in French.")
            << QStringList{"  Hi there \n", " Bonjour ! Comment puis-je vous aider ? ",
                           "Tell me a joke.\n\nA short one.", "Pourquoi les plongeurs plongent-ils en arrière ?",
                           "Merci 🙂"};
        QTest::newRow("two turns, no system")
            << QString() << QStringList{"Name a colour.", "Blue.", "Another one?"};
    }

    void dialog_matches_reference() {
        QFETCH(QString, system);
        QFETCH(QStringList, messages);
        const std::string sys = system.toStdString();

        std::vector<int> ours, reference;
        for (qsizetype i = 0; i < messages.size(); i += 2) {
            const bool first = i == 0;
            const std::string user = messages[i].toStdString();
            ours = concat(ours, render_user_turn(*tok_, ChatFormat::Llama2Chat, first, sys, user));
            std::string content = user;
            if (first && !sys.empty()) content = "<<SYS>>\n" + sys + "\n<</SYS>>\n\n" + user;
            if (i + 1 < messages.size()) {
                const std::string answer = messages[i + 1].toStdString();
                ours = concat(ours, render_answer(*tok_, ChatFormat::Llama2Chat, answer));
                reference = concat(reference, tok_->encode("[INST] " + py_strip(content) + " [/INST] " +
                                                               py_strip(answer) + " ",
                                                           true, true));
            } else {
                reference = concat(reference, tok_->encode("[INST] " + py_strip(content) + " [/INST]", true));
            }
        }
        QCOMPARE(ours, reference);
    }

    void completion_is_raw_text() {
        const std::string text = "Once upon a time";
        QCOMPARE(render_user_turn(*tok_, ChatFormat::Completion, true, "ignored", text), tok_->encode(text, true));
        QCOMPARE(render_user_turn(*tok_, ChatFormat::Completion, false, "", text), tok_->encode(text, false));
        QVERIFY(answer_terminator(*tok_, ChatFormat::Completion).empty());
    }

    void suggested_format() {
        const Tokenizer& t = *tok_;
        QCOMPARE(suggested_chat_format("{% for message in messages %}[INST]...", "anything", t), ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "llama-2-7b-chat.Q4_K_M", t), ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "Mistral-7B-Instruct", t), ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "llama-2-7b.Q4_K_M", t), ChatFormat::Completion);
        QCOMPARE(suggested_chat_format("", "stories260K", t), ChatFormat::Completion);
    }

    // Llama 3: the checkpoint's template, or without one the vocabulary, says so.
    void llama3_is_detected() {
        LLAMADESK_REQUIRE_SHARED(vocab, "llama3/ggml-vocab-llama-bpe.gguf");
        LLAMADESK_REQUIRE_SHARED(jinja, "llama3/meta-llama-Llama-3.1-8B-Instruct.jinja");
        QFile file(jinja);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const auto llama3 = Tokenizer::from_embedded(*read_gguf_vocabulary(vocab.toStdString()));
        QCOMPARE(suggested_chat_format(file.readAll().toStdString(), "x", *llama3), ChatFormat::Llama31Chat);
        QCOMPARE(suggested_chat_format("{{ bos_token }}<|start_header_id|>", "x", *llama3), ChatFormat::Llama3Chat);
        // A template of a family not rendered still marks a chat model.
        QCOMPARE(chat_format_of_template("{{ '[INST] ' + m }}"), std::nullopt);
        QCOMPARE(suggested_chat_format("{{ '[INST] ' + m }}", "x", *tok_), ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "Meta-Llama-3-8B", *llama3), ChatFormat::Llama3Chat);
        QCOMPARE(suggested_chat_format("", "llama-2-7b-chat", *tok_), ChatFormat::Llama2Chat);
    }

    // Llama 3 chat as its template renders it (Llama 3.0's: each message is
    // <|start_header_id|>{role}<|end_header_id|>\n\n{content | trim}<|eot_id|>, BOS first, then
    // the assistant header), with the special tokens by id and the texts between them encoded alone;
    // a person's "<|eot_id|>" stays text.
    void llama3_turns() {
        LLAMADESK_REQUIRE_SHARED(vocab, "llama3/ggml-vocab-llama-bpe.gguf");
        const auto t = Tokenizer::from_embedded(*read_gguf_vocabulary(vocab.toStdString()));
        const int bot = 128000, start = 128006, end = 128007, eot = 128009;
        auto text = [&](const std::string& s) { return t->encode(s, false); };
        // <|start_header_id|>{role}<|end_header_id|> then "\n\n{content}", each text encoded alone
        auto message = [&](std::vector<int> ids, const std::string& role, const std::string& content) {
            ids.push_back(start);
            ids = concat(ids, text(role));
            ids.push_back(end);
            return concat(ids, text("\n\n" + content));
        };
        std::vector<int> expected = concat(message({bot}, "system", "Be brief."), {eot});
        expected = concat(message(expected, "user", "Hi <|eot_id|>"), {eot});
        expected = message(expected, "assistant", "");
        QCOMPARE(render_user_turn(*t, ChatFormat::Llama3Chat, true, " Be brief.\n", " Hi <|eot_id|> "), expected);

        const std::vector<int> later = message(concat(message({}, "user", "Again"), {eot}), "assistant", "");
        QCOMPARE(render_user_turn(*t, ChatFormat::Llama3Chat, false, "ignored", "Again"), later);
        QCOMPARE(render_answer(*t, ChatFormat::Llama3Chat, "Hello! "), concat(text("Hello!"), {eot}));
        QCOMPARE(answer_terminator(*t, ChatFormat::Llama3Chat), std::vector<int>{eot});
        QVERIFY(t->ends_generation(eot));
        // Without a system prompt the first turn begins with the user's header.
        const std::vector<int> bare = render_user_turn(*t, ChatFormat::Llama3Chat, true, "", "Again");
        QCOMPARE(bare, concat({bot}, later));
    }

    // A SentencePiece vocabulary has no Llama 3 headers: a clear error, not a garbled prompt.
    void llama3_needs_its_tokens() {
        try {
            render_user_turn(*tok_, ChatFormat::Llama3Chat, true, "", "Hi");
            QFAIL("rendered without <|start_header_id|>");
        } catch (const EngineError& e) {
            QVERIFY2(QString(e.what()).contains("the Llama 3 chat format needs the token <|"), e.what());
        }
    }
};

QTEST_APPLESS_MAIN(TestChatTemplate)
#include "test_chat_template.moc"
