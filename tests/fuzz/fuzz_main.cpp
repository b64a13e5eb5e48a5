// libFuzzer's entry point for the target named by LLAMADESK_FUZZ_TARGET (one executable each).
#include <cstring>

#include "fuzz_targets.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const llamadesk::fuzz::FuzzTarget* target = [] {
        for (const auto& t : llamadesk::fuzz::fuzz_targets())
            if (std::strcmp(t.name, LLAMADESK_FUZZ_TARGET) == 0) return &t;
        return static_cast<const llamadesk::fuzz::FuzzTarget*>(nullptr);
    }();
    target->run(data, size);
    return 0;
}
