// The default thread count: physical cores from a sysfs tree, a cgroup v2 quota, and the machine's.
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>

#include <thread>
#include <vector>

#include "core/cpu_threads.h"

using namespace llamadesk;

namespace {

void write_file(const QString& path, const QByteArray& text) {
    QVERIFY(QDir().mkpath(QFileInfo(path).absolutePath()));
    QFile f(path);
    QVERIFY(f.open(QIODevice::WriteOnly));
    f.write(text);
}

// cpuN/topology of a machine whose CPU n is thread n / cores of core n % cores (Linux numbers the
// second threads of all cores after the first ones), on package `package`.
void write_topology(const QString& root, int cpus, int cores, int package = 0, int first_cpu = 0) {
    for (int n = 0; n < cpus; ++n) {
        const QString topology = root + QString("/cpu%1/topology/").arg(first_cpu + n);
        write_file(topology + "physical_package_id", QByteArray::number(package) + "\n");
        write_file(topology + "core_id", QByteArray::number(n % cores) + "\n");
    }
}

}  // namespace

class TestCpuThreads : public QObject {
    Q_OBJECT

private slots:
    void smt_siblings_count_once() {
        QTemporaryDir dir;
        write_topology(dir.path(), 16, 8);  // 8 cores, 2 threads each
        std::vector<int> all(16);
        for (int i = 0; i < 16; ++i) all[size_t(i)] = i;
        QCOMPARE(count_physical_cores(dir.path().toStdString(), all), 8);
        // an affinity mask of both threads of cores 0 and 1, and the first thread of core 2
        const std::vector<int> some = {0, 8, 1, 9, 2};
        QCOMPARE(count_physical_cores(dir.path().toStdString(), some), 3);
    }

    void packages_keep_their_cores_apart() {
        QTemporaryDir dir;
        write_topology(dir.path(), 4, 4, 0, 0);  // core ids 0..3 on each of two packages
        write_topology(dir.path(), 4, 4, 1, 4);
        const std::vector<int> cpus = {0, 1, 2, 3, 4, 5, 6, 7};
        QCOMPARE(count_physical_cores(dir.path().toStdString(), cpus), 8);
    }

    void cpus_without_topology_count_alone() {
        QTemporaryDir dir;
        const std::vector<int> cpus = {0, 1, 5};
        QCOMPARE(count_physical_cores(dir.path().toStdString(), cpus), 3);
    }

    void cgroup_quota_is_the_lowest_on_the_path() {
        QTemporaryDir dir;
        const QString root = dir.path();
        write_file(root + "/cpu.max", "max 100000\n");
        write_file(root + "/box/cpu.max", "250000 100000\n");   // 2.5 CPUs
        write_file(root + "/box/app/cpu.max", "max 100000\n");  // no limit of its own
        QCOMPARE(cgroup_cpu_quota(root.toStdString(), "0::/box/app\n"), 2.5);
        write_file(root + "/box/app/cpu.max", "50000 100000\n");
        QCOMPARE(cgroup_cpu_quota(root.toStdString(), "1:cpu:/\n0::/box/app\n"), 0.5);
        QCOMPARE(cgroup_cpu_quota(root.toStdString(), "0::/\n"), 0.0);                 // "max" at the root
        QCOMPARE(cgroup_cpu_quota(root.toStdString(), "0::/elsewhere\n"), 0.0);        // nothing to read
        QCOMPARE(cgroup_cpu_quota(root.toStdString(), "4:memory:/box\n"), 0.0);        // no v2 line
    }

    void the_default_fits_the_machine() {
        const int threads = default_compute_threads();
        QVERIFY(threads >= 1);
        QVERIFY(threads <= int(std::max(1u, std::thread::hardware_concurrency())));
        QCOMPARE(default_compute_threads(), threads);
        QCOMPARE(compute_threads(0), threads);
        QCOMPARE(compute_threads(-1), threads);
        QCOMPARE(compute_threads(3), 3);
    }
};

QTEST_APPLESS_MAIN(TestCpuThreads)
#include "test_cpu_threads.moc"
