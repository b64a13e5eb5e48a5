// LlamaDesk inference engine: the library's whole public surface.
//
// Qt-free. No function here throws: failures come back as a Status whose message a user can act
// on. An Engine is used from one thread at a time (the app's worker thread); only the cancel flag
// passed to generate() may be touched from another thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

// The types the engine's modules share, each kept where it belongs (engine/src): the public header
// is the top floor and no module below it includes it.
#include "cache/kv_cache_type.h"
#include "cache/pool_stats.h"
#include "chat/chat_format.h"
#include "core/backend_kind.h"
#include "core/ids.h"
#include "core/status.h"
#include "sampling/sampling_params.h"

namespace llamadesk {

struct LoadParams {
    std::string model_path;      // a checkpoint file, or a folder holding one
    std::string tokenizer_path;  // empty: the checkpoint's own vocabulary, or tokenizer.model beside it
    // Auto: CUDA when a usable GPU is present, else the CPU. When CUDA is unavailable or fails to
    // load (even if asked for), the CPU backend is used and ModelInfo::device says why.
    BackendKind backend = BackendKind::Auto;
    int n_threads = 0;           // CPU threads; 0: one per physical core the process may use
    int64_t kv_cache_bytes = 0;  // memory budget of the KV pool; 0: default
    // At most this many positions in one conversation (never more than the model's own, which a
    // positive value keeps even where memory is short); 0: the model's, or less where one full
    // context's KV cache would take more than a quarter of the memory available.
    int context_length = 0;
    int block_size = 16;         // tokens per KV cache block
    KvCacheType kv_cache_type = KvCacheType::F16;
    bool cuda_graphs = true;     // CUDA backend: replay the decode step as a captured graph
    bool cuda_f32_as_bf16 = true;  // CUDA backend: F32 checkpoints are converted to BF16 (else F16)
    // Called on the loading thread with a fraction in [0, 1] and a short stage name.
    std::function<void(float fraction, const std::string& stage)> on_progress;
};

struct ModelInfo {
    std::string name;            // file name without extension
    std::string path;
    std::string format;          // "gguf", "llama2c", "huggingface", "meta"
    std::string weight_dtype;    // the matrices' main type: "f32", "f16", "bf16", "q8_0", "q4_k", ...
    std::string weight_types;    // the file's label and census, e.g. "Q4_K_M: Q4_K ×97, Q6_K ×19, ..."
    int64_t n_params = 0;
    int64_t weight_bytes = 0;    // every tensor as held in memory (quantized stays quantized)
    int dim = 0, hidden_dim = 0, n_layers = 0, n_heads = 0, n_kv_heads = 0, head_dim = 0;
    int vocab_size = 0;
    int context_length = 0;          // the context in use (LoadParams::context_length)
    int trained_context_length = 0;  // the one the checkpoint advertises
    std::string context_reason;      // why context_length was chosen, with the memory it takes
    float rope_theta = 10000.0f;
    std::string backend;         // "CPU" or "CUDA"
    std::string device;          // e.g. "AMD EPYC, 2 threads, AVX2" or "NVIDIA H200"
    int n_threads = 0;
    std::string tokenizer;       // where the vocabulary came from
    // The format this checkpoint was trained for: the family of its chat template, else Llama 3
    // chat for a vocabulary with <|eot_id|>, Llama 2 chat for a name saying chat / instruct, else
    // Completion (base and story models continue text). chat_format_reason says which rule chose
    // it, and that a template of no family LlamaDesk renders was found, for the person to pick.
    ChatFormat chat_format = ChatFormat::Completion;
    std::string chat_format_reason;
    bool chat_format_guessed = false;  // its chat template is of a family not rendered here
};

struct GenerateParams {
    SamplingParams sampling;
    int max_new_tokens = 512;    // <= 0: until EOS or the context is full
    std::vector<std::string> stop_strings;
    std::string system_prompt;   // Llama2Chat: used by the conversation's first turn
    // At a full context, drop the older half of the history after its first kContextSinkTokens
    // (a context shift: what stays keeps its cache) and go on, instead of stopping at ContextFull.
    bool shift_when_full = false;
};

// The first tokens a context shift keeps in view (BOS among them): StreamingLLM's attention sinks.
inline constexpr int kContextSinkTokens = 4;

enum class StopReason { Eos, StopString, MaxTokens, Cancelled, ContextFull, Error };

struct ConversationStats {
    int64_t id = 0;
    int history_tokens = 0;  // tokens of the conversation so far
    int cached_tokens = 0;   // of those, how many the KV cache holds
    int cache_blocks = 0;
    int context_length = 0;
    int n_turns = 0;
    int64_t times_evicted = 0;
    ChatFormat format = ChatFormat::Llama2Chat;  // the format it is rendered in
    // Set when the model loaded cannot write the format the conversation was given (its vocabulary
    // lacks the format's special tokens) and the conversation took the model's own: one line that
    // says so, for the conversation to show. Its text is kept either way.
    std::string format_note;
};

struct GenerationStats {
    int prompt_tokens = 0;       // tokens this call added before decoding (template included)
    int context_tokens = 0;      // the whole history the answer follows: earlier turns and this one's prompt
    int prefilled_tokens = 0;    // tokens run through prefill: what the cache lacked
    int reprefilled_tokens = 0;  // of those, tokens the cache had lost to eviction
    int shared_tokens = 0;       // prompt tokens not prefilled: another conversation's blocks held them
    int restored_tokens = 0;     // history tokens not prefilled: read back from a KV snapshot on disk
    int generated_tokens = 0;
    int context_shifts = 0;      // times the context was full and its older half dropped (shift_when_full)
    double prefill_ms = 0, prefill_tokens_per_s = 0;
    double time_to_first_token_ms = 0;
    double decode_ms = 0, decode_tokens_per_s = 0;
    ConversationStats conversation;
    PoolStats pool;
};

struct GenerationResult {
    Status status;
    StopReason stop_reason = StopReason::Error;
    std::string text;            // the answer (stop string excluded)
    std::vector<int> tokens;
    GenerationStats stats;
};

// A piece of answer text (whole UTF-8 characters only; may be empty) and the figures so far.
using TokenCallback = std::function<void(const std::string& piece, const GenerationStats& stats)>;

// One answer of Engine::generate_batch(): what generate() takes, for one conversation.
struct BatchRequest {
    int64_t conversation = 0;  // a ConversationId
    std::string user_text;
    GenerateParams params;
    TokenCallback on_token;                     // this answer's pieces
    const std::atomic<bool>* cancel = nullptr;  // stops this answer only
    // Called once, as soon as this answer ends, while the others may go on.
    std::function<void(const GenerationResult&)> on_finished;
    // Goes on with the last turn's answer as continue_answer() does (user_text is not used).
    bool resume = false;
};

// Engine::generate_batch asks it between steps for answers to join the batch (none: empty).
using BatchAdmission = std::function<std::vector<BatchRequest>()>;

// One chat turn, for restoring a conversation whose cache is gone (after a restart).
struct ChatTurn {
    std::string user;
    std::string answer;
};

// What a message would add to a conversation, measured before sending it.
struct TurnSize {
    int message_tokens = 0;  // tokens the message adds, chat template included
    int alone_tokens = 0;    // the same message as the first turn of an empty conversation
    int history_tokens = 0;  // tokens the conversation holds already
    int context_length = 0;

