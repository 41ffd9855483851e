#!/usr/bin/env bash
# Install the Debian packages bnstudy needs to build, test and plot, only
# those missing. Uses sudo when not root.
set -euo pipefail

pkgs=(build-essential g++ pkg-config make libgsl-dev libinih-dev
      libcmocka-dev libpcg-cpp-dev nettle-dev gnuplot-nox fonts-dejavu-core python3 python3-numpy
      python3-torch)

missing=()
for p in "${pkgs[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" \
        || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "installing: ${missing[*]}" >&2
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
