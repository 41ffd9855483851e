#!/usr/bin/env bash
# The documented Slurm recipe (docs/commands.md) run by a real Slurm (make
# test-slurm; CI runs it): a one-node cluster on localhost, its configuration, state, logs and
# munge key all in a temporary directory, its daemons started here by
# their binaries and stopped by pid whatever happens. The recipe's
# commands are read from the documentation's blocks and run as written; the
# merged set must be the unsharded sweep's, byte for byte. Then the
# script's edges: a task that fails holds the merge back and is named,
# its rerun alone lets the merge run, %limit caps the tasks at once, and
# an array not numbered 1-N is refused by the script itself.
#   slurm.sh [BNSTUDY]
# Needs root on Debian: slurm-wlm and munge are installed when missing
# (scripts/deps.sh slurm). Prints one line per case and "N passed, N
# failed"; where Slurm cannot be installed or started, "SKIPPED: reason"
# instead, a failure with REQUIRE_ALL=1 (as CI runs it).
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
bin=$(realpath "${1:-./bnstudy}")
repo=$(pwd)
# Seconds any one wait may take: the node to come up, a job to end.
WAIT=${SLURM_TEST_WAIT:-90}
work=$(mktemp -d)
run=$work/run # tests/case.sh's scratch directory
daemons=()
trap 'stop_cluster > /dev/null 2>&1; rm -rf "$work"' EXIT
# A signal ends the script through its EXIT trap, the daemons with it.
trap 'exit 129' HUP
trap 'exit 130' INT
trap 'exit 143' TERM
# shellcheck source=tests/case.sh
. "$repo/tests/case.sh"

skip() {
    echo "SKIPPED: Slurm test: $*"
    [ "${REQUIRE_ALL:-0}" = 1 ] && exit 1
    exit 0
}

# now: seconds since the epoch, to the nanosecond; since T: seconds after T.
now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# within SECONDS COMMAND...: the command run every 0.2 s until it succeeds
# (0), for at most SECONDS (1).
within() {
    local end=$((SECONDS + $1))
    shift
    until "$@"; do
        [ "$SECONDS" -lt "$end" ] || return 1
        sleep 0.2
    done
}

# ---- the cluster ----

# A TCP port of localhost that nothing listens on.
free_port() {
    local p _
    for _ in $(seq 100); do
        p=$((20000 + (RANDOM * 32768 + RANDOM) % 40000))
        (exec 3<> "/dev/tcp/127.0.0.1/$p") 2> /dev/null || { echo "$p"; return; }
    done
    return 1
}

# The daemons mark their environment with this, and so does every
# slurmstepd they start: what stop_cluster looks for when slurmd is gone.
mark="BNSTUDY_SLURM_TEST=$work"

# start NAME COMMAND...: a daemon in the foreground of a background job,
# its output in $work/NAME.out, its pid kept.
start() {
    local name=$1
    shift
    env "$mark" "$@" > "$work/$name.out" 2>&1 &
    daemons+=("$!")
}

# The last lines a daemon wrote, for a message.
said() { tail -n 5 "$work/$1.out" 2> /dev/null | tr '\n' ' '; }

# munged wants execute permission for all on every directory above its
# socket, and the key private to its owner.
start_munge() {
    chmod 755 "$work" && mkdir -m 755 "$work/sock" && mkdir -m 700 "$work/munge" &&
        head -c 1024 /dev/urandom > "$work/munge/munge.key" &&
        chmod 600 "$work/munge/munge.key" || return 1
    start munged munged -F --key-file="$work/munge/munge.key" \
        --socket="$work/sock/munge.socket" --pid-file="$work/munge/munged.pid" \
        --log-file="$work/munge/munged.log" --seed-file="$work/munge/munged.seed"
}

