#!/usr/bin/env bash
# Find what bnstudy needs, and install only what is missing.
#   deps.sh build    a C compiler, make, pkg-config, libinih, nettle
#   deps.sh unit     the above and GSL and cmocka: building the unit tests
#   deps.sh study    the build's and gnuplot (and the DejaVu font the figures
#                    name; without it cairo draws them in another font)
#   deps.sh test     the study's and GSL, cmocka, PCG's pcg_random.hpp, a C++
#                    compiler, python3 and numpy (PyTorch too if the system
#                    packages it: the peer test runs when it is there; GNU
#                    parallel too, for the sharding recipe's test, and the
#                    browser test's emscripten, Chromium, node and npm)
#   deps.sh all      the same as test
#   deps.sh quick    what make test-quick needs: the unit tests' and the
#                    study's, PCG's header, python3; no PyTorch, no browser
#   deps.sh fuzz     clang and its libFuzzer, for `make fuzz` (CI runs it)
#   deps.sh web      the build's and emscripten: make web, the page
#   deps.sh browser  web's and Chromium, node and npm: the browser test
#   deps.sh portable what make check-portable builds with: clang, and
#                    for aarch64 a cross compiler, qemu-user and the arm64
#                    libraries (Debian only: it adds the arm64 architecture
#                    to dpkg)
#   deps.sh slurm    Slurm (slurm-wlm) and munge, for make test-slurm's
#                    one-node cluster (Debian only)
#   deps.sh --check GROUP   install nothing: print one line naming what is
#                    missing and how to install it, exit 2 if anything is
#
# What is there is found the way the build finds it (pkg-config for
# libraries, the compiler for headers, PATH for tools), whatever installed
# it; when nothing is missing nothing is run. Otherwise the missing
# packages are installed with apt-get, dnf, pacman or Homebrew, whichever
# is present (through sudo when not root, except Homebrew). A plain user
# without sudo gets the one command to run as root instead, and so does
# NO_INSTALL=1. docs/building.md lists the package names for each system.
#
# Runs under bash 3.2 (macOS's): an empty array is expanded as
# ${a[@]+"${a[@]}"}, which bash before 4.4 needs under set -u.
set -uo pipefail

check_only=0
if [ "${1:-}" = --check ]; then
    check_only=1
    shift
fi
group=${1:-all}
case "$group" in
    build | unit | study | quick | test | all | fuzz | web | browser) ;;
    portable | slurm) ;;
    *) echo "deps.sh: unknown group '$group' (build, unit, study, quick, test, all, fuzz, web, browser, portable, slurm)" >&2; exit 2 ;;
esac

# debian_only WHAT PKG...: packages of a group that only Debian's names
# are known for, installed with apt-get (through sudo when not root), or
# named in one line with the command to run as root, and exit 2.
debian_only() {
    local what=$1 sudo="" arch=""
    shift
    [ "$group" != portable ] || arch="dpkg --add-architecture arm64 && "
    if [ "$check_only" = 1 ] || [ "${NO_INSTALL:-0}" = 1 ] || ! command -v apt-get >/dev/null 2>&1 ||
       { [ "$(id -u)" -ne 0 ] && ! command -v sudo >/dev/null 2>&1; }; then
        echo "bnstudy: $what need $* (Debian packages; as root: ${arch}apt-get update && apt-get install $*)" >&2
        exit 2
    fi
    [ "$(id -u)" -eq 0 ] || sudo="sudo"
    echo "installing: $*" >&2
    [ -z "$arch" ] || dpkg --print-foreign-architectures | grep -qx arm64 ||
        $sudo dpkg --add-architecture arm64
    $sudo apt-get update -qq &&
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
            --no-install-recommends "$@" >&2
    exit
}

