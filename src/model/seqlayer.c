/* The batch-norm layer on padded sequences with a mask policy
 * (seqlayer.h): its training, its comparison of the two modes over the
 * real positions, and its scores. Plain loops in double, in a fixed
 * order: the bits do not depend on the build. */
#include "model/seqlayer.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "base/pcg32.h"
#include "base/rand.h"
#include "model/bn.h"
#include "model/keyid.h"
#include "model/score.h"

static const char *const mask_names[] = {"real", "padded", "mismatch"};

const char *seq_mask_name(int m)
{
    return m >= 0 && m < 3 ? mask_names[m] : NULL;
}

void seq_lengths(uint64_t seed, size_t n, size_t len, size_t min,
                 size_t *out)
{
    pcg32_t rng;
    pcg32_seed(&rng, seed, PCG32_INITSEQ_SEQ_LENGTHS);
    for (size_t i = 0; i < n; i++)
        out[i] = min + rand_index(&rng, (uint32_t)(len - min + 1));
}

/* Blame two keys and fail with msg. */
static int refuse(int *blame, int k0, int k1, bn_error *err, const char *msg)
{
    if (blame)
        blame[0] = k0, blame[1] = k1;
    return bn_fail(err, "%s", msg);
}

/* One sequence file's row: a length of 1..len (one column) or len mask
 * values of 0 and 1, at least one 1. */
static int file_row(const char *name, const double *v, size_t cols,
                    size_t len, size_t i, bn_error *err)
{
    if (cols == 1) {
        if (!(v[0] >= 1.0 && v[0] <= (double)len) || v[0] != floor(v[0]))
            return bn_fail(err, "%s: sequence %zu: length %.17g: a length "
                                "is a whole number from 1 to length = %zu",
                           name, i + 1, v[0], len);
        return 0;
    }
    size_t real = 0;
    for (size_t t = 0; t < cols; t++) {
        if (v[t] != 0.0 && v[t] != 1.0)
            return bn_fail(err, "%s: sequence %zu, position %zu: mask value "
                                "%.17g: a mask is 0 (padding) or 1 (real)",
                           name, i + 1, t + 1, v[t]);
        real += v[t] == 1.0;
    }
    if (real == 0)
        return bn_fail(err, "%s: sequence %zu: no real position", name,
                       i + 1);
    return 0;
}

/* [sequence] file against the sequences: a row each, one column of
 * lengths or L of mask values. */
static int file_check(const run_config *cfg, size_t n_seq, int *blame,
                      bn_error *err)
{
    const pop_t *m = cfg->seq.file;
    const char *name = cfg->seq.file_name;
    size_t len = cfg->seq.length;
    if (cfg->seq.min_length != 1)
        return refuse(blame, KEY_SEQ_MIN_LENGTH, KEY_SEQ_FILE, err,
                      "min_length draws the lengths, which [sequence] "
                      "file gives: set one of them");
    if (blame)
        blame[0] = KEY_SEQ_FILE, blame[1] = KEY_SEQ_LENGTH;
    if (m->f != 1 && m->f != len)
        return bn_fail(err, "%s: %zu columns: a sequence file holds one "
                            "column of lengths or length = %zu columns of "
                            "a 0/1 mask",
                       name, m->f, len);
    if (m->n != n_seq)
        return bn_fail(err, "%s: %zu rows for %zu sequences (the "
                            "population's %zu rows / length = %zu): a row "
                            "per sequence",
                       name, m->n, n_seq, n_seq * len, len);
    for (size_t i = 0; i < m->n; i++)
        if (file_row(name, &m->x[i * m->f], m->f, len, i, err) != 0)
            return -1;
    if (blame)
        blame[0] = blame[1] = -1;
    return 0;
}

