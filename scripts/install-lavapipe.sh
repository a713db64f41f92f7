#!/usr/bin/env bash
# Mesa's software Vulkan driver (lavapipe) and the Vulkan loader: what the burn-wgpu harness binaries run
# burn's GPU kernels on, on a machine without a GPU. Idempotent: a no-op (a dpkg query, ~10 ms) when both
# packages are installed. Installs with apt-get when run as root (CI); otherwise says what to run.
set -euo pipefail
packages=(mesa-vulkan-drivers libvulkan1)
missing=()
for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ "${#missing[@]}" -eq 0 ] && exit 0
if [ "$(id -u)" -ne 0 ] || ! command -v apt-get >/dev/null; then
    echo "install-lavapipe.sh: missing ${missing[*]}; install them (Debian/Ubuntu: sudo apt-get install -y ${missing[*]})" >&2
    exit 1
fi
echo "install-lavapipe.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >&2
apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
