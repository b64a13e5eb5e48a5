// Device sampling against the host Sampler: greedy (with ties and repetition penalty) gives the
// same token; temperature sampling with top-k / top-p / min-p never leaves the set the host
// would keep, and draws each kept token with the probability the host would give it.
#include <QTest>

#include <algorithm>
#include <cmath>
#include <map>
#include <numeric>
#include <random>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/kernels.h"
#include "gpu_test.h"
#include "gpu_test_util.h"
#include "sampling/sampler.h"

using namespace llamadesk;
using namespace llamadesk::test;

namespace {

// The host sampler's distribution over the kept tokens, written out plainly.
std::map<int, double> expected_distribution(const std::vector<float>& logits, const SamplingParams& p) {
    std::vector<std::pair<double, int>> c;
    for (int i = 0; i < int(logits.size()); ++i) c.push_back({logits[size_t(i)] / p.temperature, i});
    std::sort(c.begin(), c.end(), [](auto a, auto b) { return a.first > b.first; });
    if (p.top_k > 0 && p.top_k < int(c.size())) c.resize(size_t(p.top_k));
    const double top = c.front().first;
    double total = 0.0;
    for (auto& x : c) total += (x.first = std::exp(x.first - top));
    size_t keep = c.size();
    if (p.top_p < 1.0f) {
        double cumulative = 0.0;
        for (size_t i = 0; i < c.size(); ++i)
            if ((cumulative += c[i].first) >= p.top_p * total) { keep = i + 1; break; }
    }
    if (p.min_p > 0.0f)
        keep = std::min(keep, size_t(std::count_if(c.begin(), c.end(), [&](auto x) { return x.first >= p.min_p; })));
    c.resize(keep);
    double kept = 0.0;
    for (auto& x : c) kept += x.first;
    std::map<int, double> dist;
    for (auto& x : c) dist[x.second] = x.first / kept;
    return dist;
}

}  // namespace

class TestCudaSampling : public QObject {
    Q_OBJECT

    std::mt19937_64 rng_{99};
    std::unique_ptr<cuda::Stream> stream_;

    // one device draw; logits are uploaded fresh since the kernel modifies them
    int32_t device_sample(const std::vector<float>& logits, const SamplingParams& p,
                          const std::vector<int32_t>& recent, double uniform) {
        const cuda::DeviceSampling s = cuda::device_sampling(p, int32_t(recent.size()), uniform);
        auto d_logits = upload(logits);
        auto d_params = upload(&s, sizeof s);
        auto d_recent = upload(recent.empty() ? std::vector<int32_t>{0} : recent);
        auto d_token = poisoned(4);
        cuda::sample_token(d_logits.as<float>(), int(logits.size()), d_params.as<cuda::DeviceSampling>(),
                           d_recent.as<int32_t>(), d_token.as<int32_t>(), stream_->get());
        int32_t token = -1;
        CUDA_CHECK(cudaStreamSynchronize(stream_->get()));
        CUDA_CHECK(cudaMemcpy(&token, d_token.get(), 4, cudaMemcpyDeviceToHost));
        return token;
    }

    std::vector<float> random_logits(int vocab, float scale) {
        std::normal_distribution<float> normal(0.0f, scale);
        std::vector<float> l(static_cast<size_t>(vocab));
        for (float& x : l) x = normal(rng_);
        return l;
    }

private slots:
    void initTestCase() {
        LLAMADESK_REQUIRE_CUDA();
        stream_ = std::make_unique<cuda::Stream>();
    }

    void greedy_matches_host() {
        for (int vocab : {1, 7, 512, 32000, 32003}) {
            for (int trial = 0; trial < 5; ++trial) {
                std::vector<float> logits = random_logits(vocab, 3.0f);
                if (trial == 1 && vocab > 10) logits[5] = logits[vocab - 2] = 100.0f;  // tie: the first wins
                std::vector<int32_t> recent;
                SamplingParams p;
                p.temperature = 0.0f;
                p.repeat_penalty = trial >= 2 ? 1.5f : 1.0f;
                p.repeat_last_n = 64;
                if (trial >= 2) {  // the best tokens repeated, some twice, and a negative one
                    std::vector<int> order(static_cast<size_t>(vocab));
                    std::iota(order.begin(), order.end(), 0);
                    std::sort(order.begin(), order.end(), [&](int a, int b) { return logits[size_t(a)] > logits[size_t(b)]; });
                    for (int i = 0; i < std::min(vocab, 4); ++i) recent.push_back(order[size_t(i)]);
                    recent.push_back(order[0]);
                    recent.push_back(order.back());
                }
                Sampler host(vocab, p);
                std::vector<float> host_logits = logits;
                const int32_t expected = host.sample(host_logits.data(), recent);
                QCOMPARE(device_sample(logits, p, recent, 0.0), expected);
            }
        }
    }

