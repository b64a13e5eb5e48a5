#include "test_support.h"

#include <QFileInfo>
#include <QProcess>

namespace llamadesk::test {

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

}  // namespace llamadesk::test
