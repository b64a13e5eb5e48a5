// llamadesk-cli --list-models and --download: the window's Models page on the command line, through
// the same code (app/library/, Qt Network). A build without Qt (LLAMADESK_BUILD_APP=OFF) links
// library_unavailable.cpp instead.
#pragma once

#include "cli_options.h"

namespace llamadesk::cli {

// The program's exit status: 0 done; 1 failed; 75 (EX_TEMPFAIL) paused (a full disk), which the
// same command resumes; 130 stopped by Ctrl+C, also resumable.
int run_list_models(const Options& options, int argc, char** argv);
int run_download(const Options& options, int argc, char** argv);

}  // namespace llamadesk::cli
