/*
 * `bnstudy run` and `bnstudy population`: one configuration on the embedded
 * population. run's options are the experiment keys (exp.h), set and
 * checked as an experiment file's are. Everything is parsed and every
 * output file opened before the run starts, so bad input exits 2 with
 * nothing on stdout and no file.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "exp.h"
#include "order.h"
#include "out.h"
#include "pop.h"
#include "run.h"

static void run_usage(void)
{
    fputs("usage: bnstudy run [OPTIONS]\n"
          "\n"
          "Train one batch-norm configuration on the embedded 512-row "
          "population\n"
          "and print the summary.tsv header and its row "
          "(docs/definitions.md).\n"
          "Every option is the experiment key of that name (one value); "
          "defaults\n"
          "are the published headline.\n"
          "\n",
          stdout);
    cli_key_help(stdout);
    fputs("  --features FILE        also write the features.tsv rows to "
          "FILE\n"
          "  --outputs FILE         also write each last-epoch row's "
          "train-mode and\n"
          "                         eval-mode outputs to FILE\n"
          "  -h, --help             this text\n",
          stdout);
}

static void pop_usage(void)
{
    char list[256];
    printf("usage: bnstudy population [--order ORDER] [--seed S] "
           "[--batch-size B]\n"
           "\n"
           "Print the embedded population as TSV: header `row` (the "
           "enumerated row\n"
           "index) then one column per feature, values %%.17g, in the order "
           "a run\n"
           "with that order and seed trains on (default: the enumerated "
           "order).\n"
           "\n"
           "  --order ORDER       %s\n"
           "  --seed S            shuffle seed (1)\n"
           "  --batch-size B      the batch size interleaved stratifies for "
           "(256)\n"
           "  -h, --help          this text\n",
           order_list(", ", list, sizeof list));
}

enum { OPT_HELP = 'h', OPT_FEATURES = 1000, OPT_OUTPUTS };

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
    struct option opts[KEY_COUNT + 4];
    char names[KEY_COUNT][40];
    size_t no = cli_key_options(opts, names);
    opts[no++] = (struct option){"features", required_argument, NULL,
                                 OPT_FEATURES};
    opts[no++] = (struct option){"outputs", required_argument, NULL,
                                 OPT_OUTPUTS};
    opts[no++] = (struct option){"help", no_argument, NULL, OPT_HELP};
    opts[no] = (struct option){NULL, 0, NULL, 0};

    pop_t pop;
    memset(&pop, 0, sizeof pop);
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    if (!e)
        return cli_error(cmd, "out of memory");
    const char *features_path = NULL, *outputs_path = NULL;
    int c, idx, rc = CLI_EXIT_USAGE;
    if (exp_init(e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    opterr = 0;
    while ((c = getopt_long(argc, argv, ":h", opts, &idx)) != -1) {
        if (c == OPT_HELP) {
            run_usage();
            rc = 0;
            goto done;
        } else if (c == OPT_FEATURES) {
            features_path = optarg;
        } else if (c == OPT_OUTPUTS) {
            outputs_path = optarg;
        } else if (c >= CLI_KEY_BASE && c < CLI_KEY_BASE + KEY_COUNT) {
            char origin[64];
            snprintf(origin, sizeof origin, "--%s", opts[idx].name);
            if (exp_set(e, (key_id)(c - CLI_KEY_BASE), optarg, origin, 0,
                        &err) != 0) {
                cli_error(cmd, "%s", err.msg);
                goto done;
            }
        } else {
            cli_bad_option(cmd, argv, optopt);
            goto done;
        }
    }
    if (optind < argc) {
        cli_error(cmd, "unexpected argument '%s'", argv[optind]);
        goto done;
    }
    for (int k = 0; k < KEY_COUNT; k++)
        if (e->n[k] > 1) {
            cli_error(cmd, "%s: one value at a time (a sweep takes lists)",
                      e->from[k]);
            goto done;
        }
    if (exp_finish(e, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        goto done;
    }
    run_config cfg;
    exp_config(e, 0, &cfg);
    if (pop_generate(&e->pop, &pop, &err) != 0) {
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
        out_features_header(ff.fp, 1u << cfg.model);
        out_features_rows(ff.fp, 1u << cfg.model, &pop, &cfg, &res);
    }
    out_file both[2] = {ff, of};
    if (out_commit_all(both, 2, &err) != 0) {
        cli_error(cmd, "%s", err.msg);
        out_abort(&both[0]);
        out_abort(&both[1]);
        goto done;
    }
    out_summary_header(stdout, 1u << cfg.model);
    out_summary_row(stdout, 1u << cfg.model, &pop, &cfg, &res);
    rc = 0;
done:
    pop_free(&pop);
    exp_free(e);
    free(e);
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
            pop_usage();
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
