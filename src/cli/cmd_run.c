/*
 * `bnstudy run` and `bnstudy population`: one configuration on the embedded
 * population or on one read from a file (--population). run's options are
 * the experiment keys (exp.h), set and checked as an experiment file's are.
 * Everything is parsed, the population read and every output file opened
 * before the run starts, so bad input exits 2 with nothing on stdout and
 * no file; and no output may name an input file.
 */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/net.h"
#include "cli/cli.h"
#include "study/dumpdir.h"
#include "study/exp.h"
#include "model/order.h"
#include "study/out.h"
#include "pop/pop.h"
#include "model/run.h"
#include "io/sweep.h"

static void run_usage(void)
{
    fputs("usage: bnstudy run [OPTIONS]\n"
          "\n"
          "Train one batch-norm configuration on the embedded 512-row "
          "population (or\n"
          "on the rows of --population FILE) and print the summary.tsv "
          "header and its\n"
          "row (docs/definitions.md). Every option is the experiment key "
          "of that name\n"
          "(one value); defaults are the published headline.\n"
          "\n",
          stdout);
    cli_key_help(stdout);
    cli_pop_help(stdout);
    fputs("  --set SECTION.KEY=VALUE  any experiment key, as in a file "
          "(repeatable):\n"
          "                         population.rows, population.seed, "
          "and\n"
          "                         population.feature=NAME MEAN SD RHO "
          "(the first\n"
          "                         replaces the default eight)\n"
          "  --layer FILE           a dump's NAME.layer.tsv: its momentum in "
          "PyTorch's\n"
          "                         convention (the new value's weight; "
          "None, the\n"
          "                         cumulative average), the unbiased "
          "running variance\n"
          "                         and its eps\n"
          "  --write-features FILE  also write the features.tsv rows to "
          "FILE (the layer)\n"
          "  --write-outputs FILE   also write each last-epoch row's "
          "train-mode and\n"
          "                         eval-mode outputs to FILE (the layer)\n"
          "  --write-effective FILE also write the effective.tsv rows to "
          "FILE (the\n"
          "                         layer: what a batch mean counts, and "
          "is worth)\n"
          "  --write-curve FILE     also write the curve.tsv rows to FILE "
          "(the\n"
          "                         classifier: its scores after every "
          "epoch)\n"
          "  --write-weights FILE   also write the classifier's initial "
          "weights, the\n"
          "                         first batch's gradients and the final "
          "weights\n"
          "                         and buffers to FILE\n"
          "                         (FILE - is standard output: after the "
          "summary,\n"
          "                         each such table follows a blank line)\n"
          "  --max-work N           refuse a run of more row passes (epochs "
          "x rows x\n"
          "                         features) than N (1e9)\n"
          "  --max-memory SIZE      refuse a run that would hold more than "
          "SIZE bytes,\n"
          "                         K M G T allowed (2G)\n"
          "  -h, --help             this text\n",
          stdout);
}

static void pop_usage(void)
{
    char list[512];
    printf("usage: bnstudy population [--order ORDER] [--seed S] "
           "[--batch-size B]\n"
           "                          [--part training|held-out] [--classes K]\n"
           "                          [--max-memory SIZE]\n"
           "                          [--population FILE [--label COLUMN] "
           "[--group COLUMN]]\n"
           "\n"
           "Print the embedded population (or the rows of FILE) as TSV: "
           "header `row`\n"
           "(the row's index) then one column per feature, values %%.17g, "
           "then the\n"
           "label and group columns if any, in the order a run with that "
           "order and\n"
           "seed trains on (default: the rows' own order).\n"
           "\n"
           "  --order ORDER          %s\n"
           "  --seed S               shuffle seed (1)\n"
           "  --batch-size B         the batch size interleaved stratifies for "
           "(256, or\n"
           "                         the rows when fewer)\n"
           "  --part P               only the classifier's training rows or "
           "its held-out\n"
           "                         rows (a file's split at the default "
           "holdout, or the\n"
           "                         second draw); `row` is then the "
           "population's index\n"
           "  --classes K            the embedded population with K classes, "
           "as [population]\n"
           "                         classes = K makes them (a `label` "
           "column)\n",
           order_list(", ", list, sizeof list));
    cli_pop_help(stdout);
    fputs(CLI_MAX_MEMORY_HELP, stdout);
    puts("  -h, --help             this text");
}

