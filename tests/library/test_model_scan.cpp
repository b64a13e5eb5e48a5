// The list "On this computer" (app/library/model_scan.h, model_folders.h, and the window's
// ModelLibrary): folders laid out as the Hugging Face cache, LM Studio, GPT4All and Ollama lay
// them out, built here from synthetic GGUF files; what would not open is listed with its reason;
// broken links, unreadable folders and 10,000 other files neither stop the scan nor block the
// window.
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QTemporaryDir>
#include <QtTest>

#include "library/model_library.h"
#include "model_folders.h"
#include "model_scan.h"
#include "synthetic/synthetic_model.h"
#include "test_support.h"

using namespace llamadesk;
using namespace llamadesk::library;

namespace {

void make_gguf(const QString& path, const char* shape = "260K") {
    QDir().mkpath(QFileInfo(path).absolutePath());
    write_gguf(make_synthetic_checkpoint(synthetic_config(shape), DType::F32, 5), path.toStdString());
}

void write_text(const QString& path, const QByteArray& text) {
    QDir().mkpath(QFileInfo(path).absolutePath());
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

// A GGUF whose general.architecture is another family's (same length, so the file stays whole).
void make_other_architecture(const QString& path) {
    make_gguf(path);
    QFile f(path);
    QVERIFY(f.open(QIODevice::ReadWrite));
    QByteArray bytes = f.readAll();
    const qsizetype key = bytes.indexOf("general.architecture");
    const qsizetype value = bytes.indexOf("llama", key);
    QVERIFY(key >= 0 && value > key);
    bytes.replace(value, 5, "qwen2");
    f.seek(0);
    f.write(bytes);
}

const LocalModel* find(const QList<LocalModel>& models, const QString& name) {
    for (const LocalModel& m : models)
        if (m.name == name) return &m;
    return nullptr;
}

}  // namespace

class TestModelScan : public QObject {
    Q_OBJECT

    QTemporaryDir home_;
    QList<ModelFolder> folders_;
    QString hf_, lmstudio_, gpt4all_, ollama_;

private slots:
    void initTestCase() {
        QVERIFY(home_.isValid());
        hf_ = home_.filePath("hf/hub");
        lmstudio_ = home_.filePath(".lmstudio/models");
        gpt4all_ = home_.filePath("data/nomic.ai/GPT4All");
        ollama_ = home_.filePath(".ollama/models");
        // The Hugging Face cache: a blob linked from two revisions, and a safetensors folder.
        const QString repo = hf_ + "/models--org--Tiny-GGUF";
        make_gguf(repo + "/blobs/0123abcd");
        QDir().mkpath(repo + "/snapshots/rev1");
        QDir().mkpath(repo + "/snapshots/rev2");
        QVERIFY(QFile::link("../../blobs/0123abcd", repo + "/snapshots/rev1/tiny-F32.gguf"));
        QVERIFY(QFile::link("../../blobs/0123abcd", repo + "/snapshots/rev2/tiny-F32.gguf"));
        write_hf(make_synthetic_checkpoint(synthetic_config("260K"), DType::F32, 5),
                 (hf_ + "/models--org--Tiny-HF/snapshots/rev1").toStdString());
        // LM Studio: publisher/repo/file, and 10,000 other files beside it.
        make_gguf(lmstudio_ + "/lmstudio-community/Tiny-GGUF/tiny-Q8.gguf");
        for (int d = 0; d < 100; ++d) {
            const QString dir = lmstudio_ + QString("/noise/%1").arg(d);
            QDir().mkpath(dir);
            for (int i = 0; i < 100; ++i) {
                QFile f(dir + QString("/file%1.txt").arg(i));
                QVERIFY(f.open(QIODevice::WriteOnly));
            }
        }
        // GPT4All: a model, a broken link, a file that is not GGUF, another family's model, and a
        // folder nobody may read.
        make_gguf(gpt4all_ + "/tiny.gguf");
        QVERIFY(QFile::link(home_.filePath("gone.gguf"), gpt4all_ + "/broken.gguf"));
        write_text(gpt4all_ + "/notes.gguf", "not a model");
        make_other_architecture(gpt4all_ + "/qwen.gguf");
        QDir().mkpath(gpt4all_ + "/locked");
        make_gguf(gpt4all_ + "/locked/hidden.gguf");
        QFile::setPermissions(gpt4all_ + "/locked", QFileDevice::Permissions());
        // Ollama: manifests naming blobs by digest.
        make_gguf(ollama_ + "/blobs/sha256-aaaa");
        const QByteArray manifest =
            R"({"schemaVersion":2,"layers":[{"mediaType":"application/vnd.ollama.image.model","digest":"sha256:aaaa","size":1},)"
            R"({"mediaType":"application/vnd.ollama.image.template","digest":"sha256:bbbb","size":1}]})";
        write_text(ollama_ + "/manifests/registry.ollama.ai/library/tiny/latest", manifest);
        write_text(ollama_ + "/manifests/registry.ollama.ai/someone/other/q4", manifest);
        write_text(ollama_ + "/manifests/registry.ollama.ai/library/broken/latest", "{not json");
        folders_ = {{ModelSource::HuggingFace, hf_},
                    {ModelSource::LmStudio, lmstudio_},
                    {ModelSource::Gpt4All, gpt4all_},
                    {ModelSource::Ollama, ollama_},
                    {ModelSource::OwnFolder, home_.filePath("does-not-exist")}};
    }
    void cleanupTestCase() { QFile::setPermissions(gpt4all_ + "/locked", QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ExeOwner); }

