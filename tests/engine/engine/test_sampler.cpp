// Sampler: greedy, reproducibility, and that each filter keeps exactly the tokens it should.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>
#include <set>
#include <vector>

#include "llamadesk/engine.h"
#include "sampling/sampler.h"

using namespace llamadesk;

namespace {

// Logits whose softmax is exactly `probs`.
std::vector<float> logits_for(const std::vector<double>& probs) {
    std::vector<float> l;
    for (double p : probs) l.push_back(float(std::log(p)));
    return l;
}

SamplingParams plain(float temperature, int64_t seed = 7) {
    SamplingParams p;
    p.temperature = temperature;
    p.top_k = 0;
    p.top_p = 1.0f;
    p.min_p = 0.0f;
    p.repeat_penalty = 1.0f;
    p.seed = seed;
    return p;
}

// Draws n tokens from fresh copies of the same logits; returns how often each token came.
std::map<int, int> histogram(Sampler& s, const std::vector<float>& logits, int n) {
    std::map<int, int> counts;
    for (int i = 0; i < n; ++i) {
        std::vector<float> l = logits;
        ++counts[s.sample(l.data(), {})];
    }
    return counts;
}

// The defaults with one field set to value (ints truncated).
SamplingParams with(const QString& field, double value) {
    SamplingParams p;
    if (field == "temperature") p.temperature = float(value);
    else if (field == "top_k") p.top_k = int(value);
    else if (field == "top_p") p.top_p = float(value);
    else if (field == "min_p") p.min_p = float(value);
    else if (field == "repeat_penalty") p.repeat_penalty = float(value);
    else if (field == "repeat_last_n") p.repeat_last_n = int(value);
    else qFatal("unknown field %s", qPrintable(field));
    return p;
}

std::vector<float> random_logits(int n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::normal_distribution<float> d(0.0f, 3.0f);
    std::vector<float> l(static_cast<size_t>(n));
    for (float& x : l) x = d(rng);
    return l;
}

}  // namespace

class TestSampler : public QObject {
    Q_OBJECT
private slots:
    void greedy_is_argmax() {
        for (uint64_t seed = 1; seed <= 20; ++seed) {
            std::vector<float> l = random_logits(1000, seed);
            const int expected = int(std::max_element(l.begin(), l.end()) - l.begin());
            SamplingParams p = plain(0.0f);
            p.top_k = 40;  // filters do not matter when greedy
            p.top_p = 0.5f;
            Sampler s(1000, p);
            QCOMPARE(s.sample(l.data(), {}), expected);
        }
    }

    void same_seed_same_tokens() {
        const std::vector<float> l = random_logits(500, 3);
        SamplingParams p;  // defaults: temperature, top-k, top-p, min-p, penalty all on
        p.seed = 1234;
        Sampler a(500, p), b(500, p);
        p.seed = 1235;
        Sampler c(500, p);
        std::vector<int32_t> ta, tb, tc;
        for (int i = 0; i < 300; ++i) {
            std::vector<float> la = l, lb = l, lc = l;
            ta.push_back(a.sample(la.data(), ta));
            tb.push_back(b.sample(lb.data(), tb));
            tc.push_back(c.sample(lc.data(), tc));
        }
        QCOMPARE(ta, tb);
        QVERIFY(ta != tc);  // another seed gives another sequence
    }

    void top_k_one_is_greedy() {
        for (uint64_t seed = 1; seed <= 10; ++seed) {
            std::vector<float> l = random_logits(300, seed + 100);
            const int expected = int(std::max_element(l.begin(), l.end()) - l.begin());
            SamplingParams p = plain(1.5f, int64_t(seed));
            p.top_k = 1;
            Sampler s(300, p);
            const auto counts = histogram(s, l, 50);
            QCOMPARE(int(counts.size()), 1);
            QCOMPARE(counts.begin()->first, expected);
        }
    }