enum {
    OPT_HELP = 'h', OPT_FEATURES = 1000, OPT_OUTPUTS, OPT_CURVE,
    OPT_WEIGHTS, OPT_EFFECTIVE, OPT_MAX_WORK, OPT_MAX_MEMORY, OPT_SET,
    OPT_LAYER
};
#define N_OUTPUTS 5

/* The --write options, in OPT_FEATURES order, and the model each has
 * rows of: features, outputs and effective are the layer's, the curve
 * and the weights the classifier's. */
static const struct {
    const char *option;
    run_model_id model;
} writes[N_OUTPUTS] = {
    {.option = "write-features", .model = RUN_MODEL_LAYER},
    {.option = "write-outputs", .model = RUN_MODEL_LAYER},
    {.option = "write-curve", .model = RUN_MODEL_CLASSIFIER},
    {.option = "write-weights", .model = RUN_MODEL_CLASSIFIER},
    {.option = "write-effective", .model = RUN_MODEL_LAYER},
};

/* A buffer's text on fp, or an error naming what. */
static int put(FILE *fp, bn_buf *b, const char *cmd, const char *what)
{
    int bad = b->failed;
    errno = 0;
    if (!bad && b->len)
        bad = fwrite(b->p, 1, b->len, fp) != b->len;
    buf_free(b);
    return bad ? cli_error(cmd, "%s: cannot write: %s", what,
                           errno ? strerror(errno) : "out of memory")
               : 0;
}

/* Per-row outputs for --write-outputs: row index, then y_train and y_eval
 * for every feature; and curve.tsv's rows for --write-curve. */
typedef struct {
    FILE *fp, *curve;
    const pop_t *pop;
    const run_config *cfg;
    unsigned models;
} outputs_ctx;

static void write_curve(void *ctx, unsigned long epoch, const run_result *r)
{
    outputs_ctx *o = ctx;
    bn_buf b = {0};
    out_curve_row(&b, o->models, o->pop, o->cfg, epoch + 1, r);
    if (!b.failed && b.len)
        fwrite(b.p, 1, b.len, o->curve);
    buf_free(&b);
}

static void write_outputs(void *ctx, size_t first, size_t n, size_t f,
                          const size_t *rows, const double *ytr,
                          const double *yev)
{
    outputs_ctx *o = ctx;
    if (first == 0) {
        fputs("row", o->fp);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\ttrain_%s", o->pop->names[j]);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\teval_%s", o->pop->names[j]);
        fputc('\n', o->fp);
    }
    for (size_t i = 0; i < n; i++) {
        fprintf(o->fp, "%zu", rows[i]);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\t%.17g", ytr[i * f + j]);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\t%.17g", yev[i * f + j]);
        fputc('\n', o->fp);
    }
}

/* An output of run: a file written atomically (*file), or standard
 * output ("-"), held in memory until the summary is printed. */
typedef struct {
    const char *opt, *path;
    FILE *fp; /* where the rows go */
    FILE *mem_fp;
    char *mem;
    size_t mem_len;
} run_output;

static int output_open(run_output *o, out_file *file, const out_inputs *ins,
                       bn_error *err)
{
    bn_error sub;
    if (!o->path)
        return 0;
    if (strcmp(o->path, "-") == 0) {
        o->fp = o->mem_fp = open_memstream(&o->mem, &o->mem_len);
        return o->fp ? 0 : bn_fail(err, "%s: out of memory", o->opt);
    }
    if (out_check_not_input(ins, o->path, &sub) != 0 ||
        out_open(file, o->path, &sub) != 0)
        return bn_fail(err, "%s: %s", o->opt, sub.msg);
    o->fp = file->fp;
    return 0;
}

static void output_close(run_output *o)
{
    if (o->mem_fp)
        fclose(o->mem_fp);
    free(o->mem);
    memset(o, 0, sizeof *o);
}

/* The run command's state, from its options to its outputs. */
typedef struct {
    exp_t *e;
    exp_pops pops;
    sweep_limits limits;
    run_output outs[N_OUTPUTS];
    out_file files[N_OUTPUTS];
    char opt_names[N_OUTPUTS][24];
    cli_pop_options po;
    char **sets; /* the --set options, in order */
    size_t n_sets;
    const char *layer_file; /* --layer FILE, or NULL */
    run_config cfg;
    run_result res;
} run_cmd;

