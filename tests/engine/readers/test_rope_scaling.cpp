// Llama 3.1's RoPE scaling: rope_frequency() against Meta's apply_scaling (values computed ahead of
// time in Python, head_dim 128, theta 500000, factors 8 and 32); the same scaling read from each
// format's own spelling of it (GGUF rope_freqs.weight, Hugging Face rope_scaling "llama3", Meta
// use_scaled_rope); a rope_freqs.weight that is not that formula refused; and the engine applies it.
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "llamadesk/engine.h"
#include "model/rope.h"
#include "reader_fixtures.h"
#include "synthetic/synthetic_model.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

ModelConfig scaled_config() {
    ModelConfig c = tiny_config();  // head_dim 32
    c.dim = 64;
    c.n_heads = 2;
    c.n_kv_heads = 1;
    c.seq_len = 256;
    c.rope_theta = 500000.0f;
    c.rope_scaling.factor = 8.0f;
    return c;
}

}  // namespace

class TestRopeScaling : public QObject {
    Q_OBJECT

private slots:
    void frequenciesMatchMetasApplyScaling_data() {
        QTest::addColumn<float>("factor");
        QTest::addColumn<int>("pair");
        QTest::addColumn<double>("expected");
        const std::pair<int, double> by8[] = {{0, 1.0}, {20, 0.016560440080994446}, {26, 0.004839421345719893},
                                              {28, 0.0032114459947525913}, {30, 0.0013718935677611381},
                                              {32, 0.0005248461609929547}, {34, 0.00017850781276799638},
                                              {36, 7.78465527393245e-05}, {63, 3.068925988914511e-07}};
        const std::pair<int, double> by32[] = {{0, 1.0}, {26, 0.004839421345719893}, {30, 0.001290547928209264},
                                               {32, 0.00042955679655936815}, {34, 9.70828780262767e-05},
                                               {36, 1.9461638184831125e-05}, {63, 7.672314972286278e-08}};
        for (const auto& [i, f] : by8) QTest::addRow("factor 8, pair %d", i) << 8.0f << i << f;
        for (const auto& [i, f] : by32) QTest::addRow("factor 32, pair %d", i) << 32.0f << i << f;
    }
    void frequenciesMatchMetasApplyScaling() {
        QFETCH(float, factor);
        QFETCH(int, pair);
        QFETCH(double, expected);
        RopeParams p{500000.0f, {}};
        p.scaling.factor = factor;
        const double got = rope_frequency(pair, 128, p);
        QVERIFY2(std::fabs(got - expected) <= 1e-6 * expected, qPrintable(QString::number(got, 'g', 17)));
        p.scaling.factor = 0;  // none: theta^(-2i/d) as before
        QCOMPARE(rope_frequency(pair, 128, p), std::pow(500000.0, -2.0 * pair / 128));
    }

    // One model, three files, one scaling.
    void everyFormatCarriesTheScaling() {
        QTemporaryDir dir;
        const Checkpoint s = make_synthetic_checkpoint(scaled_config(), DType::F32, 5);
        write_gguf(s, dir.filePath("m.gguf").toStdString());
        write_hf(s, dir.filePath("hf").toStdString());
        write_meta(s, dir.filePath("meta").toStdString());
        for (const QString& path : {dir.filePath("m.gguf"), dir.filePath("hf"), dir.filePath("meta")}) {
            const Checkpoint back = open_checkpoint(path.toStdString());
            QVERIFY2(back.config.rope_scaling.enabled(), qPrintable(path));
            QCOMPARE(back.config.rope_scaling.factor, 8.0f);
            QCOMPARE(back.config.rope_scaling.low_freq_factor, 1.0f);
            QCOMPARE(back.config.rope_scaling.high_freq_factor, 4.0f);
            QCOMPARE(back.config.rope_scaling.original_context, 8192);
        }
    }

    // llama.cpp's divisors must be the formula's: anything else is refused, naming the pair.
    void foreignRopeFreqsAreRefused() {
        std::string why;
        std::vector<float> factors = rope_freq_factors(128, {500000.0f, {8.0f, 1.0f, 4.0f, 8192}});
        QVERIFY(rope_scaling_of_factors(factors, 128, 500000.0f, 8192, &why));
        factors[30] *= 1.5f;
        QVERIFY(!rope_scaling_of_factors(factors, 128, 500000.0f, 8192, &why));
        QVERIFY2(QString::fromStdString(why).startsWith("pair 30 is"), why.c_str());
    }

    // The engine turns the slow pairs more slowly: the same weights answer differently with and
    // without the scaling, and the GGUF and Hugging Face copies of the scaled model agree.
    void theEngineAppliesIt() {
        QTemporaryDir dir;
        ModelConfig c = scaled_config();
        c.rope_scaling.factor = 32.0f;
        c.rope_scaling.original_context = 16;  // so even these short positions reach scaled pairs
        c.rope_theta = 10000.0f;
        const Checkpoint scaled = make_synthetic_checkpoint(c, DType::F32, 9, false);
        c.rope_scaling = {};
        const Checkpoint plain = make_synthetic_checkpoint(c, DType::F32, 9, false);
        write_gguf(scaled, dir.filePath("scaled.gguf").toStdString());
        write_hf(scaled, dir.filePath("scaled-hf").toStdString());
        write_gguf(plain, dir.filePath("plain.gguf").toStdString());
        auto answer = [&](const QString& path) {
            Engine e;
            LoadParams p;
            p.model_path = path.toStdString();
            p.n_threads = 1;
            const Status s = e.load(p);
            if (!s.ok()) qFatal("%s", s.message.c_str());
            GenerateParams g;
            g.sampling.temperature = 0;
            g.max_new_tokens = 24;
            return e.generate(e.create_conversation(ChatFormat::Completion), "abcabcabcabcabcabcabcabc", g).tokens;
        };
        const std::vector<int32_t> gguf = answer(dir.filePath("scaled.gguf"));
        QCOMPARE(answer(dir.filePath("scaled-hf")), gguf);
        QVERIFY(answer(dir.filePath("plain.gguf")) != gguf);
    }
};

QTEST_GUILESS_MAIN(TestRopeScaling)
#include "test_rope_scaling.moc"
