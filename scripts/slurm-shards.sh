#!/usr/bin/env bash
# One shard of a sweep per task of a Slurm job array (docs/commands.md, "Across
# machines"): task K of an array 1-N runs `bnstudy sweep FILE.ini --shard
# K/N`, on as many threads as Slurm gave the task. Submit it from the
# directory that holds bnstudy (or set BNSTUDY), on a file system every
# node shares:
#   sbatch --array=1-8 scripts/slurm-shards.sh experiments/X.ini --out shards
# then merge once every task is done:
#   sbatch --dependency=afterok:JOBID --wrap \
#       './bnstudy merge experiments/X.ini shards/X.shard-*-of-8 --out results'
# The array must be numbered 1 to N (--array=1-N, any %limit).
#SBATCH --job-name=bnstudy-shard
#SBATCH --cpus-per-task=4
#SBATCH --output=bnstudy-shard-%A-%a.log
set -euo pipefail
if [ $# -lt 1 ] || [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
    echo "usage: sbatch --array=1-N scripts/slurm-shards.sh FILE.ini [sweep options]" >&2
    exit 2
fi
# SLURM_ARRAY_TASK_COUNT is new in Slurm 20; the numbering 1-N gives the
# count from the highest index on older ones.
n=${SLURM_ARRAY_TASK_COUNT:-${SLURM_ARRAY_TASK_MAX:?not run as a job array}}
ini=$1
shift
exec "${BNSTUDY:-./bnstudy}" sweep "$ini" --shard "$SLURM_ARRAY_TASK_ID/$n" \
    --jobs "${SLURM_CPUS_PER_TASK:-1}" "$@"