    // At least one position must stay free for the answer.
    bool fits() const { return history_tokens + message_tokens < context_length; }
    bool fits_alone() const { return alone_tokens < context_length; }
};

// What the KV cache inspector shows for one conversation.
struct CacheLayout {
    int n_layers = 0, block_size = 0, n_kv_heads = 0, head_dim = 0;
    std::string dtype;           // element type of cache_k / cache_v
    std::string device;          // "CPU" or the GPU's name
    int64_t bytes_per_block = 0; // K and V, all layers
    int64_t bytes_used = 0;      // this conversation's blocks
    int cached_tokens = 0;
    std::vector<int32_t> block_table;  // block ids, in position order
    std::vector<int> block_users;      // per block_table entry: conversations holding it (> 1: shared)
    std::vector<bool> block_restored;  // per block_table entry: read from a KV snapshot on disk
};

// How well the model predicts a text: Engine::perplexity().
struct PerplexityResult {
    int tokens = 0;          // tokens scored: every text token after the leading BOS
    int windows = 0;         // forward windows of at most the context length
    double mean_nll = 0;     // mean negative log-likelihood per scored token, natural log
    double perplexity = 0;   // exp(mean_nll)
};

// Tokens scored so far and in all, after each forward chunk.
using PerplexityProgress = std::function<void(int scored, int total)>;

// KV snapshots: conversations' full cache blocks kept on disk, so a conversation restored after a
// restart (restore_turns) or evicted from the pool reads its cache back instead of prefilling its
// history again. Blocks are saved once each and shared by conversations that begin alike; each is
// keyed by the checkpoint (its size and first and last MiB), the cache type, the backend and every
// token before it, and checked by checksums, so a missing, stale or damaged block is only prefilled.
struct SnapshotSettings {
    std::string folder;        // empty: off
    int64_t budget_bytes = 0;  // the folder's limit (> 0): least recently used blocks are deleted first
    // Told what was restored, and why a block on disk was not used (the history is then prefilled).
    std::function<void(const std::string&)> on_log;
};

class Engine {
public:
    Engine();
    ~Engine();
    Engine(const Engine&) = delete;
    Engine& operator=(const Engine&) = delete;

