#!/usr/bin/env bash
# Fuzzes every reader of untrusted input with libFuzzer for SECONDS each (default 60):
#   bash tests/fuzz/run.sh [SECONDS] [TARGET ...]
# Builds the engine and the harnesses with Debian's clang under ASan + UBSan in build-fuzz/, seeds
# each corpus with the project's own writers (fuzz_make_seeds), runs the targets one after the
# other on all cores (-fork), and prints executions and executions per second per target. A crash,
# leak, timeout or a single allocation above 1 GiB is a finding: its input is copied into
# tests/fuzz/regressions/<target>/, which the normal test suite replays (test_fuzz_regressions).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
seconds=${1:-60}
shift || true
targets=("$@")
[ ${#targets[@]} -eq 0 ] && targets=(gguf llama2c safetensors torch_pth hf_config meta_params gguf_vocab tiktoken hf_tokenizer)
build=$root/build-fuzz

cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_C_COMPILER=clang \
    -DCMAKE_CXX_COMPILER=clang++ -DLLAMADESK_FUZZ=ON -DLLAMADESK_CUDA=OFF -DLLAMADESK_BUILD_APP=OFF >/dev/null
ninja -C "$build" fuzz_make_seeds "${targets[@]/#/fuzz_}" >/dev/null
seeds=$build/seeds
rm -rf "$seeds" && "$build/tests/fuzz/fuzz_make_seeds" "$seeds" >/dev/null

jobs=$(nproc)
printf '%-12s %12s %10s %s\n' target executions exec/s result
for t in "${targets[@]}"; do
    corpus=$build/corpus/$t artifacts=$build/artifacts/$t/
    mkdir -p "$corpus" "$artifacts"
    log=$build/$t.log
    status=0
    (cd "$build" && ASAN_OPTIONS=detect_leaks=1 "$build/tests/fuzz/fuzz_$t" "$corpus" "$seeds/$t" \
        -fork="$jobs" -ignore_crashes=0 -max_total_time="$seconds" -rss_limit_mb=4096 -malloc_limit_mb=1024 \
        -timeout=10 -artifact_prefix="$artifacts" -print_final_stats=1 >"$log" 2>&1) || status=$?
    # -fork prints cumulative "#N: ... time: Ts" lines; the last one is the campaign's total
    last=$(grep -E '^#[0-9]+' "$log" | tail -1)
    execs=$(sed -E 's/^#([0-9]+).*/\1/' <<<"$last")
    elapsed=$(sed -nE 's/.*time: ([0-9]+)s.*/\1/p' <<<"$last")
    rate=$([ -n "$execs" ] && [ "${elapsed:-0}" -gt 0 ] && echo $((execs / elapsed)) || echo '?')
    found=$(find "$artifacts" -type f | wc -l)
    result=ok
    if [ "$found" -gt 0 ] || [ "$status" -ne 0 ]; then
        result="FINDING (exit $status, $found inputs; log $log)"
        mkdir -p "$root/tests/fuzz/regressions/$t"
        find "$artifacts" -type f -exec cp {} "$root/tests/fuzz/regressions/$t/" \;
    fi
    printf '%-12s %12s %10s %s\n' "$t" "${execs:-?}" "${rate:-?}" "$result"
done