/* The columns of the run's files: its model's, and a declared network's
 * or the batch-dependence ones when one of their keys was given. */
static unsigned run_cmd_models(const run_cmd *r)
{
    return RUN_MODEL_BIT(r->cfg.model) | (r->e->models & RUN_EXTS);
}


/* run's options: a key's, the population's, the --write options, the
 * limits, --set, --layer and --help, into opts (names holds the keys'). */
static void run_options(struct option *opts, char names[][40])
{
    size_t no = cli_key_options(opts, names);
    no += cli_pop_option_table(opts + no);
    for (int i = 0; i < N_OUTPUTS; i++)
        opts[no++] = (struct option){writes[i].option, required_argument,
                                     NULL, OPT_FEATURES + i};
    opts[no++] = (struct option){"max-work", required_argument, NULL,
                                 OPT_MAX_WORK};
    opts[no++] = (struct option){"max-memory", required_argument, NULL,
                                 OPT_MAX_MEMORY};
    opts[no++] = (struct option){"set", required_argument, NULL, OPT_SET};
    opts[no++] = (struct option){"layer", required_argument, NULL,
                                 OPT_LAYER};
    opts[no++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    opts[no] = (struct option){NULL, 0, NULL, 0};
}

/* The command line into r: 0 to run, 1 when --help was printed, -1 on
 * a refusal (said). */
static int run_args(run_cmd *r, const char *cmd, int argc, char **argv,
                    struct option *opts)
{
    static const char *const repeatable[] = {"set", NULL};
    cli_parser p = {cmd, argc, argv, opts, "h", repeatable, 0};
    int c, idx, taken;
    while ((c = cli_next(&p, &idx)) != -1) {
        if (c == OPT_HELP) {
            run_usage();
            return 1;
        } else if (c >= OPT_FEATURES && c < OPT_FEATURES + N_OUTPUTS) {
            r->outs[c - OPT_FEATURES].path = optarg;
        } else if (c == OPT_MAX_WORK) {
            if (cli_parse_count(cmd, "--max-work", optarg, &r->limits.work))
                return -1;
        } else if (c == OPT_MAX_MEMORY) {
            if (cli_max_memory(cmd, optarg, &r->limits.bytes))
                return -1;
        } else if (c == OPT_SET) {
            r->sets[r->n_sets++] = optarg;
        } else if (c == OPT_LAYER) {
            r->layer_file = optarg;
        } else if (cli_take_pop_option(c, optarg, &r->po)) {
            continue;
        } else if ((taken = cli_take_key_option(cmd, r->e, c, opts[idx].name,
                                                optarg)) != 0) {
            if (taken != 1)
                return -1;
        } else {
            return -1;
        }
    }
    return 0;
}

/* Two outputs in one file would leave only the one renamed last. */
static int distinct_outputs(const run_cmd *r, const char *cmd)
{
    const run_output *o = r->outs;
    for (int i = 0; i < N_OUTPUTS; i++)
        for (int j = i + 1; j < N_OUTPUTS; j++)
            if (o[i].path && o[j].path && strcmp(o[j].path, "-") != 0 &&
                out_same_file(o[i].path, o[j].path))
                return cli_error(cmd, "%s: '%s' is the file %s writes too",
                                 o[j].opt, o[j].path, o[i].opt),
                       -1;
    return 0;
}

/* --layer FILE: a dump's layer settings (NAME.layer.tsv) as the run's,
 * in the dump's conventions: PyTorch's momentum is the new value's
 * weight, None the cumulative average, the running variance unbiased.
 * Options that set the same keys are refused: one place says the layer. */
static int apply_layer_file(const char *cmd, exp_t *e, const char *path)
{
    static const key_id keys[] = {KEY_MOMENTUM, KEY_WEIGHTS, KEY_VARIANCE,
                                  KEY_ESTIMATOR, KEY_EPS};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++)
        if (e->from[keys[i]])
            return cli_error(cmd, "%s: the layer's settings are in %s",
                             e->from[keys[i]], path);
    dump_settings ds;
    bn_error err;
    if (dumpdir_settings(path, &ds, &err) != 0)
        return cli_error(cmd, "--layer: %s", err.msg);
    char origin[64], m[32], eps[32];
    snprintf(origin, sizeof origin, "--layer");
    snprintf(m, sizeof m, "%.17g", ds.momentum);
    snprintf(eps, sizeof eps, "%.17g", ds.eps);
    int cumulative = isnan(ds.momentum);
    if ((!cumulative && (exp_set(e, KEY_MOMENTUM, m, origin, 0, &err) ||
                         exp_set(e, KEY_WEIGHTS, "new", origin, 0, &err))) ||
        (cumulative &&
         exp_set(e, KEY_ESTIMATOR, "cumulative", origin, 0, &err)) ||
        exp_set(e, KEY_VARIANCE, "unbiased", origin, 0, &err) ||
        exp_set(e, KEY_EPS, eps, origin, 0, &err))
        return cli_error(cmd, "%s: %s", path, err.msg);
    return 0;
}

