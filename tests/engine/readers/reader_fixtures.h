// Helpers for the checkpoint reader tests: small synthetic models on disk, byte patching, and
// checking that an operation fails with the right error.
#pragma once

#include <QByteArray>
#include <QString>
#include <functional>
#include <string>

#include "core/error.h"
#include "model/checkpoint.h"
#include "readers/gguf_file.h"

namespace llamadesk::test {

// A small model with every feature the readers handle: grouped-query attention (n_rep 2),
// 3 layers, a vocabulary with byte tokens.
ModelConfig tiny_config();

// Parameters of a Llama model, counted independently of Checkpoint::n_params().
int64_t expected_params(const ModelConfig& c, bool tied);

// Empty when fn throws EngineError with `code` and a message containing `substring`; otherwise
// a description of what happened instead. The error's message goes to *message when given.
QString expect_error(const std::function<void()>& fn, ErrorCode code, const QString& substring,
                     QString* message = nullptr);

#define LLAMADESK_REQUIRE_ERROR(statement, code, substring)                                     \
    do {                                                                                         \
        const QString why_ = llamadesk::test::expect_error([&] { statement; }, code, substring); \
        QVERIFY2(why_.isEmpty(), qPrintable(why_));                                              \
    } while (0)

// The prompt and what the model at `model` writes after it greedily in n_tokens, or what failed.
std::string greedy_text(const std::string& model, const std::string& prompt, int n_tokens);

// Data rows (bin, tokenizer, shards) of the real small models in ../shared: stories260K in one
// file, babyllama (grouped-query attention) in two.
void add_real_model_rows();
// Writes the llama2.c model at bin_path with `write` (a folder writer such as write_hf) into
// `folder`, puts the tokenizer beside it, and compares the two models' greedy text: empty when the
// folder writes what llama2.c's file writes, else both texts.
using FolderWriter = void (*)(const Checkpoint&, const std::string&, int);
QString greedy_text_differs(const QString& bin_path, const QString& tokenizer_path, int shards, const QString& folder,
                            FolderWriter write);

QByteArray read_all(const QString& path);
void write_all(const QString& path, const QByteArray& bytes);

// Bit-exact comparison of every tensor (and the config) of two checkpoints; empty when equal.
QString compare_checkpoints(const Checkpoint& a, const Checkpoint& b);

// Offsets inside a GGUF file's bytes, found by the length-prefixed key or tensor name.
qint64 gguf_value_offset(const QByteArray& file, const char* key);     // at the value type (u32)
qint64 gguf_tensor_info_offset(const QByteArray& file, const char* name);  // at n_dims (u32)

// GGUF key/value bytes, to add metadata to a file the writer made.
struct KvBytes {
    QByteArray bytes;
    quint64 count = 0;
    template <typename T>
    void raw(T v) { bytes.append(reinterpret_cast<const char*>(&v), sizeof(T)); }
    void str(const QByteArray& s) { raw<quint64>(quint64(s.size())); bytes.append(s); }
    void key(const QByteArray& k, GgufType t) { str(k); raw<quint32>(quint32(t)); ++count; }
};

// Inserts extra key/values after a GGUF's header. Padded to a multiple of 32 bytes with one more
// string so the data section keeps its alignment and the file stays valid.
QByteArray with_extra_metadata(QByteArray file, KvBytes kv);

template <typename T>
void poke(QByteArray& bytes, qint64 offset, T value) {
    bytes.replace(offset, qint64(sizeof(T)), reinterpret_cast<const char*>(&value), qint64(sizeof(T)));
}

}  // namespace llamadesk::test
