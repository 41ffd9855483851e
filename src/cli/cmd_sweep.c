/*
 * `bnstudy sweep FILE.ini`: run an experiment file's whole product and
 * write its files under --out. The file and every --set override are
 * checked, and the work and memory estimated, before anything is
 * created. `bnstudy merge FILE.ini SHARD...` takes the same experiment
 * options and writes the same files from the shards of `sweep --shard`.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "study/exp.h"
#include "io/shard.h"
#include "io/sweep.h"

static const char usage[] =
    "usage: bnstudy sweep FILE.ini [--out DIR] [--set SECTION.KEY=VALUE ...]\n"
    "                   [--jobs N] [--population FILE [--label COLUMN]\n"
    "                   [--group COLUMN]] [--max-work N] [--max-memory SIZE]\n"
    "                   [--shard K/N]\n"
    "\n"
    "Run every configuration of the experiment file (the cartesian product\n"
    "of its axes) and write DIR/<file stem>/summary.tsv, features.tsv,\n"
    "table.md and manifest.tsv (with many seeds also distribution.tsv and\n"
    "expectation.tsv), or those its `[experiment] outputs` names. The\n"
    "directory is replaced as a whole when every file is complete, so it\n"
    "holds the old result set or the new one. The bytes do not depend on\n"
    "--jobs.\n"
    "\n"
    "  --out DIR                 where to write (results)\n"
    "  --set SECTION.KEY=VALUE   override a setting of the file (repeatable)\n"
    "  --jobs N                  threads, 1 to 64 (the number of CPUs)\n"
    "  --population FILE         run on the rows of a CSV, TSV or .npy file\n"
    "                            instead of the file's [population]\n"
    "  --label COLUMN            the file's class-label column\n"
    "  --group COLUMN            the file's group column\n"
    "  --max-work N              refuse a sweep of more row passes (epochs\n"
    "                            x rows x features over the configurations)\n"
    "                            than N (1e9)\n"
    "  --max-memory SIZE         refuse a sweep that would hold more than\n"
    "                            SIZE bytes, K M G T allowed (2G)\n"
    "  --shard K/N               run configurations K, K+N, K+2N, ... (from\n"
    "                            1) only, into DIR/<stem>.shard-K-of-N, for\n"
    "                            bnstudy merge; N at most 256\n"
    "  -h, --help                this text\n";

static const char merge_usage[] =
    "usage: bnstudy merge FILE.ini SHARD_DIR... [--out DIR]\n"
    "                   [--set SECTION.KEY=VALUE ...] [--population FILE\n"
    "                   [--label COLUMN] [--group COLUMN]] [--max-memory SIZE]\n"
    "\n"
    "Join the shards of `bnstudy sweep FILE.ini --shard K/N` (K = 1..N, each\n"
    "once, from any machines) into DIR/<file stem>/: the same files, byte\n"
    "for byte, as the unsharded sweep of FILE.ini with the same options\n"
    "writes, the summaries across seeds included. The experiment options\n"
    "must be those the shards ran with; shards of another experiment, of\n"
    "another split or with one missing are refused before anything is\n"
    "written. The directory is replaced as a whole, as a sweep's is.\n"
    "\n"
    "  --out DIR                 where to write (results)\n"
    "  --set SECTION.KEY=VALUE   the shards' overrides (repeatable)\n"
    "  --population FILE         the shards' population file\n"
    "  --label COLUMN            the file's class-label column\n"
    "  --group COLUMN            the file's group column\n"
    "  --max-memory SIZE         refuse a merge that would hold more than\n"
    "                            SIZE bytes, K M G T allowed (2G)\n"
    "  -h, --help                this text\n";

static const struct option options[] = {
    {"out", required_argument, NULL, 'o'},
    {"set", required_argument, NULL, 's'},
    {"jobs", required_argument, NULL, 'j'},
    {"population", required_argument, NULL, 'p'},
    {"label", required_argument, NULL, 'l'},
    {"group", required_argument, NULL, 'g'},
    {"max-work", required_argument, NULL, 'w'},
    {"max-memory", required_argument, NULL, 'm'},
    {"shard", required_argument, NULL, 'k'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void note_constant(const pop_t *pop) { cli_note_constant("sweep", pop); }

/* "K/N", 1 <= K <= N <= SHARD_MAX, digits only. */
static int parse_shard(const char *cmd, const char *s, sweep_options *opt)
{
    unsigned long k = 0, n = 0;
    const char *slash = strchr(s, '/');
    char *end = NULL;
    if (slash && s[0] >= '0' && s[0] <= '9' && slash[1] >= '0' &&
        slash[1] <= '9') {
        k = strtoul(s, &end, 10);
        if (end == slash)
            n = strtoul(slash + 1, &end, 10);
    }
    if (!end || *end || n < 1 || n > SHARD_MAX || k < 1 || k > n) {
        cli_error(cmd, "--shard: '%s' is not K/N with 1 <= K <= N <= %d",
                  s, SHARD_MAX);
        return -1;
    }
    opt->shard = (unsigned)k;
    opt->shards = (unsigned)n;
    return 0;
}

