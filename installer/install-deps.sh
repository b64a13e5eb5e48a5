#!/usr/bin/env bash
# Installs every Debian 12 package LlamaDesk's build, app and tests need. Idempotent.
# (The CUDA backend is built when nvcc is on the machine; the toolkit itself is not installed here.)
set -euo pipefail

packages=(
    cmake ninja-build g++ clang pkg-config git ccache
    libsentencepiece-dev libpcre2-dev
    # the local server's HTTP (llamadesk-server, Settings -> Local server)
    libcpp-httplib-dev
    qt6-base-dev qt6-base-dev-tools qt6-declarative-dev libgl-dev libglx-dev libvulkan-dev
    qml6-module-qtqml qml6-module-qtqml-workerscript qml6-module-qtquick qml6-module-qtquick-window
    qml6-module-qtquick-controls qml6-module-qtquick-templates qml6-module-qtquick-layouts
    qml6-module-qtquick-dialogs qml6-module-qt-labs-settings qml6-module-qtcore qml6-module-qttest
    qml6-module-qt-labs-folderlistmodel
    python3-venv
    qtkeychain-qt6-dev libsecret-1-0
    # the keyring tests' private session (tests/app/keyring-session.sh); dbus-x11 is the session bus
    # gnome-keyring asks for
    gnome-keyring dbus-daemon dbus-x11
)

as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi

missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    echo "installing: ${missing[*]}"
    "${as_root[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
