#!/usr/bin/env bash
# The include rule of src/: a folder per stage of the data path, and a
# file includes only headers of its own folder or of the folders below
# it, named with their folder ("model/bn.h"). Within a folder the modules
# (a .c and its .h, and the pieces of a module split over files: X_PART.c
# and X_PART.h where X.c or X.h exists, such as study/exp_values.c and a
# header private to them) include each other in no circle. Usage:
#
#   bash scripts/check-layers.sh [--src DIR] LAYER...
#
# with the folders lowest first (the Makefile's LAYERS). Prints one line
# per broken rule and exits 1 if there is any, 2 on bad usage.
set -uo pipefail

src=src
if [ "${1:-}" = --src ]; then
    src=$2
    shift 2
fi
if [ $# -eq 0 ] || [ ! -d "$src" ]; then
    echo "usage: check-layers.sh [--src DIR] LAYER..." >&2
    exit 2
fi

declare -a layers=("$@")
rank_of() {
    local i
    for i in "${!layers[@]}"; do
        if [ "${layers[$i]}" = "$1" ]; then
            echo "$i"
            return
        fi
    done
    echo -1
}

# The module a file of folder $1 named $2 (without .c or .h) is part of:
# "exp_values" is "exp"'s when exp.c or exp.h exists, else its own.
module_of() {
    local base=$2 head=${2%%_*}
    if [ "$head" != "$base" ] &&
        { [ -f "$src/$1/$head.c" ] || [ -f "$src/$1/$head.h" ]; }; then
        base=$head
    fi
    echo "$1/$base"
}

bad=0
broken() {
    echo "$1"
    bad=1
}

# Every file is in a folder of the list.
while IFS= read -r f; do
    rel=${f#"$src"/}
    case $rel in
    */*/*) broken "$f: nested too deep; src/ is one folder per stage" ;;
    */*)
        [ "$(rank_of "${rel%%/*}")" -ge 0 ] ||
            broken "$f: folder ${rel%%/*} is not a stage (LAYERS)" ;;
    *) broken "$f: directly in $src/; it belongs in a stage's folder" ;;
    esac
done < <(find "$src" -type f \( -name '*.c' -o -name '*.h' \) | sort)

edges=$(mktemp)
trap 'rm -f "$edges"' EXIT
for layer in "${layers[@]}"; do
    r=$(rank_of "$layer")
    for f in "$src/$layer"/*.[ch]; do
        [ -e "$f" ] || continue
        mod=$(module_of "$layer" "$(basename "${f%.[ch]}")")
        echo "$mod $mod" >> "$edges"
        while IFS=: read -r line inc; do
            # provenance_build.h is the build's own, generated in build/.
            [ "$inc" = provenance_build.h ] && continue
            case $inc in
            */*) ;;
            *)
                broken "$f:$line: \"$inc\" names no folder (write \"stage/$inc\")"
                continue ;;
            esac
            to=${inc%%/*}
            tr=$(rank_of "$to")
            if [ "$tr" -lt 0 ]; then
                broken "$f:$line: \"$inc\" is in no stage"
            elif [ ! -f "$src/$inc" ]; then
                broken "$f:$line: \"$inc\" does not exist"
            elif [ "$tr" -gt "$r" ]; then
                broken "$f:$line: $layer/ includes \"$inc\", from $to/, a later stage"
            elif [ "$to" = "$layer" ]; then
                target=$(module_of "$layer" "$(basename "${inc%.h}")")
                [ "$target" = "$mod" ] || echo "$mod $target" >> "$edges"
            fi
        done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" |
                 sed 's/^\([0-9]*\):.*"\(.*\)".*/\1:\2/')
    done
done

# tsort names a circle among a folder's modules on standard error.
if ! loops=$(tsort "$edges" 2>&1 >/dev/null) || [ -n "$loops" ]; then
    # One line per circle: "model/bn -> model/run -> ... -> model/bn".
    while IFS= read -r circle; do
        broken "modules include each other in a circle: $circle"
    done < <(printf '%s\n' "$loops" | awk '
        /input contains a loop/ { if (c) print c " -> " first; c = ""; next }
        { sub(/^tsort: /, ""); if (c == "") { c = $0; first = $0 } else c = c " -> " $0 }
        END { if (c) print c " -> " first }')
fi

if [ "$bad" -eq 0 ]; then
    echo "the include rule holds: ${layers[*]}"
fi
exit "$bad"
