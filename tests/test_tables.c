/*
 * The tables and what derives from them, each at its boundaries, so that
 * a bug is reported as wrong and not only as "the results changed": the
 * key, estimator, order, score and output-file tables' invariants; the
 * decoding of every configuration of an all-axes product; each
 * validator's bounds, through an experiment file and through `run`'s
 * options alike; the batch statistics of a feature with mean 1e8; the
 * self-checks' tolerances; hand-computed percentiles; the population
 * identifier against FNV-1a's published values; every claim test kind on
 * tiny TSV files (ties under >, one row under increasing, values at the
 * tolerance, non-numeric cells); and every committed experiment's rows
 * distinct in their key columns.
 */
#include "helpers.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "study/dist.h"
#include "study/exp.h"
#include "study/out.h"
#include "study/outfile.h"
#include "base/pcg32.h"
#include "pop/popid.h"
#include "model/score.h"
#include "base/tsv.h"
#include "claim/verify.h"

static char tmpdir[256];

static int setup(void **state)
{
    (void)state;
    return test_tmpdir_make(tmpdir, sizeof tmpdir, "tables");
}

static int teardown(void **state)
{
    (void)state;
    return test_tmpdir_remove(tmpdir);
}

#define write_file test_write_file
#define shell test_shell

/* ---- the tables ---- */

static void test_estimator_and_order_tables(void **state)
{
    (void)state;
    char list[512];
    bn_join(list, sizeof list, " ", " ", bn_estimator_name_at);
    for (int i = 0; i < BN_EST_COUNT; i++) {
        const bn_estimator_def *d = bn_estimator_get((bn_estimator)i);
        bn_estimator e;
        assert_int_equal(bn_estimator_parse(d->name, &e), 0);
        assert_int_equal(e, i);
        assert_non_null(d->update);
        assert_non_null(d->help);
        assert_non_null(strstr(list, d->name));
    }
    bn_estimator e;
    assert_int_equal(bn_estimator_parse("emaa", &e), -1);
    assert_int_equal(bn_estimator_parse("", &e), -1);

    /* Every name order_list shows parses (NAME as a feature, K as 3) on a
     * population with a label and a group column, and the message for an
     * unknown order lists them. */
    pop_t spec;
    default_pop(&spec);
    char label[] = "class", group[] = "user";
    spec.label.column = label;
    spec.group.column = group;
    order_list(" ", list, sizeof list);
    char *save;
    size_t n = 0;
    for (char *w = strtok_r(list, " ", &save); w;
         w = strtok_r(NULL, " ", &save), n++) {
        char name[64];
        snprintf(name, sizeof name, "%s", w);
        char *c = strchr(name, ':');
        if (c)
            strcpy(c + 1, strcmp(c + 1, "K") == 0 ? "3" : "f2");
        order_spec o;
        bn_error err;
        if (order_parse(name, &spec, &o, &err) != 0)
            fail_msg("%s: %s", name, err.msg);
        assert_string_equal(o.name, name);
    }
    /* A name per row, and one more for a row whose argument is optional
     * ("sorted" and "sorted:NAME"). */
    size_t names = 0;
    for (size_t i = 0; order_get(i); i++)
        names += 1 + (order_get(i)->arg_optional != 0);
    assert_int_equal(n, names);
    order_spec o;
    bn_error err;
    assert_int_equal(order_parse("zigzag", &spec, &o, &err), -1);
    assert_non_null(strstr(err.msg, "sorted-desc:NAME, grouped:K"));
    /* The orders on a column need the population to have it. */
    spec.label.column = spec.group.column = NULL;
    assert_int_equal(order_parse("by-label", &spec, &o, &err), -1);
    assert_non_null(strstr(err.msg, "label column"));
    assert_int_equal(order_parse("by-group", &spec, &o, &err), -1);
    assert_non_null(strstr(err.msg, "group column"));
    pop_free(&spec);
    /* Only shuffled makes every permutation equally likely. */
    for (size_t i = 0; order_get(i); i++)
        assert_int_equal(order_get(i)->uniform,
                         strcmp(order_get(i)->name, "shuffled") == 0);
    /* Every order has its phrase for figures, the argument put in. */
    char buf[100];
    for (size_t i = 0; order_get(i); i++)
        assert_non_null(order_get(i)->phrase);
    static const char *const phrased[][2] = {
        {"shuffled", "shuffled batches"},
        {"sorted", "batches sorted by the first feature"},
        {"sorted:worst area", "batches sorted by worst area"},
        {"sorted-desc:f2", "batches sorted by f2, descending"},
        {"grouped:8", "batches cut from 8 contiguous groups"},
        {"by-label", "batches grouped by class"},
        {"grouped", "grouped"},   /* K is not optional */
        {"zigzag", "zigzag"},
    };
    for (size_t i = 0; i < sizeof phrased / sizeof *phrased; i++)
        assert_string_equal(order_phrase(phrased[i][0], buf, sizeof buf),
                            phrased[i][1]);
}

static void test_key_and_score_tables(void **state)
{
    (void)state;
    int col_seen[KEY_COUNT + 1] = {0}, nest_seen[KEY_COUNT + 1] = {0};
    int max_col = 0, max_nest = 0;
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = exp_key((key_id)k);
        assert_non_null(d->name);
        assert_non_null(d->help);
        if (d->section)
            assert_int_equal(exp_key_find(d->section, d->name), k);
        if (d->col) {
            assert_non_null(d->get);
            assert_int_equal(col_seen[d->col]++, 0);
            max_col = d->col > max_col ? d->col : max_col;
            assert_int_equal(exp_key_column(d->name), k);
        }
        if (d->nest) { /* an axis: a list with a default, applied */
            assert_non_null(d->apply);
            assert_non_null(d->dflt);
            assert_non_null(d->arg);
            assert_true(d->col > 0);
            assert_int_equal(nest_seen[d->nest]++, 0);
            max_nest = d->nest > max_nest ? d->nest : max_nest;
        }
    }
    /* Columns and nesting ranks are 1..n without gaps. */
    for (int c = 1; c <= max_col; c++)
        assert_int_equal(col_seen[c], 1);
    for (int r = 1; r <= max_nest; r++)
        assert_int_equal(nest_seen[r], 1);
    /* exp_index relies on batch size varying fastest, then the seed. */
    assert_int_equal(exp_key(KEY_BATCH_SIZE)->nest, max_nest);
    assert_int_equal(exp_key(KEY_SEED)->nest, max_nest - 1);

    /* Scores: unique names, none a key column, each a summary column. */
    for (size_t i = 0; score_get(i); i++) {
        const score_def *s = score_get(i);
        assert_ptr_equal(score_find(s->name), s);
        assert_int_equal(exp_key_column(s->name), -1);
        exp_column c;
        assert_int_equal(exp_column_find(s->name, &c), 0);
        assert_ptr_equal(c.score, s);
    }
    assert_int_equal(exp_column_find("nosuch", NULL), -1);
    for (int i = 0; out_file_get(i); i++)
        assert_int_equal(out_file_find(out_file_get(i)->name), i);
}

/* Two values of every axis of the key table (its rows with a place in the
 * product), as an experiment file writes them. */