    void everyAppsFolderIsReadAndEachFileJudged() {
        QElapsedTimer clock;
        clock.start();
        const QList<LocalModel> models = scan_models(folders_, {});
        const qint64 ms = clock.elapsed();
        qInfo("scanned %lld entries beside 10,000 other files in %lld ms", qint64(models.size()), ms);
        QVERIFY2(ms < 1000, qPrintable(QString::number(ms)));

        // The Hugging Face cache: one entry for the blob two revisions link to, one for the folder.
        const LocalModel* hf = find(models, "org/Tiny-GGUF · tiny-F32.gguf");
        QVERIFY(hf);
        QCOMPARE(hf->source, ModelSource::HuggingFace);
        QVERIFY2(hf->openable, qPrintable(hf->reason));
        QCOMPARE(hf->summary.format, std::string("gguf"));
        QVERIFY(hf->summary.n_params > 0 && hf->summary.shape.n_layers > 0);
        QVERIFY(hf->size > 0);
        const LocalModel* folder = find(models, "org/Tiny-HF");
        QVERIFY(folder);
        QVERIFY2(folder->openable, qPrintable(folder->reason));
        QCOMPARE(folder->summary.format, std::string("huggingface"));

        const LocalModel* lm = find(models, "lmstudio-community/Tiny-GGUF/tiny-Q8.gguf");
        QVERIFY(lm && lm->openable && lm->source == ModelSource::LmStudio);

        const LocalModel* gpt = find(models, "tiny.gguf");
        QVERIFY(gpt && gpt->openable && gpt->source == ModelSource::Gpt4All);
        const LocalModel* broken = find(models, "broken.gguf");
        QVERIFY(broken && !broken->openable);
        QVERIFY2(broken->reason.contains("gone.gguf, which is missing"), qPrintable(broken->reason));
        const LocalModel* notes = find(models, "notes.gguf");
        QVERIFY(notes && !notes->openable);
        QVERIFY2(notes->reason.contains("GGUF magic"), qPrintable(notes->reason));
        const LocalModel* qwen = find(models, "qwen.gguf");
        QVERIFY(qwen && !qwen->openable);
        QVERIFY2(qwen->reason.contains("qwen2"), qPrintable(qwen->reason));

        // Ollama: named model:tag, the namespace shown when it is not the library's.
        const LocalModel* tiny = find(models, "tiny:latest");
        QVERIFY(tiny && tiny->openable && tiny->source == ModelSource::Ollama);
        QVERIFY(tiny->path.endsWith("/blobs/sha256-aaaa"));
        QVERIFY(find(models, "someone/other:q4") == nullptr);  // the same blob: listed once
        QVERIFY(find(models, "broken:latest") == nullptr);

        // In the apps' order, the files within each by name.
        for (qsizetype i = 1; i < models.size(); ++i) QVERIFY(models[i - 1].source <= models[i].source);
        int count = 0;
        for (const LocalModel& m : models) count += m.source == ModelSource::HuggingFace;
        QCOMPARE(count, 2);
    }

    void openedBeforeIsMarkedWhereItLies() {
        const QString lm = lmstudio_ + "/lmstudio-community/Tiny-GGUF/tiny-Q8.gguf";
        const QString elsewhere = home_.filePath("elsewhere/mine.gguf");
        make_gguf(elsewhere);
        const QList<LocalModel> models = scan_models(folders_, {lm, elsewhere, home_.filePath("removed.gguf")});
        const LocalModel* in_lmstudio = find(models, "lmstudio-community/Tiny-GGUF/tiny-Q8.gguf");
        QVERIFY(in_lmstudio && in_lmstudio->opened_before && in_lmstudio->source == ModelSource::LmStudio);
        const LocalModel* mine = find(models, "mine.gguf");
        QVERIFY(mine && mine->openable && mine->source == ModelSource::Recent);
        const LocalModel* removed = find(models, "removed.gguf");
        QVERIFY(removed && !removed->openable && removed->reason == "no longer there");
    }

