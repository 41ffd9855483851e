#!/usr/bin/env bash
# Fault injection over a whole sweep, as SQLite tests itself (src/base/fault.h):
# with the program built with BN_FAULT under the sanitizers, fail the k-th
# allocation, then the k-th file-system change (ENOSPC, a full disk), for
# every k the sweep reaches, and kill the process at each change. After
# every failure: exit status 2, one line on stderr, the previous result set
# intact byte for byte and nothing else left beside it. After every kill:
# the old set or the new one, whole, and the next sweep cleans up. Then a
# real full disk, a small tmpfs, when this machine lets us mount one.
#   faults.sh [BNSTUDY] [FAULT_BNSTUDY]
# Prints one line per walk and "N passed, N failed".
set -uo pipefail
cd "$(dirname "$0")/.."
bin=$(realpath "${1:-./bnstudy}")
fault=$(realpath "${2:-build/fault/bnstudy}")
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pass=0 fail=0
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}

# Twelve configurations, many seeds: every output file, the many-seed ones
# included. The walked sweep changes momentum, so old and new differ.
cat > "$work/walk.ini" <<'EOF'
[experiment]
description = the fault walk
[population]
rows = 64
[sweep]
batch_size = 8 32
order = shuffled sorted
seed = 1..3
EOF
# The reference sets come from the fault build itself: its manifest names
# the flags it was built with.
out=$work/out
new=(--set layer.momentum=0.5)
"$fault" sweep "$work/walk.ini" --out "$out" --jobs 1 || exit 2
cp -r "$out/walk" "$work/old"
"$fault" sweep "$work/walk.ini" --out "$work/ref" "${new[@]}" --jobs 1 || exit 2
cp -r "$work/ref/walk" "$work/new"
if diff -rq "$work/old" "$work/new" >/dev/null; then
    echo "faults.sh: the old and the new result sets do not differ" >&2
    exit 2
fi

# What --out holds must be the result set alone: no temporary directory,
# no lock, no stray file.
only_the_set() {
    [ "$(ls -A "$out")" = walk ]
}

# The k-th fault of one kind, with the new settings.
faulty() {
    local kind=$1 k=$2 jobs=$3
    # In a subshell that says nothing of the kills.
    (env "BN_FAULT_$kind=$k" "$fault" sweep "$work/walk.ini" --out "$out" \
        "${new[@]}" --jobs "$jobs" > "$work/stdout" 2> "$work/stderr"
     exit $?) 2> /dev/null
}

# How many allocations and changes a clean sweep over the old set makes;
# a walk goes one past (twice as far at most, when threads change the
# count).
cp -r "$out" "$work/count-out"
BN_FAULT_COUNT=$work/count "$fault" sweep "$work/walk.ini" --out "$work/count-out" \
    "${new[@]}" --jobs 1 || exit 2
# The count of one kind ("alloc", "io"): a lookup in the file, not an
# associative array, which bash 3.2 (macOS's) does not have.
count_of() { awk -v k="$1" '$1 == k { print $2 }' "$work/count"; }

# Fail each allocation, or each change, in turn: until the sweep gets
# through because k is past the last one.
walk() {
    local kind=$1 jobs=$2 k=0 st problems=0 hits=0 max
    max=$((2 * $(count_of "$(echo "$kind" | tr A-Z a-z)") + 2))
    while :; do
        k=$((k + 1))
        if [ "$k" -gt "$max" ]; then
            echo "  BN_FAULT_$kind: still failing at k=$k"
            problems=$((problems + 1))
            break
        fi
        faulty "$kind" "$k" "$jobs"
        st=$?
        if [ "$st" -eq 0 ]; then
            # Past the last fault point: the new set, then the old again.
            diff -rq "$out/walk" "$work/new" > /dev/null && only_the_set ||
                { echo "  k=$k: a clean run did not leave the new set"; problems=$((problems + 1)); }
            rm -rf "$out/walk" && cp -r "$work/old" "$out/walk"
            break
        fi
        hits=$((hits + 1))
        local why=""
        if [ "$st" -ne 2 ]; then
            why="exit status $st"
        elif [ "$(wc -l < "$work/stderr")" -ne 1 ] ||
             ! grep -q '^bnstudy sweep: ' "$work/stderr"; then
            why="stderr is not one message"
        elif [ -s "$work/stdout" ]; then
            why="something on stdout"
        elif ! diff -r "$out/walk" "$work/old" > /dev/null; then
            why="the previous results changed"
        elif ! only_the_set; then
            why="left behind: $(ls -A "$out" | tr '\n' ' ')"
        fi
        if [ -n "$why" ]; then
            problems=$((problems + 1))
            echo "  BN_FAULT_$kind=$k: $why"
            sed 's/^/    /' "$work/stderr" | head -n 20
            rm -rf "$out" && mkdir -p "$out" && cp -r "$work/old" "$out/walk"
        fi
    done
    # On one thread the sweep makes the same allocations and changes every
    # time: each must have failed it.
    local want=$(count_of "$(echo "$kind" | tr A-Z a-z)")
    if [ "$jobs" -eq 1 ] && [ -z "${BN_FAULT_NO_EXCHANGE:-}" ] &&
       [ "$hits" -ne "$want" ]; then
        echo "  BN_FAULT_$kind: $hits faults failed the sweep, of $want"
        problems=$((problems + 1))
    fi
    if [ "$problems" -eq 0 ] && [ "$hits" -gt 0 ]; then
        pass=$((pass + 1))
        echo "ok   BN_FAULT_$kind=1..$hits, --jobs $jobs${BN_FAULT_NO_EXCHANGE:+, two renames}: exit 2, one message, old results intact, nothing left"
    else
        fail=$((fail + 1))
        echo "FAIL BN_FAULT_$kind, --jobs $jobs${BN_FAULT_NO_EXCHANGE:+, two renames}: $problems of $hits faults misbehaved"
    fi
}

