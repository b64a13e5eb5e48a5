// Helpers shared by the tests: where ../shared is, skipping when it is absent, and running a program.
#pragma once

#include <QString>
#include <QTest>

namespace llamadesk::test {

// LLAMADESK_SHARED_DIR from the environment, else the CMake cache variable's value.
QString shared_dir();
// shared_dir() + "/" + relative, or an empty string when that file or folder does not exist.
QString shared_path(const QString& relative);

// One run of a program: its exit code (-1 when it did not start, crashed or ran past the timeout),
// stdout and stderr.
struct ProgramRun {
    int exit_code = -1;
    QByteArray out, err;
};
// Runs program with args, input on its stdin (then closed).
ProgramRun run_program(const QString& program, const QStringList& args, const QByteArray& input = {},
                       int timeout_ms = 60000);

}  // namespace llamadesk::test

// Skips the current test function (with the path in the message) when a ../shared file is absent.
#define LLAMADESK_REQUIRE_SHARED(var, relative)                                              \
    const QString var = llamadesk::test::shared_path(relative);                             \
    if (var.isEmpty())                                                                       \
        QSKIP(qPrintable(QStringLiteral("reference data not found: %1/%2 (set LLAMADESK_SHARED_DIR)") \
                             .arg(llamadesk::test::shared_dir(), relative)))
