/*
 * What several test groups share: the environment the Makefile passes in,
 * long double reference arithmetic (the independent side of most
 * comparisons), closeness assertions that say what differed, and a run
 * observer that records every training batch.
 */
#ifndef BN_TESTS_HELPERS_H
#define BN_TESTS_HELPERS_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

/* TEST_ASAN in a build with AddressSanitizer, whose interface then tells
 * the tests which bytes it guards. */
#if defined(__SANITIZE_ADDRESS__)
#define TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TEST_ASAN 1
#endif
#endif
#ifdef TEST_ASAN
#include <sanitizer/asan_interface.h>
#endif

#include "pop/drift.h"

#include <gsl/gsl_rng.h>

#include "base/pcg32.h"
#include "pop/pop.h"
#include "pop/popfile.h"
#include "model/net.h"
#include "model/run.h"
#include "study/exp.h"

/* getenv(name), or dflt when unset or empty. The defaults are what
 * `make test` passes, relative to the repository's root. */
const char *test_env(const char *name, const char *dflt);

/* A whole file as a string (NULL if it cannot be opened); its length in
 * *len when len is not NULL. What a failing test could not give back is
 * freed at exit, so under the sanitizers a failure leaks nothing. */
char *test_slurp(const char *path, size_t *len);
void test_slurp_free(char *s);

/* free() in the tests is helpers_free: it forgets a buffer test_slurp handed
 * out before freeing it, so a slurped buffer may be given back with plain
 * free() and is not freed a second time at exit (a trap that bit three
 * test files before this). stdlib.h is included above, before the name is
 * taken. */
void helpers_free(void *p);
#define free(p) helpers_free(p)

/* A fresh directory TMPDIR/bnstudy-test-NAME.XXXXXX into buf (0 on
 * success, for a group setup), and its removal with all it holds. */
int test_tmpdir_make(char *buf, size_t cap, const char *name);
int test_tmpdir_remove(const char *dir);
/* cmocka group fixtures: a new temporary directory, whose path each test
 * finds in *state, and its removal. */
int test_tmpdir_setup(void **state);
int test_tmpdir_teardown(void **state);
/* dir = root/name, made afresh and empty for one test, or fail it. */
void test_fresh_dir(const char *root, char *dir, size_t cap,
                    const char *name);
/* Write text to path, or fail the test. */
void test_write_file(const char *path, const char *text);
/* Run a shell command made from a printf format; its exit status, or -1
 * if it did not exit. */
