#include "engine/perplexity.h"

#include <algorithm>
#include <cmath>
#include <span>
#include <vector>

#include "core/error.h"

namespace llamadesk {

namespace {

// -log softmax(logits)[target]. The log-sum-exp runs in double from the row's maximum, so no
// row overflows and thousands of small terms keep their precision.
double token_nll(const float* logits, int vocab, int target) {
    const double max = *std::max_element(logits, logits + vocab);
    double sum = 0;
    for (int i = 0; i < vocab; ++i) sum += std::exp(double(logits[i]) - max);
    return max + std::log(sum) - double(logits[target]);
}

// KV blocks borrowed for one score under id 0, which is never a conversation, given back however
// the score ends.
class ScratchCache {
public:
    ScratchCache(KvPool& pool, int n_tokens, const EvictionHandler& on_evicted) : pool_(pool) {
        on_evicted(pool_.reserve(kScratch, n_tokens));  // throws before taking anything
    }
    ~ScratchCache() { pool_.release(kScratch); }
    ScratchCache(const ScratchCache&) = delete;
    ScratchCache& operator=(const ScratchCache&) = delete;

    BlockTableView table() const { return pool_.table(kScratch); }

private:
    static constexpr ConversationId kScratch = 0;
    KvPool& pool_;
};

}  // namespace

// Windows: with C the context length and tokens t0 (BOS) .. t(N-1), window k = 0, 1, ... runs
// from position 0 and holds BOS followed by the text tokens t(1 + k(C-1)) up to, not including,
// t(min(N, 1 + (k+1)(C-1))); it scores each of those text tokens given everything before it in the
// window. So every token after t0 is scored exactly once, N - 1 in all, in ceil((N - 1) / (C - 1))
// windows; the first token of a later window is predicted from BOS alone. llama.cpp's perplexity
// tool differs: it cuts the text into chunks of C tokens (the first replaced by BOS), scores only
// the second half of each chunk so every scored token has at least C/2 tokens of context, and
// drops a trailing partial chunk. It scores about half the tokens, each with more context, so its
// figure is usually lower.
PerplexityResult score_perplexity(LoadedModel& m, const std::string& text, const EvictionHandler& on_evicted,
                                  const PerplexityProgress& on_progress) {
    const std::vector<int> tokens = m.tokenizer->encode(text, /*add_bos=*/true);
    const int n = int(tokens.size());
    if (n < 2)
        fail(ErrorCode::InvalidArgument,
             text.empty() ? "the text is empty; perplexity needs at least one token after BOS"
                          : "the text gives no token after BOS to score; perplexity needs at least one");
    const int context = m.context_length();
    if (context < 2)
        fail(ErrorCode::Unsupported, "the model's context of " + std::to_string(context) +
                                         " token cannot hold BOS and a token to score");

    const int per_window = context - 1;  // text tokens a window scores after its BOS
    PerplexityResult result;
    result.tokens = n - 1;
    result.windows = (result.tokens + per_window - 1) / per_window;

    // A window's last token predicts nothing inside it, so at most C - 1 positions ever run.
    ScratchCache cache(*m.pool, std::min(n, context) - 1, on_evicted);
    const int vocab = m.vocab_size();
    // Every position's logits are needed, so the text runs in the backend's own chunks: the
    // logits buffer stays (chunk, vocab_size) however long the window.
    const int chunk_tokens = m.backend->chunk_tokens();
    std::vector<float> logits(size_t(chunk_tokens) * size_t(vocab));  // (chunk, vocab_size)
    std::vector<int32_t> window;
    double nll_sum = 0;
    int scored = 0;
    for (int first = 1; first < n; first += per_window) {
        const int end = std::min(n, first + per_window);
        window.assign(1, m.tokenizer->bos_id());
        window.insert(window.end(), tokens.begin() + first, tokens.begin() + end);
        const int n_run = int(window.size()) - 1;
        for (int pos = 0; pos < n_run; pos += chunk_tokens) {
            const int chunk = std::min(chunk_tokens, n_run - pos);
            m.backend->forward(std::span<const int32_t>(window.data() + pos, size_t(chunk)), pos, cache.table(),
                               logits.data(), /*all_logits=*/true);
            for (int i = 0; i < chunk; ++i)
                nll_sum += token_nll(logits.data() + size_t(i) * size_t(vocab), vocab, window[size_t(pos + i + 1)]);
            scored += chunk;
            if (on_progress) on_progress(scored, result.tokens);
        }
    }
    result.mean_nll = nll_sum / result.tokens;
    result.perplexity = std::exp(result.mean_nll);
    return result;
}

}  // namespace llamadesk
