#!/usr/bin/env bash
# The functions of src/ longer than a limit, longest first: "LINES
# FILE:LINE NAME". A function is what the house style lays out as one: its
# name on a line that starts in the first column, its body from a "{"
# alone in the first column to a "}" there (clang-format's layout), so a
# brace count is not needed. Usage:
#
#   bash scripts/long-functions.sh [--min N] [FILE...]
#
# with N 100 by default and the files every .c of src/ by default.
set -uo pipefail
cd "$(dirname "$0")/.."
min=100
if [ "${1:-}" = --min ]; then
    min=$2
    shift 2
fi
[ $# -gt 0 ] || set -- src/*/*.c
awk -v min="$min" '
    FNR == 1 { head = ""; start = 0; open = 0 }
    /^[A-Za-z_]/ && !open { head = $0; start = FNR }
    /^\{$/ && !open { open = 1 }
    /^\}/ && open {
        open = 0
        n = FNR - start + 1
        name = head
        sub(/\(.*/, "", name)
        sub(/.*[ *]/, "", name)
        if (n >= min)
            printf "%5d %s:%d %s\n", n, FILENAME, start, name
    }
' "$@" | sort -k1,1nr -k2,2
