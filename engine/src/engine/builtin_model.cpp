#include "llamadesk/builtin_model.h"

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace llamadesk {

std::string builtin_model_path() {
    if (const char* chosen = std::getenv("LLAMADESK_BUILTIN_MODEL"); chosen != nullptr && *chosen != '\0')
        return chosen;
    namespace fs = std::filesystem;
    std::error_code ec;
    const fs::path exe = fs::read_symlink("/proc/self/exe", ec);
    if (ec) return {};
    for (const fs::path& candidate : {exe.parent_path() / kBuiltinModelFile,
                                      exe.parent_path().parent_path() / "share" / "llamadesk" / kBuiltinModelFile})
        if (fs::is_regular_file(candidate, ec)) return candidate.string();
    return {};
}

}  // namespace llamadesk
