#!/usr/bin/env bash
# `make check-portable`: the same digits on every platform, checked. Each
# build variant this machine can run is built in build/portable/NAME and
# regenerates every experiment (make study-numbers) into a temporary
# directory, which must hold the committed results/ byte for byte, figures
# and the manifest's build.* rows aside (scripts/compare-results.sh).
#
#   gcc-O0, gcc-O3-native      gcc, unoptimised and with every instruction
#   clang-O0, clang-O3-native  this CPU has (FMA included: contraction is off)
#   gcc-O2-glibc-nofma         glibc told to ignore AVX2 and FMA
#                              (GLIBC_TUNABLES), which changes its libm's
#                              log and pow (bnstudy calls neither) and
#                              its fma; built without num.c's FMA copies
#                              of log and exp (BN_NO_CLONES), so that
#                              they call that fma
#   aarch64                    cross-built with Debian's multiarch packages
#                              and run under qemu-user (another libm,
#                              128-bit long double, fused multiply-add in
#                              every library built for it)
#   i386                       refused at build time with x87 arithmetic,
#                              accepted with SSE2 (a compile check only)
#
# A variant whose compiler, emulator or libraries are missing prints
# "SKIPPED NAME: why" (`bash scripts/deps.sh portable` installs them on
# Debian); with REQUIRE_ALL=1, as CI runs it, a skip is a failure. Prints
# "ok - NAME" or "not ok - NAME" with the diff, then "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."

tmp=$(mktemp -d "${TMPDIR:-/tmp}/bnstudy-portable.XXXXXX") || exit 2
trap 'rm -rf "$tmp"' EXIT

passed=0 failed=0 skipped=0
arm_libdir=/usr/lib/aarch64-linux-gnu/pkgconfig:/usr/share/pkgconfig
nofma=glibc.cpu.hwcaps=-AVX2,-FMA

skip() {
    echo "SKIPPED $1: $2"
    skipped=$((skipped + 1))
    if [ "${REQUIRE_ALL:-0}" = 1 ]; then
        echo "not ok - $1 (REQUIRE_ALL=1)"
        failed=$((failed + 1))
    fi
}

# variant NAME CC CFLAGS [ENV...] [-- RUNNER...]
variant() {
    local name=$1 cc=$2 cflags=$3
    shift 3
    local env=() runner=()
    while [ $# -gt 0 ] && [ "$1" != -- ]; do env+=("$1"); shift; done
    [ $# -gt 0 ] && shift && runner=("$@")
    if ! command -v "$cc" >/dev/null 2>&1; then
        skip "$name" "no $cc"
        return
    fi
    if [ ${#runner[@]} -gt 0 ] && ! command -v "${runner[0]}" >/dev/null 2>&1; then
        skip "$name" "no ${runner[0]}"
        return
    fi
    local dir=build/portable/$name out=$tmp/$name log=$tmp/$name.log
    mkdir -p "$out"
    if ! env "${env[@]}" make -s --no-print-directory BUILD="$dir" BIN="$dir/bnstudy" \
        CC="$cc" CFLAGS="$cflags" "$dir/bnstudy" >"$log" 2>&1; then
        if [ "$name" = aarch64 ] && grep -q 'cannot find' "$log"; then
            skip "$name" "$(grep -m1 'cannot find' "$log")"
        else
            echo "not ok - $name: the build failed"
            sed 's/^/    /' "$log"
            failed=$((failed + 1))
        fi
        return
    fi
    if ! env "${env[@]}" make -s --no-print-directory BIN="$dir/bnstudy" RESULTS="$out" \
        RUNNER="${runner[*]:-}" study-numbers >"$log" 2>&1; then
        echo "not ok - $name: the study did not run"
        sed 's/^/    /' "$log"
        failed=$((failed + 1))
        return
    fi
    if bash scripts/compare-results.sh results "$out" >"$log" 2>&1; then
        echo "ok - $name: every result file is the committed bytes ($(env "${env[@]}" "${runner[@]}" "$dir/bnstudy" --version | grep -E 'compiler|platform' | cut -f2 | paste -sd, -))"
        passed=$((passed + 1))
    else
        echo "not ok - $name: results differ from the committed ones"
        head -n 40 "$log" | sed 's/^/    /'
        failed=$((failed + 1))
    fi
}

variant gcc-O0 gcc -O0
variant gcc-O3-native gcc "-O3 -march=native"
variant clang-O0 clang -O0
variant clang-O3-native clang "-O3 -march=native"

# The tunable must really change glibc's libm here, or the variant tests
# nothing new: say so when it does not (a CPU without FMA, another libc).
probe=$tmp/probe
printf '%s\n' '#include <math.h>' '#include <stdio.h>' '#include <string.h>' \
    'int main(void) { unsigned long long h = 0, b; for (int i = 1; i < 200000; i++) {' \
    '    double y = log(i * 0.6180339887498949 + 1000.5); memcpy(&b, &y, 8); h = (h ^ b) * 1099511628211ULL; }' \
    '    printf("%llx\n", h); return 0; }' > "$probe.c"
if cc -O0 -o "$probe" "$probe.c" -lm 2>/dev/null &&
    [ "$("$probe")" = "$(GLIBC_TUNABLES=$nofma "$probe")" ]; then
    echo "note: GLIBC_TUNABLES=$nofma does not change libm's log on this machine"
fi
variant gcc-O2-glibc-nofma gcc "-O2 -DBN_NO_CLONES" GLIBC_TUNABLES=$nofma

variant aarch64 aarch64-linux-gnu-gcc -O2 PKG_CONFIG_LIBDIR=$arm_libdir \
    -- qemu-aarch64

# i386: the x87 unit's 80-bit intermediates would change the digits, so
# the build refuses it and accepts SSE2 (checked on num.h, which every
# build compiles; it needs only the compiler's own headers).
if echo 'int x;' | gcc -m32 -fsyntax-only -x c - >/dev/null 2>&1; then
    x87=$(gcc -std=c11 -m32 -mfpmath=387 -fsyntax-only -x c src/base/num.h 2>&1)
    if [[ $x87 != *"needs SSE2"* ]]; then
        echo "not ok - i386: an x87 build was not refused"
        failed=$((failed + 1))
    elif ! gcc -std=c11 -m32 -msse2 -mfpmath=sse -fsyntax-only -x c src/base/num.h; then
        echo "not ok - i386: an SSE2 build was refused"
        failed=$((failed + 1))
    else
        echo "ok - i386: x87 refused with a message, SSE2 accepted"
        passed=$((passed + 1))
    fi
else
    skip i386 "gcc cannot target -m32 here"
fi

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
