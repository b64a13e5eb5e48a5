// One entry point per reader of untrusted input, shared by the libFuzzer harnesses (fuzz_main.cpp)
// and the regression test that replays every file of tests/fuzz/regressions/<target>/ in the
// normal suite. A target returns normally for any input: a clean EngineError is the expected
// answer to a bad file; a crash, a sanitizer report or any other exception is a finding.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace llamadesk::fuzz {

struct FuzzTarget {
    const char* name;  // "gguf": the folder of its regressions and the fuzzer's name, fuzz_gguf
    void (*run)(const uint8_t* data, size_t size);
};

std::span<const FuzzTarget> fuzz_targets();

}  // namespace llamadesk::fuzz
