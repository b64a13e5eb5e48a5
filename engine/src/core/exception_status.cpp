#include "core/exception_status.h"

#include <new>

#include "core/error.h"

namespace llamadesk {

Status status_from_current_exception() {
    try {
        throw;
    } catch (const EngineError& e) {
        return Status::error(e.code(), e.what());
    } catch (const std::bad_alloc&) {
        return Status::error(ErrorCode::OutOfMemory, "out of memory");
    } catch (const std::exception& e) {
        return Status::error(ErrorCode::Internal, std::string("internal error: ") + e.what());
    } catch (...) {
        return Status::error(ErrorCode::Internal, "internal error: unknown exception");
    }
}

}  // namespace llamadesk
