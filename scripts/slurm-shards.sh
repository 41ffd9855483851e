#!/usr/bin/env bash
# One shard of a sweep per task of a Slurm job array (docs/commands.md,
# sharded sweeps): task K of an array 1-N runs `bnstudy sweep FILE.ini --shard
# K/N`, on as many threads as Slurm gave the task. Submit it from the
# directory that holds bnstudy (or set BNSTUDY), on a file system every
# node shares; each task's log is bnstudy-shard-JOB-K.log there:
#   job=$(sbatch --parsable --array=1-4 scripts/slurm-shards.sh \
#       experiments/X.ini --out shards)
#   sbatch --dependency=afterok:$job --wrap \
#       './bnstudy merge experiments/X.ini shards/X.shard-*-of-4'
# The array must be numbered 1 to N (any %limit): Slurm tells a task only
# its own array's numbers, so N is read from them. A rerun of some tasks
# of such an array is an array of its own and names N with --of:
#   sbatch --array=3 scripts/slurm-shards.sh --of 4 experiments/X.ini --out shards
#SBATCH --job-name=bnstudy-shard
#SBATCH --cpus-per-task=4
#SBATCH --output=bnstudy-shard-%A-%a.log
set -euo pipefail

refuse() {
    echo "slurm-shards.sh: $*" >&2
    exit 2
}
usage="usage: sbatch --array=1-N scripts/slurm-shards.sh [--of N] FILE.ini [sweep options]"
is_count() { [[ $1 =~ ^[1-9][0-9]{0,2}$ ]]; }

of=""
if [ "${1:-}" = --of ]; then
    [ $# -ge 2 ] && is_count "$2" || refuse "--of: '${2:-}' is not a number of shards; $usage"
    of=$2
    shift 2
fi
[ $# -ge 1 ] || refuse "no experiment file; $usage"
[ -n "${SLURM_ARRAY_TASK_ID:-}" ] ||
    refuse "not a task of a job array (no SLURM_ARRAY_TASK_ID); $usage"
k=$SLURM_ARRAY_TASK_ID

# the_count: N, from --of or from the array's own numbers.
the_count() {
    if [ -n "$of" ]; then
        [ "$k" -le "$of" ] || refuse "task $k is not one of the $of shards that --of $of names"
        echo "$of"
        return
    fi
    local min=${SLURM_ARRAY_TASK_MIN:-} max=${SLURM_ARRAY_TASK_MAX:-}
    local count=${SLURM_ARRAY_TASK_COUNT:-} step=${SLURM_ARRAY_TASK_STEP:-1}
    [ -n "$min" ] && [ -n "$max" ] ||
        refuse "no SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_MAX: not a job array's task"
    # SLURM_ARRAY_TASK_COUNT is new in Slurm 20: with it, the numbers are
    # 1 to N exactly when the lowest is 1 and the highest the count. Older
    # ones give only the step, which cannot tell a list such as 1,2,4.
    if [ -n "$count" ]; then
        [ "$min" = 1 ] && [ "$max" = "$count" ] && { echo "$max"; return; }
        local what="tasks numbered $min to $max ($count in all)"
    else
        [ "$min" = 1 ] && [ "$step" = 1 ] && { echo "$max"; return; }
        local what="tasks numbered $min to $max in steps of $step"
    fi
    refuse "the array has $what, not 1 to N: submit --array=1-N (any %limit), or name N with --of N to rerun some tasks of an array 1-N"
}
n=$(the_count)
exec "${BNSTUDY:-./bnstudy}" sweep "$1" --shard "$k/$n" \
    --jobs "${SLURM_CPUS_PER_TASK:-1}" "${@:2}"
