// The Models page's pure parts: the Hub's answers read (hub_api.h), file names judged, the
// catalogue shipped with the app and whether each entry fits this machine (estimate_fit, the rule
// load() applies), and the Hugging Face cache's layout (hub_cache.h).
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QTemporaryDir>
#include <QtTest>
#include <unistd.h>

#include "catalogue.h"
#include "core/host_memory.h"
#include "hub_api.h"
#include "hub_cache.h"
#include "llamadesk/engine.h"

using namespace llamadesk;
using namespace llamadesk::library;

class TestHubApi : public QObject {
    Q_OBJECT

private slots:
    void quantIsReadFromTheFileName_data() {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QString>("quant");
        QTest::newRow("bartowski") << "Llama-3.2-1B-Instruct-Q4_K_M.gguf" << "Q4_K_M";
        QTest::newRow("TheBloke") << "llama-2-7b-chat.Q8_0.gguf" << "Q8_0";
        QTest::newRow("lower case") << "tinyllama-1.1b-chat-v1.0.q5_k_s.gguf" << "Q5_K_S";
        QTest::newRow("i-quant") << "Meta-Llama-3.1-8B-Instruct-IQ4_XS.gguf" << "IQ4_XS";
        QTest::newRow("f16") << "model-f16.gguf" << "F16";
        QTest::newRow("bf16 in a folder") << "BF16/model-BF16-00001-of-00002.gguf" << "BF16";
        QTest::newRow("none") << "ggml-model.gguf" << "";
    }
    void quantIsReadFromTheFileName() {
        QFETCH(QString, name);
        QFETCH(QString, quant);
        QCOMPARE(quant_of_file(name), quant);
    }

    void fileTypesTheEngineReads() {
        std::string why;
        for (const char* label : {"Q4_K_M", "q4_k_s", "Q5_K_M", "Q6_K", "Q8_0", "Q4_0", "F16", "BF16", "F32"})
            QVERIFY2(reads_gguf_file_type(label, &why), label);
        QVERIFY(!reads_gguf_file_type("IQ4_XS", &why));
        QVERIFY2(QString::fromStdString(why).contains("iq4_xs weights, which LlamaDesk does not read (it reads f32"),
                 why.c_str());
        QVERIFY(!reads_gguf_file_type("Q3_K_M", &why));
        QVERIFY(QString::fromStdString(why).contains("q3_k"));
    }

