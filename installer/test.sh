#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs every test: the normal build,
# then every test again (the GPU ones aside) in a clang build under AddressSanitizer +
# UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each stage says how long it took, so a slow CI run shows where its time went.
stage() {
    local name=$1 start=$SECONDS
    shift
    "$@"
    echo "[test.sh] $name: $((SECONDS - start)) s" >&2
}
stage "dependencies" bash installer/install-deps.sh

# The remote engine's real-server tests use this python (none: they skip). Installing it (PyPI;
# llama.cpp is built from source where no wheel is cached) needs nothing of ours, so it runs beside
# the build, and the tests wait for it.
server_python=$(mktemp)
server_log=$(mktemp)
trap 'rm -f "$server_python" "$server_log"' EXIT
(
    start=$SECONDS
    bash installer/test-server-python.sh >"$server_python" 2>"$server_log"
    echo "[test.sh] server python (beside the build): $((SECONDS - start)) s" >>"$server_log"
) &
server_job=$!
stage "build" bash installer/build.sh
start=$SECONDS
wait "$server_job"
cat "$server_log" >&2
echo "[test.sh] server python, waited for after the build: $((SECONDS - start)) s" >&2
LLAMADESK_TEST_PYTHON=$(cat "$server_python")
export LLAMADESK_TEST_PYTHON

# The tests share no files, ports or keyring (temporary folders, port 0, a private D-Bus session
# each), so CTest runs them side by side, one per core.
stage "tests" bash -c 'cd build && ctest --output-on-failure --timeout 900 --parallel "$(nproc)"'

# One build for clang and the sanitizers: Debian's clang (which the fuzzers, tests/fuzz, need) builds
# the engine, its programs, the app and every test under ASan + UBSan. The app's tests too: its
# controllers hold conversations across threads and undo, where a use-after-free would hide in a
# release build. The heaviest tests run smaller there (test::kSanitizerBuild). Reports need only
# files and lines, so the debug information is line tables: full -g made objects up to 2.8 times
# larger, for every link to read.
debug_flags="-O2 -gline-tables-only -DNDEBUG"
cmake -S . -B build-asan -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_FLAGS_RELWITHDEBINFO="$debug_flags" \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$debug_flags" -DLLAMADESK_SANITIZE=ON -DLLAMADESK_CUDA=OFF
stage "sanitizer build (clang)" cmake --build build-asan --parallel "$(nproc)"
stage "sanitizer tests" bash -c 'cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/../tests/lsan-qt.supp" \
    ctest --output-on-failure --timeout 1800 --parallel "$(nproc)" -LE "gpu|slow"'