static const struct {
    const char *key, *values;
} axis_values[] = {
    {"shift", "0 0.5"},          {"scale", "1 2"},
    {"offset", "0 1"},
    {"hidden", "4 8"},           {"norm", "batch none"},
    {"freeze_after", "0 1"},     {"lr", "0.1 0.2"},
    {"sgd_momentum", "0 0.5"},   {"weight_decay", "0 0.01"},
    {"init_seed", "1 2"},        {"gamma", "1 2"},
    {"beta", "0 1"},             {"eps", "1e-5 1e-3"},
    {"momentum", "0.9 0.5"},     {"momentum_weights", "old new"},
    {"variance", "biased unbiased"}, {"estimator", "ema precise"},
    {"devices", "1 2"},          {"sync", "no yes"},
    {"batch_size", "8 16"},      {"order", "shuffled sorted"},
    {"seed", "1 2"},             {"epochs", "1 2"},
    {"partial", "drop keep"},    {"precise_batches", "0 1"},
    {"drift", "none step:1"},    {"drift_size", "0 0.5"},
    {"compositions", "0 2"},
    {"length", "0 8"},           {"min_length", "1 2"},
    {"mask", "real padded"},
    /* A declared network's (RUN_NET_EXT); a network's two values are
     * apart at '|', as a list of networks is at a comma. */
    {"layers", "linear:4 relu linear:K|linear:4 batch relu linear:K"},
    {"depth", "1 2"},            {"dtype", "float64 float32"},
    {"optimizer", "sgd adam"},   {"adam_beta1", "0.9 0.8"},
    {"adam_beta2", "0.999 0.99"}, {"adam_eps", "1e-8 1e-6"},
    {"warmup", "0 2"},           {"schedule", "constant step"},
    {"step_epochs", "10 2"},     {"step_factor", "0.1 0.5"},
};

/* The two values of an axis's entry, and where they part. */
static const char *apart(const char *values)
{
    const char *bar = strchr(values, '|');
    return bar ? bar : strchr(values, ' ');
}

static const char *values_of(const key_def *d)
{
    for (size_t i = 0; i < sizeof axis_values / sizeof *axis_values; i++)
        if (strcmp(axis_values[i].key, d->name) == 0)
            return axis_values[i].values;
    fail_msg("axis %s has no two values: add them to axis_values in "
             "tests/test_tables.c",
             d->name);
    return NULL;
}

/* Which of an axis's two values configuration c has, read back through
 * the key's get; -1 for neither. */
static int which_value(const key_def *d, const run_config *c)
{
    key_cell cell;
    memset(&cell, 0, sizeof cell);
    d->get(c, &cell);
    char vals[128];
    snprintf(vals, sizeof vals, "%s", values_of(d));
    char *second = vals + (apart(vals) - vals);
    *second++ = '\0';
    const char *v[2] = {vals, second};
    for (int i = 0; i < 2; i++) {
        const char *text = cell.text ? cell.text : cell.buf;
        if ((cell.kind == CELL_TEXT && strcmp(text, v[i]) == 0) ||
            (cell.kind == CELL_INT && cell.u == strtoull(v[i], NULL, 10)) ||
            (cell.kind == CELL_REAL && cell.r == strtod(v[i], NULL)))
            return i;
    }
    return -1;
}

/* Which of a model's axes a product takes: the keys of no extension, and
 * those of each extension (RUN_EXTS: a declared network, devices, batch
 * compositions, padded sequences) in a product of their own, since an
 * extension's keys may refuse another's (sequences refuse a drift, an
 * order but shuffled, ...). A declared network's `layers` is apart from
 * `depth`, which only the default network reads. The batch size and the
 * seed are in every product. */
typedef enum {
    AXES_BASE, AXES_NET, AXES_LAYERS, AXES_DEV, AXES_DEP, AXES_SEQ,
    AXES_PARTS
} axes_part;

static const unsigned part_ext[AXES_PARTS] = {
    [AXES_BASE] = 0,           [AXES_NET] = RUN_NET_EXT,
    [AXES_LAYERS] = RUN_NET_EXT, [AXES_DEV] = RUN_DEV_EXT,
    [AXES_DEP] = RUN_DEP_EXT,  [AXES_SEQ] = RUN_SEQ_EXT,
};

static int in_part(const key_def *d, int pass, axes_part part)
{
    if (pass == KEY_BATCH_SIZE || pass == KEY_SEED)
        return 1;
    if ((d->models & RUN_EXTS) != part_ext[part])
        return 0;
    return part_ext[part] != RUN_NET_EXT ||
           (pass == KEY_LAYERS) == (part == AXES_LAYERS);
}

/* Every axis of model m's in part (the type held at m, and for a model
 * without the layer's keys the batch size and the seed beside its own) at
 * its two values: each configuration decodes to its own combination, read
 * back through each key's get, and the axes vary by their nesting rank,
 * the highest fastest. */
static int axis_tried[KEY_COUNT];

static void check_axes_decode(run_model_id m, axes_part part)
{
    int axes[KEY_COUNT];
    size_t na = 0;
    char text[2048];
    size_t len = (size_t)snprintf(text, sizeof text,
                                  "[population]\nclasses = 3\n"
                                  "[model]\ntype = %s\n",
                                  run_model_name(m));
    unsigned own = RUN_MODEL_BIT(m), layer = RUN_MODEL_BIT(RUN_MODEL_LAYER);
    /* Sections in file order, each axis of the model once. */
    for (int pass = 0; pass < KEY_COUNT; pass++) {
        const key_def *d = exp_key((key_id)pass);
        int mine = (d->models & own) &&
                   (m == RUN_MODEL_LAYER || !(d->models & layer) ||
                    pass == KEY_BATCH_SIZE || pass == KEY_SEED);
        if (!d->nest || pass == KEY_MODEL || !mine ||
            !in_part(d, pass, part))
            continue;
        const char *v = values_of(d), *at = apart(v);
        len += (size_t)snprintf(text + len, sizeof text - len,
                                "[%s]\n%s = %.*s%s%s\n", d->section, d->name,
                                (int)(at - v), v, *at == '|' ? ", " : " ",
                                at + 1);
        axes[na++] = pass;
        axis_tried[pass] = 1;
    }
    assert_true(len < sizeof text && na < 8 * sizeof(unsigned));
    char path[300];
    snprintf(path, sizeof path, "%s/all.ini", tmpdir);
    write_file(path, text);
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    if (exp_load(e, path, NULL, &err) != 0)
        fail_msg("%s\nfor:\n%s", err.msg, text);
    size_t n = exp_count(e);
    assert_int_equal(n, (size_t)1 << na);
    /* The place of each axis's bit in k: by nesting rank, fastest 0. */
    int place[KEY_COUNT];
    for (size_t a = 0; a < na; a++) {
        place[a] = 0;
        for (size_t b = 0; b < na; b++)
            place[a] += exp_key((key_id)axes[b])->nest >
                        exp_key((key_id)axes[a])->nest;
    }
    for (size_t k = 0; k < n; k++) {
        run_config c;
        exp_config(e, k, &c);
        for (size_t a = 0; a < na; a++) {
            const key_def *d = exp_key((key_id)axes[a]);
            int want = (int)((k >> place[a]) & 1u);
            if (which_value(d, &c) != want)
                fail_msg("%s configuration %zu: %s is not its value %d",
                         run_model_name(m), k, d->name, want);
        }
        assert_int_equal(c.model, m);
        assert_string_equal(c.population,
                            m == RUN_MODEL_LAYER ? e->pop_id : e->held_id);
        /* p follows momentum and its convention. */
        assert_true(c.layer.p == (c.layer.weights == BN_WEIGHTS_NEW
                                      ? c.layer.momentum
                                      : bn_decimal_complement(
                                            c.layer.momentum)));
    }
    exp_free(e);
    free(e);
}

