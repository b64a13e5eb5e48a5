// llamadesk-cli as a user runs it: the built binary, in a process of its own.
#include <QFile>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryDir>
#include <QTest>

#include <array>
#include <cmath>
#include <map>

#include "engine_fixtures.h"
#include "readers/gguf_reader.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"
#include "tokenizer/tokenizer.h"

using namespace llamadesk;

namespace {

// One thread: these runs check behaviour, and stay fast on a busy machine.
test::ProgramRun run_cli(const QStringList& args, const QByteArray& input = {}) {
    return test::run_program(QStringLiteral(LLAMADESK_CLI_PATH), QStringList{"--threads", "1"} + args, input);
}

}  // namespace

class TestCli : public QObject {
    Q_OBJECT

    QTemporaryDir dir_;

    QString write_file(const QString& name, const QByteArray& contents) {
        const QString path = dir_.filePath(name);
        QFile f(path);
        if (!f.open(QIODevice::WriteOnly) || f.write(contents) != contents.size()) qFatal("cannot write %s", qPrintable(path));
        return path;
    }

    // A small GGUF with no chat template and a real vocabulary: Llama 3's, with reserved special
    // tokens renamed to the given names (as Hermes 3 and the DeepSeek distills rename them), or,
    // for "llama2", Llama 2's SentencePiece vocabulary.
    QString model_with_vocab(const QString& name, const std::vector<std::string>& specials = {}) {
        const QString path = dir_.filePath(name + ".gguf");
        if (QFile::exists(path)) return path;
        std::shared_ptr<EmbeddedVocab> vocab;
        if (name == "llama2") {
            const QString sp = test::shared_path("models/llama2-tokenizer/tokenizer.model");
            vocab = std::make_shared<EmbeddedVocab>(Tokenizer::from_file(sp.toStdString())->vocabulary());
        } else {
            vocab = read_gguf_vocabulary(test::shared_path("llama3/ggml-vocab-llama-bpe.gguf").toStdString());
            for (size_t k = 0; k < specials.size(); ++k) {
                std::string& token = vocab->tokens[size_t(128011 + k)];
                if (!token.starts_with("<|reserved_special_token_")) qFatal("token %zu is %s", 128011 + k, token.c_str());
                token = specials[k];
            }
        }
        ModelConfig c = test::small_config(2, 1, 16, 128);
        c.vocab_size = int(vocab->tokens.size());
        Checkpoint ckpt = make_synthetic_checkpoint(c, DType::F32, 3);
        ckpt.tokenizer.embedded = vocab;
        write_gguf(ckpt, path.toStdString());
        return path;
    }
    QString llama3_model() { return model_with_vocab("llama3"); }

private slots:
    void initTestCase() { QVERIFY(dir_.isValid()); }