/* The experiment the options make, checked whole as a file's is, within
 * the limits; its one configuration, each --write option of its model;
 * its populations, and every output opened (none may be an input). -1 on
 * a refusal (said). */
static int run_prepare(run_cmd *r, const char *cmd, int argc, char **argv)
{
    static bn_error err;
    exp_t *e = r->e;
    if (exp_set_overrides(e, r->sets, r->n_sets, &err) != 0)
        return cli_error(cmd, "%s", err.msg), -1;
    if (r->layer_file && apply_layer_file(cmd, e, r->layer_file) != 0)
        return -1;
    if (cli_one_configuration(cmd, e, argc, argv) != 0 ||
        distinct_outputs(r, cmd) != 0 ||
        cli_apply_pop_options(cmd, e, &r->po) != 0)
        return -1;
    /* A file --set population.file names is read as --population's. */
    if ((!e->popfile.pop && exp_read_population(e, &err) != 0) ||
        exp_finish(e, &err) != 0)
        return cli_error(cmd, "%s", err.msg), -1;
    sweep_estimate est;
    sweep_estimate_of(e, 1, 0, &est);
    if (sweep_check_limits(e, &est, &r->limits, "run", &err) != 0)
        return cli_error(cmd, "%s", err.msg), -1;
    cli_warn_swamped(cmd, e);
    exp_config(e, 0, &r->cfg);
    for (int i = 0; i < N_OUTPUTS; i++)
        if (r->outs[i].path && r->cfg.model != writes[i].model)
            return cli_error(cmd,
                             "%s: a file of the %s, and this run trains the "
                             "%s (--type)",
                             r->outs[i].opt,
                             run_model_name((int)writes[i].model),
                             run_model_name((int)r->cfg.model)),
                   -1;
    if (exp_populations(e, exp_held_out_models(e->models), &r->pops, &err) !=
        0)
        return cli_error(cmd, "%s", err.msg), -1;
    out_inputs ins = {0};
    if (out_inputs_add(&ins, e->popfile.path, &err) != 0 ||
        out_inputs_add(&ins, e->evalfile.path, &err) != 0)
        return cli_error(cmd, "%s", err.msg), -1;
    for (int i = 0; i < N_OUTPUTS; i++)
        if (output_open(&r->outs[i], &r->files[i], &ins, &err) != 0)
            return cli_error(cmd, "%s", err.msg), -1;
    return 0;
}

/* A table of the finished run into an output: the features, or the
 * effective counts. */
static int put_table(run_cmd *r, const char *cmd, run_output *o,
                     void (*header)(bn_buf *, unsigned),
                     void (*rows)(bn_buf *, unsigned, const pop_t *,
                                  const run_config *, const run_result *))
{
    bn_buf b = {0};
    unsigned models = run_cmd_models(r);
    header(&b, models);
    rows(&b, models, r->pops.p.pop, &r->cfg, &r->res);
    return put(o->fp, &b, cmd, o->opt);
}

/* The run, its observer writing the per-row outputs, the curve and the
 * weights as it goes; then the features and the effective counts. -1 on
 * a failure (said). */
