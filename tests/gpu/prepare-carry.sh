#!/usr/bin/env bash
# Run HERE (the development machine), right before the device call of run-all.sh. Fills
# build-gpu-carry/ (ignored by git through /build*/; it travels only because the run call names it
# in `carry`) with what the H200 image may lack, since nothing can be downloaded there:
#   debs/    Debian 12 packages of Qt 6 Core+Test (with moc), SentencePiece and pkgconf, unpacked
#            there into a private prefix, never into /
#   shared/  a transport copy of the one reference model the GPU tests read (stories260K), which
#            run-all.sh points LLAMADESK_SHARED_DIR at. Not part of the project: delete it after
#            the call (rm -rf build-gpu-carry).
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
shared=${LLAMADESK_SHARED_DIR:-$root/../shared}
carry=$root/build-gpu-carry

mkdir -p "$carry/debs" "$carry/shared/models/stories260K"
(cd "$carry/debs" && apt-get download \
    qt6-base-dev qt6-base-dev-tools qmake6 qmake6-bin libqt6core6 libqt6test6 \
    libicu72 libdouble-conversion3 libb2-1 libpcre2-16-0 libglib2.0-0 \
    libsentencepiece-dev libsentencepiece0 libprotobuf-lite32 pkgconf pkgconf-bin libpkgconf3)
cp "$shared/models/stories260K/stories260K.bin" "$shared/models/stories260K/tok512.model" \
   "$carry/shared/models/stories260K/"
du -sh "$carry"
