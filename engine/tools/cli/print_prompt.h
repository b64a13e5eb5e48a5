// llamadesk-cli --print-prompt: the exact text a chat format makes of a list of messages.
#pragma once

#include "cli_options.h"

namespace llamadesk::cli {

void run_print_prompt(const Options& o);

}  // namespace llamadesk::cli
