// Inside the engine, failures are exceptions carrying an ErrorCode; Engine's public methods catch
// them at the library boundary and return a Status.
#pragma once

#include <stdexcept>
#include <string>

#include "llamadesk/engine.h"

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

}  // namespace llamadesk
