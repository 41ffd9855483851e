# Sourced by the shell test scripts (tests/cli.sh, tests/shard.sh): one
# case at a time, each in a fresh scratch directory, counted.
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