    void top_k_keeps_the_k_best() {
        // Probabilities 0.3, 0.25, 0.2, 0.15, 0.1: top-3 keeps tokens 0..2 in ratio 6:5:4.
        const auto l = logits_for({0.1, 0.3, 0.15, 0.25, 0.2});
        SamplingParams p = plain(1.0f);
        p.top_k = 3;
        Sampler s(5, p);
        const int n = 20000;
        auto counts = histogram(s, l, n);
        QCOMPARE(counts.count(0), size_t(0));
        QCOMPARE(counts.count(2), size_t(0));
        QVERIFY(std::abs(counts[1] / double(n) - 0.3 / 0.75) < 0.02);
        QVERIFY(std::abs(counts[3] / double(n) - 0.25 / 0.75) < 0.02);
        QVERIFY(std::abs(counts[4] / double(n) - 0.2 / 0.75) < 0.02);
    }

    void top_k_on_a_large_vocabulary_breaks_ties_by_id() {
        // 128256 logits that rise and repeat (i % 1000): candidates keep getting better as the
        // vocabulary is read, and 128 tokens tie for the best; the 40 kept are those with the
        // lowest ids, the same set a sort by (probability, id) gives.
        const int n = 128256;
        std::vector<float> l(static_cast<size_t>(n));
        for (int i = 0; i < n; ++i) l[size_t(i)] = float(i % 1000) * 0.01f;
        SamplingParams p = plain(1.0f);
        p.top_k = 40;
        Sampler s(n, p);
        const auto counts = histogram(s, l, 2000);
        for (const auto& [id, count] : counts)
            QVERIFY2(id % 1000 == 999 && id / 1000 < 40, qPrintable(QString("token %1 drawn").arg(id)));
        QVERIFY(counts.size() > 30);  // 2000 draws, uniform over 40
    }

    void top_p_keeps_the_smallest_prefix() {
        // Sorted probabilities 0.5, 0.3, 0.1, 0.05, 0.05: top-p 0.75 needs the first two.
        const auto l = logits_for({0.05, 0.3, 0.1, 0.5, 0.05});
        SamplingParams p = plain(1.0f);
        p.top_p = 0.75f;
        Sampler s(5, p);
        const int n = 20000;
        auto counts = histogram(s, l, n);
        QCOMPARE(int(counts.size()), 2);
        QVERIFY(std::abs(counts[3] / double(n) - 0.5 / 0.8) < 0.02);
        QVERIFY(std::abs(counts[1] / double(n) - 0.3 / 0.8) < 0.02);

        // 0.85 needs the third one too.
        p.top_p = 0.85f;
        Sampler s2(5, p);
        counts = histogram(s2, l, n);
        QCOMPARE(int(counts.size()), 3);
        QVERIFY(counts.count(2) == 1);
        QVERIFY(std::abs(counts[2] / double(n) - 0.1 / 0.9) < 0.02);
    }

    void top_p_on_a_large_vocabulary() {
        // 1000 tokens: token 0 has 0.6, token 1 has 0.2, the rest share 0.2. top-p 0.79 keeps
        // the first two only (0.6 + 0.2 >= 0.79) although the tail is long.
        std::vector<double> probs(1000, 0.2 / 998);
        probs[0] = 0.6;
        probs[1] = 0.2;
        SamplingParams p = plain(1.0f);
        p.top_p = 0.79f;
        Sampler s(1000, p);
        const auto counts = histogram(s, logits_for(probs), 5000);
        QCOMPARE(int(counts.size()), 2);
        QVERIFY(counts.count(0) && counts.count(1));
    }