int seq_check(const run_config *cfg, const pop_t *pop, int *blame,
              bn_error *err)
{
    size_t len = cfg->seq.length, b = cfg->batch_size;
    if (len == 0 && cfg->seq.file)
        return refuse(blame, KEY_SEQ_FILE, KEY_SEQ_LENGTH, err,
                      "a sequence file needs [sequence] length, the "
                      "positions each sequence is padded to");
    if (len == 0)
        return 0;
    if (pop->sample_rows > 1 || pop->n % len != 0)
        return refuse(blame, KEY_SEQ_LENGTH, KEY_ROWS, err,
                      "sequences need plain rows, a whole number of "
                      "sequences of `length` rows");
    if (cfg->seq.min_length > len)
        return refuse(blame, KEY_SEQ_MIN_LENGTH, KEY_SEQ_LENGTH, err,
                      "min_length must be at most length");
    if (cfg->seq.file && file_check(cfg, pop->n / len, blame, err) != 0)
        return -1;
    if (b < 2 || b > pop->n / len)
        return refuse(blame, KEY_BATCH_SIZE, KEY_SEQ_LENGTH, err,
                      "with sequences the batch size counts sequences: "
                      "from 2 to the population's rows / length");
    if (strcmp(cfg->order.name, "shuffled") != 0 ||
        cfg->partial != RUN_PARTIAL_DROP)
        return refuse(blame, KEY_ORDER, KEY_PARTIAL, err,
                      "sequences are batched from shuffled sequences, a "
                      "last partial batch dropped");
    if (cfg->drift.profile.kind != DRIFT_NONE || cfg->compositions != 0 ||
        cfg->eval.shift != 0.0 || cfg->eval.scale != 1.0 ||
        cfg->eval.offset != 0.0)
        return refuse(blame, KEY_SEQ_LENGTH, KEY_DRIFT, err,
                      "sequences take no drift, compositions or "
                      "[evaluation] move");
    if (cfg->layer.estimator > BN_EST_PRECISE)
        return refuse(blame, KEY_ESTIMATOR, KEY_SEQ_LENGTH, err,
                      "sequences take the estimators ema, ema-debiased, "
                      "cumulative and precise");
    if (cfg->precise_batches > (pop->n / len) / b)
        return refuse(blame, KEY_PRECISE, KEY_BATCH_SIZE, err,
                      "precise batches is more than the batches of "
                      "sequences in an epoch");
    return 0;
}

/* One run's state: the sequences, their lengths and order, the truth. */
typedef struct {
    const pop_t *pop;
    const run_config *cfg;
    size_t len, n_seq, f, b, nb;
    size_t *lengths, *order, *rows; /* rows: a batch's real positions */
    unsigned char *real;            /* n_seq x len: 1 where real */
    double *mu, *var;               /* the real positions' truth */
    double *stats;                  /* the last epoch's norm statistics */
    double *m_real, *v_real, *m_all, *v_all;
    double *y, *e;
    bn_layer layer;
    int have_layer;
} seq_state;

/* The rows of the real positions of sequences seqs[0..b-1] into rows;
 * returns their number. */
static size_t real_rows(const seq_state *s, const size_t *seqs, size_t b,
                        size_t *rows)
{
    size_t r = 0;
    for (size_t i = 0; i < b; i++)
        for (size_t t = 0; t < s->len; t++)
            if (s->real[seqs[i] * s->len + t])
                rows[r++] = seqs[i] * s->len + t;
    return r;
}

/* Mean and variance (divisor: the positions) of each feature over the
 * real positions rows[0..r-1], and over those and `pads` positions of
 * value 0 besides; two passes each. */
static void stats_of(const seq_state *s, const size_t *rows, size_t r,
                     size_t pads, double *m_real, double *v_real,
                     double *m_all, double *v_all)
{
    const double *x = s->pop->x;
    size_t f = s->f;
    double all = (double)(r + pads);
    for (size_t j = 0; j < f; j++) {
        double sum = 0.0;
        for (size_t i = 0; i < r; i++)
            sum += x[rows[i] * f + j];
        m_real[j] = sum / (double)r;
        m_all[j] = sum / all;
        double sr = 0.0, sa = 0.0;
        for (size_t i = 0; i < r; i++) {
            double dr = x[rows[i] * f + j] - m_real[j];
            double da = x[rows[i] * f + j] - m_all[j];
            sr += dr * dr;
            sa += da * da;
        }
        sa += (double)pads * m_all[j] * m_all[j];
        v_real[j] = sr / (double)r;
        v_all[j] = sa / all;
    }
}

/* Batch k's real positions and both statistics (into the state's). */
static size_t batch_stats(seq_state *s, size_t k)
{
    size_t r = real_rows(s, &s->order[k * s->b], s->b, s->rows);
    stats_of(s, s->rows, r, s->b * s->len - r, s->m_real, s->v_real,
             s->m_all, s->v_all);
    return r;
}

