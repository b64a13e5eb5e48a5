#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and starts LlamaDesk.
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh
bash installer/build.sh
if [ -x build/app/llamadesk ]; then
    exec build/app/llamadesk "$@"
fi
# A build without the window (-DLLAMADESK_BUILD_APP=OFF): the command-line chat on the built-in model.
exec build/engine/tools/cli/llamadesk-cli --chat "$@"
