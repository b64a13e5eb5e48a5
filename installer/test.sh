#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and runs every test: the normal build,
# then the engine's tests again under AddressSanitizer + UndefinedBehaviorSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh
bash installer/build.sh
(cd build && ctest --output-on-failure --timeout 900)

cmake -S . -B build-asan -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DLLAMADESK_SANITIZE=ON \
    -DLLAMADESK_BUILD_APP=OFF -DLLAMADESK_CUDA=OFF
cmake --build build-asan --parallel "$(nproc)"
(cd build-asan && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    ctest --output-on-failure --timeout 1800 -LE "gpu|slow")