    void top_p_on_many_candidates_keeps_the_sorted_prefix() {
        // 20 likely tokens among 20000, so that the prefix is found by selection over halves
        // rather than by sorting: every drawn token is in the prefix that sorting gives, and
        // over 4000 draws each token of that prefix (6 to 19 of them, 5 % or more each) comes.
        std::mt19937_64 rng(3);
        std::normal_distribution<float> noise(0.0f, 1.0f);
        std::vector<float> l(20000);
        for (float& x : l) x = noise(rng);
        for (int i = 0; i < 20; ++i) l[size_t(i) * 999] = 10.0f + 0.05f * float(i);
        SamplingParams p = plain(1.0f);
        p.top_p = 0.5f;

        std::vector<std::pair<double, int>> sorted;
        double total = 0.0;
        const float max_logit = *std::max_element(l.begin(), l.end());
        for (int i = 0; i < int(l.size()); ++i) {
            sorted.push_back({std::exp(double(l[size_t(i)] - max_logit)), i});
            total += sorted.back().first;
        }
        std::sort(sorted.begin(), sorted.end(), [](auto a, auto b) { return a.first > b.first; });
        std::set<int> prefix;
        double cumulative = 0.0;
        for (const auto& [weight, id] : sorted) {
            prefix.insert(id);
            cumulative += weight;
            if (cumulative >= 0.5 * total) break;
        }
        QVERIFY2(prefix.size() > 5 && prefix.size() < 20, qPrintable(QString::number(prefix.size())));

        Sampler s(int(l.size()), p);
        std::set<int> drawn;
        for (const auto& [id, count] : histogram(s, l, 4000)) drawn.insert(id);
        QCOMPARE(drawn, prefix);
    }

    void top_p_among_equal_weights_keeps_the_lowest_ids() {
        // 2000 equal logits: top-p 0.375 keeps tokens 0 to 749, ties going to the lower id. The
        // prefix ends inside the better half of a range that starts after token 0 (500 to 1000).
        SamplingParams p = plain(1.0f);
        p.top_p = 0.375f;
        Sampler s(2000, p);
        const auto counts = histogram(s, std::vector<float>(2000, 0.25f), 4000);
        QVERIFY2(counts.rbegin()->first <= 749, qPrintable(QString("token %1 drawn").arg(counts.rbegin()->first)));
        QVERIFY(counts.rbegin()->first >= 740);  // 4000 draws over 750 reach the top of the range
        QVERIFY(counts.size() > 700);
    }

    void min_p_drops_the_unlikely() {
        // min-p 0.4 with best 0.4: keeps p >= 0.16, i.e. 0.4, 0.3, 0.2, not 0.1.
        const auto l = logits_for({0.2, 0.1, 0.4, 0.3});
        SamplingParams p = plain(1.0f);
        p.min_p = 0.4f;
        Sampler s(4, p);
        const int n = 20000;
        auto counts = histogram(s, l, n);
        QCOMPARE(counts.count(1), size_t(0));
        QCOMPARE(int(counts.size()), 3);
        QVERIFY(std::abs(counts[2] / double(n) - 0.4 / 0.9) < 0.02);
        QVERIFY(std::abs(counts[0] / double(n) - 0.2 / 0.9) < 0.02);
    }

    void temperature_follows_softmax() {
        // Temperature 2 flattens 0.7/0.2/0.1 to the square roots, renormalized.
        const std::vector<double> probs{0.7, 0.2, 0.1};
        SamplingParams p = plain(2.0f);
        Sampler s(3, p);
        const int n = 30000;
        auto counts = histogram(s, logits_for(probs), n);
        double z = 0;
        for (double q : probs) z += std::sqrt(q);
        for (int t = 0; t < 3; ++t)
            QVERIFY2(std::abs(counts[t] / double(n) - std::sqrt(probs[size_t(t)]) / z) < 0.015,
                     qPrintable(QString("token %1: %2").arg(t).arg(counts[t])));
    }

    void repetition_penalty() {
        SamplingParams p = plain(0.0f);
        p.repeat_penalty = 1.5f;
        p.repeat_last_n = 3;
        Sampler s(8, p);
        // Positive logit divided: 2.0 / 1.5 < 1.9.
        std::vector<float> l{2.0f, 1.9f, 0, 0, 0, 0, 0, 0};
        std::vector<int32_t> recent{0, 0};
        QCOMPARE(s.sample(l.data(), recent), 1);
        // Negative logit multiplied: -1 * 1.5 < -1.2.
        l = {-1.0f, -1.2f, -5, -5, -5, -5, -5, -5};
        QCOMPARE(s.sample(l.data(), recent), 1);
        // Only the last repeat_last_n tokens count: token 0 is outside the window.
        l = {2.0f, 1.9f, 0, 0, 0, 0, 0, 0};
        recent = {0, 5, 6, 7};
        QCOMPARE(s.sample(l.data(), recent), 0);
        // A token repeated in the window is penalized once: 3.0 / 1.5 = 2.0 > 1.9.
        l = {3.0f, 1.9f, 0, 0, 0, 0, 0, 0};
        recent = {0, 0, 0};
        QCOMPARE(s.sample(l.data(), recent), 0);
    }

