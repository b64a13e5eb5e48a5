#!/usr/bin/env bash
# Builds the .deb, installs it with apt, checks it as a user would meet it, and removes it again:
# the window (offscreen) and the CLI answer from the built-in model with an empty HOME and no
# ../shared, lintian finds no errors, the desktop entry and AppStream data validate. Needs root
# (or sudo) for apt. Run by CI after the tests.
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
    --prompt "[INST] What is the shortcut to open a model? [/INST]")
echo "$cli"
grep -q "Ctrl+O" <<<"$cli" || { echo "llamadesk-cli's answer does not come from the built-in model"; exit 1; }

lintian --fail-on error --suppress-tags no-manual-page "$deb"
desktop-file-validate /usr/share/applications/org.llamadesk.LlamaDesk.desktop
appstreamcli validate --no-net /usr/share/metainfo/org.llamadesk.LlamaDesk.metainfo.xml
echo "package checked: $(basename "$deb")"
