// Inside the engine, failures are exceptions carrying an ErrorCode; Engine's public methods catch
// them at the library boundary and return a Status.
#pragma once

#include <stdexcept>
#include <string>

#include "core/status.h"

namespace llamadesk {

class EngineError : public std::runtime_error {
public:
    EngineError(ErrorCode code, const std::string& message)
        : std::runtime_error(message), code_(code) {}
    ErrorCode code() const { return code_; }

private:
    ErrorCode code_;
};

[[noreturn]] inline void fail(ErrorCode code, const std::string& message) {
    throw EngineError(code, message);
}

// A precondition of the engine's own code, checked in every build as llama.cpp's GGML_ASSERT is:
// a block table gone wrong would quietly corrupt another conversation's cache. Fails with Internal.
#define LLAMADESK_EXPECTS(condition)                                                                  \
    ((condition) ? void(0)                                                                            \
                 : ::llamadesk::fail(::llamadesk::ErrorCode::Internal,                                \
                                     std::string("precondition failed: " #condition " at ") + __FILE__ + \
                                         ":" + std::to_string(__LINE__)))

}  // namespace llamadesk
