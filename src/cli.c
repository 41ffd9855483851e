/* Strict parsing of option values, shared by the commands. */
#include "cli.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "order.h"

int cli_error(const char *cmd, const char *fmt, ...)
{
    va_list ap;
    fprintf(stderr, "bnstudy%s%s: ", cmd ? " " : "", cmd ? cmd : "");
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    return CLI_EXIT_USAGE;
}

int cli_bad_option(const char *cmd, char **argv, int optopt_value)
{
    extern int optind;
    const char *arg = argv[optind - 1];
    if (optopt_value && strncmp(arg, "--", 2) != 0)
        cli_error(cmd, "unknown option '-%c' (see bnstudy %s --help)",
                  optopt_value, cmd);
    else
        cli_error(cmd, "unknown option or missing value '%s' (see bnstudy %s "
                       "--help)",
                  arg, cmd);
    return -1;
}

int cli_parse_u64(const char *cmd, const char *opt, const char *s,
                  uint64_t min, uint64_t max, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (s[0] < '0' || s[0] > '9' || *end != '\0' || errno == ERANGE ||
        v < min || v > max) {
        cli_error(cmd, "%s: must be an integer from %llu to %llu, got '%s'",
                  opt, (unsigned long long)min, (unsigned long long)max, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_parse_double(const char *cmd, const char *opt, const char *s,
                     double *out)
{
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (end == s || *end != '\0' || !isfinite(v)) {
        cli_error(cmd, "%s: must be a finite number, got '%s'", opt, s);
        return -1;
    }
    *out = v;
    return 0;
}

int cli_set_run_option(const char *cmd, const char *opt, const char *arg,
                       run_config *cfg, size_t n_rows)
{
    uint64_t u;
    double d;
    bn_config *l = &cfg->layer;
    if (strcmp(opt, "batch-size") == 0) {
        if (cli_parse_u64(cmd, "--batch-size", arg, 2, n_rows, &u) != 0)
            return -1;
        cfg->batch_size = (size_t)u;
    } else if (strcmp(opt, "order") == 0) {
        if (strlen(arg) >= sizeof cfg->order)
            return cli_error(cmd, "--order: name too long"), -1;
        strcpy(cfg->order, arg);
    } else if (strcmp(opt, "seed") == 0) {
        if (cli_parse_u64(cmd, "--seed", arg, 0, UINT64_MAX, &u) != 0)
            return -1;
        cfg->seed = u;
    } else if (strcmp(opt, "momentum") == 0) {
        char *end;
        d = strtod(arg, &end);
        if (end == arg || *end != '\0' || !(d > 0.0 && d <= 1.0))
            return cli_error(cmd, "--momentum: must be a number in (0, 1], "
                                  "got '%s'", arg), -1;
        l->momentum = d;
    } else if (strcmp(opt, "momentum-weights") == 0) {
        if (bn_weights_parse(arg, &l->weights) != 0)
            return cli_error(cmd, "--momentum-weights: must be old or new, "
                                  "got '%s'", arg), -1;
    } else if (strcmp(opt, "variance") == 0) {
        if (bn_variance_parse(arg, &l->variance) != 0)
            return cli_error(cmd, "--variance: must be biased or unbiased, "
                                  "got '%s'", arg), -1;
    } else if (strcmp(opt, "estimator") == 0) {
        if (bn_estimator_parse(arg, &l->estimator) != 0)
            return cli_error(cmd, "--estimator: must be ema, ema-debiased, "
                                  "cumulative or precise, got '%s'", arg), -1;
    } else if (strcmp(opt, "epochs") == 0) {
        if (cli_parse_u64(cmd, "--epochs", arg, 1, 1000000, &u) != 0)
            return -1;
        cfg->epochs = (unsigned long)u;
    } else if (strcmp(opt, "partial") == 0) {
        if (run_partial_parse(arg, &cfg->partial) != 0)
            return cli_error(cmd, "--partial: must be drop or keep, got '%s'",
                             arg), -1;
    } else if (strcmp(opt, "precise-batches") == 0) {
        if (cli_parse_u64(cmd, "--precise-batches", arg, 0, n_rows, &u) != 0)
            return -1;
        cfg->precise_batches = (size_t)u;
    } else if (strcmp(opt, "gamma") == 0) {
        return cli_parse_double(cmd, "--gamma", arg, &l->gamma);
    } else if (strcmp(opt, "beta") == 0) {
        return cli_parse_double(cmd, "--beta", arg, &l->beta);
    } else if (strcmp(opt, "eps") == 0) {
        if (cli_parse_double(cmd, "--eps", arg, &d) != 0)
            return -1;
        if (!(d > 0.0))
            return cli_error(cmd, "--eps: must be > 0, got '%s'", arg), -1;
        l->eps = d;
    } else {
        return cli_error(cmd, "unknown option '--%s'", opt), -1;
    }
    return 0;
}
