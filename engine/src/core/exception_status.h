// The library boundary: turns whatever was thrown inside the engine into a Status.
#pragma once

#include "core/status.h"

namespace llamadesk {

// Call only inside a catch block: classifies the exception being handled (EngineError keeps its
// code, std::bad_alloc becomes OutOfMemory, anything else Internal).
Status status_from_current_exception();

}  // namespace llamadesk
