#!/usr/bin/env bash
# keyring-session.sh MODE TEST...: runs a test on a private D-Bus session bus with its own GNOME
# Keyring in a throw-away home, so it never touches the keyring of the person running it.
#   unlocked: the keyring is created and unlocked, and takes keys;
#   refusing: the keyring is started on demand, locked, with no one to unlock it.
# The test learns the mode from LLAMADESK_TEST_KEYRING; without dbus-run-session or
# gnome-keyring-daemon it runs without it and skips its keyring cases.
set -euo pipefail
mode=$1
shift
if ! command -v dbus-run-session >/dev/null || ! command -v gnome-keyring-daemon >/dev/null; then
    echo "keyring-session: dbus-run-session or gnome-keyring-daemon missing; the keyring cases skip"
    exec "$@"
fi
home=$(mktemp -d)
trap 'rm -rf "$home"' EXIT
mkdir -m 700 "$home/run"
export HOME=$home XDG_DATA_HOME=$home/data XDG_RUNTIME_DIR=$home/run XDG_CONFIG_HOME=$home/config
# No display: a locked keyring cannot show its unlock prompt, so it refuses at once.
unset DISPLAY WAYLAND_DISPLAY LLAMADESK_KEYRING
export LLAMADESK_TEST_KEYRING=$mode
case "$mode" in
    unlocked) dbus-run-session -- bash -c \
        'printf test-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null && exec "$@"' \
        keyring-session "$@" ;;
    refusing) dbus-run-session -- "$@" ;;
    *) echo "keyring-session: unknown mode $mode" >&2; exit 2 ;;
esac
