#!/usr/bin/env bash
# Verifies the CUDA backend on a lent GPU in one call: builds for sm_90, runs every `gpu` test
# (failing, not skipping, when no device is usable), the kernel tests once more under
# compute-sanitizer memcheck, then the benchmark. Prints everything; $OUT gets run-all.log,
# cmake.log and bench.txt.
#
# How to call it (a fresh H200 has no network, no Qt and maybe no SentencePiece):
#   1. here, from the repository root:  tests/gpu/prepare-carry.sh
#   2. device tool:  run(command="bash tests/gpu/run-all.sh", carry=["build-gpu-carry"], timeout_s=540)
#   3. here:  rm -rf build-gpu-carry
# Expected time on an H200 with 16 cores (estimates: never run yet): build ~2 min, tests ~1 min,
# sanitizer ~1-2 min, benchmark ~2.5 min (seven rows; the 7B ones ~15-25 s each, their weights made
# on the GPU: block types as a run of reference-quantized blocks repeated, ~2 s). Stage timeouts (build 300 s, tests 300 s, memcheck 3 x 90 s,
# bench 7 x 150 s) stop a hung stage; the 540 s call limit stops the rest.
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
cd "$root"
out=${OUT:-$root/build-gpu/out}
mkdir -p "$out"
exec > >(tee "$out/run-all.log") 2>&1
step() { echo; echo "=== $* ($(date -u +%T))"; }
failures=()

step machine
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.mem --format=csv || true
export PATH=$PATH:/usr/local/cuda/bin  # nvcc, compute-sanitizer
nvcc --version | tail -2
cmake --version | head -1
g++ --version | head -1
echo "ninja $(ninja --version)"
nproc

step dependencies
carry=$root/build-gpu-carry
shared=$root/../shared
if [ -d "$carry/debs" ]; then
    prefix=/tmp/llamadesk-deps
    for f in "$carry"/debs/*.deb; do dpkg-deb -x "$f" "$prefix"; done
    lib=$prefix/usr/lib/x86_64-linux-gnu
    # keep the system's own (newer) glib when it has one
    if ldconfig -p | grep -q 'libglib-2.0.so.0 '; then rm -f "$lib"/libglib-2.0.so*; fi
    sed -i "s|^prefix=/usr|prefix=$prefix/usr|" "$lib/pkgconfig/sentencepiece.pc"
    export CMAKE_PREFIX_PATH=$prefix/usr
    export PKG_CONFIG_PATH=$lib/pkgconfig
    export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    command -v pkg-config >/dev/null || export PATH=$PATH:$prefix/usr/bin
    echo "unpacked $(ls "$carry"/debs | wc -l) packages into $prefix"
fi
[ -d "$carry/shared" ] && shared=$carry/shared
export LLAMADESK_SHARED_DIR=$shared
echo "reference data: $shared"

step configure and build for sm_90
build=$root/build-gpu
targets="test_cuda_kernels test_cuda_attention test_cuda_sampling test_cuda_model test_cuda_engine llamadesk-bench"
if ! timeout 240 cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DLLAMADESK_BUILD_APP=OFF \
        -DLLAMADESK_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 -DLLAMADESK_SHARED_DIR="$shared" >"$out/cmake.log" 2>&1; then
    cat "$out/cmake.log"; echo "configure failed"; exit 1
fi
grep -E "CUDA backend|Qt6|sentencepiece" "$out/cmake.log"
if ! timeout "${LLAMADESK_BUILD_TIMEOUT:-300}" cmake --build "$build" -j"${LLAMADESK_JOBS:-16}" --target $targets; then
    echo "build failed"; exit 1
fi

step gpu tests
if ! LLAMADESK_REQUIRE_GPU=1 timeout 300 ctest --test-dir "$build" -L gpu --output-on-failure --timeout 240; then
    failures+=("gpu tests")
fi

step compute-sanitizer memcheck on the kernel tests
if command -v compute-sanitizer >/dev/null; then
    # the sampling test's distribution checks launch thousands of times: only its other functions
    for t in test_cuda_kernels test_cuda_attention \
             "test_cuda_sampling greedy_matches_host filters_that_leave_one_token top_k_on_a_large_vocabulary"; do
        echo "--- $t"
        set -- $t
        timeout 90 compute-sanitizer --tool memcheck --leak-check no --error-exitcode 3 \
            "$build/tests/gpu/$1" -silent "${@:2}" || failures+=("memcheck $1")
    done
else
    echo "compute-sanitizer not found: skipped"
fi

step benchmark
bench=$build/engine/tools/bench/llamadesk-bench
run_bench() {
    echo "--- llamadesk-bench $*" | tee -a "$out/bench.txt"
    timeout 150 "$bench" "$@" 2>&1 | tee -a "$out/bench.txt" || failures+=("bench $*")
}
run_bench --backend cuda --synthetic 7B --dtype f16
run_bench --backend cuda --synthetic 7B --dtype f16 --cuda-graphs off
run_bench --backend cuda --synthetic 7B --dtype f16 --cuda-decode cublas
# blocks as stored: decode's block GEMV, prefill through slabs widened to F16
run_bench --backend cuda --synthetic 7B --dtype q4_k_m
run_bench --backend cuda --synthetic 7B --dtype q8_0
run_bench --backend cuda --synthetic 110M --dtype f16
run_bench --backend cuda --model "$shared/models/stories260K/stories260K.bin"

step summary
nvidia-smi --query-gpu=clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv || true
if [ ${#failures[@]} -eq 0 ]; then
    echo "ALL PASSED"
else
    printf 'FAILED: %s\n' "${failures[@]}"
    exit 1
fi