static int seq_alloc(seq_state *s, const pop_t *pop, const run_config *cfg,
                     run_result *res)
{
    memset(s, 0, sizeof *s);
    s->pop = pop, s->cfg = cfg, s->f = pop->f, s->len = cfg->seq.length;
    s->n_seq = pop->n / s->len, s->b = cfg->batch_size;
    s->nb = s->n_seq / s->b;
    size_t f = s->f, bl = s->b * s->len;
    s->lengths = malloc(2 * s->n_seq * sizeof *s->lengths);
    s->rows = bn_alloc_large(pop->n * sizeof *s->rows);
    s->mu = malloc((6 * f + 2 * s->nb * f) * sizeof *s->mu);
    s->y = malloc(2 * bl * f * sizeof *s->y);
    s->real = bn_alloc_large(pop->n);
    s->have_layer = bn_init(&s->layer, f, &cfg->layer) == 0;
    if (!s->lengths || !s->rows || !s->mu || !s->y || !s->real ||
        !s->have_layer ||
        run_result_arrays(res, f) != 0)
        return -1;
    s->order = s->lengths + s->n_seq;
    s->var = s->mu + f, s->m_real = s->mu + 2 * f, s->v_real = s->mu + 3 * f;
    s->m_all = s->mu + 4 * f, s->v_all = s->mu + 5 * f;
    s->stats = s->mu + 6 * f;
    s->e = s->y + bl * f;
    return 0;
}

static void seq_free(seq_state *s)
{
    free(s->lengths);
    free(s->rows);
    free(s->mu);
    free(s->y);
    free(s->real);
    if (s->have_layer)
        bn_free(&s->layer);
}

/* Which positions are real: the file's mask, or the first l_i of each
 * sequence, l_i the file's length or a generated one. */
static void seq_real(seq_state *s)
{
    const pop_t *m = s->cfg->seq.file;
    if (m && m->f == s->len && s->len > 1) {
        for (size_t i = 0; i < s->n_seq * s->len; i++)
            s->real[i] = m->x[i] == 1.0;
        return;
    }
    if (m)
        for (size_t i = 0; i < s->n_seq; i++)
            s->lengths[i] = (size_t)m->x[i];
    else
        seq_lengths(s->cfg->seed, s->n_seq, s->len, s->cfg->seq.min_length,
                    s->lengths);
    for (size_t i = 0; i < s->n_seq; i++)
        for (size_t t = 0; t < s->len; t++)
            s->real[i * s->len + t] = t < s->lengths[i];
}

/* The real positions, the shuffle of the sequences and the real
 * positions' truth; returns the share of padded positions. */
static double seq_setup(seq_state *s)
{
    seq_real(s);
    pcg32_t rng;
    pcg32_seed(&rng, s->cfg->seed, PCG32_INITSEQ_SHUFFLE);
    for (size_t i = 0; i < s->n_seq; i++)
        s->order[i] = i;
    rand_shuffle(&rng, s->order, s->n_seq);
    size_t *all = malloc(s->n_seq * sizeof *all);
    for (size_t i = 0; all && i < s->n_seq; i++)
        all[i] = i;
    size_t r = all ? real_rows(s, all, s->n_seq, s->rows) : 0;
    free(all);
    stats_of(s, s->rows, r, 0, s->mu, s->var, s->m_all, s->v_all);
    return 1.0 - (double)r / (double)s->pop->n;
}

/* Which statistics normalise a batch in training mode, and which the
 * buffers take, under the policy. */
static int norm_all(const seq_state *s)
{
    return s->cfg->seq.mask == SEQ_MASK_PADDED;
}
static int update_all(const seq_state *s)
{
    return s->cfg->seq.mask != SEQ_MASK_REAL;
}

/* Every epoch's updates; the last epoch's norm statistics kept, and
 * their errors against the truth. */
static void seq_train(seq_state *s, run_result *res, double *dm, double *dv)
{
    size_t f = s->f, positions = s->b * s->len;
    for (size_t ep = 0; ep < s->cfg->epochs; ep++)
        for (size_t k = 0; k < s->nb; k++) {
            size_t r = batch_stats(s, k);
            int ua = update_all(s);
            bn_update(&s->layer, ua ? positions : r, ua ? s->m_all : s->m_real,
                      ua ? s->v_all : s->v_real);
            if (ep + 1 < s->cfg->epochs)
                continue;
            const double *m = norm_all(s) ? s->m_all : s->m_real;
            const double *v = norm_all(s) ? s->v_all : s->v_real;
            memcpy(&s->stats[2 * k * f], m, f * sizeof *m);
            memcpy(&s->stats[(2 * k + 1) * f], v, f * sizeof *v);
            for (size_t j = 0; j < f; j++) {
                double a = m[j] - s->mu[j], c = v[j] - s->var[j];
                *dm += a * a;
                *dv += c * c;
                res->batch_mean_sq[j] += a * a;
            }
        }
}

/* precise: the buffers become the pooled statistics of the first K
 * batches of the order (0: all) over the positions the buffers take. */