    void filters_that_leave_one_token() {
        const std::vector<float> logits = random_logits(32000, 2.0f);
        const int32_t best = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
        SamplingParams p;
        p.temperature = 0.8f;
        p.repeat_penalty = 1.0f;
        p.top_k = 1; p.top_p = 1.0f; p.min_p = 0.0f;
        QCOMPARE(device_sample(logits, p, {}, 0.999), best);
        p.top_k = 0; p.top_p = 1e-6f;
        QCOMPARE(device_sample(logits, p, {}, 0.999), best);
        p.top_p = 1.0f; p.min_p = 1.0f;
        QCOMPARE(device_sample(logits, p, {}, 0.999), best);
    }

    void distribution_data() {
        QTest::addColumn<float>("temperature");
        QTest::addColumn<int>("top_k");
        QTest::addColumn<float>("top_p");
        QTest::addColumn<float>("min_p");
        QTest::newRow("plain") << 1.0f << 0 << 1.0f << 0.0f;
        QTest::newRow("top-k 3, T 0.7") << 0.7f << 3 << 1.0f << 0.0f;
        QTest::newRow("top-p 0.8") << 1.0f << 0 << 0.8f << 0.0f;
        QTest::newRow("min-p 0.3") << 1.0f << 0 << 1.0f << 0.3f;
        QTest::newRow("all, T 1.3") << 1.3f << 5 << 0.9f << 0.05f;
    }
    void distribution() {
        QFETCH(float, temperature);
        QFETCH(int, top_k);
        QFETCH(float, top_p);
        QFETCH(float, min_p);
        const std::vector<float> logits = {0.5f, 2.0f, -1.0f, 1.5f, 1.0f, 0.0f, 1.2f};
        SamplingParams p;
        p.temperature = temperature;
        p.top_k = top_k;
        p.top_p = top_p;
        p.min_p = min_p;
        p.repeat_penalty = 1.0f;
        const std::map<int, double> expected = expected_distribution(logits, p);
        const int n_draws = 4000;
        std::map<int, int> counts;
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        for (int i = 0; i < n_draws; ++i) {
            const int32_t t = device_sample(logits, p, {}, uniform(rng_));
            QVERIFY2(expected.count(t), qPrintable(QString("token %1 is outside the kept set").arg(t)));
            ++counts[t];
        }
        for (auto [token, prob] : expected) {
            const double freq = double(counts[token]) / n_draws;
            // 5 standard deviations of a binomial frequency
            const double sigma = std::sqrt(prob * (1 - prob) / n_draws);
            QVERIFY2(std::abs(freq - prob) <= 5 * sigma + 1e-3,
                     qPrintable(QString("token %1: drawn %2, expected %3").arg(token).arg(freq).arg(prob)));
        }
    }

    void top_k_on_a_large_vocabulary() {
        const std::vector<float> logits = random_logits(32000, 2.0f);
        SamplingParams p;
        p.temperature = 1.0f;
        p.top_k = 40;
        p.top_p = 0.95f;
        p.min_p = 0.0f;
        p.repeat_penalty = 1.0f;
        const std::map<int, double> expected = expected_distribution(logits, p);
        std::uniform_real_distribution<double> uniform(0.0, 1.0);
        for (int i = 0; i < 200; ++i) {
            const int32_t t = device_sample(logits, p, {}, uniform(rng_));
            QVERIFY2(expected.count(t), qPrintable(QString("token %1 is outside the kept set").arg(t)));
        }
    }
};

QTEST_GUILESS_MAIN(TestCudaSampling)
#include "test_cuda_sampling.moc"
