/*
 * `bnstudy run` and `bnstudy population`: one configuration on the embedded
 * population. Everything is parsed and every output file opened before the
 * run starts, so bad input exits 2 with nothing on stdout and no file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "order.h"
#include "out.h"
#include "pop.h"
#include "run.h"

static const char run_usage[] =
    "usage: bnstudy run [OPTIONS]\n"
    "\n"
    "Train one batch-norm configuration on the embedded 512-row population\n"
    "and print the summary.tsv header and its row (docs/definitions.md).\n"
    "Defaults are the published headline.\n"
    "\n"
    "  --batch-size B          rows per batch, 2..N (256)\n"
    "  --order ORDER           shuffled, sorted, sorted:NAME, sorted-desc:NAME,\n"
    "                          grouped:K, interleaved, as-is (shuffled)\n"
    "  --seed S                shuffle seed, PCG32 initstate (1)\n"
    "  --momentum M            in (0, 1] (0.9)\n"
    "  --momentum-weights W    old: M weighs the old value (Keras, the study);\n"
    "                          new: M weighs the new value (PyTorch) (old)\n"
    "  --variance V            biased or unbiased buffer update (biased)\n"
    "  --estimator E           ema, ema-debiased, cumulative, precise (ema)\n"
    "  --precise-batches K     batches the precise estimator pools, 0 all (0)\n"
    "  --epochs E              passes over the same order (1)\n"
    "  --partial P             drop or keep a last partial batch (drop)\n"
    "  --gamma G, --beta B0    the affine scale and shift (1, 0)\n"
    "  --eps E                 added to the variance (1e-05)\n"
    "  --features FILE         also write the features.tsv rows to FILE\n"
    "  --outputs FILE          also write each last-epoch row's train-mode and\n"
    "                          eval-mode outputs to FILE\n"
    "  -h, --help              this text\n";

static const char pop_usage[] =
    "usage: bnstudy population [--order ORDER] [--seed S] [--batch-size B]\n"
    "\n"
    "Print the embedded population as TSV: header `row` (the enumerated row\n"
    "index) then one column per feature, values %.17g, in the order a run\n"
    "with that order and seed trains on (default: the enumerated order).\n"
    "\n"
    "  --order ORDER       shuffled, sorted, sorted:NAME, sorted-desc:NAME,\n"
    "                      grouped:K, interleaved, as-is\n"
    "  --seed S            shuffle seed (1)\n"
    "  --batch-size B      the batch size interleaved stratifies for (256)\n"
    "  -h, --help          this text\n";

enum { OPT_HELP = 'h', OPT_FEATURES = 1000, OPT_OUTPUTS };

static const struct option run_options[] = {
    {"batch-size", required_argument, NULL, 0},
    {"order", required_argument, NULL, 0},
    {"seed", required_argument, NULL, 0},
    {"momentum", required_argument, NULL, 0},
    {"momentum-weights", required_argument, NULL, 0},
    {"variance", required_argument, NULL, 0},
    {"estimator", required_argument, NULL, 0},
    {"precise-batches", required_argument, NULL, 0},
    {"epochs", required_argument, NULL, 0},
    {"partial", required_argument, NULL, 0},
    {"gamma", required_argument, NULL, 0},
    {"beta", required_argument, NULL, 0},
    {"eps", required_argument, NULL, 0},
    {"features", required_argument, NULL, OPT_FEATURES},
    {"outputs", required_argument, NULL, OPT_OUTPUTS},
    {"help", no_argument, NULL, OPT_HELP},
    {NULL, 0, NULL, 0},
};

static int embedded_population(const char *cmd, pop_t *pop)
{
    pop_spec spec;
    bn_error err;
    pop_default_spec(&spec);
    if (pop_generate(&spec, pop, &err) != 0)
        return cli_error(cmd, "%s", err.msg);
    return 0;
}

/* Per-row outputs for --outputs: row index, then y_train and y_eval for
 * every feature. */
typedef struct {
    FILE *fp;
    const pop_t *pop;
} outputs_ctx;

static void write_outputs(void *ctx, size_t n, size_t f, const size_t *rows,
                          const double *ytr, const double *yev)
{
    outputs_ctx *o = ctx;
    fputs("row", o->fp);
    for (size_t j = 0; j < f; j++)
        fprintf(o->fp, "\ttrain_%s", o->pop->spec.features[j].name);
    for (size_t j = 0; j < f; j++)
        fprintf(o->fp, "\teval_%s", o->pop->spec.features[j].name);
    fputc('\n', o->fp);
    for (size_t i = 0; i < n; i++) {
        fprintf(o->fp, "%zu", rows[i]);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\t%.17g", ytr[i * f + j]);
        for (size_t j = 0; j < f; j++)
            fprintf(o->fp, "\t%.17g", yev[i * f + j]);
        fputc('\n', o->fp);
    }
}