walk ALLOC 1
walk ALLOC 2
walk IO 1
walk IO 2
BN_FAULT_NO_EXCHANGE=1 walk IO 1

# A kill at each change: the target holds the old set or the new one,
# whole; then a sweep of the old settings removes what the killed one left
# and puts the old set back. Swapped by two renames, a kill between them
# leaves the old set aside under .walk.old-XXXXXX, which the next sweep
# puts back.
kill_walk() {
problems=0 kills=0 k=0
while [ "$k" -le "$((2 * $(count_of io) + 2))" ]; do
    k=$((k + 1))
    faulty KILL "$k" 1
    st=$?
    [ "$st" -eq 0 ] && break
    kills=$((kills + 1))
    if [ "$st" -ne 137 ]; then
        echo "  BN_FAULT_KILL=$k: exit status $st, not a kill"
        problems=$((problems + 1))
    elif ! diff -rq "$out/walk" "$work/old" > /dev/null 2>&1 &&
         ! diff -rq "$out/walk" "$work/new" > /dev/null 2>&1 &&
         ! { [ -n "${BN_FAULT_NO_EXCHANGE:-}" ] && [ ! -e "$out/walk" ] &&
             diff -rq "$out"/.walk.old-* "$work/old" > /dev/null 2>&1; }; then
        echo "  BN_FAULT_KILL=$k: neither the old set nor the new"
        problems=$((problems + 1))
    fi
    "$fault" sweep "$work/walk.ini" --out "$out" --jobs 1 2> "$work/stderr"
    if [ $? -ne 0 ] || ! diff -rq "$out/walk" "$work/old" > /dev/null ||
       ! only_the_set; then
        echo "  BN_FAULT_KILL=$k: the next sweep did not clean up: $(ls -A "$out" | tr '\n' ' ')$(cat "$work/stderr")"
        problems=$((problems + 1))
        rm -rf "$out" && mkdir -p "$out" && cp -r "$work/old" "$out/walk"
    fi
done
if [ "$problems" -eq 0 ] && [ "$kills" -gt 0 ]; then
    pass=$((pass + 1))
    echo "ok   BN_FAULT_KILL=1..$kills${BN_FAULT_NO_EXCHANGE:+, two renames}: old or new set, and the next sweep cleans up"
else
    fail=$((fail + 1))
    echo "FAIL BN_FAULT_KILL${BN_FAULT_NO_EXCHANGE:+, two renames}: $problems of $kills kills misbehaved"
fi
}
kill_walk
BN_FAULT_NO_EXCHANGE=1 kill_walk

# A real full disk: a tmpfs of 256 KiB holds the small set and its
# replacement's temporary copy, not a sweep of 40 seeds.
full_disk() {
    local disk=$1
    "$bin" sweep "$work/walk.ini" --out "$disk" --jobs 1 || return 1
    cp -r "$disk/walk" "$disk.old"
    "$bin" sweep "$work/walk.ini" --out "$disk" --set sweep.seed=1..40 \
        --jobs 2 2> "$disk.err"
    local st=$?
    [ "$st" -eq 2 ] && grep -q 'No space left on device' "$disk.err" &&
        [ "$(wc -l < "$disk.err")" -eq 1 ] &&
        diff -r "$disk/walk" "$disk.old" > /dev/null &&
        [ "$(ls -A "$disk")" = walk ]
}
mkdir "$work/disk"
export -f full_disk
export bin work
if unshare -rm true 2> /dev/null; then
    mount_cmd=(unshare -rm bash -c 'mount -t tmpfs -o size=256k tmpfs "$1" && full_disk "$1"' _ "$work/disk")
elif [ "$(id -u)" -eq 0 ]; then
    mount_cmd=(bash -c 'mount -t tmpfs -o size=256k tmpfs "$1" && { full_disk "$1"; r=$?; umount "$1"; exit $r; }' _ "$work/disk")
else
    mount_cmd=()
fi
if [ ${#mount_cmd[@]} -eq 0 ]; then
    echo "SKIPPED full disk: cannot mount a tmpfs here (no user namespaces, not root)"
elif "${mount_cmd[@]}"; then
    pass=$((pass + 1))
    echo "ok   full tmpfs: exit 2, 'No space left on device', old results intact, nothing left"
else
    fail=$((fail + 1))
    echo "FAIL full tmpfs: $(cat "$work/disk.err" 2> /dev/null)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