    // Each template, rendered ahead of time by jinja2 (engine/tools/chat/make_template_cases.py):
    // the printed prompt is the same, byte for byte, whether the family comes from the template
    // file or is named. The real Llama 3.1, 3.2 and Mistral Nemo templates are in ../shared; the
    // project's own write ChatML, Zephyr and DeepSeek-R1 as Hermes 3, TinyLlama Chat and the
    // distills do.
    void print_prompt_matches_the_templates_data() {
        QTest::addColumn<QString>("templ");
        QTest::addColumn<QString>("family");
        QTest::addColumn<QString>("vocab");
        QTest::addColumn<int>("n");
        const struct {
            const char *templ, *family, *vocab;
        } cases[] = {
            {"meta-llama-Llama-3.1-8B-Instruct", "llama3.1", "llama3"},
            {"meta-llama-Llama-3.2-3B-Instruct", "llama3.1", "llama3"},
            {"mistralai-Mistral-Nemo-Instruct-2407", "mistral", "llama3"},
            {"mistralai-Mistral-Nemo-Instruct-2407", "mistral", "llama3-inst"},
            {"chatml", "chatml", "llama3-chatml"},
            {"deepseek-r1", "deepseek-r1", "llama3-deepseek"},
            {"zephyr", "zephyr", "llama2"},
        };
        for (const auto& c : cases)
            for (int n = 1; n <= 5; ++n)
                QTest::newRow(qPrintable(QStringLiteral("%1 %2 %3").arg(c.templ, c.vocab).arg(n)))
                    << QString(c.templ) << QString(c.family) << QString(c.vocab) << n;
    }
    void print_prompt_matches_the_templates() {
        QFETCH(QString, templ);
        QFETCH(QString, family);
        QFETCH(QString, vocab);
        QFETCH(int, n);
        const QString data = QStringLiteral(LLAMADESK_TEST_DATA_DIR "/chat/");
        QString jinja = data + templ + ".jinja";
        if (!QFile::exists(jinja)) {
            LLAMADESK_REQUIRE_SHARED(shared, "llama3/" + templ + ".jinja");
            jinja = shared;
        }
        LLAMADESK_REQUIRE_SHARED(bpe, "llama3/ggml-vocab-llama-bpe.gguf");
        LLAMADESK_REQUIRE_SHARED(sp, "models/llama2-tokenizer/tokenizer.model");
        const std::map<QString, std::vector<std::string>> specials = {
            {"llama3-inst", {"[INST]", "[/INST]"}},
            {"llama3-chatml", {"<|im_start|>", "<|im_end|>"}},
            {"llama3-deepseek", {"<｜User｜>", "<｜Assistant｜>", "<think>"}},
        };
        const QString model = model_with_vocab(vocab, specials.contains(vocab) ? specials.at(vocab) : std::vector<std::string>{});
        QFile expected(data + QStringLiteral("%1-%2.txt").arg(templ).arg(n));
        QVERIFY(expected.open(QIODevice::ReadOnly));
        const QByteArray want = expected.readAll();
        const QString messages = data + QStringLiteral("messages-%1.json").arg(n);
        for (const QString& chosen : {jinja, family}) {
            const test::ProgramRun r = run_cli({"--model", model, "--chat-template", chosen, "--messages", messages,
                                                "--print-prompt", "--date", "26 Jul 2024"});
            QVERIFY2(r.exit_code == 0, r.err.constData());
            QCOMPARE(r.out, want);
        }
    }

    void print_prompt_refuses_unknown_templates_and_bad_lists() {
        LLAMADESK_REQUIRE_SHARED(vocab, "llama3/ggml-vocab-llama-bpe.gguf");
        const QString gemma = write_file("gemma.jinja", "{% for m in messages %}<start_of_turn>{{ m['role'] }}\n{{ m['content'] }}<end_of_turn>\n{% endfor %}");
        const QString messages = QStringLiteral(LLAMADESK_TEST_DATA_DIR "/chat/messages-1.json");
        const test::ProgramRun r = run_cli({"--model", llama3_model(), "--chat-template", gemma, "--messages", messages, "--print-prompt"});
        QCOMPARE(r.exit_code, 1);
        QVERIFY2(r.err.contains("is of none of the families LlamaDesk renders; pass one of llama3.1, llama3, chat, "
                                "mistral, chatml, zephyr, deepseek-r1, completion"),
                 r.err.constData());
        // A family whose tokens the vocabulary lacks says which.
        const test::ProgramRun no_tokens = run_cli({"--model", llama3_model(), "--chat-template", "chatml", "--messages", messages, "--print-prompt"});
        QCOMPARE(no_tokens.exit_code, 1);
        QVERIFY2(no_tokens.err.contains("the ChatML (Hermes) format needs the token <|im_start|>"), no_tokens.err.constData());
        const QString ends_with_answer = write_file("answer-last.json", R"([{"role": "user", "content": "a"}, {"role": "assistant", "content": "b"}])");
        const test::ProgramRun bad = run_cli({"--model", llama3_model(), "--messages", ends_with_answer, "--print-prompt"});
        QCOMPARE(bad.exit_code, 1);
        QVERIFY2(bad.err.contains("ends with the assistant's message"), bad.err.constData());
        // A role of none of the three is named as such, not taken for a turn out of order.
        const QString bot = write_file("bot.json", R"([{"role": "user", "content": "a"}, {"role": "bot", "content": "b"}])");
        const test::ProgramRun unknown = run_cli({"--model", llama3_model(), "--messages", bot, "--print-prompt"});
        QCOMPARE(unknown.exit_code, 1);
        QVERIFY2(unknown.err.contains("message 1 has the role \"bot\"; the roles are \"system\" (first only), "
                                      "\"user\" and \"assistant\""),
                 unknown.err.constData());
    }

