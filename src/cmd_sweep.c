/*
 * `bnstudy sweep FILE.ini`: run an experiment file's whole product and
 * write its files under --out. The file and every --set override are
 * checked, and the work and memory estimated, before anything is
 * created.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "cli.h"
#include "exp.h"
#include "sweep.h"

static const char usage[] =
    "usage: bnstudy sweep FILE.ini [--out DIR] [--set SECTION.KEY=VALUE ...]\n"
    "                   [--jobs N] [--population FILE [--label COLUMN]\n"
    "                   [--group COLUMN]] [--max-work N] [--max-memory SIZE]\n"
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
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

static void note_constant(const pop_t *pop) { cli_note_constant("sweep", pop); }

int cmd_sweep(int argc, char **argv)
{
    const char *cmd = "sweep";
    sweep_options opt = {"results", NULL, 0, 0, 1,
                         {SWEEP_MAX_WORK, SWEEP_MAX_MEMORY}, NULL, NULL};
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
        if (c == 'h') {
            fputs(usage, stdout);
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
            if (cli_parse_size(cmd, "--max-memory", optarg,
                               &opt.limits.bytes) != 0)
                goto done;
        } else {
            goto done;
        }
    }
    if (optind + 1 != argc) {
        cli_error(cmd, optind == argc ? "no experiment file given (see "
                                        "bnstudy sweep --help)%s"
                                      : "one experiment file at a time, got "
                                        "'%s' too",
                  optind == argc ? "" : argv[optind + 1]);
        goto done;
    }
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
    if (exp_load(e, argv[optind], &ov, &err) != 0 ||
        out_inputs_add(&ins, e->source, &err) != 0 ||
        out_inputs_add(&ins, e->popfile.path, &err) != 0 ||
        out_inputs_add(&ins, e->evalfile.path, &err) != 0 ||
        (opt.sets = sets, opt.n_sets = n_sets,
         opt.progress = isatty(STDERR_FILENO), opt.inputs = &ins,
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