int cmd_run(int argc, char **argv)
{
    const char *cmd = "run";
    pop_t pop;
    if (embedded_population(cmd, &pop) != 0)
        return CLI_EXIT_USAGE;
    run_config cfg;
    run_default_config(&cfg);
    const char *features_path = NULL, *outputs_path = NULL;
    int c, idx, rc = CLI_EXIT_USAGE;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", run_options, &idx)) != -1) {
        if (c == OPT_HELP) {
            fputs(run_usage, stdout);
            rc = 0;
            goto done;
        } else if (c == OPT_FEATURES) {
            features_path = optarg;
        } else if (c == OPT_OUTPUTS) {
            outputs_path = optarg;
        } else if (c == 0) {
            if (cli_set_run_option(cmd, run_options[idx].name, optarg, &cfg,
                                   pop.n) != 0)
                goto done;
        } else {
            cli_bad_option(cmd, argv, optopt);
            goto done;
        }
    }
    if (optind < argc) {
        cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    bn_error err;
    /* run_validate would refuse a bad order too, but its message cannot
     * name the option the user wrote; check it here, as population does. */
    order_spec ord;
    if (order_parse(cfg.order, &pop.spec, &ord, &err) != 0) {
        cli_error(cmd, "--order: %s", err.msg);
        goto done;
    }
    if (bn_set_momentum(&cfg.layer, cfg.layer.momentum, cfg.layer.weights,
                        &err) != 0 ||
        run_validate(&cfg, &pop, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    out_file ff = {0}, of = {0};
    if (features_path && out_open(&ff, features_path, &err) != 0) {
        cli_error(cmd, "--features: %s", err.msg);
        goto done;
    }
    if (outputs_path && out_open(&of, outputs_path, &err) != 0) {
        cli_error(cmd, "--outputs: %s", err.msg);
        out_abort(&ff);
        goto done;
    }
    outputs_ctx octx = {of.fp, &pop};
    run_observer obs = {NULL, outputs_path ? write_outputs : NULL, &octx};
    run_result res;
    if (run_execute(&pop, &cfg, &obs, &res, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        out_abort(&ff);
        out_abort(&of);
        goto done;
    }
    if (features_path) {
        out_features_header(ff.fp);
        out_features_rows(ff.fp, &pop, &cfg, &res);
    }
    out_file both[2] = {ff, of};
    if (out_commit_all(both, 2, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        out_abort(&both[0]);
        out_abort(&both[1]);
        goto done;
    }
    out_summary_header(stdout);
    out_summary_row(stdout, &pop, &cfg, &res);
    rc = 0;
done:
    pop_free(&pop);
    return rc;
}

static const struct option pop_options[] = {
    {"order", required_argument, NULL, 'o'},
    {"seed", required_argument, NULL, 's'},
    {"batch-size", required_argument, NULL, 'b'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0},
};

int cmd_population(int argc, char **argv)
{
    const char *cmd = "population", *order_name = NULL;
    uint64_t seed = 1, batch_size = 256;
    int c;
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", pop_options, NULL)) != -1) {
        if (c == 'h') {
            fputs(pop_usage, stdout);
            return 0;
        } else if (c == 'o') {
            order_name = optarg;
        } else if (c == 's') {
            if (cli_parse_u64(cmd, "--seed", optarg, 0, UINT64_MAX, &seed))
                return CLI_EXIT_USAGE;
        } else if (c == 'b') {
            /* The embedded population has 512 rows. */
            if (cli_parse_u64(cmd, "--batch-size", optarg, 2, 512,
                              &batch_size))
                return CLI_EXIT_USAGE;
        } else {
            cli_bad_option(cmd, argv, optopt);
            return CLI_EXIT_USAGE;
        }
    }
    if (optind < argc)
        return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
    pop_t pop;
    if (embedded_population(cmd, &pop) != 0)
        return CLI_EXIT_USAGE;
    size_t *perm = NULL;
    int rc = 0;
    if (order_name) {
        order_spec ord;
        bn_error err;
        perm = malloc(pop.n * sizeof *perm);
        if (!perm || order_parse(order_name, &pop.spec, &ord, &err) != 0 ||
            (ord.batch_size = (size_t)batch_size,
             order_make(&ord, &pop, seed, perm, &err) != 0))
            rc = cli_error(cmd, "--order: %s",
                           perm ? err.msg : "out of memory");
    }
    if (rc == 0)
        out_population(stdout, &pop, perm);
    free(perm);
    pop_free(&pop);
    return rc;
}