static void seq_pool(seq_state *s)
{
    size_t k = s->cfg->precise_batches ? s->cfg->precise_batches : s->nb;
    size_t r = real_rows(s, s->order, k * s->b, s->rows);
    size_t pads = update_all(s) ? k * s->b * s->len - r : 0;
    stats_of(s, s->rows, r, pads, s->m_real, s->v_real, s->m_all, s->v_all);
    const double *m = update_all(s) ? s->m_all : s->m_real;
    const double *v = update_all(s) ? s->v_all : s->v_real;
    memcpy(s->layer.rm, m, s->f * sizeof *m);
    memcpy(s->layer.rv, v, s->f * sizeof *v);
}

/* Each real position's two outputs in the last epoch's batches: the sum
 * of squared differences per feature into sq; returns the positions. */
static size_t seq_compare(seq_state *s, double *sq)
{
    size_t f = s->f, kept = 0;
    for (size_t k = 0; k < s->nb; k++) {
        size_t r = real_rows(s, &s->order[k * s->b], s->b, s->rows);
        const double *m = &s->stats[2 * k * f], *v = &s->stats[(2 * k + 1) * f];
        bn_normalize_rows(&s->layer, r, s->pop->x, s->rows, NULL, m, v, s->y);
        bn_normalize_rows(&s->layer, r, s->pop->x, s->rows, NULL,
                          s->layer.rm, s->layer.rv, s->e);
        for (size_t i = 0; i < r; i++)
            for (size_t j = 0; j < f; j++) {
                double d = s->y[i * f + j] - s->e[i * f + j];
                sq[j] += d * d;
            }
        kept += r;
    }
    return kept;
}

/* The closed form of buffers pooled over every position, padding (0)
 * included, against the real positions' truth. */
static void closed_form(const seq_state *s, double pad, run_result *res)
{
    double sm = 0.0, sv = 0.0;
    for (size_t j = 0; j < s->f; j++) {
        double dm = pad * s->mu[j];
        double dv = pad * ((1.0 - pad) * s->mu[j] * s->mu[j] - s->var[j]);
        sm += dm * dm;
        sv += dv * dv;
    }
    res->closed_mean_err = sqrt(sm / (double)s->f);
    res->closed_var_err = sqrt(sv / (double)s->f);
}

static void seq_scores(const seq_state *s, double pad, double dm, double dv,
                       const double *sq, size_t kept, run_result *res)
{
    size_t f = s->f;
    const bn_layer *l = &s->layer;
    const bn_estimator_def *est = bn_estimator_get(s->cfg->layer.estimator);
    score_buffers_t sb;
    score_buffers_of(f, s->mu, s->var, l->rm, l->rv, &sb);
    res->updates = l->updates;
    res->init_weight =
        est->init_weight ? est->init_weight(s->cfg->layer.keep, l->updates)
                         : 0.0;
    res->stats_err = sb.stats_err, res->mean_err = sb.mean_err;
    res->var_err = sb.var_err, res->worst_var_err = sb.worst_var_err;
    res->worst_var_feature = sb.worst_var_feature;
    res->stats_err_rel = sb.stats_err_rel;
    res->worst_var_rel = sb.worst_var_rel;
    double total = 0.0;
    for (size_t j = 0; j < f; j++) {
        total += sq[j];
        res->train_eval[j] = sqrt(sq[j] / (double)kept);
        res->batch_mean_sq[j] /= (double)s->nb;
    }
    res->train_eval_rmse = sqrt(total / (double)(kept * f));
    res->batch_mean_err = sqrt(dm / (double)(s->nb * f));
    res->batch_var_err = sqrt(dv / (double)(s->nb * f));
    res->pad_fraction = pad;
    closed_form(s, pad, res);
    memcpy(res->running_mean, l->rm, f * sizeof(double));
    memcpy(res->running_var, l->rv, f * sizeof(double));
    memcpy(res->true_mean, s->mu, f * sizeof(double));
    memcpy(res->true_var, s->var, f * sizeof(double));
}

int seq_run(const pop_t *pop, const run_config *cfg, run_result *res,
            bn_error *err)
{
    seq_state s;
    int rc = seq_alloc(&s, pop, cfg, res);
    double *sq = rc == 0 ? calloc(pop->f, sizeof *sq) : NULL;
    if (rc != 0 || !sq) {
        free(sq);
        seq_free(&s);
        return bn_fail(err, "out of memory");
    }
    memset(res->batch_mean_sq, 0, pop->f * sizeof(double));
    double pad = seq_setup(&s), dm = 0.0, dv = 0.0;
    seq_train(&s, res, &dm, &dv);
    if (bn_estimator_get(cfg->layer.estimator)->pools)
        seq_pool(&s);
    size_t kept = seq_compare(&s, sq);
    seq_scores(&s, pad, dm, dv, sq, kept, res);
    free(sq);
    seq_free(&s);
    return 0;
}