# One node, named for this host and reached on 127.0.0.1, declared with
# 16 CPUs whatever the machine has (config_overrides): four tasks of the
# script's 4 CPUs run at once, as on a real node, so that %limit has
# something to hold back. Nothing from /etc/slurm is read.
write_conf() {
    local node=$1 s=$work/slurm
    mkdir -p "$s/state" "$s/spool" && : > "$s/plugstack.conf" || return 1
    cat > "$s/slurm.conf" << EOF
ClusterName=bnstudytest
SlurmctldHost=$node(127.0.0.1)
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$work/sock/munge.socket
StateSaveLocation=$s/state
SlurmdSpoolDir=$s/spool
SlurmctldPidFile=$s/slurmctld.pid
SlurmdPidFile=$s/slurmd.pid
SlurmctldLogFile=$s/slurmctld.log
SlurmdLogFile=$s/slurmd.log
PlugStackConfig=$s/plugstack.conf
MailProg=/bin/true
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
SchedulerParameters=sched_interval=1
SlurmdParameters=config_overrides
ReturnToService=2
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/none
MinJobAge=3600
NodeName=$node NodeAddr=127.0.0.1 CPUs=16 RealMemory=1000 State=UNKNOWN
PartitionName=bnstudy Nodes=$node Default=YES MaxTime=INFINITE State=UP
EOF
}

# Every daemon up and the node idle, or SKIPPED saying what did not come.
start_cluster() {
    [ "$(id -u)" -eq 0 ] || skip "not root: slurmd must run as root to start jobs"
    bash scripts/deps.sh slurm > "$work/deps.out" 2>&1 ||
        skip "slurm-wlm and munge could not be installed: $(tail -n 3 "$work/deps.out" | tr '\n' ' ')"
    PATH=$PATH:/usr/sbin:/sbin
    start_munge || skip "cannot set up munge's directory in $work"
    within "$WAIT" socket_or_gone ||
        skip "munged made no socket in $WAIT s: $(said munged)"
    [ -S "$work/sock/munge.socket" ] || skip "munged exited: $(said munged)"
    node=$(hostname -s)
    write_conf "$node" || skip "cannot write slurm.conf in $work"
    export SLURM_CONF=$work/slurm/slurm.conf
    start slurmctld slurmctld -D -f "$SLURM_CONF"
    start slurmd slurmd -D -f "$SLURM_CONF" -N "$node"
    within "$WAIT" idle_or_gone "$node" ||
        skip "the node never showed idle in sinfo in $WAIT s (it showed '$(sinfo -h -n "$node" -o %t 2> /dev/null)'); slurmd said: $(said slurmd)"
    kill -0 "${daemons[1]}" 2> /dev/null || skip "slurmctld exited: $(said slurmctld)"
    kill -0 "${daemons[2]}" 2> /dev/null || skip "slurmd exited: $(said slurmd)"
}

# Whether munged made its socket, or is gone.
socket_or_gone() {
    [ -S "$work/sock/munge.socket" ] || ! kill -0 "${daemons[0]}" 2> /dev/null
}

# Whether sinfo shows NODE idle, or a daemon is gone.
idle_or_gone() {
    [ "$(sinfo -h -n "$1" -o %t 2> /dev/null)" = idle ] ||
        ! kill -0 "${daemons[1]}" 2> /dev/null || ! kill -0 "${daemons[2]}" 2> /dev/null
}

# The processes of this cluster still there: the daemons started here,
# and any slurmstepd of theirs (marked by the environment they inherit).
left() {
    local p
    for p in "${daemons[@]}"; do
        kill -0 "$p" 2> /dev/null && echo "$p"
    done
    for p in /proc/[0-9]*; do
        tr '\0' '\n' < "$p/environ" 2> /dev/null | grep -qxF "$mark" &&
            echo "${p#/proc/}"
    done | sort -u
}

none_left() { [ -z "$(left)" ]; }

