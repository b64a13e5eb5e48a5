// The context a model is loaded with: the model's own, the person's limit, or less where one full
// context's KV cache would take more than a quarter of the memory available.
#include <QTemporaryDir>
#include <QTest>

#include "core/error.h"
#include "engine/context_size.h"
#include "engine_fixtures.h"

using namespace llamadesk;

namespace {

constexpr int64_t kGiB = int64_t(1) << 30;
// Llama 3.1 8B in f16: 32 layers x 8 kv heads x 128 x (K and V) x 2 bytes.
constexpr double kLlama8BBytesPerToken = 32.0 * 8 * 128 * 2 * 2;

}  // namespace

class TestContextSize : public QObject {
    Q_OBJECT

private slots:
    void the_models_own_when_it_fits() {
        const ContextChoice c = choose_context(LoadParams{}, 131072, kLlama8BBytesPerToken, 80 * kGiB, "f16");
        QCOMPARE(c.n_ctx, 131072);
        QVERIFY2(c.reason.find("the model's own (16.0 GiB of f16 KV cache, with 80.0 GiB of memory available)") == 0,
                 c.reason.c_str());
    }

    // 131072 tokens of an 8B model's cache are 16 GiB; a quarter of 18 GiB holds 32768 (4 GiB).
    void a_power_of_two_when_it_does_not() {
        const ContextChoice c = choose_context(LoadParams{}, 131072, kLlama8BBytesPerToken, 18 * kGiB, "f16");
        QCOMPARE(c.n_ctx, 32768);
        QVERIFY2(c.reason.find("the model's 131072 would need 16.0 GiB of f16 KV cache; 32768 fits in a quarter of "
                               "the 18.0 GiB of memory available") == 0,
                 c.reason.c_str());
        // Never below 256 tokens, nor above the model's own.
        QCOMPARE(choose_context(LoadParams{}, 131072, kLlama8BBytesPerToken, kGiB / 1024, "f16").n_ctx, 256);
        QCOMPARE(choose_context(LoadParams{}, 128, 1e9, kGiB, "f16").n_ctx, 128);
    }

    void the_persons_limit() {
        LoadParams p;
        p.context_length = 8192;
        const ContextChoice c = choose_context(p, 131072, kLlama8BBytesPerToken, 2 * kGiB, "f16");
        QCOMPARE(c.n_ctx, 8192);
        QVERIFY2(c.reason.find("as chosen (1.0 GiB of f16 KV cache); the model's own is 131072") == 0, c.reason.c_str());
        // A limit above the model's keeps the model's, even where memory is short.
        p.context_length = 200000;
        QCOMPARE(choose_context(p, 131072, kLlama8BBytesPerToken, 2 * kGiB, "f16").n_ctx, 131072);
        p.context_length = -1;
        QVERIFY_THROWS_EXCEPTION(EngineError, choose_context(p, 131072, 1, kGiB, "f16"));
    }

    // Loaded with a limit, the engine says so and holds a conversation to it.
    void a_loaded_model_keeps_to_it() {
        QTemporaryDir dir;
        const QString path = test::write_synthetic_gguf(dir, "ctx", test::small_config(2, 1, 16, 256), 5);
        LoadParams p = test::load_params(path);
        p.context_length = 32;
        Engine e;
        LLAMADESK_VERIFY_OK(e.load(p));
        QCOMPARE(e.model_info().context_length, 32);
        QCOMPARE(e.model_info().trained_context_length, 256);
        QVERIFY(e.model_info().context_reason.find("as chosen") == 0);
        const ConversationId id = e.create_conversation(ChatFormat::Completion);
        std::string text;
        for (int i = 0; i < 40; ++i) text += std::to_string(i) + " ";
        const GenerationResult r = e.generate(id, text, test::greedy(4));
        QCOMPARE(r.status.code, ErrorCode::ContextFull);
        QVERIFY2(r.status.message.find("context of 32 tokens") != std::string::npos, r.status.message.c_str());
    }
};

QTEST_APPLESS_MAIN(TestContextSize)
#include "test_context_size.moc"
