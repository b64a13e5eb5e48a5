#include "core/error.h"
#include "library_mode.h"

namespace llamadesk::cli {

namespace {

[[noreturn]] void unavailable(const char* option) {
    fail(ErrorCode::Unsupported, std::string("this llamadesk-cli was built without Qt Network (LLAMADESK_BUILD_APP=OFF), so ") +
                                     option + " is not available");
}

}  // namespace

int run_list_models(const Options&, int, char**) { unavailable("--list-models"); }
int run_download(const Options&, int, char**) { unavailable("--download"); }

}  // namespace llamadesk::cli
