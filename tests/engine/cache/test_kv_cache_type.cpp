// The KV cache's types, from the one table in cache/kv_cache_type: their names read back, which
// backend holds which, and the f16 a backend keeps, saying so, when it cannot hold the type asked for.
#include <QTest>

#include "cache/kv_cache_type.h"
#include "model/weight_types.h"

using namespace llamadesk;

class TestKvCacheType : public QObject {
    Q_OBJECT

private slots:
    void every_type_is_read_back_from_its_name() {
        QStringList names;
        for (KvCacheType type : kv_cache_types()) {
            names << kv_cache_type_name(type);
            KvCacheType parsed = type == KvCacheType::F16 ? KvCacheType::F32 : KvCacheType::F16;
            QVERIFY(parse_kv_cache_type(kv_cache_type_name(type), &parsed));
            QCOMPARE(parsed, type);
            QCOMPARE(QString(dtype_name(kv_dtype_of(type))), QString(kv_cache_type_name(type)));
        }
        QCOMPARE(names, QStringList({"f16", "f32", "q8_0"}));
        KvCacheType untouched = KvCacheType::F32;
        QVERIFY(!parse_kv_cache_type("q4_0", &untouched));  // a weight type, not a cache type
        QVERIFY(!parse_kv_cache_type("F16", &untouched));
        QCOMPARE(untouched, KvCacheType::F32);
    }

    void the_cpu_holds_every_type() {
        QCOMPARE(kv_dtypes_held(BackendKind::Cpu), std::vector<DType>({DType::F16, DType::F32, DType::Q8_0}));
        for (KvCacheType type : kv_cache_types()) {
            std::string note = "stale";
            QCOMPARE(kv_cache_type_held(BackendKind::Cpu, type, &note), type);
            QVERIFY(note.empty());
        }
    }

    void cuda_keeps_f16_for_q8_0_and_says_so() {
        QCOMPARE(kv_dtypes_held(BackendKind::Cuda), std::vector<DType>({DType::F16, DType::F32}));
        std::string note;
        QCOMPARE(kv_cache_type_held(BackendKind::Cuda, KvCacheType::Q8_0, &note), KvCacheType::F16);
        QCOMPARE(QString::fromStdString(note), QString("a q8_0 KV cache is CPU only, so CUDA keeps an f16 one"));
        for (KvCacheType type : {KvCacheType::F16, KvCacheType::F32}) {
            QCOMPARE(kv_cache_type_held(BackendKind::Cuda, type, &note), type);
            QVERIFY(note.empty());
        }
    }
};

QTEST_APPLESS_MAIN(TestKvCacheType)
#include "test_kv_cache_type.moc"