    // Without a template, <|eot_id|> in the vocabulary means Llama 3; --chat says which format it uses.
    void chat_names_the_detected_family() {
        LLAMADESK_REQUIRE_SHARED(vocab, "llama3/ggml-vocab-llama-bpe.gguf");
        const test::ProgramRun r = run_cli({"--model", llama3_model(), "--chat", "--temperature", "0", "-n", "2"}, "/quit\n");
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.err.contains("chat (Llama 3 chat; no chat template; its vocabulary has <|eot_id|>)"), r.err.constData());
    }

    void prompt_prints_the_published_text() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.bin");
        const std::string prompt = "Once upon a time";
        const test::ProgramRun r = run_cli({"--model", model, "--prompt", QString::fromStdString(prompt), "--temperature", "0",
                               "-n", "60", "--stats"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.startsWith(QByteArray::fromStdString(llamadesk::test::kStories260KGreedy)), r.out.constData());
        // stdout is exactly the prompt followed by the generated text, nothing before or after.
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(llamadesk::test::load_params(model)));
        const GenerationResult g =
            e.generate(e.create_conversation(ChatFormat::Completion), prompt, llamadesk::test::greedy(60));
        LLAMADESK_VERIFY_OK(g.status);
        QCOMPARE(r.out, QByteArray::fromStdString(prompt + g.text));
        QVERIFY(r.err.contains("[stats]"));
        QVERIFY(!r.out.contains("[stats]"));
        QVERIFY2(r.err.contains("(CPU, 1 thread, "), r.err.constData());  // run_cli passes --threads 1
    }

    // The contract checked from outside: --ctx-size N --context-full shift|stop -n K --stats.
    void context_full_shifts_or_stops() {
        const QString model = llamadesk::test::write_synthetic_gguf(dir_, "shift-cli",
                                                                    llamadesk::test::small_config(4, 2, 32, 512), 3);
        const QRegularExpression line("context shifts: (\\d+), tokens re-prefilled: (\\d+)");
        const QStringList common{"--model", model, "--prompt", "Once", "--ctx-size", "64", "-n", "200",
                                 "--seed", "1", "--stats"};
        const test::ProgramRun shifted = run_cli(common + QStringList{"--context-full", "shift"});
        QCOMPARE(shifted.exit_code, 0);
        const QRegularExpressionMatch m = line.match(QString::fromUtf8(shifted.err));
        QVERIFY2(m.hasMatch(), shifted.err.constData());
        QVERIFY2(m.captured(1).toInt() >= 3, shifted.err.constData());
        QCOMPARE(m.captured(2).toInt(), 0);
        QVERIFY2(shifted.err.contains("stop: max tokens") && shifted.err.contains("generated 200 tokens"),
                 shifted.err.constData());

        const test::ProgramRun stopped = run_cli(common + QStringList{"--context-full", "stop"});
        QCOMPARE(stopped.exit_code, 0);
        QVERIFY2(stopped.err.contains("stop: context full") && stopped.err.contains("context shifts: 0,"),
                 stopped.err.constData());
        QVERIFY(run_cli(common + QStringList{"--context-full", "slide"}).exit_code != 0);
    }

    void tokenize_prints_ids_with_bos_first() {
        LLAMADESK_REQUIRE_SHARED(tokenizer, "models/stories260K/tok512.model");
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.gguf");
        const std::string text = "Once upon a time, Lily saw a cat.";
        QByteArray expected;
        for (int id : Tokenizer::from_file(tokenizer.toStdString())->encode(text, true))
            expected += (expected.isEmpty() ? "" : " ") + QByteArray::number(id);
        expected += "\n";
        QVERIFY(expected.startsWith("1 "));

        const test::ProgramRun with_tokenizer = run_cli({"--tokenizer", tokenizer, "--tokenize", QString::fromStdString(text)});
        QCOMPARE(with_tokenizer.exit_code, 0);
        QCOMPARE(with_tokenizer.out, expected);
        const test::ProgramRun with_model = run_cli({"--model", model, "--tokenize", QString::fromStdString(text)});
        QCOMPARE(with_model.exit_code, 0);
        QCOMPARE(with_model.out, expected);
    }

    void chat_keeps_the_cache_and_new_resets() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.bin");
        const test::ProgramRun r = run_cli({"--model", model, "--chat", "--temperature", "0", "-n", "12", "--stats"},
                              "Hello\nHello\n/new\nHello\n/quit\n");
        QCOMPARE(r.exit_code, 0);
        // One --stats block per answer: "prompt P tokens, prefilled F" and "conversation: H tokens".
        const QRegularExpression figures(R"(prompt (\d+) tokens, prefilled (\d+).*\n.*conversation: (\d+) tokens)");
        std::vector<std::array<int, 3>> turns;
        for (auto it = figures.globalMatch(QString::fromUtf8(r.err)); it.hasNext();) {
            const QRegularExpressionMatch m = it.next();
            turns.push_back({m.captured(1).toInt(), m.captured(2).toInt(), m.captured(3).toInt()});
        }
        QCOMPARE(int(turns.size()), 3);
        QCOMPARE(turns[0][1], turns[0][0]);  // empty cache: the whole prompt
        // The follow-up prefills its own tokens and the previous answer's uncomputed tail only.
        QVERIFY(turns[1][1] >= turns[1][0] + 1 && turns[1][1] <= turns[1][0] + 2);
        QVERIFY(turns[1][2] > turns[0][2]);
        // After /new the conversation starts over: the same figures as the first turn.
        QCOMPARE(turns[2][1], turns[0][1]);
        QCOMPARE(turns[2][2], turns[0][2]);
    }

    void errors_are_one_line_and_non_zero_data() {
        QTest::addColumn<QStringList>("args");
        QTest::newRow("missing model") << QStringList{"--model", "/nonexistent/model.gguf", "--prompt", "x"};
        QTest::newRow("no model, the built-in one missing") << QStringList{"--prompt", "x"};
        QTest::newRow("unknown option") << QStringList{"--frobnicate"};
        QTest::newRow("bad number") << QStringList{"--model", "m", "--temperature", "warm"};
        QTest::newRow("bad backend") << QStringList{"--model", "m", "--backend", "tpu"};
        QTest::newRow("missing value") << QStringList{"--model"};
        QTest::newRow("json without perplexity") << QStringList{"--model", "m", "--prompt", "x", "--json"};
        QTest::newRow("two modes") << QStringList{"--model", "m", "--prompt", "x", "--perplexity", "f"};
    }

    void errors_are_one_line_and_non_zero() {
        QFETCH(QStringList, args);
        qputenv("LLAMADESK_BUILTIN_MODEL", "/nonexistent/llamadesk-guide.gguf");  // without --model, this is opened
        const test::ProgramRun r = run_cli(args);
        qunsetenv("LLAMADESK_BUILTIN_MODEL");
        QVERIFY(r.exit_code != 0);
        QVERIFY(r.out.isEmpty());
        QVERIFY2(r.err.startsWith("llamadesk-cli: error: "), r.err.constData());
        QCOMPARE(r.err.count('\n'), 1);
    }

    // --json is one object holding the engine's own figures; without it, one readable line.
    void perplexity_prints_the_engines_score() {
        const QString model = llamadesk::test::write_synthetic_gguf(dir_, "ppl", llamadesk::test::small_config(4, 2, 8, 48), 5);
        const std::string text = "Once upon a time a small cat sat by the window and watched the rain fall on the road.";
        const QString file = write_file("story.txt", QByteArray::fromStdString(text));
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(llamadesk::test::load_params(model)));
        PerplexityResult expected;
        LLAMADESK_VERIFY_OK(e.perplexity(text, &expected));
        QVERIFY(expected.windows > 1);

        const test::ProgramRun json = run_cli({"--model", model, "--perplexity", file, "--json"});
        QCOMPARE(json.exit_code, 0);
        QCOMPARE(json.out.count('\n'), 1);
        QJsonParseError error;
        const QJsonObject o = QJsonDocument::fromJson(json.out, &error).object();
        QVERIFY2(error.error == QJsonParseError::NoError, json.out.constData());
        QCOMPARE(o.value("tokens").toInt(), expected.tokens);
        QCOMPARE(o.value("windows").toInt(), expected.windows);
        QCOMPARE(o.value("context").toInt(), 48);
        QVERIFY(std::abs(o.value("mean_nll").toDouble() - expected.mean_nll) <= 1e-12 * expected.mean_nll);
        QVERIFY(std::abs(o.value("perplexity").toDouble() - expected.perplexity) <= 1e-12 * expected.perplexity);

        const test::ProgramRun plain = run_cli({"--model", model, "--perplexity", file});
        QCOMPARE(plain.exit_code, 0);
        const QString line = QString::asprintf("perplexity %.3f (mean NLL %.4f over %d tokens, %d windows of 48)\n",
                                               expected.perplexity, expected.mean_nll, expected.tokens, expected.windows);
        QCOMPARE(QString::fromUtf8(plain.out), line);
    }

    void perplexity_refuses_bad_files_data() {
        QTest::addColumn<QString>("file");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("missing") << "/nonexistent/story.txt"
                                 << QByteArray("cannot open '/nonexistent/story.txt': No such file or directory");
        const QString empty = write_file("empty.txt", {});
        QTest::newRow("empty") << empty << ("'" + empty.toUtf8() + "' is empty; there is no text to score");
        QTest::newRow("folder") << dir_.path() << ("cannot read '" + dir_.path().toUtf8() + "': Is a directory");
    }

    // The file is read before the model loads, so these fail fast even with a model that exists.
    void perplexity_refuses_bad_files() {
        QFETCH(QString, file);
        QFETCH(QByteArray, message);
        const test::ProgramRun r = run_cli({"--model", "/nonexistent/model.gguf", "--perplexity", file, "--json"});
        QVERIFY(r.exit_code != 0);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err, "llamadesk-cli: error: " + message + "\n");
    }

    // Checked by the engine's validate_sampling() when the command line is read, before loading.
    void out_of_range_sampling_is_refused_data() {
        QTest::addColumn<QStringList>("args");
        QTest::addColumn<QByteArray>("message");
        QTest::newRow("temperature -1") << QStringList{"--temperature", "-1"}
                                        << QByteArray("temperature must be 0 or more (0 is greedy), not -1");
        QTest::newRow("top-p 7") << QStringList{"--top-p", "7"}
                                 << QByteArray("top-p must be in (0, 1] (1 turns it off), not 7");
        QTest::newRow("min-p 2") << QStringList{"--min-p", "2"}
                                 << QByteArray("min-p must be in [0, 1] (0 turns it off), not 2");
    }

    void out_of_range_sampling_is_refused() {
        QFETCH(QStringList, args);
        QFETCH(QByteArray, message);
        const test::ProgramRun r = run_cli(QStringList{"--model", "/nonexistent/model.gguf", "--prompt", "x"} + args);
        QVERIFY(r.exit_code != 0);
        QVERIFY(r.out.isEmpty());
        QCOMPARE(r.err, "llamadesk-cli: error: " + message + "\n");
    }

    // The edges of the ranges are valid: min-p 1 keeps only the best token, so this is greedy.
    void edge_of_range_sampling_runs() {
        LLAMADESK_REQUIRE_SHARED(model, "models/stories260K/stories260K.bin");
        const QByteArray prompt = "Once upon a time";
        const test::ProgramRun r = run_cli({"--model", model, "--prompt", QString::fromUtf8(prompt), "-n", "8", "--temperature",
                               "1", "--top-k", "0", "--top-p", "1", "--min-p", "1", "--repeat-penalty", "1"});
        QCOMPARE(r.exit_code, 0);
        QVERIFY2(r.out.size() > prompt.size(), r.err.constData());
        QVERIFY2(QByteArray::fromStdString(llamadesk::test::kStories260KGreedy).startsWith(r.out), r.out.constData());
    }
};

QTEST_GUILESS_MAIN(TestCli)
#include "test_cli.moc"