    void validate_sampling_ranges_data() {
        QTest::addColumn<QString>("field");
        QTest::addColumn<double>("value");
        QTest::addColumn<QString>("error");  // empty: valid
        const double nan = std::nan(""), inf = INFINITY;
        const QString temperature = "temperature must be 0 or more (0 is greedy), not ";
        const QString top_p = "top-p must be in (0, 1] (1 turns it off), not ";
        const QString min_p = "min-p must be in [0, 1] (0 turns it off), not ";
        QTest::newRow("temperature 0 is greedy") << "temperature" << 0.0 << "";
        QTest::newRow("temperature -1") << "temperature" << -1.0 << temperature + "-1";
        QTest::newRow("temperature NaN") << "temperature" << nan << temperature + "nan";
        QTest::newRow("temperature inf") << "temperature" << inf << temperature + "inf";
        QTest::newRow("top-k 0 is off") << "top_k" << 0.0 << "";
        QTest::newRow("top-k -1") << "top_k" << -1.0 << "top-k must be 0 or more (0 turns it off), not -1";
        QTest::newRow("top-p 0") << "top_p" << 0.0 << top_p + "0";
        QTest::newRow("top-p 0.01") << "top_p" << 0.01 << "";
        QTest::newRow("top-p 1 is off") << "top_p" << 1.0 << "";
        QTest::newRow("top-p 1.01") << "top_p" << 1.01 << top_p + "1.01";
        QTest::newRow("top-p 7") << "top_p" << 7.0 << top_p + "7";
        QTest::newRow("top-p NaN") << "top_p" << nan << top_p + "nan";
        QTest::newRow("min-p 0 is off") << "min_p" << 0.0 << "";
        QTest::newRow("min-p 1") << "min_p" << 1.0 << "";
        QTest::newRow("min-p -0.5") << "min_p" << -0.5 << min_p + "-0.5";
        QTest::newRow("min-p 1.5") << "min_p" << 1.5 << min_p + "1.5";
        QTest::newRow("repeat penalty 1 is off") << "repeat_penalty" << 1.0 << "";
        QTest::newRow("repeat penalty 0") << "repeat_penalty" << 0.0
                                          << "repeat penalty must be more than 0 (1 turns it off), not 0";
        QTest::newRow("repeat penalty NaN") << "repeat_penalty" << nan
                                            << "repeat penalty must be more than 0 (1 turns it off), not nan";
        QTest::newRow("repeat-last-n 0") << "repeat_last_n" << 0.0 << "";
        QTest::newRow("repeat-last-n -1") << "repeat_last_n" << -1.0 << "repeat-last-n must be 0 or more, not -1";
    }

    void validate_sampling_ranges() {
        QFETCH(QString, field);
        QFETCH(double, value);
        QFETCH(QString, error);
        const Status s = validate_sampling(with(field, value));
        QCOMPARE(QString::fromStdString(s.message), error);
        QCOMPARE(s.code, error.isEmpty() ? ErrorCode::Ok : ErrorCode::InvalidArgument);
    }

    void defaults_are_valid() { QVERIFY(validate_sampling(SamplingParams{}).ok()); }

    // generate() checks before anything else: even without a model the sampling error comes back.
    void generate_refuses_out_of_range_sampling_first() {
        Engine e;
        GenerateParams g;
        g.sampling.top_p = 7.0f;
        const GenerationResult r = e.generate(1, "hi", g);
        QCOMPARE(r.status.code, ErrorCode::InvalidArgument);
        QCOMPARE(QString::fromStdString(r.status.message), QString("top-p must be in (0, 1] (1 turns it off), not 7"));
        QCOMPARE(r.stop_reason, StopReason::Error);
    }
};

QTEST_APPLESS_MAIN(TestSampler)
#include "test_sampler.moc"