/* Whether model m has an axis of its own (beyond the batch size and the
 * seed) in part. */
static int has_axes(run_model_id m, axes_part part)
{
    for (int pass = 0; pass < KEY_COUNT; pass++) {
        const key_def *d = exp_key((key_id)pass);
        if (d->nest && pass != KEY_MODEL && pass != KEY_BATCH_SIZE &&
            pass != KEY_SEED && (d->models & RUN_MODEL_BIT(m)) &&
            in_part(d, pass, part))
            return 1;
    }
    return 0;
}

static void test_every_axis_decodes(void **state)
{
    (void)state;
    size_t products = 0;
    for (int m = 0; run_model_name(m); m++)
        for (int part = 0; part < AXES_PARTS; part++)
            if (part == AXES_BASE || has_axes((run_model_id)m, part)) {
                check_axes_decode((run_model_id)m, (axes_part)part);
                products++;
            }
    /* Every axis was in some model's product: a key of an extension
     * without a part here would decode untested. */
    for (int pass = 0; pass < KEY_COUNT; pass++)
        if (exp_key((key_id)pass)->nest && pass != KEY_MODEL &&
            !axis_tried[pass])
            fail_msg("axis %s is in no product: give its extension a part "
                     "in tests/test_tables.c",
                     exp_key((key_id)pass)->name);
    assert_true(products >= AXES_PARTS);
}

/* ---- validators: the same bounds from a file and from `run` ---- */

typedef struct {
    const char *section, *key, *value;
    int ok;
    const char *says; /* in the message when refused */
    int clf; /* the classifier's: tried where it trains (a population with
              * classes; `run` on Wine's rows) */
} bound_case;

#define CLF 1
/* Stands for the model table's names as a message lists them. */
#define MODEL_NAMES "(the model table's names)"

static const bound_case bounds[] = {
    {"layer", "momentum", "1", 1, NULL, 0},
    {"layer", "momentum", "0", 0, "(0, 1]", 0},
    {"layer", "momentum", "1.0000000000000002", 0, "(0, 1]", 0},
    {"layer", "momentum", "4.9e-324", 1, NULL, 0},
    {"layer", "eps", "4.9e-324", 1, NULL, 0},
    {"layer", "eps", "0", 0, "> 0", 0},
    {"layer", "eps", "-1e-5", 0, "> 0", 0},
    {"layer", "eps", "inf", 0, "> 0", 0},
    {"layer", "gamma", "-1e100", 1, NULL, 0},
    {"layer", "gamma", "nan", 0, "finite", 0},
    {"layer", "beta", "1e100", 1, NULL, 0},
    {"layer", "beta", "-inf", 0, "finite", 0},
    {"layer", "estimator", "cumulative", 1, NULL, 0},
    {"layer", "estimator", "Cumulative", 0, "(ema, ema-debiased, cumulative",
     0},
    {"layer", "variance", "unbiased", 1, NULL, 0},
    {"layer", "variance", "unbias", 0, "biased or unbiased", 0},
    {"layer", "momentum_weights", "new", 1, NULL, 0},
    {"layer", "momentum_weights", "older", 0, "old or new", 0},
    {"sweep", "batch_size", "2", 1, NULL, 0},
    {"sweep", "batch_size", "1", 0, "from 2", 0},
    {"sweep", "batch_size", "512", 1, NULL, 0},
    {"sweep", "batch_size", "513", 0, "512 rows", 0},
    {"sweep", "epochs", "1", 1, NULL, 0},
    {"sweep", "epochs", "0", 0, "from 1 to 1000000", 0},
    {"sweep", "epochs", "1000001", 0, "from 1 to 1000000", 0},
    {"sweep", "seed", "18446744073709551615", 1, NULL, 0},
    {"sweep", "seed", "18446744073709551616", 0, "not an integer", 0},
    {"sweep", "seed", "-1", 0, "not an integer", 0},
    /* 256 rows a batch: 2 batches, so precise_batches 2 and not 3. */
    {"sweep", "precise_batches", "2", 1, NULL, 0},
    {"sweep", "precise_batches", "3", 0, "more than the 2 batches", 0},
    {"sweep", "order", "grouped:512", 1, NULL, 0},
    {"sweep", "order", "grouped:513", 0, "from 1 to the population's 512", 0},
    {"sweep", "order", "grouped:0", 0, "from 1 to the population's 512", 0},
    {"sweep", "order", "sorted-desc:f7", 1, NULL, 0},
    {"sweep", "order", "sorted-desc:f8", 0, "no feature named 'f8'", 0},
    {"sweep", "partial", "keep", 1, NULL, 0},
    {"sweep", "partial", "keeps", 0, "drop or keep", 0},
    {"model", "type", "classifier", 1, NULL, CLF},
    {"model", "type", "tree", 0, MODEL_NAMES, CLF},
    {"model", "hidden", "1", 1, NULL, CLF},
    {"model", "hidden", "65536", 1, NULL, CLF},
    {"model", "hidden", "0", 0, "from 1 to 65536", CLF},
    {"model", "hidden", "65537", 0, "from 1 to 65536", CLF},
    {"model", "norm", "none", 1, NULL, CLF},
    {"model", "norm", "layer", 0, "(batch or none)", CLF},
    {"model", "lr", "0", 1, NULL, CLF},
    {"model", "lr", "-0.1", 0, ">= 0", CLF},
    {"model", "sgd_momentum", "0.99", 1, NULL, CLF},
    {"model", "sgd_momentum", "1", 0, "in [0, 1)", CLF},
    {"model", "sgd_momentum", "-0.5", 0, "in [0, 1]", CLF},
    {"model", "weight_decay", "0", 1, NULL, CLF},
    {"model", "weight_decay", "-1e-9", 0, ">= 0", CLF},
    {"model", "init_seed", "18446744073709551615", 1, NULL, CLF},
    {"model", "freeze_after", "1000000", 1, NULL, CLF},
    {"model", "freeze_after", "1000001", 0, "from 0 to 1000000", CLF},
    {"evaluation", "shift", "-3", 1, NULL, CLF},
    {"evaluation", "shift", "nan", 0, "finite", CLF},
    {"evaluation", "scale", "1e-300", 1, NULL, CLF},
    {"evaluation", "scale", "0", 0, "> 0", CLF},
};

