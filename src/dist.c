/*
 * Summaries across seeds: for each group of configurations that differ only
 * in batch size and seed (exp_index), each batch size's seeds summarised.
 */
#include "dist.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expect.h"
#include "num.h"
#include "out.h"

typedef struct {
    const char *name;
    size_t offset;
} score_field;

#define SCORE(f) {#f, offsetof(run_result, f)}
static const score_field scores[] = {
    SCORE(stats_err),       SCORE(mean_err),       SCORE(var_err),
    SCORE(worst_var_err),   SCORE(train_eval_rmse), SCORE(batch_mean_err),
    SCORE(batch_var_err),
};
#define N_SCORES (sizeof scores / sizeof *scores)

static double score_of(const run_result *r, size_t s)
{
    double v;
    memcpy(&v, (const char *)r + scores[s].offset, sizeof v);
    return v;
}

static void config_columns(FILE *fp, const run_config *c, size_t seeds)
{
    const bn_config *l = &c->layer;
    char est[32];
    fprintf(fp, "%s\t%s\t%zu\t%.17g\t%s\t%.17g\t%s\t%lu\t%s\t%zu",
            c->experiment, c->order, c->batch_size, l->momentum,
            bn_weights_name(l->weights), l->p, bn_variance_name(l->variance),
            c->epochs, run_estimator_label(c, est, sizeof est), seeds);
}

static const char config_header[] =
    "experiment\torder\tbatch_size\tmomentum\tmomentum_weights\tnew_weight\t"
    "variance\tepochs\testimator\tseeds";

typedef struct {
    double mean, sd, p05, p50, p95;
} summary;

/* Mean and sd (divisor n - 1) by num_moments, in the seeds' order. */
static void mean_sd(const double *v, size_t n, double *mean, double *sd)
{
    double ss;
    num_moments(n, 1, v, mean, &ss);
    *sd = n > 1 ? sqrt(ss / (double)(n - 1)) : 0.0;
}

static summary summarise(double *v, size_t n)
{
    summary s;
    mean_sd(v, n, &s.mean, &s.sd);
    num_sort(v, n);
    s.p05 = num_quantile_sorted(v, n, 0.05);
    s.p50 = num_quantile_sorted(v, n, 0.50);
    s.p95 = num_quantile_sorted(v, n, 0.95);
    return s;
}

/* Position of batch size b on the batch-size axis, or -1. */
static int axis_pos(const exp_t *e, uint64_t b)
{
    for (size_t i = 0; i < e->batch_size.n; i++)
        if (e->batch_size.v[i] == b)
            return (int)i;
    return -1;
}

static void seed_claims(FILE *fp, FILE *table, const exp_t *e,
                        const run_config *cfgs, const run_result *res,
                        size_t r)
{
    size_t nb = e->batch_size.n, ns = e->seed.n;
    int i8 = axis_pos(e, 8), i32 = axis_pos(e, 32), i64 = axis_pos(e, 64),
        i256 = axis_pos(e, 256);
#define AT(ib, is) (&res[exp_index(e, r, (is), (size_t)(ib))])
    size_t worse = 0, tenfold = 0, grows = 0, mean_falls = 0;
    for (size_t is = 0; is < ns; is++) {
        if (i8 >= 0 && i256 >= 0) {
            double a = AT(i8, is)->stats_err, b = AT(i256, is)->stats_err;
            worse += b > a;
            tenfold += b >= 10.0 * a;
        }
        if (i8 >= 0 && i32 >= 0 && i64 >= 0 && i256 >= 0)
            grows += AT(i8, is)->stats_err < AT(i32, is)->stats_err &&
                     AT(i32, is)->stats_err < AT(i64, is)->stats_err &&
                     AT(i64, is)->stats_err < AT(i256, is)->stats_err;
        /* The batch-size axis as written; sorted ascending in practice. */
        int falls = 1;
        for (size_t ib = 1; ib < nb; ib++) {
            int up = e->batch_size.v[ib] > e->batch_size.v[ib - 1];
            double prev = AT(ib - 1, is)->batch_mean_err;
            double cur = AT(ib, is)->batch_mean_err;
            falls &= up ? cur < prev : cur > prev;
        }
        mean_falls += (size_t)falls;
    }
#undef AT
    const run_config *c = &cfgs[exp_index(e, r, 0, 0)];
    const bn_config *l = &c->layer;
    char buf[32];
    const char *est = run_estimator_label(c, buf, sizeof buf);
    struct {
        const char *claim;
        int defined;
        size_t holds;
    } rows[] = {
        {"stats_err(256) > stats_err(8)", i8 >= 0 && i256 >= 0, worse},
        {"stats_err(256) >= 10 stats_err(8)", i8 >= 0 && i256 >= 0, tenfold},
        {"stats_err increases over B 8 32 64 256",
         i8 >= 0 && i32 >= 0 && i64 >= 0 && i256 >= 0, grows},
        {"batch_mean_err decreases strictly with B", nb > 1, mean_falls},
    };
    for (size_t k = 0; k < sizeof rows / sizeof *rows; k++) {
        if (!rows[k].defined)
            continue;
        fprintf(table, "| %s | %s | %s | %zu of %zu | %.4f |\n", c->order,
                est, rows[k].claim, rows[k].holds,
                ns, (double)rows[k].holds / (double)ns);
        fprintf(fp, "%s\t%s\t%.17g\t%s\t%.17g\t%s\t%lu\t%s\t%zu\t%s\t%zu\t"
                        "%.17g\n",
                    c->experiment, c->order, l->momentum,
                    bn_weights_name(l->weights), l->p,
                    bn_variance_name(l->variance), c->epochs,
                    est, ns, rows[k].claim,
                    rows[k].holds, (double)rows[k].holds / (double)ns);
    }
}

