#!/usr/bin/env bash
# Builds the .debs, installs llamadesk with apt, checks it as a user would meet it, and removes it
# again: the window (offscreen), the CLI and the server answer from the built-in model with an empty HOME and no
# ../shared, and say why they run on the CPU without llamadesk-cuda; lintian finds no errors, the
# desktop entry and AppStream data validate. Where nvcc built llamadesk-cuda too, its module is
# checked from the unpacked package (NVIDIA's runtime packages are not in Debian, so apt cannot
# install it here): lintian, its Depends, and that the installed programs open it. Needs root (or
# sudo) for apt. Run by CI after the tests.
set -euo pipefail
cd "$(dirname "$0")/.."
as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
bash installer/package.sh
deb=$(ls "$PWD"/build-package/llamadesk_*_amd64.deb)
DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends \
    lintian desktop-file-utils appstream "$deb"
trap 'DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get remove -y llamadesk' EXIT

home=$(mktemp -d)
# From / with an empty HOME: no source tree, no ../shared, no settings.
window=$(cd / && env -i PATH=/usr/bin:/bin HOME="$home" QT_QPA_PLATFORM=offscreen \
    LLAMADESK_SHARED_DIR=/nonexistent llamadesk --screenshot "$home/window.png" \
    --prompt "How do I start a new conversation?")
echo "$window"
grep -q "Ctrl+N" <<<"$window" || { echo "the window's answer does not come from the built-in model"; exit 1; }
test -s "$home/window.png"
cli=$(cd / && env -i PATH=/usr/bin:/bin HOME="$home" llamadesk-cli --temperature 0 -n 64 \
    --prompt "[INST] What is the shortcut to open a model? [/INST]" 2>"$home/cli.log")
cat "$home/cli.log"
echo "$cli"
grep -q "Ctrl+O" <<<"$cli" || { echo "llamadesk-cli's answer does not come from the built-in model"; exit 1; }
grep -q "CUDA unavailable: the CUDA module is not installed" "$home/cli.log" ||
    { echo "without llamadesk-cuda, the CPU backend does not say why"; exit 1; }

# The installed server answers over HTTP from the built-in model, and says where it listens.
(cd / && exec env -i PATH=/usr/bin:/bin HOME="$home" llamadesk-server --port 0 >"$home/server.out" \
    2>"$home/server.log") &
server_pid=$!
answer=$(python3 - "$home/server.out" <<'PY'
import json, sys, time, urllib.request
for _ in range(300):
    line = open(sys.argv[1]).readline()
    if line.startswith("listening on "):
        break
    time.sleep(0.1)
base = line.split()[-1]
for _ in range(300):
    try:
        if urllib.request.urlopen(base[:-3] + "/health").status == 200:
            break
    except OSError:
        time.sleep(0.1)
body = json.dumps({"messages": [{"role": "user", "content": "How do I start a new conversation?"}],
                   "temperature": 0, "max_tokens": 64}).encode()
reply = urllib.request.urlopen(urllib.request.Request(base + "/chat/completions", body,
                                                      {"Content-Type": "application/json"}))
print(json.load(reply)["choices"][0]["message"]["content"])
PY
)
kill "$server_pid"
wait "$server_pid" || true
cat "$home/server.log"
echo "$answer"
grep -q "Ctrl+N" <<<"$answer" || { echo "llamadesk-server's answer does not come from the built-in model"; exit 1; }

lintian --fail-on error --suppress-tags no-manual-page "$deb"
desktop-file-validate /usr/share/applications/org.llamadesk.LlamaDesk.desktop
appstreamcli validate --no-net /usr/share/metainfo/org.llamadesk.LlamaDesk.metainfo.xml
echo "package checked: $(basename "$deb")"

cuda_deb=$(ls "$PWD"/build-package/llamadesk-cuda_*_amd64.deb 2>/dev/null || true)
if [ -z "$cuda_deb" ]; then
    echo "no llamadesk-cuda package: this machine has no nvcc"
    exit 0
fi
lintian --fail-on error --suppress-tags no-manual-page "$cuda_deb"
depends=$(dpkg-deb -f "$cuda_deb" Depends)
echo "llamadesk-cuda Depends: $depends"
for d in "llamadesk (= " cuda-cudart- libcublas-; do
    grep -qF "$d" <<<"$depends" || { echo "llamadesk-cuda does not depend on $d"; exit 1; }
done
unpacked=$(mktemp -d)
dpkg-deb -x "$cuda_deb" "$unpacked"
module=$(ls "$unpacked"/usr/lib/*/llamadesk/libllamadesk-cuda.so)
# The installed programs open the packaged module: it loads, matches them, and either runs or says
# why the device cannot (this machine may have no GPU).
(cd / && env -i PATH=/usr/bin:/bin HOME="$home" LLAMADESK_CUDA_MODULE="$module" llamadesk-cli --backend cuda \
    --temperature 0 -n 8 --prompt "[INST] Hello [/INST]" >/dev/null 2>"$home/cuda.log")
cat "$home/cuda.log"
if grep -qE "cannot be loaded|not a LlamaDesk CUDA module|was built for|not installed" "$home/cuda.log"; then
    echo "the installed programs do not open the packaged CUDA module"
    exit 1
fi
echo "package checked: $(basename "$cuda_deb")"