static int run_run(run_cmd *r, const char *cmd)
{
    static bn_error err, sub;
    run_output *outs = r->outs;
    const pop_t *pop = r->pops.p.pop;
    if (outs[2].fp) {
        bn_buf b = {0};
        out_curve_header(&b, run_cmd_models(r));
        if (put(outs[2].fp, &b, cmd, outs[2].opt) != 0)
            return -1;
    }
    if (outs[3].fp)
        fputs(CLF_WEIGHTS_HEADER, outs[3].fp);
    outputs_ctx octx = {outs[1].fp, outs[2].fp, pop, &r->cfg,
                        run_cmd_models(r)};
    run_observer obs = {NULL, outs[1].path ? write_outputs : NULL,
                        outs[2].path ? write_curve : NULL, &octx,
                        outs[3].fp, NULL};
    int blame[2] = {-1, -1};
    if (run_execute_blamed(&r->pops.p, &r->cfg, &obs, &r->res, blame,
                           &sub) != 0) {
        exp_blame(r->e, &r->cfg, blame, sub.msg, &err);
        return cli_error(cmd, "%s", err.msg), -1;
    }
    if (outs[0].path && put_table(r, cmd, &outs[0], out_features_header,
                                  out_features_rows) != 0)
        return -1;
    if (outs[4].path && put_table(r, cmd, &outs[4], out_effective_header,
                                  out_effective_rows) != 0)
        return -1;
    return 0;
}

/* The files first, all or none; then the summary, and after it the
 * tables standard output was given, complete in memory by now. */
static int run_finish(run_cmd *r, const char *cmd)
{
    static bn_error err;
    const pop_t *pop = r->pops.p.pop;
    for (int i = 0; i < N_OUTPUTS; i++)
        if (r->outs[i].mem_fp && fflush(r->outs[i].mem_fp) != 0)
            return cli_error(cmd, "%s: out of memory", r->outs[i].opt), -1;
    if (out_commit_all(r->files, N_OUTPUTS, &err) != 0)
        return cli_error(cmd, "%s", err.msg), -1;
    if (r->cfg.model == RUN_MODEL_LAYER)
        cli_note_constant(cmd, pop);
    bn_buf b = {0};
    out_summary_header(&b, run_cmd_models(r));
    out_summary_row(&b, run_cmd_models(r), pop, &r->cfg, &r->res);
    if (put(stdout, &b, cmd, "standard output") != 0)
        return -1;
    for (int i = 0; i < N_OUTPUTS; i++)
        if (r->outs[i].mem_fp) {
            fputc('\n', stdout);
            fwrite(r->outs[i].mem, 1, r->outs[i].mem_len, stdout);
        }
    return 0;
}

