/*
 * The scores: the table that declares each once (name, definition, kind,
 * the model that produces it, whether the many-seed files summarise it),
 * from which the writers, the reading tables and distribution.tsv take
 * their columns; and the arithmetic of docs/definitions.md's scores that
 * are properties of one batch or of the final buffers, with the four
 * self-checks a BN implementation can run on itself. Every score is an
 * exact mean over the enumerated population: no sampling enters here.
 * No GSL, libinih or nettle: the web page shares the table.
 */
#ifndef BN_SCORE_H
#define BN_SCORE_H

#include <stddef.h>

#include "model/bn.h"
#include "pop/pop.h"
#include "model/config.h"

typedef enum {
    SCORE_REAL,    /* a double, %.17g */
    SCORE_COUNT,   /* a size_t, %zu */
    SCORE_FEATURE, /* a size_t feature index, printed as its name */
} score_kind;

typedef struct score_def_s {
    const char *name;
    const char *definition; /* one line; docs/definitions.md has more */
    score_kind kind;
    size_t offset;          /* of the value in run_result */
    unsigned models;        /* the models that produce it (RUN_MODEL_BIT) */
    int summarised;         /* distribution.tsv summarises it across seeds */
    /* Relative to a feature's spread: +inf, not an overflow, on a
     * population with a feature of zero variance (docs/definitions.md). */
    int relative;
    /* A score of batch norm's buffers: none for a classifier without
     * batch norm (norm = none). */
    int buffers;
    /* A score of the weights of a linear or conv layer right before a
     * batch norm: none for a network without one. */
    int weights_before_bn;
    /* When it overflows: the keys (exp.h's key_id) whose values scale it,
     * for the message to name, and what to say they did. */
    int scale[2];
    const char *overflow;
} score_def;

/* Row i of the table in file order, NULL past the last. */
const score_def *score_get(size_t i);
/* The row named name, or NULL. */
const score_def *score_find(const char *name);
/* A real score's value (kind SCORE_REAL), or a count's as a double. */
double score_value(const score_def *s, const run_result *r);
/* Whether a run of cfg has score s (its model produces it, and it has
 * the buffers a buffer score reads); files show "-" where it does not. */
int score_applies(const score_def *s, const run_config *cfg);
/* The first real score a run of cfg has that is not finite in r, or NULL
 * when all are. A relative score may be +inf when pop has a feature of
 * zero variance; NaN is never allowed. */
const score_def *score_first_not_finite(const run_config *cfg,
                                        const run_result *r,
                                        const pop_t *pop);

typedef struct {
    double stats_err, mean_err, var_err, worst_var_err;
    size_t worst_var_feature;
    double stats_err_rel, worst_var_rel;
    double mean_err_rel, var_err_rel; /* stats_err_rel's two parts */
} score_buffers_t;

/* Running statistics against the population's truth. The relative
 * errors: (rm - mu) / sqrt(v) and (rv - v) / v per feature; where v is 0
 * an exact statistic counts 0 and any other +inf. */
void score_buffers(const pop_t *pop, const double *rm, const double *rv,
                   score_buffers_t *out);
/* The same against any truth of f units (the classifier's hidden units:
 * the moments of what its batch norm sees). */
void score_buffers_of(size_t f, const double *mu, const double *v,
                      const double *rm, const double *rv,
                      score_buffers_t *out);

/* Fill y[0..n] (n + 1 values: one guard past the end) with a sentinel so
 * that score_written can tell which outputs the layer wrote. */
void score_mark(double *y, size_t n);
/* 1 when every one of y[0..n-1] was written and the guard y[n] was not. */
int score_written(const double *y, size_t n);

/* The self-checks of a training batch's output that depend on its
 * values, per feature: its mean is beta within 1e-9 (|gamma| + |beta|),
 * and its variance (divisor B) is gamma^2 s/(s + eps) within 1e-9 of
 * that plus 1e-12. s1 and s2 hold each feature's sums of y - beta and
 * (y - beta)^2 over the batch's b rows, var its biased variance s.
 * Returns how many of the 2 F passed. The other two checks (the output
 * has the input's shape, evaluation gives the same bits twice) are
 * properties of the code, checked once per run (layer.c). */
size_t score_checks(const bn_layer *layer, size_t b, const double *s1,
                    const double *s2, const double *var);

#endif
