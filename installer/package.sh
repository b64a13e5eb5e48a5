#!/usr/bin/env bash
# Builds the Debian packages into build-package/: llamadesk_<version>_amd64.deb (the programs, CPU
# backend) and, where nvcc is installed, llamadesk-cuda_<version>_amd64.deb (the CUDA backend module):
#   bash installer/package.sh
# Install with: sudo apt install ./build-package/llamadesk_*_amd64.deb
# (llamadesk-cuda needs NVIDIA's CUDA runtime and cuBLAS packages from NVIDIA's repository.)
set -euo pipefail
cd "$(dirname "$0")/.."
bash installer/install-deps.sh
as_root=()
if [ "$(id -u)" -ne 0 ]; then as_root=(sudo); fi
missing=()
for p in dpkg-dev fakeroot file librsvg2-bin; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
    "${as_root[@]}" apt-get update
    DEBIAN_FRONTEND=noninteractive "${as_root[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
fi
cmake -S . -B build-package -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX=/usr \
    -DLLAMADESK_PACKAGE=ON -DLLAMADESK_BUILD_TESTS=OFF
cmake --build build-package --parallel "$(nproc)"
(cd build-package && cpack)
ls build-package/*.deb