    // Loads a checkpoint. On failure the previous model (and its conversations) stay loaded.
    // On success every conversation keeps its history; its cache is rebuilt when next used.
    Status load(const LoadParams& params);
    bool has_model() const;
    ModelInfo model_info() const;

    // date: the conversation's day as Llama 3.1's system header writes it ("26 Jul 2024"), fixed
    // for its life so earlier tokens never change; empty: today.
    ConversationId create_conversation(ChatFormat format = ChatFormat::Llama2Chat, const std::string& date = {});
    // The history is rendered again in the new format; the cache is rebuilt when next used.
    Status set_chat_format(ConversationId id, ChatFormat format);
    Status reset_conversation(ConversationId id);   // history emptied, all its blocks freed
    Status delete_conversation(ConversationId id);
    // When the pool needs room it evicts conversations marked so first (the local server's
    // requests, before the window's conversations), least recently used first within each kind.
    Status set_evict_first(ConversationId id, bool evict_first);
    // Keeps the first n_turns turns; the cache is cut back to where turn n_turns began.
    Status truncate_turns(ConversationId id, int n_turns);
    // Drops the oldest n turns (the system prompt stays). Where the later turns' tokens stay the same
    // (every format but Llama 2 chat with a system prompt, which lives in the first turn), their
    // cache is kept, moved to their new positions (a context shift); otherwise it is rebuilt when
    // next used.
    Status drop_oldest_turns(ConversationId id, int n, const std::string& system_prompt);
    // Replaces the history with these turns without computing anything: the cache of the full
    // blocks the new history shares with the old one from its start stays, the rest is computed
    // (or read back from disk) when next used.
    Status restore_turns(ConversationId id, const std::vector<ChatTurn>& turns,
                         const std::string& system_prompt);

    // Appends a user turn (Llama2Chat) or text (Completion), prefills only what the cache lacks,
    // and decodes until EOS, a stop string, max_new_tokens, the context length or *cancel.
    // A turn that would not fit in the context fails with ContextFull and changes nothing;
    // sampling values out of range fail with validate_sampling()'s status, also changing nothing.
    GenerationResult generate(ConversationId id, const std::string& user_text,
                              const GenerateParams& params, const TokenCallback& on_token = {},
                              const std::atomic<bool>* cancel = nullptr);

    // Answers several conversations at once, each as generate() would (or continue_answer(), for a
    // request with resume). Every step prefills at most
    // one chunk (the backend's chunk size) of one joining prompt, then runs one token of each answer
    // under way through the model together (the weights are read once per step for all of them,
    // and each answer attends over its own blocks); so answers already streaming pause for a chunk
    // at a time, never for a whole prompt. Before each step, admit (when given) may add answers,
    // which join the same way. Making room for one answer never evicts another of the batch.
    // Results come in request order, then the admitted ones in the order they came; an answer
    // that cannot start (its turn does not fit, its sampling values are out of range, the pool is
    // too small, its conversation has an answer under way) has its own status and changes nothing,
    // and the others go on. InvalidArgument for every answer when a conversation appears twice
    // among requests.
    std::vector<GenerationResult> generate_batch(const std::vector<BatchRequest>& requests,
                                                 const BatchAdmission& admit = {});

