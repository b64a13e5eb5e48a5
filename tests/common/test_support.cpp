#include "test_support.h"

#include <QFileInfo>
#include <QProcess>

namespace llamadesk::test {

int normal_or_reduced(int normal, int reduced, const char* what) {
    if (!kSanitizerBuild || reduced == normal) return normal;
    qInfo("sanitizer build: %s %d (the normal build: %d)", what, reduced, normal);
    return reduced;
}

QString shared_dir() {
    const QByteArray env = qgetenv("LLAMADESK_SHARED_DIR");
    return env.isEmpty() ? QStringLiteral(LLAMADESK_DEFAULT_SHARED_DIR) : QString::fromLocal8Bit(env);
}

QString shared_path(const QString& relative) {
    const QString path = shared_dir() + QLatin1Char('/') + relative;
    return QFileInfo::exists(path) ? path : QString();
}

ProgramRun run_program(const QString& program, const QStringList& args, const QByteArray& input, int timeout_ms) {
    QProcess p;
    p.start(program, args);
    if (!p.waitForStarted()) return {};
    if (!input.isEmpty()) p.write(input);
    p.closeWriteChannel();
    if (!p.waitForFinished(timeout_ms)) {
        p.kill();
        p.waitForFinished();
        return {-1, p.readAllStandardOutput(), p.readAllStandardError()};
    }
    return {p.exitStatus() == QProcess::NormalExit ? p.exitCode() : -1, p.readAllStandardOutput(),
            p.readAllStandardError()};
}

ScratchMount::ScratchMount(const QString& path, int size_mib) : path_(path) {
    mounted_ = run_program("mount", {"-t", "tmpfs", "-o", QString("size=%1m").arg(size_mib), "tmpfs", path}).exit_code == 0;
}

ScratchMount::~ScratchMount() {
    if (mounted_) run_program("umount", {"-l", path_});
}

bool ScratchMount::setReadOnly(bool read_only) {
    return run_program("mount", {"-o", read_only ? "remount,ro" : "remount,rw", path_}).exit_code == 0;
}

}  // namespace llamadesk::test