static int sweep_command(const char *cmd, int argc, char **argv)
{
    int merge = strcmp(cmd, "merge") == 0;
    sweep_options opt = {"results", NULL, 0, 0, 1,
                         {SWEEP_MAX_WORK, SWEEP_MAX_MEMORY}, NULL, NULL,
                         0, 0, NULL, 0};
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    opt.jobs = ncpu > 0 ? (unsigned)(ncpu > 64 ? 64 : ncpu) : 1;
    char **sets = calloc((size_t)argc, sizeof *sets);
    size_t n_sets = 0;
    int c, rc = CLI_EXIT_USAGE;
    uint64_t u;
    exp_overrides ov = {NULL, 0, NULL, NULL, NULL};
    static const char *const repeatable[] = {"set", NULL};
    cli_parser p = {cmd, argc, argv, options, "h", repeatable, 0};
    if (!sets)
        return cli_error(cmd, "out of memory");
    while ((c = cli_next(&p, NULL)) != -1) {
        if (merge && (c == 'j' || c == 'w' || c == 'k')) {
            cli_error(cmd, "--%s: a merge runs nothing (see bnstudy merge "
                           "--help)",
                      c == 'j' ? "jobs" : c == 'w' ? "max-work" : "shard");
            goto done;
        }
        if (c == 'h') {
            fputs(merge ? merge_usage : usage, stdout);
            rc = 0;
            goto done;
        } else if (c == 'o') {
            if (optarg[0] == '\0') {
                cli_error(cmd, "--out: an empty path names no directory");
                goto done;
            }
            opt.out_dir = optarg;
        } else if (c == 's') {
            sets[n_sets++] = optarg;
        } else if (c == 'p') {
            ov.population = optarg;
        } else if (c == 'l') {
            ov.label = optarg;
        } else if (c == 'g') {
            ov.group = optarg;
        } else if (c == 'j') {
            if (cli_parse_u64(cmd, "--jobs", optarg, 1, 64, &u) != 0)
                goto done;
            opt.jobs = (unsigned)u;
        } else if (c == 'w') {
            if (cli_parse_count(cmd, "--max-work", optarg,
                                &opt.limits.work) != 0)
                goto done;
        } else if (c == 'm') {
            if (cli_max_memory(cmd, optarg, &opt.limits.bytes) != 0)
                goto done;
        } else if (c == 'k') {
            if (parse_shard(cmd, optarg, &opt) != 0)
                goto done;
        } else {
            goto done;
        }
    }
    if (optind == argc) {
        cli_error(cmd, "no experiment file given (see bnstudy %s --help)",
                  cmd);
        goto done;
    }
    if (!merge && optind + 1 != argc) {
        cli_error(cmd, "one experiment file at a time, got '%s' too",
                  argv[optind + 1]);
        goto done;
    }
    if (merge && optind + 1 == argc) {
        cli_error(cmd, "no shard directories given (see bnstudy merge "
                       "--help)");
        goto done;
    }
    opt.merge = argv + optind + 1;
    opt.n_merge = (size_t)(argc - optind - 1);
    if (!ov.population && (ov.label || ov.group)) {
        cli_error(cmd, "%s: names a column of a population file, and no "
                       "--population is given",
                  ov.label ? "--label" : "--group");
        goto done;
    }
    exp_t *e = malloc(sizeof *e);
    static bn_error err;
    if (!e) {
        cli_error(cmd, "out of memory");
        goto done;
    }
    ov.sets = sets;
    ov.n_sets = n_sets;
    out_inputs ins = {0};
    ins.dirs = opt.merge;
    ins.n_dirs = opt.n_merge;
    if (exp_load(e, argv[optind], &ov, &err) != 0 ||
        out_inputs_add(&ins, e->source, &err) != 0 ||
        out_inputs_add(&ins, e->popfile.path, &err) != 0 ||
        out_inputs_add(&ins, e->evalfile.path, &err) != 0 ||
        (opt.sets = sets, opt.n_sets = n_sets,
         cli_warn_swamped(cmd, e), opt.progress = isatty(STDERR_FILENO),
         opt.inputs = &ins,
         /* the relative scores are over features for the layer only */
         opt.on_population = e->models & RUN_MODEL_BIT(RUN_MODEL_LAYER)
                                 ? note_constant
                                 : NULL,
         sweep_run(e, &opt, &err) != 0))
        cli_error(cmd, "%s", err.msg);
    else
        rc = 0;
    exp_free(e);
    free(e);
done:
    free(sets);
    return rc;
}

int cmd_sweep(int argc, char **argv)
{
    return sweep_command("sweep", argc, argv);
}

int cmd_merge(int argc, char **argv)
{
    return sweep_command("merge", argc, argv);
}