if [ "$group" = portable ]; then
    arm=(libinih-dev:arm64 nettle-dev:arm64)
    pkgs=(clang qemu-user gcc-aarch64-linux-gnu libc6-dev-arm64-cross "${arm[@]}")
    missing=()
    for p in "${pkgs[@]}"; do
        dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
            missing+=("$p")
    done
    [ ${#missing[@]} -eq 0 ] && exit 0
    debian_only "check-portable's variants" "${missing[@]}"
fi

# tests/slurm.sh's one-node cluster: the daemons, the clients the recipe
# calls, and munge, found on PATH or in the sbin directories a user that
# is not root may not have on it.
if [ "$group" = slurm ]; then
    for t in sbatch squeue sinfo scontrol scancel slurmctld slurmd munged; do
        PATH=$PATH:/usr/sbin:/sbin command -v "$t" >/dev/null 2>&1 ||
            debian_only "the Slurm test's cluster and its recipe" slurm-wlm munge
    done
    exit 0
fi

# The package manager, and each component's package name under it (one
# word each; "-" where the manager has none).
pm=none
for m in apt-get dnf pacman brew; do
    if command -v "$m" >/dev/null 2>&1; then pm=$m; break; fi
done
pkg() { # pkg COMPONENT: its package under $pm
    local apt dnf pac brew
    case "$1" in
        cc)        apt=build-essential   dnf=gcc               pac=gcc            brew=- ;;
        make)      apt=make              dnf=make              pac=make           brew=make ;;
        pkgconfig) apt=pkg-config        dnf=pkgconf-pkg-config pac=pkgconf       brew=pkg-config ;;
        gsl)       apt=libgsl-dev        dnf=gsl-devel         pac=gsl            brew=gsl ;;
        inih)      apt=libinih-dev       dnf=inih-devel        pac=libinih        brew=inih ;;
        nettle)    apt=nettle-dev        dnf=nettle-devel      pac=nettle         brew=nettle ;;
        gnuplot)   apt=gnuplot-nox       dnf=gnuplot           pac=gnuplot        brew=gnuplot ;;
        font)      apt=fonts-dejavu-core dnf=dejavu-sans-fonts pac=ttf-dejavu     brew=font-dejavu ;;
        cmocka)    apt=libcmocka-dev     dnf=libcmocka-devel   pac=cmocka         brew=cmocka ;;
        pcg)       apt=libpcg-cpp-dev    dnf=pcg-cpp-devel     pac=pcg-cpp        brew=- ;;
        cxx)       apt=g++               dnf=gcc-c++           pac=gcc            brew=- ;;
        python3)   apt=python3           dnf=python3           pac=python         brew=python ;;
        numpy)     apt=python3-numpy     dnf=python3-numpy     pac=python-numpy   brew=numpy ;;
        torch)     apt=python3-torch     dnf=python3-torch     pac=python-pytorch brew=pytorch ;;
        clang)     apt=clang             dnf=clang             pac=clang          brew=llvm ;;
        fuzzer)    apt=libclang-rt-dev   dnf=compiler-rt       pac=compiler-rt    brew=llvm ;;
        emcc)      apt=emscripten        dnf=emscripten        pac=emscripten     brew=emscripten ;;
        chromium)  apt=chromium          dnf=chromium          pac=chromium       brew=- ;;
        node)      apt=nodejs            dnf=nodejs            pac=nodejs         brew=node ;;
        npm)       apt=npm               dnf=npm               pac=npm            brew=- ;;
        parallel)  apt=parallel          dnf=parallel          pac=parallel       brew=parallel ;;
    esac
    case "$pm" in
        apt-get) echo "$apt" ;;
        dnf) echo "$dnf" ;;
        pacman) echo "$pac" ;;
        brew) echo "$brew" ;;
        *) echo - ;;
    esac
}

# present COMPONENT: is it usable as the build and the tests will use it?
present() {
    case "$1" in
        cc) command -v "${CC:-cc}" >/dev/null 2>&1 ;;
        make) command -v make >/dev/null 2>&1 ;;
        pkgconfig) command -v pkg-config >/dev/null 2>&1 ;;
        gsl | inih | nettle | cmocka)
            command -v pkg-config >/dev/null 2>&1 && pkg-config --exists "$1" ;;
        gnuplot) command -v "${GNUPLOT:-gnuplot}" >/dev/null 2>&1 ;;
        font) command -v fc-list >/dev/null 2>&1 &&
            [ -n "$(fc-list 'DejaVu Sans' 2>/dev/null)" ] ;;
        cxx) command -v "${CXX:-c++}" >/dev/null 2>&1 ;;
        pcg) command -v "${CXX:-c++}" >/dev/null 2>&1 &&
            echo '#include <pcg_random.hpp>' |
            "${CXX:-c++}" -std=c++11 -fsyntax-only -x c++ - >/dev/null 2>&1 ;;
        python3) command -v python3 >/dev/null 2>&1 ;;
        numpy) "${PEER_PYTHON:-/usr/bin/python3}" -c 'import numpy' >/dev/null 2>&1 ;;
        torch) "${PEER_PYTHON:-/usr/bin/python3}" -c 'import torch' >/dev/null 2>&1 ;;
        clang) command -v "${FUZZ_CC:-clang}" >/dev/null 2>&1 ;;
        fuzzer) echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n) { return !d + !n; }' |
            "${FUZZ_CC:-clang}" -fsanitize=fuzzer -x c - -o /dev/null >/dev/null 2>&1 ;;
        emcc) command -v "${EMCC:-emcc}" >/dev/null 2>&1 ;;
        chromium) [ -n "${CHROMIUM:-}" ] || command -v chromium >/dev/null 2>&1 ||
            command -v chromium-browser >/dev/null 2>&1 ;;
        node | npm) command -v "$1" >/dev/null 2>&1 ;;
        # moreutils has a `parallel` of its own, with other options.
        parallel) parallel --version 2>/dev/null | grep -q '^GNU parallel' ;;
    esac
}

