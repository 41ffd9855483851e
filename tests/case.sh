# Sourced by the shell test scripts (tests/cli.sh, tests/shard.sh,
# tests/slurm.sh): one case at a time, each in a fresh scratch directory,
# counted; the check of a refusal; and of two result sets the same.
# The script sets work (its temporary directory) and run (the scratch
# directory inside it) before the first case; pass and fail count.
pass=0 fail=0

# case_ NAME FUNCTION: the function returns 0 when the case behaves, and
# says what went wrong otherwise.
case_() {
    local name=$1 fn=$2
    rm -rf "$run" && mkdir "$run" && cd "$run" || exit 2
    if "$fn" > "$work/log" 2>&1; then
        pass=$((pass + 1))
        echo "ok   $name"
    else
        fail=$((fail + 1))
        echo "FAIL $name"
        sed 's/^/    /' "$work/log" | head -n 30
    fi
}

# same DIR_A DIR_B: the same file names, each the same bytes, and not none.
same() {
    local a=$1 b=$2 f
    [ -n "$(ls -A "$a" 2> /dev/null)" ] || { echo "$a is empty or missing"; return 1; }
    [ "$(ls -A "$a")" = "$(ls -A "$b" 2> /dev/null)" ] ||
        { echo "files differ: $(ls -A "$a" | tr '\n' ' ') / $(ls -A "$b" 2> /dev/null | tr '\n' ' ')"; return 1; }
    for f in "$a"/*; do
        cmp "$f" "$b/${f##*/}" || return 1
    done
}

# refused PATTERN COMMAND...: exit status 2, nothing on stdout, one line
# on stderr matching PATTERN (grep -E), and what `watched` prints the same
# before and after: every directory and file below the scratch directory,
# each file with its size and its time of last change (so a file written
# again, or one made and left, is seen), unless the script defines its
# own.
watch_all() { find . \( -type d -printf 'd %p\n' \) -o -printf 'f %p %s %T@\n' | sort; }
watched() { watch_all; }
refused() {
    local pattern=$1 before after st
    shift
    before=$(watched)
    "$@" > "$work/stdout" 2> "$work/stderr"
    st=$?
    after=$(watched)
    if [ "$st" -ne 2 ]; then
        echo "exit status $st, want 2: $*"
        cat "$work/stderr"
    elif [ -s "$work/stdout" ]; then
        echo "something on stdout: $(head -c 200 "$work/stdout")"
    elif [ "$(wc -l < "$work/stderr")" -ne 1 ]; then
        echo "stderr is not one line:"
        cat "$work/stderr"
    elif ! grep -Eq -- "$pattern" "$work/stderr"; then
        echo "stderr does not match '$pattern':"
        cat "$work/stderr"
    elif [ "$before" != "$after" ]; then
        echo "changed: $before -> $after"
    else
        return 0
    fi
    return 1
}
