// Helpers shared by the tests: where ../shared is, skipping when it is absent, running a program,
// and a small filesystem to fill or make read-only.
#pragma once

#include <QString>
#include <QTest>

#include "core/sanitizer.h"

namespace llamadesk::test {

// True in the build under AddressSanitizer + UndefinedBehaviorSanitizer (installer/test.sh), which
// runs every test again for memory errors and undefined behaviour, not for the coverage of large
// shapes and many repetitions that the normal build keeps. There the heaviest tests run smaller
// shapes, shorter sequences or fewer repetitions of the same code path, each choosing with this
// one switch and saying so in its output, so that none takes over 120 s on 2 cores.
inline constexpr bool kSanitizerBuild = kAddressSanitizer;  // core/sanitizer.h
// `normal`, or in the sanitizer build `reduced`, with a line in the test's output that names what
// was reduced and both figures: a smaller run is never a silent one.
int normal_or_reduced(int normal, int reduced, const char* what);

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

// A small real filesystem over a folder (a tmpfs), which can turn read-only and back: for the
// read-only and full-disk cases. Mounting needs root (CI runs the tests as root); mounted() is
// false otherwise, and the test skips with kNoScratchMount.
class ScratchMount {
public:
    ScratchMount(const QString& path, int size_mib);
    ~ScratchMount();
    ScratchMount(const ScratchMount&) = delete;
    ScratchMount& operator=(const ScratchMount&) = delete;
    bool mounted() const { return mounted_; }
    bool setReadOnly(bool read_only);

private:
    QString path_;
    bool mounted_ = false;
};
inline constexpr const char* kNoScratchMount =
    "could not mount a tmpfs (needs root): the read-only or full disk is not tested here";

}  // namespace llamadesk::test

// Skips the current test function (with the path in the message) when a ../shared file is absent.
#define LLAMADESK_REQUIRE_SHARED(var, relative)                                              \
    const QString var = llamadesk::test::shared_path(relative);                             \
    if (var.isEmpty())                                                                       \
        QSKIP(qPrintable(QStringLiteral("reference data not found: %1/%2 (set LLAMADESK_SHARED_DIR)") \
                             .arg(llamadesk::test::shared_dir(), relative)))
