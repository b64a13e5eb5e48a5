#include "engine_fixtures.h"

#include "synthetic/synthetic_model.h"

namespace llamadesk::test {

ModelConfig small_config(int n_heads, int n_kv_heads, int head_dim, int seq_len) {
    ModelConfig c;
    c.n_heads = n_heads;
    c.n_kv_heads = n_kv_heads;
    c.dim = n_heads * head_dim;
    c.hidden_dim = 2 * c.dim + 8;
    c.n_layers = 2;
    c.vocab_size = 320;  // control tokens, 256 byte pieces and some letters
    c.seq_len = seq_len;
    return c;
}

QString write_synthetic_gguf(const QTemporaryDir& dir, const QString& name, const ModelConfig& config,
                             uint64_t seed) {
    const QString path = dir.filePath(name + ".gguf");
    write_gguf(make_synthetic_checkpoint(config, DType::F32, seed), path.toStdString());
    return path;
}

LoadParams load_params(const QString& path, int64_t kv_cache_bytes) {
    LoadParams p;
    p.model_path = path.toStdString();
    p.backend = BackendKind::Cpu;
    p.n_threads = 1;  // the tests check engine behaviour; one thread keeps them fast on a busy CI machine
    p.kv_cache_bytes = kv_cache_bytes;
    return p;
}

GenerateParams sampled(int max_new_tokens, int64_t seed) {
    GenerateParams g;
    g.max_new_tokens = max_new_tokens;
    g.sampling.temperature = 0.9f;
    g.sampling.seed = seed;
    return g;
}

GenerateParams greedy(int max_new_tokens) {
    GenerateParams g;
    g.max_new_tokens = max_new_tokens;
    g.sampling.temperature = 0.0f;
    g.sampling.repeat_penalty = 1.0f;
    return g;
}

}  // namespace llamadesk::test