    // An Ollama blob opened in place is called by its own name, not by its hash.
    void aBlobIsCalledByTheNameInside() {
        Engine engine;
        LoadParams params;
        params.model_path = (ollama_ + "/blobs/sha256-aaaa").toStdString();  // not a hash: its file name
        QVERIFY(engine.load(params).ok());
        QCOMPARE(engine.model_info().name, std::string("sha256-aaaa"));
        const QString blob = home_.filePath("blobs/sha256-" + QString(64, 'c'));
        Checkpoint ckpt = make_synthetic_checkpoint(synthetic_config("260K"), DType::F32, 5);
        ckpt.name = "Tiny Stories";
        QDir().mkpath(QFileInfo(blob).absolutePath());
        write_gguf(ckpt, blob.toStdString());
        params.model_path = blob.toStdString();
        QVERIFY(engine.load(params).ok());
        QCOMPARE(engine.model_info().name, std::string("Tiny Stories"));
    }

    void foldersFollowTheAppsOwnRules() {
        const QByteArray saved_home = qgetenv("HOME");
        qputenv("HOME", home_.path().toUtf8());
        qunsetenv("HF_HUB_CACHE");
        qunsetenv("HF_HOME");
        qunsetenv("XDG_CACHE_HOME");
        qunsetenv("OLLAMA_MODELS");
        QCOMPARE(hugging_face_cache(), home_.path() + "/.cache/huggingface/hub");
        qputenv("XDG_CACHE_HOME", "/x/cache");
        QCOMPARE(hugging_face_cache(), QString("/x/cache/huggingface/hub"));
        qputenv("HF_HOME", "/x/hf");
        QCOMPARE(hugging_face_cache(), QString("/x/hf/hub"));
        qputenv("HF_HUB_CACHE", "/x/hub");
        QCOMPARE(hugging_face_cache(), QString("/x/hub"));
        qputenv("OLLAMA_MODELS", "/x/ollama");
        QList<QString> ollama;
        for (const ModelFolder& f : model_folders("/own"))
            if (f.source == ModelSource::Ollama) ollama.append(f.path);
        QCOMPARE(ollama, QList<QString>{"/x/ollama"});
        QCOMPARE(model_folders("/own").first().path, QString("/own"));
        for (const char* v : {"HF_HUB_CACHE", "HF_HOME", "XDG_CACHE_HOME", "OLLAMA_MODELS"}) qunsetenv(v);
        qputenv("HOME", saved_home);
    }

    // The window's page: the scan runs on another thread, and each model says whether it fits.
    void theWindowIsNotBlockedByTheScan() {
        QTemporaryDir data;
        const QByteArray saved_home = qgetenv("HOME");
        qputenv("HOME", home_.path().toUtf8());
        qputenv("HF_HUB_CACHE", hf_.toUtf8());
        qputenv("XDG_DATA_HOME", home_.filePath("data").toUtf8());
        qputenv("OLLAMA_MODELS", ollama_.toUtf8());
        {
            ModelLibrary library(data.path(), nullptr, nullptr);
            QSignalSpy changed(&library, &ModelLibrary::localChanged);
            library.rescan();
            QVERIFY(library.scanning());  // returned before the folders were read
            QVERIFY(library.local().isEmpty());
            QTRY_VERIFY_WITH_TIMEOUT(!library.scanning(), 10000);
            QVERIFY(changed.size() >= 2);
            bool fitted = false, refused = false;
            for (const QVariant& v : library.local()) {
                const QVariantMap m = v.toMap();
                if (m["openable"].toBool()) {
                    fitted = true;
                    QVERIFY2(m["fits"].toBool(), qPrintable(m["fitReason"].toString()));
                    QVERIFY(m["fitText"].toString().startsWith("Fits this computer: context"));
                } else {
                    refused = !m["reason"].toString().isEmpty();
                }
            }
            QVERIFY(fitted && refused);
            QCOMPARE(library.ownFolder(), data.path() + "/models");
        }
        for (const char* v : {"HF_HUB_CACHE", "XDG_DATA_HOME", "OLLAMA_MODELS"}) qunsetenv(v);
        qputenv("HOME", saved_home);
    }
};

QTEST_GUILESS_MAIN(TestModelScan)
#include "test_model_scan.moc"