int dist_write(const exp_t *e, const pop_t *pop, const run_config *cfgs,
               const run_result *res, FILE *dist, FILE *expect,
               FILE *claims, FILE *table, bn_error *err)
{
    size_t nb = e->batch_size.n, ns = e->seed.n;
    size_t groups = exp_count(e) / (nb * ns);
    double *v = malloc(ns * sizeof *v);
    if (!v)
        return bn_fail(err, "out of memory");
    fprintf(dist, "%s\tscore\tmean\tsd\tp05\tp50\tp95\n", config_header);
    fprintf(expect, "%s\texpected_mean_err\tmc_mean_err\t"
                    "expected_mean_err_sq\tmc_mean_err_sq\tmc_se\tz\n",
            config_header);
    fprintf(claims, "experiment\torder\tmomentum\tmomentum_weights\t"
                    "new_weight\tvariance\tepochs\testimator\tseeds\tclaim\t"
                    "holds\tfraction\n");
    int cols[EXP_MAX_COLUMNS];
    for (size_t c = 0; c < e->table.n; c++)
        cols[c] = out_summary_column(e->table.v[c]);
    out_table_header(table, e->table.n, cols);
    /* The claims' table follows the main one, so it is gathered aside. */
    char *claims_md = NULL;
    size_t claims_len = 0;
    FILE *cm = open_memstream(&claims_md, &claims_len);
    if (!cm) {
        free(v);
        return bn_fail(err, "out of memory");
    }
    fputs("\n| order | estimator | claim | holds in | fraction |\n"
          "|---|---|---|---|---|\n", cm);

    for (size_t r = 0; r < groups; r++) {
        for (size_t ib = 0; ib < nb; ib++) {
            const run_config *c = &cfgs[exp_index(e, r, 0, ib)];
            summary sum[N_SCORES];
            for (size_t s = 0; s < N_SCORES; s++) {
                for (size_t is = 0; is < ns; is++)
                    v[is] = score_of(&res[exp_index(e, r, is, ib)], s);
                sum[s] = summarise(v, ns);
                config_columns(dist, c, ns);
                fprintf(dist, "\t%s\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\n",
                        scores[s].name, sum[s].mean, sum[s].sd, sum[s].p05,
                        sum[s].p50, sum[s].p95);
            }
            /* The reading table: mean [p5, p95] for the scores. */
            for (size_t k = 0; k < e->table.n; k++) {
                size_t s;
                for (s = 0; s < N_SCORES; s++)
                    if (strcmp(scores[s].name, e->table.v[k]) == 0)
                        break;
                if (s < N_SCORES)
                    fprintf(table, "| %.4f [%.4f, %.4f] ", sum[s].mean,
                            sum[s].p05, sum[s].p95);
                else
                    out_table_cell(table, cols[k], pop, c,
                                   &res[exp_index(e, r, 0, ib)]);
            }
            fputs("|\n", table);

            /* The closed form exists for shuffled order only, and says so. */
            double want;
            if (expect_mean_err_sq(pop, c, &want, NULL) != 0)
                continue;
            for (size_t is = 0; is < ns; is++) {
                double m = res[exp_index(e, r, is, ib)].mean_err;
                v[is] = m * m;
            }
            double mc, sd;
            mean_sd(v, ns, &mc, &sd);
            double se = sd / sqrt((double)ns);
            config_columns(expect, c, ns);
            fprintf(expect, "\t%.17g\t%.17g\t%.17g\t%.17g\t%.17g\t",
                    sqrt(want), sqrt(mc), want, mc, se);
            /* Where every ordering recovers the mean exactly, the shuffles'
             * spread is rounding and a deviation in it means nothing. */
            if (want > 0.0 && se > 0.0)
                fprintf(expect, "%.17g\n", (mc - want) / se);
            else
                fputs("nan\n", expect);
        }
        seed_claims(claims, cm, e, cfgs, res, r);
    }
    fclose(cm);
    fputs(claims_md, table);
    free(claims_md);
    free(v);
    return 0;
}
