// The chat families: Llama 2 against Meta's chat_completion, which encodes each finished exchange as
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
        QCOMPARE(suggested_chat_format("{% for message in messages %}[INST] <<SYS>>...", "anything", t).format, ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "llama-2-7b-chat.Q4_K_M", t).format, ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "Mistral-7B-Instruct", t).format, ChatFormat::Llama2Chat);
        QCOMPARE(suggested_chat_format("", "llama-2-7b.Q4_K_M", t).format, ChatFormat::Completion);
        QCOMPARE(suggested_chat_format("", "stories260K", t).format, ChatFormat::Completion);
        QCOMPARE(suggested_chat_format("", "llama-2-7b-chat", t).reason, std::string("no chat template; its name says chat"));
    }

    // Each family by the markers that tell them apart; the real Mistral Nemo template is Mistral.
    void families_are_detected() {
        const std::pair<const char*, ChatFormat> cases[] = {
            {"{{ '<|im_start|>' + message['role'] }}", ChatFormat::ChatML},
            {"{{'<｜User｜>' + c}}{{'<｜Assistant｜>'}}", ChatFormat::DeepSeekR1},
            {"{{ '[INST]' + content + '[/INST]' }}", ChatFormat::Mistral},
            {"{{ '[INST] <<SYS>>' }}", ChatFormat::Llama2Chat},
            {"{{ '<|user|>\\n' }}{{ '<|assistant|>' }}", ChatFormat::Zephyr},
            {"Cutting Knowledge Date <|start_header_id|>", ChatFormat::Llama31Chat},
            {"<|start_header_id|>", ChatFormat::Llama3Chat},
        };
        for (const auto& [templ, family] : cases) QCOMPARE(chat_format_of_template(templ), std::optional(family));
        // Phi-3 writes <|user|> too, but ends turns with <|end|>.
        QCOMPARE(chat_format_of_template("<|user|><|assistant|><|end|>"), std::nullopt);
        LLAMADESK_REQUIRE_SHARED(nemo, "llama3/mistralai-Mistral-Nemo-Instruct-2407.jinja");
        QFile file(nemo);
        QVERIFY(file.open(QIODevice::ReadOnly));
        QCOMPARE(chat_format_of_template(file.readAll().toStdString()), std::optional(ChatFormat::Mistral));
    }

    // An unknown template still marks a chat model; the choice is flagged as a guess.
    void unknown_template_is_a_guess() {
        const FormatChoice choice = suggested_chat_format("<start_of_turn>user", "x", *tok_);
        QCOMPARE(choice.format, ChatFormat::Llama2Chat);
        QVERIFY(choice.guessed);
        QVERIFY2(choice.reason.find("no family LlamaDesk renders") != std::string::npos, choice.reason.c_str());
        QVERIFY(!suggested_chat_format("[INST]", "x", *tok_).guessed);
    }

    // A restored answer is the answer's text followed by what closes a generated one, so a restored
    // conversation has the tokens a live one had.
    void answers_end_as_generated_ones_do() {
        for (const ChatFormatName& f : chat_formats()) {
            if (f.format == ChatFormat::Llama3Chat || f.format == ChatFormat::Llama31Chat ||
                f.format == ChatFormat::ChatML || f.format == ChatFormat::DeepSeekR1)
                continue;  // their tokens are not in Llama 2's vocabulary (llama3_turns covers Llama 3)
            const std::vector<int> end = answer_terminator(*tok_, f.format);
            const std::vector<int> answer = render_answer(*tok_, f.format, "Fine, thanks.");
            QVERIFY2(answer.size() > end.size() && std::equal(end.begin(), end.end(), answer.end() - std::ptrdiff_t(end.size())), f.key);
        }
    }

    // SentencePiece (TinyLlama's vocabulary): Zephyr's text after </s> gets no dummy-prefix space,
    // so the next role begins with the newline's byte token, as the template's text has it.
    void zephyr_continues_without_a_space() {
        const std::vector<int> first = render_user_turn(*tok_, ChatFormat::Zephyr, true, "Be brief.", "Hi");
        const int newline = 13;  // <0x0A>
        const auto eos = std::find(first.begin(), first.end(), 2);
        QVERIFY(eos != first.end());
        QCOMPARE(*(eos + 1), newline);
        QCOMPARE(prompt_text(*tok_, first), std::string("<|system|>\nBe brief.</s>\n<|user|>\nHi</s>\n<|assistant|>\n"));
        QCOMPARE(answer_terminator(*tok_, ChatFormat::Zephyr), (std::vector<int>{2, newline}));
        const std::vector<int> next = render_user_turn(*tok_, ChatFormat::Zephyr, false, "", "More");
        QCOMPARE(prompt_text(*tok_, next).substr(0, 9), std::string("<|user|>\n"));
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
