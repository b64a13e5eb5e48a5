#include "core/error.h"
#include "remote_mode.h"

namespace llamadesk::cli {

int run_remote(const Options&, int, char**) {
    fail(ErrorCode::Unsupported,
         "this llamadesk-cli was built without Qt Network (LLAMADESK_BUILD_APP=OFF), so --remote is not available");
}

}  // namespace llamadesk::cli