static void test_validator_bounds(void **state)
{
    (void)state;
    char path[300], errf[320], cmd[1200];
    snprintf(path, sizeof path, "%s/b.ini", tmpdir);
    snprintf(errf, sizeof errf, "%s/stderr", tmpdir);
    const char *bn = test_env("BNSTUDY", "./bnstudy");
    size_t failures = 0;
    for (size_t i = 0; i < sizeof bounds / sizeof *bounds; i++) {
        bound_case copy = bounds[i];
        const bound_case *c = &copy;
        char names[256], says[300];
        if (c->says && strcmp(c->says, MODEL_NAMES) == 0) {
            bn_join(names, sizeof names, ", ", " or ", run_model_name);
            snprintf(says, sizeof says, "(%s)", names);
            copy.says = says;
        }
        char text[256];
        /* The classifier's keys where it trains: generated classes, and
         * the model unless the case is the model itself. */
        int model = c->clf && strcmp(c->key, "type") != 0;
        int line = !c->clf ? 2 : model ? 6 : 4;
        snprintf(text, sizeof text, "%s%s[%s]\n%s = %s\n",
                 c->clf ? "[population]\nclasses = 3\n" : "",
                 model ? "[model]\ntype = classifier\n" : "", c->section,
                 c->key, c->value);
        write_file(path, text);
        exp_t *e = malloc(sizeof *e);
        bn_error err;
        int rc = exp_load(e, path, NULL, &err);
        exp_free(e);
        free(e);
        char want[400];
        snprintf(want, sizeof want, "%s:%d: ", path, line);
        if (c->ok && rc != 0) {
            print_error("%s = %s refused: %s\n", c->key, c->value, err.msg);
            failures++;
        } else if (!c->ok && (rc == 0 || strncmp(err.msg, want,
                                                 strlen(want)) ||
                              !strstr(err.msg, c->says))) {
            print_error("%s = %s: got '%s', want '%s...%s'\n", c->key,
                        c->value, rc ? err.msg : "accepted", want, c->says);
            failures++;
        }
        /* The same value as `run`'s option: the same verdict. */
        char opt[64];
        snprintf(opt, sizeof opt, "--%s", c->key);
        for (char *p = opt + 2; *p; p++)
            if (*p == '_')
                *p = '-';
        snprintf(cmd, sizeof cmd, "%s run %s%s %s '%s' >/dev/null 2>%s", bn,
                 c->clf ? "--population data/wine.csv --label label "
                          "--batch-size 16 "
                        : "",
                 model ? "--type classifier" : "", opt, c->value, errf);
        int st = shell("%s", cmd);
        char *msg = test_slurp(errf, NULL);
        assert_non_null(msg);
        if (st != (c->ok ? 0 : 2) ||
            (!c->ok && (!strstr(msg, opt) || !strstr(msg, c->says)))) {
            print_error("run %s %s: status %d, '%s'\n", opt, c->value, st,
                        msg);
            failures++;
        }
        test_slurp_free(msg);
    }
    if (failures)
        fail_msg("%zu bound cases misbehaved", failures);
}

/* Settings fine alone but not together are named at the line of the key
 * to blame, with the values of the combination that failed. */
static void test_combinations_blame_their_lines(void **state)
{
    (void)state;
    static const struct {
        const char *text;
        int line;
        const char *says;
    } cases[] = {
        {"[layer]\nmomentum = 0.9 1\nestimator = ema ema-debiased\n", 2,
         "momentum 1, estimator ema-debiased: ema-debiased needs"},
        {"[population]\nrows = 100\n[sweep]\nbatch_size = 8 101\n", 4,
         "batch_size 101: batch size must be from 2 to the population's "
         "100 rows"},
        /* The batch size is a default: the rows are to blame. */
        {"[population]\nrows = 100\n", 2, "got 256"},
        {"[sweep]\nbatch_size = 7 8\npartial = keep\n", 3,
         "batch_size 7: partial keep with batch size 7"},
        {"[sweep]\nbatch_size = 128 256\nprecise_batches = 4\n", 3,
         "batch_size 256: precise batches 4 is more than the 2"},
        {"[sweep]\norder = shuffled sorted:zz\n", 2, "no feature named"},
        {"[population]\nfeature = a 0 -1 0\n", 2, "sd must be >= 0"},
        {"[population]\nfeature = a 0 1 1.0000001\n", 2,
         "rho must be in [-1, 1]"},
        {"[experiment]\noutputs = summary everything\n", 2,
         "unknown value 'everything' (summary, features, table"},
    };
    char path[300];
    snprintf(path, sizeof path, "%s/c.ini", tmpdir);
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        write_file(path, cases[i].text);
        exp_t *e = malloc(sizeof *e);
        bn_error err;
        int rc = exp_load(e, path, NULL, &err);
        exp_free(e);
        free(e);
        char want[400];
        snprintf(want, sizeof want, "%s:%d: ", path, cases[i].line);
        if (rc == 0 || strncmp(err.msg, want, strlen(want)) != 0 ||
            !strstr(err.msg, cases[i].says))
            fail_msg("case %zu: got '%s', want '%s...%s'", i,
                     rc ? err.msg : "accepted", want, cases[i].says);
    }
}

/* ---- arithmetic at its edges ---- */

/* A feature with mean 1e8 over a batch of 65536: the first mean's
 * rounding is what the corrected two-pass removes, from the mean (sd 1:
 * a few ulps of 1e8) and from the variance (sd 1e-4: the rounding is then
 * large against the spread, and uncorrected the variance is off by 3e-6
 * of itself). */
static void check_large_mean(double sd, double mean_tol, double var_tol)
{
    const size_t b = 65536;
    double *x = malloc(b * sizeof *x);
    assert_non_null(x);
    pcg32_t rng;
    pcg32_seed(&rng, 5, 77);
    for (size_t i = 0; i < b; i++)
        x[i] = 1e8 + ((double)pcg32_next(&rng) / 4294967296.0 - 0.5) *
                         3.4641016151377544 * sd;
    long double m, v;
    ld_moments(b, 1, x, &m, &v);
    double mean, var;
    bn_batch_stats(b, 1, x, &mean, &var);
    assert_close(mean, m, mean_tol, 1.0L);
    assert_rel(var, v, var_tol);
    free(x);
}

static void test_batch_stats_large_mean(void **state)
{
    (void)state;
    /* One ulp of 1e8 is 1.49e-8: the mean within one of the exact. */
    check_large_mean(1.0, 1.5e-8, 1e-13);
    check_large_mean(1e-4, 1.5e-8, 1e-9);
}

static void test_self_check_tolerances(void **state)
{
    (void)state;
    bn_config cfg;
    default_layer(&cfg);
    cfg.eps = 1e-300; /* want_v = var / (var + eps) = 1 for var 1 */
    bn_layer layer;
    assert_int_equal(bn_init(&layer, 1, &cfg), 0);
    double var[1] = {1.0};
    /* Mean off beta by 2^-30 (< 1e-9 (|gamma| + |beta|)) passes, by 2^-29
     * (> 1e-9) fails; the variance stays exactly 1. */
    const double d30 = ldexp(1.0, -30), d29 = ldexp(1.0, -29);
    assert_int_equal(
        checks_of(&layer, 2, (double[]){1.0 + d30, -1.0 + d30}, var), 2);
    assert_int_equal(
        checks_of(&layer, 2, (double[]){1.0 + d29, -1.0 + d29}, var), 1);
    /* Variance off by 0.9e-9 passes, by 1.1e-9 fails: the bound is 1e-9
     * of the wanted 1 plus 1e-12. */
    double a = sqrt(1.0 + 0.9e-9);
    assert_int_equal(checks_of(&layer, 2, (double[]){a, -a}, var), 2);
    a = sqrt(1.0 + 1.1e-9);
    assert_int_equal(checks_of(&layer, 2, (double[]){a, -a}, var), 1);
    bn_free(&layer);
}