need=(cc make pkgconfig inih nettle)
optional=()
case "$group" in
    unit) need+=(gsl cmocka) ;;
    study) need+=(gnuplot); optional+=(font) ;;
    quick) need+=(gnuplot gsl cmocka cxx pcg python3); optional+=(font) ;;
    test | all) need+=(gnuplot gsl cmocka cxx pcg python3 numpy)
        optional+=(font torch parallel emcc chromium node npm) ;;
    fuzz) need+=(clang fuzzer) ;;
    web) need+=(emcc) ;;
    browser) need+=(emcc chromium node npm) ;;
esac

missing=() missing_opt=()
for c in "${need[@]}"; do present "$c" || missing+=("$c"); done
for c in ${optional[@]+"${optional[@]}"}; do present "$c" || missing_opt+=("$c"); done
[ ${#missing[@]} -eq 0 ] && [ ${#missing_opt[@]} -eq 0 ] && exit 0

names() { # the package names of the given components under $pm
    local out=() c p
    for c in "$@"; do
        p=$(pkg "$c")
        [ "$p" = - ] || out+=("$p")
    done
    [ ${#out[@]} -gt 0 ] && printf '%s\n' "${out[@]}" | sort -u | tr '\n' ' ' | sed 's/ $//'
    return 0
}

# The one command that installs packages with $pm, as root would type it.
root_command() {
    case "$pm" in
        apt-get) echo "apt-get update && apt-get install -y --no-install-recommends $*" ;;
        dnf) echo "dnf install -y $*" ;;
        pacman) echo "pacman -S --needed $*" ;;
        brew) echo "brew install $*" ;;
    esac
}

# Not root, no sudo: nothing can be installed from here, so say exactly
# what to run as root (optional packages included: they are what the
# tests would have installed).
no_sudo=0
[ "$(id -u)" -ne 0 ] && [ "$pm" != brew ] && [ "$pm" != none ] &&
    ! command -v sudo >/dev/null 2>&1 && no_sudo=1

if [ "$check_only" = 1 ] || [ "${NO_INSTALL:-0}" = 1 ] || [ "$pm" = none ] ||
   { [ "$no_sudo" = 1 ] && [ ${#missing[@]} -gt 0 ]; }; then
    [ ${#missing[@]} -eq 0 ] && exit 0
    how="docs/building.md names the packages"
    list=$(names "${missing[@]}")
    deps="make deps"
    case "$group" in web | browser) deps="bash scripts/deps.sh $group" ;; esac
    if [ "$no_sudo" = 1 ] && [ -n "$list" ]; then
        all=$(names "${missing[@]}" ${missing_opt[@]+"${missing_opt[@]}"})
        how="you are not root and there is no sudo; as root, run: $(root_command "$all")"
    elif [ "$pm" != none ] && [ -n "$list" ]; then
        how="install $list with $pm, or run $deps"
    fi
    echo "bnstudy: cannot find ${missing[*]}: $how" >&2
    exit 2
fi
# Only optional packages are missing and nothing can install them: go on
# without them (the suites that need them say SKIPPED and why).
if [ "$no_sudo" = 1 ]; then
    echo "bnstudy: not installed (not root, no sudo): $(names "${missing_opt[@]}"); as root: $(root_command "$(names "${missing_opt[@]}")")" >&2
    exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || [ "$pm" = brew ] || sudo="sudo"
want=$(names ${missing[@]+"${missing[@]}"} ${missing_opt[@]+"${missing_opt[@]}"})
[ -z "$want" ] && exit 0
echo "installing with $pm: $want" >&2
# Optional packages may not exist on every release: a failure to get them
# is reported, not fatal; the required ones must install.
install() {
    case "$pm" in
        apt-get)
            $sudo apt-get update -qq &&
                DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
                    --no-install-recommends "$@" >&2 ;;
        dnf) $sudo dnf install -y "$@" >&2 ;;
        pacman) $sudo pacman -S --needed --noconfirm "$@" >&2 ;;
        brew) brew install "$@" >&2 ;;
    esac
}
# shellcheck disable=SC2086
if ! install $want; then
    req=$(names ${missing[@]+"${missing[@]}"})
    # shellcheck disable=SC2086
    [ -n "$req" ] && ! install $req && {
        echo "deps.sh: could not install $req with $pm" >&2
        exit 2
    }
    echo "deps.sh: optional packages not installed: $(names ${missing_opt[@]+"${missing_opt[@]}"})" >&2
fi
exit 0
