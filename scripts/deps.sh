#!/usr/bin/env bash
# Install the Debian packages bnstudy needs, only those missing, with
# apt-get (through sudo when not root).
#   deps.sh study   building bnstudy, running the study, drawing the figures
#   deps.sh test    the above and the tests' (cmocka, pcg_random.hpp, and
#                   PyTorch and numpy for the peer test)
#   deps.sh         everything (the same as test)
set -euo pipefail

study=(build-essential pkg-config libgsl-dev libinih-dev nettle-dev
       gnuplot-nox fonts-dejavu-core)
test=(libcmocka-dev libpcg-cpp-dev python3 python3-numpy python3-torch)

case "${1:-all}" in
    study) pkgs=("${study[@]}") ;;
    test | all) pkgs=("${study[@]}" "${test[@]}") ;;
    *) echo "deps.sh: unknown group '$1' (study, test, all)" >&2; exit 2 ;;
esac

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
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}" >&2