static void test_percentiles_by_hand(void **state)
{
    (void)state;
    /* 1..10 shuffled: the q-quantile sits at (n - 1) q = 9 q between order
     * statistics: p05 at 0.45 -> 1.45, p50 at 4.5 -> 5.5, p95 at 8.55 ->
     * 9.55; mean 5.5, sd sqrt(55/6) (divisor n - 1). */
    double v[10] = {7, 3, 10, 1, 9, 2, 8, 5, 4, 6};
    dist_summary s = dist_summarise(v, 10);
    assert_close(s.p05, 1.45, 1e-14, 1.0);
    assert_close(s.p50, 5.5, 1e-14, 1.0);
    assert_close(s.p95, 9.55, 1e-14, 1.0);
    assert_close(s.mean, 5.5, 1e-15, 1.0);
    assert_close(s.sd, sqrtl(55.0L / 6.0L), 1e-15, 1.0);
    double one[1] = {3.0};
    s = dist_summarise(one, 1);
    assert_true(s.sd == 0.0 && s.p05 == 3.0 && s.p95 == 3.0);
}

static void test_score_buffers_by_hand(void **state)
{
    (void)state;
    /* Two features with truth (0, 1) and (2, 4); buffers (1, 1) and
     * (2, 1): errors dm = (1, 0), dv = (0, -3). */
    pop_t pop;
    memset(&pop, 0, sizeof pop);
    pop.f = 2;
    char *names[] = {"a", "b"};
    double mean[2] = {0, 2}, var[2] = {1, 4};
    pop.names = names;
    pop.mean = mean;
    pop.var = var;
    double rm[2] = {1, 2}, rv[2] = {1, 1};
    score_buffers_t s;
    score_buffers(&pop, rm, rv, &s);
    assert_close(s.stats_err, sqrt(10.0 / 4.0), 1e-16, 1.0);
    assert_close(s.mean_err, sqrt(1.0 / 2.0), 1e-16, 1.0);
    assert_close(s.var_err, sqrt(9.0 / 2.0), 1e-16, 1.0);
    assert_true(s.worst_var_err == 3.0);
    assert_int_equal(s.worst_var_feature, 1);
    /* Relative: mean errors (1, 0) over sd (1, 2), variance errors
     * (0, -3) over (1, 4). */
    assert_close(s.stats_err_rel, sqrt((1.0 + 0.75 * 0.75) / 4.0), 1e-16,
                 1.0);
    assert_true(s.worst_var_rel == 0.75);
    /* A tie keeps the first feature. */
    rv[0] = 4.0;
    score_buffers(&pop, rm, rv, &s);
    assert_int_equal(s.worst_var_feature, 0);
    assert_true(s.worst_var_rel == 3.0);
    /* A feature of zero variance: exact statistics count 0, any error is
     * infinite, never NaN. */
    var[1] = 0.0;
    rv[0] = 1.0;
    rv[1] = 0.0;
    score_buffers(&pop, rm, rv, &s);
    assert_true(s.worst_var_rel == 0.0);
    assert_close(s.stats_err_rel, sqrt(1.0 / 4.0), 1e-16, 1.0);
    rv[1] = 1e-300;
    score_buffers(&pop, rm, rv, &s);
    assert_true(s.worst_var_rel == INFINITY && s.stats_err_rel == INFINITY);
    rv[1] = 0.0;
    rm[1] = 2.5;
    score_buffers(&pop, rm, rv, &s);
    assert_true(s.worst_var_rel == 0.0 && s.stats_err_rel == INFINITY);
}

static void test_population_id(void **state)
{
    (void)state;
    /* FNV-1a 64's published values. */
    assert_true(pop_fnv1a64("", 0) == 0xcbf29ce484222325ULL);
    assert_true(pop_fnv1a64("a", 1) == 0xaf63dc4c8601ec8cULL);
    assert_true(pop_fnv1a64("foobar", 6) == 0x85944171f73967e8ULL);
    pop_spec spec;
    assert_int_equal(pop_default_spec(&spec), 0);
    char text[1024];
    assert_true(pop_describe(&spec, text, sizeof text) < sizeof text);
    assert_non_null(strstr(text, "bnstudy population 1\nrows 512\nseed 1\n"
                                 "feature f0 0 1 1\nfeature f1 0.5 0.80000000"
                                 "000000004 0.80000000000000004\n"));
    char a[17], b[17];
    pop_id(&spec, a);
    assert_int_equal(strlen(a), 16);
    char want[17];
    snprintf(want, sizeof want, "%016llx",
             (unsigned long long)pop_fnv1a64(text, strlen(text)));
    assert_string_equal(a, want);
    /* Any change to the population changes it. */
    spec.seed = 2;
    pop_id(&spec, b);
    assert_string_not_equal(a, b);
    spec.seed = 1;
    spec.features[6].sd = 2.7600000000000002;
    pop_id(&spec, b);
    assert_string_not_equal(a, b);
    spec.features[6].sd = 2.76;
    pop_id(&spec, b);
    assert_string_equal(a, b);

    /* A name longer than any buffer: the description is cut like
     * snprintf's, its length and the identifier are the whole one's. */
    char big[9000];
    memset(big, 'x', sizeof big - 1);
    big[sizeof big - 1] = '\0';
    pop_spec_clear(&spec);
    assert_int_equal(pop_spec_add(&spec, big, 0, 1, 0), 0);
    size_t len = pop_describe(&spec, text, sizeof text);
    assert_int_equal(strlen(text), sizeof text - 1);
    char *whole = malloc(len + 1);
    assert_non_null(whole);
    assert_int_equal(pop_describe(&spec, whole, len + 1), len);
    assert_int_equal(strlen(whole), len);
    snprintf(want, sizeof want, "%016llx",
             (unsigned long long)pop_fnv1a64(whole, len));
    pop_id(&spec, a);
    assert_string_equal(a, want);
    big[8998] = 'y'; /* the last character of the name counts */
    pop_spec_clear(&spec);
    assert_int_equal(pop_spec_add(&spec, big, 0, 1, 0), 0);
    pop_id(&spec, b);
    assert_string_not_equal(a, b);
    free(whole);
    pop_spec_free(&spec);

    /* A file's: its bytes, its format and its columns. */
    pop_file_desc d = {0x0123456789abcdefULL, "csv", "label", NULL};
    assert_int_equal(pop_describe_file(&d, text, sizeof text),
                     strlen("bnstudy population 1\nfile 0123456789abcdef "
                            "csv\nlabel label\n"));
    assert_string_equal(text, "bnstudy population 1\nfile 0123456789abcdef "
                              "csv\nlabel label\n");
    pop_id_file(&d, a);
    snprintf(want, sizeof want, "%016llx",
             (unsigned long long)pop_fnv1a64(text, strlen(text)));
    assert_string_equal(a, want);
    static const pop_file_desc other[] = {
        {0x0123456789abcdeeULL, "csv", "label", NULL},
        {0x0123456789abcdefULL, "tsv", "label", NULL},
        {0x0123456789abcdefULL, "csv", NULL, NULL},
        {0x0123456789abcdefULL, "csv", "label", "label"},
        {0x0123456789abcdefULL, "csv", NULL, "label"},
    };
    for (size_t i = 0; i < sizeof other / sizeof *other; i++) {
        pop_id_file(&other[i], b);
        assert_string_not_equal(a, b);
    }
}

/* ---- claims at their boundaries ---- */

/* Claims ini text against files in dir; returns verify's rc, with the
 * report in out and the error in err. */
static int run_claims(const char *ini, char *out, size_t cap,
                      bn_error *err)
{
    char path[300];
    snprintf(path, sizeof path, "%s/claims.ini", tmpdir);
    write_file(path, ini);
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    assert_non_null(mem);
    verify_counts n;
    err->msg[0] = '\0';
    int rc = verify_claims(path, tmpdir, mem, &n, err);
    fclose(mem);
    snprintf(out, cap, "%s", text);
    free(text);
    return rc;
}

