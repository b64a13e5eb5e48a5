#!/usr/bin/env bash
# Sets everything up on a fresh Debian 12 machine, builds, and starts LlamaDesk.
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh
bash installer/build.sh
if [ -x build/app/llamadesk ]; then
    exec build/app/llamadesk "$@"
fi
# Until the window lands: the command-line chat on the small reference model.
exec build/engine/tools/llamadesk-cli --model ../shared/models/stories260K --chat "$@"
