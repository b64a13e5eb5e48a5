#!/usr/bin/env bash
# Prints a python3 that can run llama.cpp's OpenAI-compatible server (PyPI llama-cpp-python[server]),
# which the remote engine's tests start on loopback, OpenAI's client (PyPI openai), which the
# local server's tests use, and huggingface_hub, whose own client checks the Models page's test Hub. Uses python3 itself when it already can, else
# installs the packages from PyPI into a virtual environment under build/ (a wheel when PyPI has one
# for this python, else built from source). Prints nothing when no environment can be made; each
# test checks for its package and skips with a message without it.
set -uo pipefail
cd "$(dirname "$0")/.."
if python3 -c 'import llama_cpp.server.app, openai, huggingface_hub' 2>/dev/null; then
    command -v python3
    exit 0
fi
venv=build/test-server-venv
if [ ! -x "$venv/bin/python3" ] && ! python3 -m venv "$venv" >&2; then
    echo "no virtual environment for llama-cpp-python[server] and openai: the tests that use them will skip" >&2
    exit 0
fi
# OpenAI's own client, which the local server's tests (tests/server) speak through: a small wheel.
if ! "$venv/bin/python3" -c 'import openai' 2>/dev/null; then
    timeout 600 "$venv/bin/python3" -m pip install --quiet --prefer-binary openai >&2 ||
        echo "openai did not install: the local server's client tests will skip" >&2
fi
# huggingface_hub: its hf_hub_download and HfApi against tests/library's imitation of the Hub.
if ! "$venv/bin/python3" -c 'import huggingface_hub' 2>/dev/null; then
    timeout 600 "$venv/bin/python3" -m pip install --quiet --prefer-binary huggingface_hub >&2 ||
        echo "huggingface_hub did not install: the test Hub's shape check will skip" >&2
fi
if ! "$venv/bin/python3" -c 'import llama_cpp.server.app' 2>/dev/null; then
    # PyPI alone: these machines reach no other index, and retrying one cost CI about 10 minutes.
    # PyPI has only llama.cpp's source, built here beside ours; the tests' models are tiny, so it is
    # built without its multimodal library and at -O1 (measured: 487 s of CPU against about 900).
    CMAKE_ARGS="-DLLAVA_BUILD=OFF -DCMAKE_C_FLAGS_RELEASE=-O1 -DCMAKE_CXX_FLAGS_RELEASE=-O1" \
        timeout 1200 "$venv/bin/python3" -m pip install --quiet --prefer-binary 'llama-cpp-python[server]' >&2 ||
        echo "llama-cpp-python[server] did not install: the real-server tests will skip" >&2
fi
echo "$PWD/$venv/bin/python3"