int test_shell(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
/* bnstudy (BNSTUDY, made absolute) run in directory dir through the
 * shell with the arguments of a printf format (quote them for the shell);
 * its exit status (-1 if it did not exit), with its standard output and
 * error in *out and *err (malloc'd, the caller frees them). Nothing is
 * written to dir but what bnstudy writes. */
int test_bnstudy(const char *dir, char **out, char **err, const char *fmt,
                 ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
/* bnstudy ARGS run in dir must be refused: status 2, nothing on standard
 * output, one line on standard error containing needle. */
void test_expect_refused(const char *dir, const char *args,
                         const char *needle);
/* Split s in place at sep into fields (at most max stored); returns how
 * many there are. */
size_t test_split(char *s, char sep, char **fields, size_t max);
/* The place of column name among a header's n fields (test_split of its
 * first line), or failing the test naming file and column: tests read
 * bnstudy's TSVs by column name, never by position, so a new key or
 * score column moves nothing they check. */
size_t test_column(char *const *header, size_t n, const char *name,
                   const char *file);
/* Step a[0..n-1] to the next permutation in lexicographic order; 0 after
 * the last one. Starting from the sorted order it visits all n!. */
int test_next_permutation(size_t *a, size_t n);

/* The batches of the batch-dependence scores (model/compose.h), made
 * apart from compose.c: whether to enumerate by GSL's gsl_sf_choose, the
 * subsets by counting through bit patterns (n < 64), the shuffles by
 * GSL's gsl_ran_shuffle on the same PCG32 stream. Returns the batches'
 * rows, *count batches of b in a row (free them), NULL for none. */
size_t *ref_compositions(size_t n, size_t b, size_t m, uint64_t seed,
                         size_t *count);
/* The layer's batch-dependence scores from the batches above, in long
 * double: each row's train-mode output with its batch's statistics, its
 * eval-mode output with the buffers rm, rv. */
typedef struct {
    long double worst, mean, worst_eval;
    size_t batches;
} ref_dependence;
void ref_layer_dependence(const double *x, size_t n, size_t f, size_t b,
                          size_t m, uint64_t seed, const bn_config *l,
                          const double *rm, const double *rv,
                          ref_dependence *out);

/* Two-pass mean and population variance (divisor n) in long double. */
void ld_moments(size_t n, size_t stride, const double *v, long double *mean,
                long double *var);

/* |got - want| <= tol * scale, reported with both values on failure. */
#define assert_close(got, want, tol, scale)                                  \
    do {                                                                     \
        long double g_ = (got), w_ = (want), s_ = (scale);                   \
        long double d_ = g_ > w_ ? g_ - w_ : w_ - g_;                        \
        if (!(d_ <= (long double)(tol) * s_))                                \
            fail_msg("%s = %.17Lg, want %.17Lg (diff %.3Lg > %.3Lg x %.3Lg)", \
                     #got, g_, w_, d_, (long double)(tol), s_);              \
    } while (0)

/* Relative: the scale is |want|. */
#define assert_rel(got, want, tol)                                           \
    do {                                                                     \
        long double w2_ = (want);                                            \
        assert_close(got, w2_, tol, w2_ < 0 ? -w2_ : w2_);                   \
    } while (0)

/* Every training batch of a run, copied out of run_observer.on_batch. */
typedef struct {
    size_t epoch, index, b;
    size_t *rows;
    double *mean, *var; /* the code's batch statistics, F each */
    double *x;          /* B x F inputs */
    double *y;          /* B x F train-mode outputs */
} rec_batch;

typedef struct {
    size_t f, n, cap;
    rec_batch *batches;
    /* From on_outputs: the last epoch's rows in order, and both outputs. */
    size_t out_n;
    size_t *out_rows;
    double *out_train, *out_eval;
} recorder;

/* An observer whose ctx is rec (zeroed here). */
run_observer recorder_observer(recorder *rec);
void recorder_free(recorder *rec);

/* The buffers after T updates, in closed form rather than by recursion,
 * from the statistics of update t = 0..T-1 in stat_m[t * f + j] and
 * stat_v[t * f + j] (the variance already as the update uses it).
 *   ema           keep^T init + sum_t p keep^(T-t) stat_t
 *   ema-debiased  sum_t p keep^(T-t) stat_t / (1 - keep^T)
 *   cumulative    the plain average of the T statistics
 * scale_* receive the same sums over |terms|: the size that rounding
 * errors are relative to. */
void ld_buffers(bn_estimator est, long double p, long double keep,
                size_t t_count, size_t f, const long double *stat_m,
                const long double *stat_v, long double *rm, long double *rv,
                long double *scale_m, long double *scale_v);

/* GSL's view of PCG32, so that GSL's samplers draw from our streams:
 * range [0, 2^32 - 1], get_double u / 2^32. gsl_rng_set(r, s) seeds
 * initstate = s on stream initseq 0; pcg32_gsl_alloc names both, and
 * returns NULL when out of memory. */
extern const gsl_rng_type *gsl_rng_pcg32;
gsl_rng *pcg32_gsl_alloc(uint64_t initstate, uint64_t initseq);

/* A population of n rows of the f features given, from seed: small ones
 * to enumerate every ordering of. Generated or failing the test. */
void small_pop(pop_t *pop, size_t n, uint64_t seed, size_t f,
               const pop_feature *features);

/* The final running mean of feature j after training cfg on the order
 * perm, every estimator written out by its definition in long double; with
 * drift, update t's batch mean is moved by drift_fraction(drift, t)
 * offset. */
long double ld_running_mean(const pop_t *pop, const run_config *cfg,
                            const size_t *perm, size_t j,
                            const drift_spec *drift, double offset);

/* The scores a test holds a reference of its own for. score_ref gives
 * score name of r through the score table (its name and offset; a count
 * or a feature index as a double), failing when the table has no such
 * score, and notes that the test checks it; score_refs_all then fails
 * naming the first score of model m the test holds no reference for and
 * where (the test's function and file) to add one, so a new row of the
 * score table fails until it has its reference. */
typedef struct {
    size_t n;
    const char *names[64];
} score_refs;
double score_ref(score_refs *refs, const run_result *r, const char *name);
void score_refs_all(const score_refs *refs, const run_config *cfg,
                    const char *where);

/* The reference each model of the model table is held to, by its name
 * in test_tables.c's model_refs: a run's every score made anew without
 * the model's code (score_refs_all names a score left out). The layer's
 * in long double from the rows its batches report (test_run.c); the
 * classifier's from net.h's steps by hand (test_classifier.c), in a
 * fresh directory under root. */
void ref_layer_scores(const char *root);
void ref_classifier_scores(const char *root);

/* run_execute(pop, cfg, obs, res), or failing the test with its message. */
void run_or_fail(const pop_t *pop, const run_config *cfg,
                 const run_observer *obs, run_result *res);

/* score_checks on a stored output y (b rows of layer->f <= 64 features),
 * with the sums of y - beta it takes made here, row by row. */
size_t checks_of(const bn_layer *layer, size_t b, const double *y,
                 const double *var);

/* The default population, generated or failing the test. */
void default_pop(pop_t *pop);

/* The layer's settings in run_default_config (the key table's defaults). */
void default_layer(bn_config *cfg);
/* cfg's order parsed from name against the default population's
 * features, or failing the test; name must outlive cfg's order. */
void set_order(run_config *cfg, const char *name);

/* The network tests' data: uniform draws on [-1, 1) from a PCG32 stream
 * of the test's own, and n rows of f features with k labels (each group
 * fills it by its own rule), freed by test_rows_free. */
double test_rnd(pcg32_t *rng);
typedef struct {
    size_t n, f, k;
    double *x;
    int *label;
    net_data d;
} test_rows;
void test_rows_free(test_rows *r);

#endif