/* The verdicts the claim tests below saw for each kind of claim test (the
 * first claim of each file), for test_claim_every_kind_has_cases. */
static struct {
    char kind[32];
    int pass, fail;
} verdicts_seen[32];

static void note_verdict(const char *ini, const char *verdict)
{
    const char *t = strstr(ini, "test = ");
    if (!t)
        return;
    char kind[32];
    size_t len = strcspn(t + 7, "\n");
    snprintf(kind, sizeof kind, "%.*s", (int)len, t + 7);
    size_t i = 0, n = sizeof verdicts_seen / sizeof *verdicts_seen;
    while (i < n && verdicts_seen[i].kind[0] &&
           strcmp(verdicts_seen[i].kind, kind) != 0)
        i++;
    assert_true(i < n);
    snprintf(verdicts_seen[i].kind, sizeof verdicts_seen[i].kind, "%s", kind);
    verdicts_seen[i].pass |= strncmp(verdict, "PASS", 4) == 0;
    verdicts_seen[i].fail |= strncmp(verdict, "FAIL", 4) == 0;
}

static void expect_verdict(const char *ini, const char *verdict)
{
    char out[4096];
    bn_error err;
    if (run_claims(ini, out, sizeof out, &err) != 0)
        fail_msg("error: %s\nfor:\n%s", err.msg, ini);
    if (strncmp(out, verdict, strlen(verdict)) != 0)
        fail_msg("want %s, got:\n%s\nfor:\n%s", verdict, out, ini);
    note_verdict(ini, verdict);
}

static void expect_error(const char *ini, const char *says)
{
    char out[4096];
    bn_error err;
    if (run_claims(ini, out, sizeof out, &err) == 0)
        fail_msg("no error, got:\n%s\nfor:\n%s", out, ini);
    if (!strstr(err.msg, says))
        fail_msg("error '%s' does not say '%s'", err.msg, says);
    assert_string_equal(out, ""); /* nothing printed */
}

static void make_tiny_results(void)
{
    char path[400];
    snprintf(path, sizeof path, "%s/t", tmpdir);
    mkdir(path, 0755);
    snprintf(path, sizeof path, "%s/t/summary.tsv", tmpdir);
    /* x rises with b at seeds 1 and 2; ties at seed 3. */
    write_file(path, "seed\tb\tx\ty\tname\tfar\n"
                     "1\t8\t1\t1\tf1\tf2\n"
                     "1\t16\t2\t1\tf1\tf2\n"
                     "2\t8\t1\t0.5\tf1\tf2\n"
                     "2\t16\t3\t0.5\tf1\tf2\n"
                     "3\t8\t2\t0\tf1\tf2\n"
                     "3\t16\t2\t0\tf1\tf2\n");
    snprintf(path, sizeof path, "%s/t/features.tsv", tmpdir);
    write_file(path, "feature\ttrue_var\nf0\t1.5\nf1\t-0.59999999999999998\n"
                     "f2\t3\n");
    snprintf(path, sizeof path, "%s/t/bad.tsv", tmpdir);
    write_file(path, "seed\tx\n1\t0.5\n2\t0.5x\n");
}

static void test_claim_value_and_ratio(void **state)
{
    (void)state;
    make_tiny_results();
    /* Equal values: > fails, >= passes. */
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = >\n"
                   "value = 2\n", "FAIL c");
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = >=\n"
                   "value = 2\n", "PASS c");
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = <\n"
                   "value = 2\n", "FAIL c");
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = <=\n"
                   "value = 2\n", "PASS c");
    /* == at the tolerance passes, beyond it fails (0.25 is exact). */
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = ==\n"
                   "value = 2.25\ntolerance = 0.25\n", "PASS c");
    expect_verdict("[c]\ntest = value\na = t: x @ seed=3, b=8\nop = ==\n"
                   "value = 2.25\ntolerance = 0.125\n", "FAIL c");
    /* 3 / 1.5 ... x at seed 2 b 16 over y: 3 / 0.5 = 6. */
    expect_verdict("[c]\ntest = ratio\na = t: x @ seed=2, b=16\n"
                   "b = t: y @ seed=2, b=16\nop = >=\nvalue = 6\n", "PASS c");
    expect_verdict("[c]\ntest = ratio\na = t: x @ seed=2, b=16\n"
                   "b = t: y @ seed=2, b=16\nop = >\nvalue = 6\n", "FAIL c");
    expect_error("[c]\ntest = value\na = t: x @ b=8\nop = >\nvalue = 0\n",
                 "matches 3 rows, not one");
}

static void test_claim_all_and_within(void **state)
{
    (void)state;
    make_tiny_results();
    expect_verdict("[c]\ntest = all\na = t: x\nop = >=\nvalue = 1\n",
                   "PASS c");
    expect_verdict("[c]\ntest = all\na = t: x\nop = >\nvalue = 1\n",
                   "FAIL c");
    expect_verdict("[c]\ntest = within\na = t: x\nvalue = 3\n", "PASS c");
    expect_verdict("[c]\ntest = within\na = t: x\nvalue = 2.5\n", "FAIL c");
    expect_verdict("[c]\ntest = within\na = t: y @ seed=3\nvalue = 0\n",
                   "PASS c");
}

static void test_claim_trends(void **state)
{
    (void)state;
    make_tiny_results();
    expect_verdict("[c]\ntest = increasing\na = t: x @ seed=1\nover = b\n",
                   "PASS c");
    expect_verdict("[c]\ntest = decreasing\na = t: x @ seed=1\nover = b\n",
                   "FAIL c");
    /* A tie is not strictly increasing. */
    expect_verdict("[c]\ntest = increasing\na = t: x @ seed=3\nover = b\n",
                   "FAIL c");
    expect_verdict("[c]\ntest = decreasing\na = t: y @ b=8\nover = seed\n"
                   "at = 1 3\n", "PASS c");
    expect_error("[c]\ntest = decreasing\na = t: y\nover = seed\n"
                 "at = 1 3\n", "two rows with seed = 1");
    /* One row is no trend, and two rows at one b are ambiguous. */
    expect_error("[c]\ntest = increasing\na = t: x @ seed=1, b=8\nover = b\n",
                 "a trend needs two");
    expect_error("[c]\ntest = increasing\na = t: x\nover = b\n",
                 "two rows with b = 8");
    expect_error("[c]\ntest = increasing\na = t: x @ seed=1\nover = nob\n",
                 "no column 'nob'");
}

