// How the engine opens the CUDA module (backends/cuda/cuda_module.h): what it says when the module is
// missing, broken or from another build, and that a matching module's answers and exceptions reach
// the caller across the module's hidden symbols. Fake modules stand in, so this runs everywhere; a
// CUDA build also opens its real module.
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include "backends/cuda/cuda_bench_support.h"
#include "backends/cuda/cuda_module.h"
#include "core/error.h"
#include "test_support.h"

using namespace llamadesk;

namespace {

std::string opened_why(const std::string& path) {
    std::string why;
    if (open_cuda_module(path, &why) != nullptr) qFatal("%s opened", path.c_str());
    return why;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

}  // namespace

class TestCudaModule : public QObject {
    Q_OBJECT

private slots:
    // First: the engine looks the module up once per process, and $LLAMADESK_CUDA_MODULE decides it.
    void the_engine_uses_the_module_the_environment_names() {
        qputenv("LLAMADESK_CUDA_MODULE", FAKE_MODULE_SAME);
        std::string why;
        QVERIFY(!cuda_backend_available(&why));
        QCOMPARE(QString::fromStdString(why), QString("fake module: no device"));
        QCOMPARE(cuda_copy_bandwidth(), 42.0);
        try {
            make_cuda_backend(Checkpoint{}, CudaBackendOptions{});
            QFAIL("the fake module's error did not arrive");
        } catch (const EngineError& e) {  // thrown inside the module, whose type names are hidden
            QCOMPARE(e.code(), ErrorCode::OutOfMemory);
            QCOMPARE(QString(e.what()), QString("fake module: out of device memory"));
        }
        qunsetenv("LLAMADESK_CUDA_MODULE");
    }

    void a_missing_module_names_the_path() {
        const std::string why = opened_why("/nonexistent/libllamadesk-cuda.so");
        QVERIFY2(contains(why, "/nonexistent/libllamadesk-cuda.so") && contains(why, "cannot be loaded"), why.c_str());
    }

    void a_file_that_is_no_library_is_refused() {
        QTemporaryDir dir;
        const QString path = dir.filePath("libllamadesk-cuda.so");
        QFile f(path);
        QVERIFY(f.open(QIODevice::WriteOnly));
        f.write("not an ELF file");
        f.close();
        const std::string why = opened_why(path.toStdString());
        QVERIFY2(contains(why, "cannot be loaded") && contains(why, "CUDA runtime"), why.c_str());
    }

    void a_library_without_the_table_is_refused() {
        const std::string why = opened_why(FAKE_MODULE_EMPTY);
        QVERIFY2(contains(why, "is not a LlamaDesk CUDA module") && contains(why, kCudaModuleSymbol), why.c_str());
    }

    void a_module_of_another_build_is_refused() {
        const std::string why = opened_why(FAKE_MODULE_OTHER);
        QVERIFY2(contains(why, "was built for LlamaDesk 0.0.0 another compiler") && contains(why, kCudaModuleAbi),
                 why.c_str());
    }

    void this_builds_module_opens() {
#ifdef REAL_CUDA_MODULE
        std::string why;
        const CudaModuleTable* table = open_cuda_module(REAL_CUDA_MODULE, &why);
        QVERIFY2(table != nullptr, why.c_str());
        // Without a GPU the module loads and says why it cannot run; with one, it can.
        why.clear();
        const bool available = table->available(&why);
        QVERIFY2(available || !why.empty(), "unavailable without a reason");
        qInfo("the CUDA module here: %s", available ? "a usable device" : why.c_str());
#else
        QSKIP("this build has no CUDA module (configured without CUDA)");
#endif
    }
};

QTEST_GUILESS_MAIN(TestCudaModule)
#include "test_cuda_module.moc"
