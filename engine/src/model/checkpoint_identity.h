// Which checkpoint is on disk, cheaply: enough to tell whether KV blocks saved in an earlier run
// were computed with these very weights, without reading gigabytes.
#pragma once

#include <string>

namespace llamadesk {

// For a file: its size and checksums of its first and last MiB. For a folder (Meta, Hugging Face):
// the same for every regular file in it, in name order, each with its name. Throws
// EngineError(FileNotFound) when the path cannot be read.
std::string checkpoint_identity(const std::string& path);

}  // namespace llamadesk
