// llamadesk-cli --remote: --prompt and --chat with a server speaking the OpenAI-compatible API,
// through the window's own client (app/remote/, Qt Network). A build without Qt
// (LLAMADESK_BUILD_APP=OFF) links remote_unavailable.cpp instead, and the engine never needs Qt.
#pragma once

#include "cli_options.h"

namespace llamadesk::cli {

// The program's exit status. Throws EngineError, as the local modes do, on a setup error.
int run_remote(const Options& options, int argc, char** argv);

}  // namespace llamadesk::cli