    // Goes on with the last turn's answer (cut short, or restored from disk) as if it had never
    // stopped; result.text is only the new text. Fails with InvalidArgument when there is no turn.
    GenerationResult continue_answer(ConversationId id, const GenerateParams& params,
                                     const TokenCallback& on_token = {},
                                     const std::atomic<bool>* cancel = nullptr);

    // Tokenizes user_text as the conversation's next turn would (system_prompt applies when it
    // is the first), without changing anything.
    Status measure_turn(ConversationId id, const std::string& user_text, const std::string& system_prompt,
                        TurnSize* out);

    // Turns KV snapshots on (for this and every later model) or off. InvalidArgument when the
    // budget is not positive; an unwritable folder shows later, in on_log.
    Status set_snapshots(const SnapshotSettings& settings);
    // Writes the conversation's full cached blocks that are not on disk yet (call it when the
    // conversation goes idle, and before quitting). Does nothing when snapshots are off.
    Status save_snapshot(ConversationId id);

    Status conversation_stats(ConversationId id, ConversationStats* out) const;
    PoolStats pool_stats() const;
    Status cache_layout(ConversationId id, CacheLayout* out) const;

    // Scores text with the loaded model (see PerplexityResult). The text is tokenized with BOS
    // first, and every token after it is scored once, given the tokens before it in its window:
    // text that fits the context is one window; longer text goes in consecutive windows of the
    // context length, each starting with BOS (so a window's first text token is predicted from
    // BOS alone). Uses KV cache blocks only while it runs; when the pool is short it evicts idle
    // conversations as generate() does. InvalidArgument when the text has fewer than 2 tokens.
    Status perplexity(const std::string& text, PerplexityResult* out,
                      const PerplexityProgress& on_progress = {});

    // The token ids the model sees for text (BOS first when add_bos).
    Status tokenize(const std::string& text, bool add_bos, std::vector<int>* out) const;

private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

// A model's size and shape: what the memory it needs depends on.
struct ModelShape {
    int64_t weight_bytes = 0;
    int n_layers = 0, n_kv_heads = 0, head_dim = 0;
    int context_length = 0;  // the one the model was trained for
};

// A checkpoint as its header describes it, read without loading or checking its weights (load()
// still checks every one): the Models page lists files with it.
struct CheckpointSummary {
    std::string format;        // as ModelInfo::format: "gguf", "llama2c", "huggingface", "meta"
    std::string name;          // GGUF general.name, else empty
    std::string weight_dtype;  // as ModelInfo::weight_dtype
    std::string weight_types;  // as ModelInfo::weight_types
    int64_t n_params = 0;
    ModelShape shape;
};

// Fails, saying why, for what load() would refuse from the header alone: not a checkpoint, a
// family or weight type not read here, a damaged header, a missing file.
Status inspect_checkpoint(const std::string& path, CheckpointSummary* out);

// Whether this version reads GGUF files of a llama.cpp quantization label as Hub file names give
// it ("Q4_K_M", "IQ4_XS", "F16"; any case), judged by the label's main weight type; *why says why
// not, naming the types it reads.
bool reads_gguf_file_type(const std::string& label, std::string* why);

// Whether a model of this shape fits this machine before it is loaded or even downloaded, by the
// rule load() applies: its weights in the memory available (the GPU's free memory where CUDA
// would be used, else RAM), and the context load() would then choose for the rest.
struct FitEstimate {
    bool fits = false;
    int context_length = 0;        // the context load() would choose; 0 when it does not fit
    int64_t memory_available = 0;  // bytes, in `memory`
    std::string memory;            // "RAM" or "GPU memory"
    std::string reason;            // one sentence with the figures
};
FitEstimate estimate_fit(const ModelShape& shape, BackendKind backend = BackendKind::Auto,
                         KvCacheType kv_cache_type = KvCacheType::F16);

// A stable key ("eos", "max tokens", "cancelled", ...): saved in the window's conversation files and
// looked up there for display text, so a value never changes once released.
const char* stop_reason_name(StopReason reason);

}  // namespace llamadesk