static void test_claim_pairwise_and_worst_feature(void **state)
{
    (void)state;
    make_tiny_results();
    /* seed 1 vs seed 2, paired by b: x 1,2 vs 1,3. */
    expect_verdict("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                   "b = t: x @ seed=1\nop = >=\nover = b\n", "PASS c");
    expect_verdict("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                   "b = t: x @ seed=1\nop = >\nover = b\n", "FAIL c");
    expect_verdict("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                   "b = t: x @ seed=1\nop = ==\ntolerance = 1\nover = b\n",
                   "PASS c");
    /* a op factor x b: 1 >= 0.5 x 1 and 3 >= 0.5 x 2; 1 < 1.5 x 1. */
    expect_verdict("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                   "b = t: x @ seed=1\nop = >=\nfactor = 0.5\nover = b\n",
                   "PASS c");
    expect_verdict("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                   "b = t: x @ seed=1\nop = >=\nfactor = 1.5\nover = b\n",
                   "FAIL c");
    expect_error("[c]\ntest = pairwise\na = t: x @ seed=2\n"
                 "b = t: x @ seed=1, b=8\nop = >=\nover = b\n",
                 "no row of b with b 16");
    expect_error("[c]\ntest = pairwise\na = t: x\nb = t: y\nop = >=\n"
                 "over = b\n", "two rows with b 16");
    /* |true_var - 1| largest at f2 (2), not f1 (1.6). */
    expect_verdict("[c]\ntest = worst-feature\na = t: name\n", "FAIL c");
    expect_verdict("[c]\ntest = worst-feature\na = t: far\n", "PASS c");
}

static void test_claim_fraction(void **state)
{
    (void)state;
    make_tiny_results();
    /* x at b 16 against b 8 per seed: 2 > 1, 3 > 1, 2 = 2. */
    expect_verdict("[c]\ntest = fraction\na = t: x @ b=16\nb = t: x @ b=8\n"
                   "each = >\nop = ==\nvalue = 0.66666666666666663\n",
                   "PASS c");
    expect_verdict("[c]\ntest = fraction\na = t: x @ b=16\nb = t: x @ b=8\n"
                   "each = >=\nop = ==\nvalue = 1\n", "PASS c");
    /* >= 2 x: 2 >= 2, 3 >= 2, 2 >= 4 no. */
    expect_verdict("[c]\ntest = fraction\na = t: x @ b=16\nb = t: x @ b=8\n"
                   "each = >=\nfactor = 2\nop = <\nvalue = 0.67\n", "PASS c");
    expect_verdict("[c]\ntest = fraction\na = t: x @ b=16\nb = t: x @ b=8\n"
                   "each = >\nfactor = 2\nop = >\nvalue = 0.34\n", "FAIL c");
    /* Rising over b in seeds 1 and 2, not in 3 (a tie). */
    expect_verdict("[c]\ntest = fraction\na = t: x\neach = increasing\n"
                   "over = b\nop = ==\nvalue = 0.66666666666666663\n",
                   "PASS c");
    expect_error("[c]\ntest = fraction\na = t: x @ b=16\n"
                 "b = t: x @ b=8, seed=1|2\neach = >\nop = >=\nvalue = 0\n",
                 "no row of b with seed 3");
    expect_error("[c]\ntest = fraction\na = t: x\nb = t: x @ b=8\n"
                 "each = >\nop = >=\nvalue = 0\n", "two rows with seed 1");
    expect_error("[c]\ntest = fraction\na = t: x @ b=8\neach = increasing\n"
                 "over = b\nop = >=\nvalue = 0\n", "a trend needs two");
}

static void test_claim_files_are_checked(void **state)
{
    (void)state;
    make_tiny_results();
    /* A cell that is not a number is an error naming file, line, column;
     * it never reads as 0. */
    expect_error("[c]\ntest = all\na = t/bad: x\nop = >=\nvalue = 0\n",
                 "t/bad.tsv:3: column x: '0.5x' is not a number");
    expect_error("[c]\ntest = value\na = t: name @ seed=1, b=8\nop = >=\n"
                 "value = 0\n", "t/summary.tsv:2: column name: 'f1'");
    /* Malformed claims stop everything before any is evaluated. */
    expect_error("[ok]\ntest = value\na = t: x @ seed=3, b=8\nop = >=\n"
                 "value = 0\n[c]\ntest = increasing\na = t: x\nop = >\n",
                 "test increasing does not read 'op'");
    expect_error("[c]\ntest = value\na = t: x\nop = =>\nvalue = 1\n",
                 "an op is one of");
    expect_error("[c]\ntest = value\na = t: x\nop = >\n", "needs 'value'");
    expect_error("[c]\ntest = ratio\na = t: x\nop = >\nvalue = 1\n",
                 "needs 'b'");
    expect_error("[c]\ntest = value\na = t: x\nop = >\nvalue = 1\n"
                 "tolerance = 0.1\n", "tolerance is for op ==");
    expect_error("[c]\ntest = fraction\na = t: x\nop = >\nvalue = 1\n"
                 "each = >\n", "needs 'b'");
    expect_error("[c]\ntest = wobbly\n", "a test is one of value ratio");
    expect_error("[c]\ntest = value\na = t: x\nop = >\nvalue = 1x\n",
                 "expected a finite number");
    expect_error("[c]\ntest = value\na = t: x @ nocol=1\nop = >\n"
                 "value = 1\n", "no column 'nocol'");
    expect_error("[c]\ntest = value\nop = >\nvalue = 1\nop = <\n",
                 "'op' given twice");
}

/* Every kind of the claim-test table (src/claim/verify.c) met a case that
 * passes and one that fails in the claim tests above, which run first. */
static void test_claim_every_kind_has_cases(void **state)
{
    (void)state;
    for (size_t k = 0; verify_kind_name(k); k++) {
        const char *name = verify_kind_name(k);
        size_t i = 0, n = sizeof verdicts_seen / sizeof *verdicts_seen;
        while (i < n && strcmp(verdicts_seen[i].kind, name) != 0)
            i++;
        if (i == n || !verdicts_seen[i].pass || !verdicts_seen[i].fail)
            fail_msg("claim test kind %s has no case that %s: add one to "
                     "the claim tests of tests/test_tables.c",
                     name, i < n && verdicts_seen[i].pass ? "fails"
                                                          : "passes");
    }
}

/* ---- every model against its reference ---- */

static const struct {
    const char *model;
    void (*ref)(const char *dir);
} model_refs[] = {
    {"layer", ref_layer_scores},
    {"classifier", ref_classifier_scores},
};

/* Every row of the model table (src/model/run.c) runs its reference; a
 * row without one fails naming it and where to add it. */
static void test_every_model_against_its_reference(void **state)
{
    (void)state;
    for (int m = 0; run_model_name(m); m++) {
        size_t k = 0, n = sizeof model_refs / sizeof *model_refs;
        while (k < n && strcmp(model_refs[k].model, run_model_name(m)) != 0)
            k++;
        if (k == n)
            fail_msg("model %s has no reference: add its function to "
                     "model_refs in tests/test_tables.c (declared in "
                     "tests/helpers.h, as ref_layer_scores is)",
                     run_model_name(m));
        model_refs[k].ref(tmpdir);
    }
}

/* ---- every committed experiment's rows are distinct ---- */

static int strcmp_ptr(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* No two rows of a file share every key column: the key table's columns,
 * and the file's own (feature, score). */
static void check_unique(const char *path, const char *own)
{
    tsv_table t;
    bn_error err;
    if (tsv_read(path, &t, &err) != 0)
        fail_msg("%s", err.msg);
    int cols[64];
    size_t nc = 0;
    for (size_t c = 0; c < t.ncol; c++)
        if (exp_key_column(t.names[c]) >= 0 ||
            (own && strcmp(t.names[c], own) == 0))
            cols[nc++] = (int)c;
    assert_true(nc >= 5);
    char **keys = malloc((t.nrow + 1) * sizeof *keys);
    assert_non_null(keys);
    for (size_t r = 0; r < t.nrow; r++) {
        char buf[1024];
        size_t len = 0;
        for (size_t k = 0; k < nc; k++)
            len += (size_t)snprintf(buf + len, sizeof buf - len, "%s\t",
                                    tsv_cell(&t, r, (size_t)cols[k]));
        keys[r] = strdup(buf);
    }
    qsort(keys, t.nrow, sizeof *keys, strcmp_ptr);
    for (size_t r = 1; r < t.nrow; r++)
        if (strcmp(keys[r], keys[r - 1]) == 0)
            fail_msg("%s: two rows share every key column: %s", path,
                     keys[r]);
    for (size_t r = 0; r < t.nrow; r++)
        free(keys[r]);
    free(keys);
    tsv_free(&t);
}

static void test_experiment_rows_are_distinct(void **state)
{
    (void)state;
    char cmd[1200], path[700];
    snprintf(cmd, sizeof cmd,
             "for f in experiments/*.ini; do "
             "[ \"$f\" = experiments/claims.ini ] && continue; "
             "%s sweep \"$f\" --out %s/study || exit 1; done",
             test_env("BNSTUDY", "./bnstudy"), tmpdir);
    assert_int_equal(shell("%s", cmd), 0);
    snprintf(path, sizeof path, "%s/study", tmpdir);
    DIR *d = opendir(path);
    assert_non_null(d);
    /* The columns, beside the key columns, that tell apart the rows of
     * each file of the file table (src/study/outfile.c); rows 0 for a
     * file of no rows per configuration. */
    static const struct {
        const char *file, *own;
        int rows;
    } files[] = {{"summary.tsv", NULL, 1},     {"features.tsv", "feature", 1},
                 {"effective.tsv", "feature", 1},
                 {"distribution.tsv", "score", 1},
                 {"expectation.tsv", NULL, 1}, {"curve.tsv", "epoch", 1},
                 {"table.md", NULL, 0},        {"manifest.tsv", NULL, 0}};
    size_t of[OUT_FILE_COUNT];
    for (int i = 0; out_file_get(i); i++) {
        of[i] = sizeof files / sizeof *files;
        for (size_t k = 0; k < sizeof files / sizeof *files; k++)
            if (strcmp(files[k].file, out_file_get(i)->file) == 0)
                of[i] = k;
        if (of[i] == sizeof files / sizeof *files)
            fail_msg("output file %s: no entry in "
                     "test_experiment_rows_are_distinct's files "
                     "(tests/test_tables.c) saying which of its columns "
                     "tell its rows apart",
                     out_file_get(i)->file);
    }
    size_t checked = 0, experiments = 0;
    struct dirent *de;
    while ((de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.')
            continue;
        experiments++;
        for (int i = 0; out_file_get(i); i++) {
            snprintf(path, sizeof path, "%s/study/%s/%s", tmpdir, de->d_name,
                     files[of[i]].file);
            if (!files[of[i]].rows || access(path, R_OK) != 0)
                continue;
            check_unique(path, files[of[i]].own);
            checked++;
        }
    }
    closedir(d);
    /* A result directory per experiment file swept. */
    size_t inis = 0;
    DIR *x = opendir("experiments");
    assert_non_null(x);
    while ((de = readdir(x)) != NULL) {
        size_t len = strlen(de->d_name);
        inis += len > 4 && strcmp(de->d_name + len - 4, ".ini") == 0 &&
                strcmp(de->d_name, "claims.ini") != 0;
    }
    closedir(x);
    assert_int_equal(experiments, inis);
    assert_true(checked >= 2 * experiments);
}

/* The example: PyTorch's and Keras's defaults in one file. Every
 * row says which it is, and no two rows share their key columns. */
static void test_eps_and_conventions_in_one_file(void **state)
{
    (void)state;
    char ini[300], cmd[1200], path[700];
    snprintf(ini, sizeof ini, "%s/frameworks.ini", tmpdir);
    write_file(ini, "[layer]\neps = 1e-5 1e-3\nmomentum_weights = new old\n"
                    "momentum = 0.1\n[sweep]\nbatch_size = 8 256\n");
    snprintf(cmd, sizeof cmd, "%s sweep %s --out %s/fw",
             test_env("BNSTUDY", "./bnstudy"), ini, tmpdir);
    assert_int_equal(shell("%s", cmd), 0);
    snprintf(path, sizeof path, "%s/fw/frameworks/summary.tsv", tmpdir);
    check_unique(path, NULL);
    tsv_table t;
    bn_error err;
    assert_int_equal(tsv_read(path, &t, &err), 0);
    assert_int_equal(t.nrow, 2 * 2 * 2);
    int ce = tsv_column(&t, "eps"), cw = tsv_column(&t, "momentum_weights");
    int cp = tsv_column(&t, "new_weight"), cs = tsv_column(&t, "stats_err");
    assert_true(ce >= 0 && cw >= 0 && cp >= 0 && cs >= 0);
    size_t seen[2][2] = {{0}};
    for (size_t r = 0; r < t.nrow; r++) {
        double eps = strtod(tsv_cell(&t, r, (size_t)ce), NULL);
        const char *w = tsv_cell(&t, r, (size_t)cw);
        double p = strtod(tsv_cell(&t, r, (size_t)cp), NULL);
        assert_true(eps == 1e-5 || eps == 1e-3);
        assert_true(!strcmp(w, "new") || !strcmp(w, "old"));
        /* 0.1 new is p 0.1; 0.1 old is p 0.9. */
        assert_true(p == (!strcmp(w, "new") ? 0.1 : 0.9));
        seen[eps == 1e-3][!strcmp(w, "old")]++;
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++)
            assert_int_equal(seen[i][j], 2);
    tsv_free(&t);
    /* eps changes train_eval_rmse, not the running statistics. */
    snprintf(path, sizeof path, "%s/fw/frameworks/manifest.tsv", tmpdir);
    char *m = test_slurp(path, NULL);
    assert_non_null(m);
    assert_non_null(strstr(m, "layer.eps\t1.0000000000000001e-05 0.001\n"));
    assert_non_null(strstr(m, "layer.momentum_weights\tnew old\n"));
    test_slurp_free(m);
}

int test_tables_run(size_t *ntests)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_estimator_and_order_tables),
        cmocka_unit_test(test_key_and_score_tables),
        cmocka_unit_test(test_every_axis_decodes),
        cmocka_unit_test(test_validator_bounds),
        cmocka_unit_test(test_combinations_blame_their_lines),
        cmocka_unit_test(test_batch_stats_large_mean),
        cmocka_unit_test(test_self_check_tolerances),
        cmocka_unit_test(test_percentiles_by_hand),
        cmocka_unit_test(test_score_buffers_by_hand),
        cmocka_unit_test(test_population_id),
        cmocka_unit_test(test_claim_value_and_ratio),
        cmocka_unit_test(test_claim_all_and_within),
        cmocka_unit_test(test_claim_trends),
        cmocka_unit_test(test_claim_pairwise_and_worst_feature),
        cmocka_unit_test(test_claim_fraction),
        cmocka_unit_test(test_claim_files_are_checked),
        cmocka_unit_test(test_claim_every_kind_has_cases),
        cmocka_unit_test(test_every_model_against_its_reference),
        cmocka_unit_test(test_experiment_rows_are_distinct),
        cmocka_unit_test(test_eps_and_conventions_in_one_file),
    };
    *ntests = sizeof tests / sizeof tests[0];
    return cmocka_run_group_tests_name("tables", tests, setup, teardown);
}