    // The tree listing as the Hub answers it (hf_api.py's RepoFile: type, oid, size, path, lfs).
    void treeListingKeepsTheGgufFilesJudged() {
        const QByteArray tree = R"([
            {"type":"file","oid":"aa","size":1519,"path":"README.md"},
            {"type":"directory","oid":"bb","size":0,"path":"BF16"},
            {"type":"file","oid":"cc","size":807694464,"path":"Llama-3.2-1B-Instruct-Q4_K_M.gguf",
             "lfs":{"oid":"6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83","size":807694464,"pointerSize":135}},
            {"type":"file","oid":"dd","size":700000000,"path":"Llama-3.2-1B-Instruct-IQ4_XS.gguf","lfs":{"oid":"11","size":700000000}},
            {"type":"file","oid":"ee","size":100,"path":"BF16/model-BF16-00001-of-00002.gguf","lfs":{"oid":"22","size":100}},
            {"type":"file","oid":"ff","size":100,"path":"mmproj-model-f16.gguf","lfs":{"oid":"33","size":100}}
        ])";
        const QList<HubFile> files = parse_tree(QJsonDocument::fromJson(tree));
        QCOMPARE(files.size(), 4);
        QCOMPARE(files[0].path, QString("Llama-3.2-1B-Instruct-Q4_K_M.gguf"));
        QCOMPARE(files[0].size, qint64(807694464));
        QCOMPARE(files[0].sha256, QString("6f85a640a97cf2bf5b8e764087b1e83da0fdb51d7c9fab7d0fece9385611df83"));
        QCOMPARE(files[0].quant, QString("Q4_K_M"));
        QVERIFY(files[0].readable);
        QVERIFY(!files[1].readable && files[1].reason.contains("iq4_xs"));
        QVERIFY(!files[2].readable && files[2].reason.contains("one of 2 parts of a split file"));
        QVERIFY(!files[3].readable && files[3].reason.contains("image projector"));
    }

    void searchResultsAreRead() {
        const QByteArray list = R"([
            {"_id":"x","id":"bartowski/Llama-3.2-1B-Instruct-GGUF","likes":120,"downloads":50000,"gated":false,"tags":["gguf","llama"]},
            {"_id":"y","id":"meta-llama/Llama-3.2-1B","likes":1,"downloads":2,"gated":"manual","tags":[]},
            {"_id":"z"}
        ])";
        const QList<HubRepo> repos = parse_search(QJsonDocument::fromJson(list));
        QCOMPARE(repos.size(), 2);
        QCOMPARE(repos[0].id, QString("bartowski/Llama-3.2-1B-Instruct-GGUF"));
        QCOMPARE(repos[0].downloads, qint64(50000));
        QVERIFY(!repos[0].gated);
        QVERIFY(repos[1].gated);
    }

    void endpointAndTokenAsHuggingFaceHubReadsThem() {
        QTemporaryDir home;
        qputenv("HF_ENDPOINT", "http://127.0.0.1:9/");
        QCOMPARE(hub_endpoint(), QUrl("http://127.0.0.1:9"));
        qunsetenv("HF_ENDPOINT");
        QCOMPARE(hub_endpoint(), QUrl("https://huggingface.co"));
        qunsetenv("HF_TOKEN");
        qunsetenv("HF_TOKEN_PATH");
        qputenv("HF_HOME", home.path().toUtf8());
        QVERIFY(hub_token_from_environment().isEmpty());
        QFile token(home.filePath("token"));  // what huggingface-cli login writes
        QVERIFY(token.open(QIODevice::WriteOnly));
        token.write("hf_from_file\n");
        token.close();
        QCOMPARE(hub_token_from_environment(), QString("hf_from_file"));
        qputenv("HF_TOKEN", "hf_from_env");
        QCOMPARE(hub_token_from_environment(), QString("hf_from_env"));
        qunsetenv("HF_TOKEN");
        qunsetenv("HF_HOME");
    }

    void catalogueShipsEveryEntryWithAShape() {
        const QList<CatalogueFile> files = recommended_files();
        QCOMPARE(files.size(), 14);  // seven models, Q4_K_M and Q8_0 each
        QStringList models;
        for (const CatalogueFile& f : files) {
            QVERIFY2(f.file.endsWith(".gguf") && f.repo.count('/') == 1, qPrintable(f.file));
            QVERIFY(f.quant == "Q4_K_M" || f.quant == "Q8_0");
            QCOMPARE(quant_of_file(f.file), f.quant);
            QVERIFY(f.shape.weight_bytes > 100000000 && f.shape.n_layers > 0 && f.shape.n_kv_heads > 0 &&
                    f.shape.head_dim > 0 && f.shape.context_length >= 2048);
            QVERIFY(!f.licence.isEmpty() && !f.family.isEmpty());
            if (!models.contains(f.model)) models.append(f.model);
        }
        QCOMPARE(models, (QStringList{"Llama 3.2 1B Instruct", "Llama 3.2 3B Instruct", "Llama 3.1 8B Instruct",
                                      "Hermes 3 (Llama 3.1 8B)", "DeepSeek-R1-Distill-Llama-8B",
                                      "TinyLlama 1.1B Chat v1.0", "Llama 2 7B Chat"}));
        QString error;
        QVERIFY(read_catalogue("{\"models\": [{\"name\": \"x\", \"files\": [{\"repo\": \"a/b\"}]}]}", &error).isEmpty());
        QVERIFY(error.contains("lacks"));
    }

    // The same rule as load(): weights in the memory available, then the context of the rest.
    void fitFollowsTheLoadRule() {
        const int64_t ram = available_memory_bytes();
        ModelShape small{int64_t(100) << 20, 16, 8, 64, 131072};  // 100 MiB, 32 KiB of f16 KV a token
        FitEstimate fit = estimate_fit(small, BackendKind::Cpu);
        QVERIFY2(fit.fits, fit.reason.c_str());
        QCOMPARE(fit.memory, std::string("RAM"));
        QVERIFY(fit.memory_available > 0);
        // The context load() would choose: the model's own if its cache takes at most a quarter
        // of what is left after the weights, else the largest power of two that does.
        const double per_token = 2.0 * 16 * 8 * 64 * 2;
        const double quarter = double(ram - small.weight_bytes) / 4;
        int expected = 131072;
        if (per_token * expected > quarter) {
            expected = 256;
            while (expected * 2 < 131072 && per_token * expected * 2 <= quarter) expected *= 2;
        }
        QCOMPARE(fit.context_length, expected);
        QVERIFY(QString::fromStdString(fit.reason).contains("context of " + QString::number(expected)));

        ModelShape huge = small;
        huge.weight_bytes = ram + (int64_t(1) << 30);
        fit = estimate_fit(huge, BackendKind::Cpu);
        QVERIFY(!fit.fits);
        QCOMPARE(fit.context_length, 0);
        QVERIFY2(QString::fromStdString(fit.reason).contains("of RAM available"), fit.reason.c_str());
    }

    void cacheLayoutIsHuggingFaceHubs() {
        QTemporaryDir cache;
        const QString sha = QString(64, 'a');
        const HubCacheEntry e = hub_cache_entry(cache.path(), "org/name", sha, "c0ffee", "sub/m.gguf");
        QCOMPARE(e.blob, cache.path() + "/models--org--name/blobs/" + sha);
        QCOMPARE(e.part, e.blob + ".part");
        QCOMPARE(e.snapshot, cache.path() + "/models--org--name/snapshots/c0ffee/sub/m.gguf");
        QVERIFY(cached_file(cache.path(), "org/name", "sub/m.gguf").isEmpty());
        QDir().mkpath(QFileInfo(e.blob).absolutePath());
        QFile blob(e.blob);
        QVERIFY(blob.open(QIODevice::WriteOnly));
        blob.close();
        QCOMPARE(link_snapshot(e, "c0ffee"), QString());
        QCOMPARE(QFileInfo(e.snapshot).symLinkTarget(), QFileInfo(e.blob).absoluteFilePath());
        QCOMPARE(QFile::symLinkTarget(e.snapshot), QFileInfo(e.blob).canonicalFilePath());
        char target[512] = {};
        QVERIFY(::readlink(QFile::encodeName(e.snapshot).constData(), target, sizeof target - 1) > 0);
        QCOMPARE(QString::fromUtf8(target), QString("../../../blobs/" + sha));  // relative, as huggingface_hub's
        QCOMPARE(cached_file(cache.path(), "org/name", "sub/m.gguf"), e.snapshot);
    }
};

QTEST_GUILESS_MAIN(TestHubApi)
#include "test_hub_api.moc"