# Every job cancelled and every daemon stopped, SIGTERM first, then
# SIGKILL for what is still there after 10 s; says what it had to kill.
stop_cluster() {
    [ ${#daemons[@]} -gt 0 ] || return 0
    settle 10
    kill "${daemons[@]}" 2> /dev/null
    local pids
    within 10 none_left
    pids=$(left)
    if [ -n "$pids" ]; then
        echo "killed, still there 10 s after SIGTERM: $(echo "$pids" | tr '\n' ' ')"
        # shellcheck disable=SC2086
        kill -9 $pids 2> /dev/null
    fi
    wait 2> /dev/null
    daemons=()
    [ -z "$pids" ]
}

# ---- jobs ----

# settle [SECONDS]: no job left in the queue, cancelling what is there.
settle() {
    local ids
    ids=$(squeue -h -o %A 2> /dev/null)
    # shellcheck disable=SC2086
    [ -z "$ids" ] || scancel $ids 2> /dev/null
    within "${1:-$WAIT}" queue_empty && return 0
    echo "jobs still queued after scancel: $(squeue -h 2> /dev/null | tr '\n' ';')"
    return 1
}
queue_empty() { [ -z "$(squeue -h -o %A 2> /dev/null)" ]; }

# states JOB: "TASK STATE EXIT" a line per task of the job (TASK "-" for
# a job that is not an array); a job whose dependency can no longer be
# met is HELD, as good as ended.
states() {
    scontrol -o show job "$1" 2> /dev/null | awk '{
        t = "-"; s = "?"; e = "?"; r = ""
        for (i = 1; i <= NF; i++) {
            split($i, kv, "=")
            if (kv[1] == "ArrayTaskId") t = kv[2]
            else if (kv[1] == "JobState") s = kv[2]
            else if (kv[1] == "ExitCode") e = kv[2]
            else if (kv[1] == "Reason") r = kv[2]
        }
        if (s == "PENDING" && r == "DependencyNeverSatisfied") s = "HELD"
        print t, s, e
    }' | sort -n
}

# field JOB NAME: one field of scontrol's line for a job.
field() {
    scontrol -o show job "$1" 2> /dev/null | tr ' ' '\n' | sed -n "s/^$2=//p" | head -n 1
}

# done_ JOB...: every task of every job has ended, however it ended.
done_() {
    local j
    for j in "$@"; do
        states "$j" | awk -v held="${held_ends:-1}" '
            $2 ~ /^(PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|\?)$/ ||
                ($2 == "HELD" && !held) { x = 1 }
            END { exit x }' || return 1
        [ -n "$(states "$j")" ] || return 1
    done
}

# await JOB...: until every task of the jobs has ended, at most WAIT s
# (held_ends=0: a HELD job has not, its dependency having been changed).
await() {
    within "$WAIT" done_ "$@" && return 0
    echo "not done in $WAIT s: $(for j in "$@"; do states "$j"; done | tr '\n' ';')"
    return 1
}

# completed JOB: every task COMPLETED with exit 0, or what each did.
completed() {
    local bad
    bad=$(states "$1" | awk '$2 != "COMPLETED" || $3 != "0:0"')
    [ -z "$bad" ] && return 0
    echo "job $1: $(echo "$bad" | tr '\n' ';')"
    local f
    for f in bnstudy-shard-"$1"-*.log slurm-"$1".out; do
        [ -s "$f" ] && echo "$f: $(head -c 300 "$f")"
    done
    return 1
}

# ---- the documented commands ----

# block TEXT: the one sh block of README.md and docs/*.md that holds TEXT,
# as written there, wherever the pages move it.
block() {
    local found
    found=$(awk -v want="$1" '
        /^```/ {
            if (fence && sh && index(text, want)) { printf "%s", text; print "\036" }
            sh = !fence && $0 ~ /^```(sh|bash)?$/; fence = !fence; text = ""; next
        }
        sh { text = text $0 "\n" }' "$repo/README.md" "$repo"/docs/*.md 2> /dev/null)
    if [ "$(printf '%s' "$found" | grep -c $'^\036$')" -ne 1 ]; then
        echo "README.md and docs/*.md: $(printf '%s' "$found" | grep -c $'^\036$') sh blocks hold '$1', want 1" >&2
        return 1
    fi
    printf '%s' "$found" | sed $'/^\036$/d'
}

# The submission directory, as a checkout's: bnstudy, scripts/ and
# experiments/ (the repository's own), results written beside them.
checkout() {
    ln -s "$bin" bnstudy && ln -s "$repo/scripts" scripts &&
        ln -s "$repo/experiments" experiments
}

# recipe TEXT [VAR=VALUE...]: the documentation's block holding TEXT run here in
# a shell of its own (given the variables), which then prints the job ids
# it left in job and merge.
recipe() {
    local text
    text=$(block "$1") || return 1
    shift
    env "$@" bash -c "set -e; $text"$'\necho "$job ${merge:-}"'
}

# The unsharded sweep, once, for every case to compare with; timed.
whole() {
    [ -d "$work/whole/shuffles" ] && return 0
    local t
    t=$(now)
    (cd "$work" && "$bin" sweep "$repo/experiments/shuffles.ini" --out whole > /dev/null) ||
        return 1
    since "$t" > "$work/whole.time"
}

# info LINE: printed under the case's line, passed or failed.
info() { echo "$*" >> "$work/info"; }
case_slurm() {
    : > "$work/info"
    case_ "$@"
    sed 's/^/     /' "$work/info"
}

# ---- the cases ----

readme_recipe() {
    whole && settle && checkout || return 1
    local t ids job merge
    t=$(now)
    ids=$(recipe "--array=1-4 scripts/slurm-shards.sh") || return 1
    read -r job merge <<< "$ids"
    [ -n "$merge" ] || { echo "the recipe left no merge job: '$ids'"; return 1; }
    await "$job" && completed "$job" || return 1
    local tasks
    tasks=$(since "$t")
    await "$merge" && completed "$merge" || return 1
    info "time here: the unsharded sweep $(cat "$work/whole.time") s; from the first sbatch, the four tasks ended after $tasks s and the merge after $(since "$t") s"
    local k
    for k in 1 2 3 4; do
        [ -f "bnstudy-shard-$job-$k.log" ] || { echo "no log of task $k"; return 1; }
    done
    [ -f "slurm-$merge.out" ] || { echo "no log of the merge"; return 1; }
    same "$work/whole/shuffles" results/shuffles
}

# A task that fails, here because its shard's path is taken by a file.
failed_rerun() {
    whole && settle && checkout || return 1
    mkdir shards && : > shards/shuffles.shard-3-of-4 || return 1
    local ids job merge failed
    ids=$(recipe "--array=1-4 scripts/slurm-shards.sh") || return 1
    read -r job merge <<< "$ids"
    await "$job" "$merge" || return 1
    failed=$(states "$job" | awk '$2 != "COMPLETED" { print $1 }' | tr '\n' ' ')
    [ "$failed" = "3 " ] || { echo "failed tasks: '$failed', want task 3"; states "$job"; return 1; }
    grep -q 'shuffles.shard-3-of-4 exists and is not a directory' "bnstudy-shard-$job-3.log" ||
        { echo "task 3's log: $(cat "bnstudy-shard-$job-3.log")"; return 1; }
    info "task 3 of job $job failed ($(states "$job" | awk '$1 == 3 { print $2, $3 }')): $(head -n 1 "bnstudy-shard-$job-3.log")"
    [ "$(field "$merge" JobState) $(field "$merge" Reason)" = "PENDING DependencyNeverSatisfied" ] &&
        [ ! -e results ] && [ ! -e "slurm-$merge.out" ] ||
        { echo "the merge: $(field "$merge" JobState) ($(field "$merge" Reason)), results/: $(ls results 2>&1)"; return 1; }
    info "the merge (job $merge) waits: $(squeue -h -j "$merge" -o '%T %r')"
    rm shards/shuffles.shard-3-of-4 || return 1
    ids=$(recipe "--array=3 scripts/slurm-shards.sh" "merge=$merge") || return 1
    read -r job _ <<< "$ids"
    await "$job" && completed "$job" && held_ends=0 await "$merge" &&
        completed "$merge" && same "$work/whole/shuffles" results/shuffles
}

# BNSTUDY (which the script honours) as bnstudy behind a log of when each
# task began and ended, with what options, and a pause long enough for
# tasks to overlap.
timed_bnstudy() {
    printf '%s\n' '#!/bin/sh' 'echo "$*" >> options' \
        'echo "$(date +%s.%N) 1" >> spans' 'sleep 2' './bnstudy "$@"' 'st=$?' \
        'echo "$(date +%s.%N) -1" >> spans' 'exit $st' > timed && chmod +x timed
}

# most ARRAY: the most tasks running at once, with the array spec given.
most() {
    rm -rf spans options shards results
    local job merge
    job=$(BNSTUDY=./timed sbatch --parsable --array="$1" scripts/slurm-shards.sh \
        experiments/shuffles.ini --out shards) &&
        merge=$(sbatch --parsable --dependency=afterok:"$job" --wrap \
            './bnstudy merge experiments/shuffles.ini shards/shuffles.shard-*-of-4') &&
        await "$job" "$merge" >&2 && completed "$job" >&2 && completed "$merge" >&2 &&
        same "$work/whole/shuffles" results/shuffles >&2 || return 1
    sort -n spans | awk '{ n += $2; if (n > m) m = n } END { print m }'
}

limit() {
    whole && settle && checkout && timed_bnstudy || return 1
    local all two
    all=$(most 1-4) && two=$(most 1-4%2) || return 1
    info "tasks at once: $all with --array=1-4, $two with --array=1-4%2"
    [ "$all" -eq 4 ] && [ "$two" -eq 2 ] || return 1
    # Each task on the 4 CPUs the script asks Slurm for.
    [ "$(grep -c -- '--shard [1-4]/4 --jobs 4 --out shards$' options)" -eq 4 ] ||
        { echo "the tasks ran: $(cat options)"; return 1; }
}

not_1_to_n() {
    settle && checkout || return 1
    local spec job want k n said=""
    for spec in 2-5 1,3; do
        job=$(sbatch --parsable --array="$spec" scripts/slurm-shards.sh \
            experiments/shuffles.ini --out shards) && await "$job" || return 1
        case $spec in
            2-5) want="tasks numbered 2 to 5 (4 in all)" ;;
            1,3) want="tasks numbered 1 to 3 (2 in all)" ;;
        esac
        want="slurm-shards.sh: the array has $want, not 1 to N: submit --array=1-N (any %limit), or name N with --of N to rerun some tasks of an array 1-N"
        n=0
        for k in $(states "$job" | awk '{ print $1 }'); do
            n=$((n + 1))
            [ "$(states "$job" | awk -v k="$k" '$1 == k { print $2, $3 }')" = "FAILED 2:0" ] &&
                [ "$(cat "bnstudy-shard-$job-$k.log" 2>&1)" = "$want" ] ||
                { echo "--array=$spec task $k: $(states "$job" | awk -v k="$k" '$1 == k')," \
                    "said: $(cat "bnstudy-shard-$job-$k.log" 2>&1)"; return 1; }
        done
        [ "$n" -eq 2 ] || [ "$n" -eq 4 ] || { echo "--array=$spec: $n tasks"; return 1; }
        said=$(cat "bnstudy-shard-$job-$k.log")
    done
    [ ! -e shards ] || { echo "shards/ written: $(ls shards)"; return 1; }
    info "task $k of --array=1,3 exited 2: $said"
}

stopped() {
    local ran=("${daemons[@]}")
    stop_cluster || return 1
    [ -z "$(left)" ] || { echo "still running: $(left | tr '\n' ' ')"; return 1; }
    info "stopped: munged, slurmctld, slurmd (pids $(echo "${ran[@]}"))"
}

start_cluster
case_slurm "the documented recipe, a four-task array and its merge: the unsharded sweep's bytes" readme_recipe
case_slurm "a failed task holds the merge back and is named; rerun alone (--array=3 --of 4), the merge runs: the same bytes" failed_rerun
case_slurm "--array=1-4%2 runs at most two tasks at once (1-4 runs four): the same bytes" limit
case_slurm "--array=2-5 and --array=1,3: every task refused by the script's own line, nothing written" not_1_to_n
case_slurm "every daemon started here stopped by pid, no slurmstepd left" stopped
echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
