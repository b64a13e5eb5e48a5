#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs every test: the normal build,
# a clang build of the engine, then every test again (the GPU ones aside) under AddressSanitizer +
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
stage "build" bash installer/build.sh
# The remote engine's real-server tests use this python (none: they skip).
start=$SECONDS
LLAMADESK_TEST_PYTHON="$(bash installer/test-server-python.sh)"
echo "[test.sh] server python: $((SECONDS - start)) s" >&2
export LLAMADESK_TEST_PYTHON
stage "tests" bash -c 'cd build && ctest --output-on-failure --timeout 900'

# The engine and its programs with Debian's clang too, which the fuzzers (tests/fuzz) need.
cmake -S . -B build-clang -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DLLAMADESK_BUILD_APP=OFF -DLLAMADESK_BUILD_TESTS=OFF -DLLAMADESK_CUDA=OFF
stage "clang build" cmake --build build-clang --parallel "$(nproc)"

# The app's tests too: its controllers hold conversations across threads and undo, where a
# use-after-free would hide in a release build.
cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLAMADESK_SANITIZE=ON -DLLAMADESK_CUDA=OFF
stage "sanitizer build" cmake --build build-asan --parallel "$(nproc)"
stage "sanitizer tests" bash -c 'cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    LSAN_OPTIONS="suppressions=$PWD/../tests/lsan-qt.supp" \
    ctest --output-on-failure --timeout 1800 -LE "gpu|slow"'
