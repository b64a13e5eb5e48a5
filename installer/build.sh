#!/usr/bin/env bash
# Configures and builds LlamaDesk into build/ (extra arguments go to cmake's configure step).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -G Ninja "$@"
cmake --build build --parallel "$(nproc)"