int cmd_run(int argc, char **argv)
{
    const char *cmd = "run";
    struct option opts[KEY_COUNT + CLI_POP_OPTIONS + N_OUTPUTS + 6];
    char names[KEY_COUNT][40];
    run_options(opts, names);
    static bn_error err;
    run_cmd *r = calloc(1, sizeof *r);
    if (!r)
        return cli_error(cmd, "out of memory");
    r->limits = (sweep_limits){SWEEP_MAX_WORK, SWEEP_MAX_MEMORY};
    for (int i = 0; i < N_OUTPUTS; i++) {
        snprintf(r->opt_names[i], sizeof r->opt_names[i], "--%s",
                 writes[i].option);
        r->outs[i].opt = r->opt_names[i];
    }
    int rc = CLI_EXIT_USAGE, args = -1;
    r->e = malloc(sizeof *r->e);
    r->sets = calloc((size_t)argc + 1, sizeof *r->sets);
    if (!r->e) {
        cli_error(cmd, "out of memory");
    } else if (exp_init(r->e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
    } else if (!r->sets) {
        cli_error(cmd, "out of memory");
    } else if ((args = run_args(r, cmd, argc, argv, opts)) == 1) {
        rc = 0;
    } else if (args == 0 && run_prepare(r, cmd, argc, argv) == 0 &&
               run_run(r, cmd) == 0 && run_finish(r, cmd) == 0) {
        rc = 0;
    }
    for (int i = 0; i < N_OUTPUTS; i++) {
        out_abort(&r->files[i]);
        output_close(&r->outs[i]);
    }
    run_result_free(&r->res);
    exp_pops_free(&r->pops);
    if (r->e)
        exp_free(r->e);
    free(r->e);
    free(r->sets);
    free(r);
    return rc;
}

/* What `bnstudy population` was asked for. */
typedef struct {
    const char *order_name, *part, *classes;
    uint64_t seed, batch_size;
    cli_pop_options po;
} pop_args;

/* The options into a; 0 to go on, else the exit status (1 for --help,
 * which is then printed). */
static int pop_parse(int argc, char **argv, pop_args *a)
{
    const char *cmd = "population";
    struct option opts[7 + CLI_POP_OPTIONS + 1] = {
        {"order", required_argument, NULL, 'o'},
        {"seed", required_argument, NULL, 's'},
        {"batch-size", required_argument, NULL, 'b'},
        {"part", required_argument, NULL, 'p'},
        {"classes", required_argument, NULL, 'k'},
        {"max-memory", required_argument, NULL, 'm'},
        {"help", no_argument, NULL, 'h'},
    };
    cli_pop_option_table(opts + 7); /* the last entry stays zero */
    int c;
    cli_parser p = {cmd, argc, argv, opts, "h", NULL, 0};
    while ((c = cli_next(&p, NULL)) != -1) {
        if (c == 'h') {
            pop_usage();
            return -1;
        } else if (c == 'o' || c == 'k') {
            *(c == 'o' ? &a->order_name : &a->classes) = optarg;
        } else if (c == 'p') {
            if (strcmp(optarg, "training") != 0 &&
                strcmp(optarg, "held-out") != 0)
                return cli_error(cmd, "--part: training or held-out, got "
                                      "'%s'",
                                 optarg);
            a->part = optarg;
        } else if (c == 's' || c == 'b') {
            /* A batch size is checked against the rows once read. */
            if (c == 's' ? cli_parse_u64(cmd, "--seed", optarg, 0,
                                         UINT64_MAX, &a->seed)
                         : cli_parse_u64(cmd, "--batch-size", optarg, 2,
                                         100000000, &a->batch_size))
                return CLI_EXIT_USAGE;
        } else if (c == 'm') {
            if (cli_max_memory(cmd, optarg, NULL) != 0)
                return CLI_EXIT_USAGE;
        } else if (!cli_take_pop_option(c, optarg, &a->po)) {
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
    return 0;
}

int cmd_population(int argc, char **argv)
{
    const char *cmd = "population";
    pop_args a = {.seed = 1};
    int parsed = pop_parse(argc, argv, &a);
    if (parsed != 0)
        return parsed < 0 ? 0 : parsed;
    const char *order_name = a.order_name, *part = a.part,
               *classes = a.classes;
    uint64_t seed = a.seed, batch_size = a.batch_size;
    cli_pop_options po = a.po;
    exp_t *e = malloc(sizeof *e);
    if (!e)
        return cli_error(cmd, "out of memory");
    exp_pops pops;
    memset(&pops, 0, sizeof pops);
    size_t *perm = NULL;
    int rc = CLI_EXIT_USAGE;
    bn_error err;
    const pop_t *pop = NULL;
    if (exp_init(e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    if (cli_apply_pop_options(cmd, e, &po) != 0)
        goto done;
    if (classes && (po.population
                        ? (cli_error(cmd, "--classes: the generated "
                                          "population's; a file's labels "
                                          "are its --label column"),
                           1)
                        : exp_set(e, KEY_POP_CLASSES, classes, "--classes",
                                  0, &err) != 0
                              ? (cli_error(cmd, "%s", err.msg), 1)
                              : 0))
        goto done;
    if (exp_populations(e, part != NULL, &pops, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    pop = !part                           ? pops.p.pop
          : strcmp(part, "training") == 0 ? pops.p.train
                                          : pops.p.held_out;
    if (batch_size > pop->n) {
        cli_error(cmd, "--batch-size: must be an integer from 2 to the "
                       "population's %zu rows, got %llu",
                  pop->n, (unsigned long long)batch_size);
        goto done;
    }
    if (order_name) {
        order_spec ord;
        perm = malloc(pop->n * sizeof *perm);
        if (!perm || order_parse(order_name, pop, &ord, &err) != 0 ||
            (ord.batch_size = batch_size ? (size_t)batch_size
                              : pop->n < 256 ? pop->n : 256,
             order_make(&ord, pop, seed, perm, &err) != 0)) {
            cli_error(cmd, "--order: %s", perm ? err.msg : "out of memory");
            goto done;
        }
    }
    bn_buf b = {0};
    out_population(&b, pop, perm);
    if (put(stdout, &b, cmd, "standard output") == 0)
        rc = 0;
done:
    free(perm);
    exp_pops_free(&pops);
    exp_free(e);
    free(e);
    return rc;
}
