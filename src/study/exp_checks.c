/*
 * The checks that need every key (exp_finish): which keys go together,
 * the population and its held-out rows, the orders against its
 * features, every combination of the axes through run_check, and the
 * settings no configuration reads; each message starts with where the
 * key it blames was set.
 */
#include "study/exp.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/order.h"
#include "pop/evalpop.h"
#include "model/score.h"
#include "pop/popid.h"
#include "study/exp_parts.h"
#include "study/outfile.h"

/* ---- the checks that need every key ---- */

const char *origin(const exp_t *e, int k0, int k1)
{
    if (k0 >= 0 && e->from[k0])
        return e->from[k0];
    if (k1 >= 0 && e->from[k1])
        return e->from[k1];
    return e->source;
}

/* The blamed keys' values in cfg, "momentum 1, estimator ema-debiased: ",
 * for keys that have more than one value (which one failed is news). */
static void blamed_values(const exp_t *e, const run_config *cfg,
                          const int *blame, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < 2; i++) {
        int k = blame[i];
        if (k < 0 || !keys[k].get || e->n[k] < 2 || len >= cap)
            continue;
        key_cell c;
        memset(&c, 0, sizeof c);
        keys[k].get(cfg, &c);
        if (c.kind == CELL_TEXT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %s, ",
                                    keys[k].name, c.text);
        else if (c.kind == CELL_INT)
            len += (size_t)snprintf(buf + len, cap - len, "%s %llu, ",
                                    keys[k].name, c.u);
        else
            len += (size_t)snprintf(buf + len, cap - len, "%s %g, ",
                                    keys[k].name, c.r);
    }
    if (len >= 2 && len < cap)
        buf[len - 2] = ':', buf[len - 1] = ' ';
}

/* The shapes the checks see: every row, and the rows a held-out model
 * trains on (a file's training part has fewer). Only n, f, names and the
 * label and group columns are read. */
typedef struct {
    pop_t all, train;
} shapes;

static int finish_checks(exp_t *e, const shapes *sh, bn_error *err);

static int was_set(const exp_t *e, int k) { return e->from[k] != NULL; }


int exp_held_out_models(unsigned models)
{
    for (int m = 0; m < RUN_MODEL_COUNT; m++)
        if ((models & RUN_MODEL_BIT(m)) && run_model_get(m)->held_out)
            return 1;
    return 0;
}

/* "the layer", "the layer and the classifier" */
static const char *model_names(unsigned models, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int m = 0; m < RUN_MODEL_COUNT && len < cap; m++)
        if (models & RUN_MODEL_BIT(m))
            len += (size_t)snprintf(buf + len, cap - len, "%sthe %s",
                                    len ? " and " : "", run_model_name(m));
    return buf;
}

/* Where key k is set on the command line, for a default nothing set:
 * "--batch-size" for an option, else its --set name, "population.rows". */
static const char *key_option(int k, char buf[64])
{
    const key_def *d = &keys[k];
    if (!d->nest) {
        snprintf(buf, 64, "%s.%s", d->section ? d->section : "", d->name);
        return buf;
    }
    snprintf(buf, 64, "--%s", d->name);
    for (char *c = buf; *c; c++)
        *c = *c == '_' ? '-' : *c;
    return buf;
}

/* Where keys k0 and k1 were set, as origin says, or for a run's options
 * (no file to name: the command says which command) the option of the
 * first: NULL when there is none. */
static const char *where_set(const exp_t *e, int k0, int k1, char buf[64])
{
    const char *where = origin(e, k0, k1);
    if (where != e->source || e->source_is_file)
        return where;
    int k = k0 >= 0 ? k0 : k1;
    return k < 0 ? NULL : key_option(k, buf);
}

int exp_blame(const exp_t *e, const run_config *cfg, const int *blame,
              const char *msg, bn_error *err)
{
    char values[200], opt[64];
    const char *where = where_set(e, blame[0], blame[1], opt);
    blamed_values(e, cfg, blame, values, sizeof values);
    if (!where)
        return bn_fail(err, "%s%s", values, msg);
    return bn_fail(err, "%s: %s%s", where, values, msg);
}

int exp_swamped(const exp_t *e, char *buf, size_t cap)
{
    if (!(e->models & RUN_MODEL_BIT(RUN_MODEL_LAYER)))
        return 0;
    for (size_t i = 0; i < e->n[KEY_GAMMA]; i++)
        for (size_t j = 0; j < e->n[KEY_BETA]; j++) {
            double g = e->v[KEY_GAMMA][i].r, b = e->v[KEY_BETA][j].r;
            if (g == 0.0 || !(fabs(b) > 0x1p52 * fabs(g)))
                continue;
            char opt[64];
            size_t len = (size_t)snprintf(
                buf, cap, "%s: beta %g is more than 2^52 times gamma %g: the "
                          "outputs (gamma times the normalised value plus "
                          "beta) round to beta, so",
                where_set(e, KEY_BETA, KEY_GAMMA, opt), b, g);
            const char *sep = " ";
            int n = 0;
            /* The layer's scores this experiment writes. */
            unsigned shown =
                RUN_MODEL_BIT(RUN_MODEL_LAYER) | (e->models & RUN_EXTS);
            for (size_t k = 0; score_get(k) && len < cap; k++)
                if (score_get(k)->scale[0] == KEY_GAMMA &&
                    run_models_show(score_get(k)->models, shown)) {
                    len += (size_t)snprintf(buf + len, cap - len, "%s%s",
                                            sep, score_get(k)->name);
                    sep = ", ";
                    n++;
                }
            if (len < cap)
                snprintf(buf + len, cap - len, " %s nothing",
                         n == 1 ? "measures" : "measure");
            return 1;
        }
    return 0;
}

/* A population read from a file has no rows, seed, feature or classes
 * lines: the first of them set is named beside the file's line. */
int file_excludes(const exp_t *e, bn_error *err)
{
    static const key_id generated[] = {KEY_ROWS, KEY_POP_SEED, KEY_FEATURE,
                                       KEY_POP_CLASSES, KEY_POP_LABEL_NOISE};
    size_t n_generated = sizeof generated / sizeof *generated;
    for (size_t i = 0; e->popfile.file && i < n_generated; i++) {
        key_id k = generated[i];
        if (was_set(e, k))
            return bn_fail(err,
                           "%s: %s does not apply to a population read from "
                           "a file (%s: file = %s)",
                           e->from[k], keys[k].name,
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
    }
    for (key_id k = KEY_POP_LABEL; k <= KEY_POP_GROUP; k++)
        if (!e->popfile.file && was_set(e, k))
            return bn_fail(err,
                           "%s: %s names a column of a population file, "
                           "and no file is given",
                           e->from[k], keys[k].name);
    return 0;
}

/* The population's keys that apply only with others: label noise to
 * classes, the held-out split to a file, and both the split and the
 * evaluation file to a model evaluated on held-out rows. */
static int population_excludes(const exp_t *e, bn_error *err)
{
    char trained[80];
    if (!e->popfile.file && !e->pop.classes && was_set(e, KEY_POP_LABEL_NOISE))
        return bn_fail(err, "%s: label_noise applies to classes, and there "
                            "are none ([population] classes = K)",
                       e->from[KEY_POP_LABEL_NOISE]);
    for (key_id k = KEY_HOLDOUT; k <= KEY_HOLDOUT_SEED; k++) {
        if (!was_set(e, k))
            continue;
        if (!e->popfile.file)
            return bn_fail(err,
                           "%s: %s splits a population file; a generated "
                           "population's held-out rows are a second draw",
                           e->from[k], keys[k].name);
        if (e->evalfile.file)
            return bn_fail(err,
                           "%s: %s splits the population, and %s names the "
                           "rows to evaluate on instead",
                           e->from[k], keys[k].name,
                           e->from[KEY_EVAL_FILE]);
    }
    static const key_id held[] = {KEY_HOLDOUT, KEY_HOLDOUT_SEED,
                                  KEY_EVAL_FILE};
    for (size_t i = 0; i < sizeof held / sizeof *held; i++)
        if (was_set(e, held[i]) && !(keys[held[i]].models & e->models))
            return bn_fail(err,
                           "%s: %s applies to %s, and this experiment trains "
                           "only %s",
                           e->from[held[i]], keys[held[i]].name,
                           model_names(keys[held[i]].models, trained, 40),
                           model_names(e->models, trained + 40, 40));
    return 0;
}

/* The label column of the generated classes, for the shapes. */
static int generated_labels(size_t k, pop_factor *fac)
{
    memset(fac, 0, sizeof *fac);
    return k ? pop_class_levels(k, fac) : 0;
}

/* [evaluation] file made comparable to the population, and the
 * identifier of the layer's rows, which it is evaluated on. */
static int eval_file_shape(exp_t *e, shapes *sh, bn_error *err)
{
    bn_error sub;
    if (!e->evalfile.pop)
        return bn_fail(err, "%s: the evaluation file %s was not read",
                       origin(e, KEY_EVAL_FILE, -1), e->evalfile.file);
    if (evalpop_match(&sh->all, e->evalfile.pop, e->evalfile.file, &sub) !=
        0)
        return bn_fail(err, "%s: %s", origin(e, KEY_EVAL_FILE, -1),
                       sub.msg);
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    pop_held_desc h = {POP_HELD_FILE, 0.0, 0, e->evalfile.fnv,
                       e->evalfile.format};
    pop_id_held(e->popfile.file ? NULL : &e->pop,
                e->popfile.file ? &fd : NULL, &h, e->eval_id);
    return 0;
}

/* The held-out rows: how many a file's split holds out (without making
 * it), and their identifier. */
static int held_out_shape(exp_t *e, shapes *sh, bn_error *err)
{
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    const pop_spec *spec = e->popfile.file ? NULL : &e->pop;
    pop_held_desc h = {POP_HELD_DRAW, 0.0, 0, 0, NULL};
    size_t n_held = sh->all.n;
    if (e->evalfile.file) {
        n_held = e->evalfile.pop->n;
        h = (pop_held_desc){POP_HELD_FILE, 0.0, 0, e->evalfile.fnv,
                            e->evalfile.format};
    } else if (e->popfile.file) {
        const pop_t *p = e->popfile.pop;
        size_t k = p->label.column ? p->label.n_levels : 1;
        size_t *count = calloc(k, sizeof *count);
        if (!count)
            return bn_fail(err, "out of memory");
        for (size_t i = 0; i < p->n; i++)
            count[p->label.column ? p->label.of_row[i] : 0]++;
        n_held = 0;
        for (size_t c = 0; c < k; c++)
            n_held += evalpop_held_count(count[c], e->holdout);
        free(count);
        if (n_held < 2 || p->n - n_held < 2)
            return bn_fail(err,
                           "%s: holdout %g of %zu rows holds out %zu, "
                           "leaving %zu to train on: each part needs at "
                           "least two",
                           origin(e, KEY_HOLDOUT, KEY_POP_FILE), e->holdout,
                           p->n, n_held, p->n - n_held);
        sh->train.n = p->n - n_held;
        h = (pop_held_desc){POP_HELD_SPLIT, e->holdout, e->holdout_seed, 0,
                            NULL};
    }
    if (n_held < 2)
        return bn_fail(err, "%s: %zu rows to evaluate on; training mode "
                            "needs at least two",
                       origin(e, KEY_EVAL_FILE, -1), n_held);
    pop_id_held(spec, spec ? NULL : &fd, &h, e->held_id);
    e->train_rows = sh->train.n;
    e->held_rows = n_held;
    return 0;
}

/* [maps]'s keys: one source, each key with the source it applies to,
 * none of the generated population's keys, and what the maps need to
 * exist. */
static int maps_excludes(const exp_t *e, bn_error *err)
{
    const exp_maps *m = &e->maps;
    int image = m->image_h > 0, field = m->size_h > 0;
    if (image && field)
        return bn_fail(err, "%s: image reads a file's rows as images and "
                            "size generates maps: one or the other (%s)",
                       e->from[KEY_MAPS_SIZE], e->from[KEY_MAPS_IMAGE]);
    if (image && !e->popfile.file)
        return bn_fail(err, "%s: image reads the rows of a population file "
                            "as images, and no file is given ([population] "
                            "file = PATH)",
                       e->from[KEY_MAPS_IMAGE]);
    if (field && e->popfile.file)
        return bn_fail(err, "%s: size generates the maps, and %s names a "
                            "population file (image reads its rows as "
                            "images)",
                       e->from[KEY_MAPS_SIZE], e->from[KEY_POP_FILE]);
    static const struct {
        key_id k;
        int needs; /* 1 image, 2 size, 3 either */
    } applies[] = {
        {.k = KEY_MAPS_FILTERS, .needs = 1},
        {.k = KEY_MAPS_KERNEL, .needs = 1},
        {.k = KEY_MAPS_SAMPLES, .needs = 2},
        {.k = KEY_MAPS_CHANNEL, .needs = 2},
        {.k = KEY_MAPS_SEED, .needs = 3},
    };
    static const char *const what[] = {
        "", "image (a file's rows through filters)",
        "size (generated maps)", "image or size (feature maps)"};
    for (size_t i = 0; i < sizeof applies / sizeof *applies; i++) {
        int need = applies[i].needs;
        if (was_set(e, applies[i].k) &&
            !((need & 1 && image) || (need & 2 && field)))
            return bn_fail(err, "%s: %s applies to [maps] %s",
                           e->from[applies[i].k], keys[applies[i].k].name,
                           what[need]);
    }
    if (!image && !field)
        return 0;
    if (field && m->n_ch == 0)
        return bn_fail(err, "%s: size needs at least one channel line "
                            "(channel = NAME MEAN SD R)",
                       e->from[KEY_MAPS_SIZE]);
    static const key_id generated[] = {KEY_ROWS, KEY_FEATURE,
                                       KEY_POP_CLASSES, KEY_POP_LABEL_NOISE};
    for (size_t i = 0; i < sizeof generated / sizeof *generated; i++)
        if (was_set(e, generated[i]))
            return bn_fail(err, "%s: %s does not apply to feature maps "
                                "([maps] says what they are)",
                           e->from[generated[i]], keys[generated[i]].name);
    key_id src = image ? KEY_MAPS_IMAGE : KEY_MAPS_SIZE;
    if (e->evalfile.file)
        return bn_fail(err, "%s: an evaluation file's rows are not feature "
                            "maps (%s)",
                       e->from[KEY_EVAL_FILE], e->from[src]);
    if ((e->models & RUN_MODELS_ALL) != RUN_MODEL_BIT(RUN_MODEL_LAYER))
        return bn_fail(err, "%s: feature maps are the layer's (BatchNorm2d); "
                            "the classifier takes plain rows (%s)",
                       origin(e, KEY_MODEL, -1), e->from[src]);
    size_t mm, h, w, c;
    maps_shape(e, &mm, &h, &w, &c);
    if (image) {
        if (h == 0 || w == 0)
            return bn_fail(err, "%s: filters of %zu x %zu do not fit images "
                                "of %zu x %zu",
                           origin(e, KEY_MAPS_KERNEL, KEY_MAPS_IMAGE),
                           m->kernel, m->kernel, m->image_h, m->image_w);
        if (e->popfile.pop && e->popfile.pop->f != m->image_h * m->image_w)
            return bn_fail(err, "%s: images of %zu x %zu are %zu values, and "
                                "the rows of %s have %zu (the label and "
                                "group columns aside)",
                           e->from[KEY_MAPS_IMAGE], m->image_h, m->image_w,
                           m->image_h * m->image_w, e->popfile.file,
                           e->popfile.pop->f);
    }
    if (mm < 2)
        return bn_fail(err, "%s: feature maps need at least 2 samples",
                       origin(e, KEY_MAPS_SAMPLES, KEY_POP_FILE));
    if (mm > 100000000u / (h * w))
        return bn_fail(err, "%s: %zu samples of %zu x %zu make more than "
                            "100000000 rows",
                       origin(e, src, KEY_MAPS_SAMPLES), mm, h, w);
    return 0;
}

/* The maps' channel names: the generated channels', or c0, c1, ... for
 * the filters (freed by the caller with maps_names_free). */
char **maps_names(const exp_t *e, size_t c)
{
    char **names = calloc(c ? c : 1, sizeof *names);
    for (size_t j = 0; names && j < c; j++) {
        char buf[32];
        const char *name = e->maps.size_h ? e->maps.ch_names[j] : buf;
        snprintf(buf, sizeof buf, "c%zu", j);
        if (!(names[j] = copy_text(name))) {
            free_names(names, c);
            return NULL;
        }
    }
    return names;
}

/* The population identifier of the maps (popid.h). */
static void maps_id(exp_t *e)
{
    const exp_maps *m = &e->maps;
    pop_maps_desc d = {m->image_h, m->image_w, m->filters, m->kernel,
                       m->size_h,  m->size_w,  m->samples, m->seed,
                       m->n_ch,    m->ch,      m->ch_names};
    pop_file_desc fd = {e->popfile.fnv, e->popfile.format, e->popfile.label,
                        e->popfile.group};
    pop_id_maps(m->image_h ? &fd : NULL, &d, e->pop_id);
}

int exp_finish(exp_t *e, bn_error *err)
{
    bn_error sub;
    e->models = 0;
    if (file_excludes(e, err) != 0)
        return -1;
    e->models = 0;
    for (size_t i = 0; i < e->n[KEY_MODEL]; i++)
        e->models |= RUN_MODEL_BIT(e->v[KEY_MODEL][i].i);
    /* A declared network's keys and scores, the devices' and the
     * batch-dependence and sequence ones, are written where one of their
     * keys is set. */
    for (int k = 0; k < KEY_COUNT; k++)
        if ((keys[k].models & RUN_EXTS) && was_set(e, k) &&
            (keys[k].models & e->models & RUN_MODELS_ALL))
            e->models |= keys[k].models & RUN_EXTS;
    /* A group column, from the file or --group, adds the scores of
     * batches of one group to the batch-dependence ones. */
    if (e->popfile.file && e->popfile.group)
        e->models |= RUN_GRP_EXT;
    if (population_excludes(e, err) != 0 || maps_excludes(e, err) != 0)
        return -1;
    /* The shape the orders and the checks see: the file's rows, or the
     * spec's names and classes without any rows, or the maps'. */
    shapes sh;
    memset(&sh, 0, sizeof sh);
    char **names = NULL, **map_names = NULL;
    size_t n_maps = 0;
    int rc = -1;
    if (exp_maps_active(e)) {
        size_t m, h, w;
        maps_shape(e, &m, &h, &w, &n_maps);
        if (!(map_names = maps_names(e, n_maps))) {
            bn_fail(err, "out of memory");
            goto done;
        }
        sh.all.n = m * h * w;
        sh.all.f = n_maps;
        sh.all.names = map_names;
        sh.all.sample_rows = h * w;
        maps_id(e);
    } else if (e->popfile.file) {
        if (!e->popfile.pop)
            return bn_fail(err, "%s: the population file %s was not read",
                           origin(e, KEY_POP_FILE, -1), e->popfile.file);
        sh.all = *e->popfile.pop;
    } else {
        if (pop_validate(&e->pop, &sub) != 0) {
            int classes = e->pop.classes == 1 ||
                          e->pop.classes > e->pop.n_rows;
            return bn_fail(err, "%s: %s",
                           classes ? origin(e, KEY_POP_CLASSES, KEY_ROWS)
                                   : origin(e, KEY_FEATURE, KEY_ROWS),
                           sub.msg);
        }
        names = malloc(e->pop.n_features * sizeof *names);
        if (!names || generated_labels(e->pop.classes, &sh.all.label) != 0) {
            bn_fail(err, "out of memory");
            goto done;
        }
        for (size_t j = 0; j < e->pop.n_features; j++)
            names[j] = e->pop.features[j].name;
        sh.all.n = e->pop.n_rows;
        sh.all.f = e->pop.n_features;
        sh.all.names = names;
        pop_id(&e->pop, e->pop_id);
    }
    sh.train = sh.all;
    memcpy(e->held_id, e->pop_id, sizeof e->held_id);
    memcpy(e->eval_id, e->pop_id, sizeof e->eval_id);
    if (e->evalfile.file && eval_file_shape(e, &sh, err) != 0)
        goto done;
    if (exp_held_out_models(e->models) && held_out_shape(e, &sh, err) != 0)
        goto done;
    rc = finish_checks(e, &sh, err);
done:
    free(names);
    free_names(map_names, n_maps);
    if (!e->popfile.file)
        pop_factor_free(&sh.all.label);
    return rc;
}

/* Whether a run of cfg reads key k: a setting of its model that the
 * model does not declare unused (run.h). */
static int key_used(const run_config *cfg, int k)
{
    const run_model *m = run_model_get(cfg->model);
    return (keys[k].models & RUN_MODEL_BIT(cfg->model)) &&
           (!m->uses || m->uses(cfg, k));
}

/* Why no configuration of the classifier reads key k. */
static const char *unused_reason(int k)
{
    switch (k) {
    case KEY_PRECISE:
        return "precise_batches applies to the estimator precise";
    case KEY_HIDDEN:
    case KEY_NORM:
    case KEY_DEPTH:
        return "hidden, norm and depth shape the default network, and every "
               "configuration declares its layers";
    case KEY_SGD_MOMENTUM:
        return "sgd_momentum applies to the optimizers sgd and nesterov";
    case KEY_ADAM_BETA1:
    case KEY_ADAM_BETA2:
    case KEY_ADAM_EPS:
        return "the Adam settings apply to the optimizers adam and adamw";
    case KEY_STEP_EPOCHS:
    case KEY_STEP_FACTOR:
        return "step_epochs and step_factor apply to the schedule step";
    case KEY_EPS:
        return "no network of the experiment has a normalisation layer";
    default:
        return "the classifier without batch norm (norm = none, or no "
               "batch layer) has no batch-norm settings";
    }
}

/* A setting given (not a default) that no configuration reads is refused
 * rather than ignored: the first such, with why. */
static int unused_key(const exp_t *e, const unsigned char *used,
                      bn_error *err)
{
    char a[80], b[80];
    for (int k = 0; k < KEY_COUNT; k++) {
        if (!keys[k].nest || !was_set(e, k) || used[k])
            continue;
        if (!(keys[k].models & e->models))
            return bn_fail(err, "%s: %s is a setting of %s, and this "
                                "experiment trains only %s%s",
                           e->from[k], keys[k].name,
                           model_names(keys[k].models, a, sizeof a),
                           model_names(e->models, b, sizeof b),
                           k == KEY_GAMMA || k == KEY_BETA
                               ? " (the classifier learns gamma and beta, "
                                 "from 1 and 0)"
                               : "");
        return bn_fail(err, "%s: %s is used by no configuration: %s",
                       e->from[k], keys[k].name, unused_reason(k));
    }
    return 0;
}

/* Files and reading-table columns of models the experiment does not
 * train are refused when named; the reading table's default is the
 * first trained model's. */
static int model_outputs(exp_t *e, bn_error *err)
{
    char a[80], b[80];
    for (int f = 0; out_file_get(f); f++) {
        const out_file_def *d = out_file_get(f);
        /* A file named that the sweep would not write is no file: a
         * result set without it, and an exit status of 0. */
        if (was_set(e, KEY_OUTPUTS) && (e->outputs & (1u << f)) &&
            d->many_seeds && e->n[KEY_SEED] < 2)
            return bn_fail(err, "%s: outputs: %s summarises the seeds, and "
                                "seed has one value (%s): the sweep would "
                                "not write it",
                           e->from[KEY_OUTPUTS], d->name,
                           was_set(e, KEY_SEED) ? e->from[KEY_SEED]
                                                : "the default");
        if (was_set(e, KEY_OUTPUTS) && (e->outputs & (1u << f)) &&
            d->model >= 0 && !(e->models & RUN_MODEL_BIT(d->model)))
            return bn_fail(err, "%s: outputs: %s is a file of %s, and this "
                                "experiment trains only %s",
                           e->from[KEY_OUTPUTS], d->name,
                           model_names(RUN_MODEL_BIT(d->model), a, sizeof a),
                           model_names(e->models, b, sizeof b));
    }
    if (!was_set(e, KEY_TABLE)) {
        int m = 0;
        while (!(e->models & RUN_MODEL_BIT(m)))
            m++;
        where w = {"the default", keys[KEY_TABLE].name, 1, err};
        return set_names(e, KEY_TABLE, &w, run_model_get(m)->table);
    }
    for (size_t i = 0; i < e->n_table; i++) {
        exp_column c;
        exp_column_find(e->table[i], &c);
        unsigned m = c.score ? c.score->models : keys[c.key].models;
        if (!run_models_show(m, e->models))
            return bn_fail(err, "%s: table: %s is a column of %s, and this "
                                "experiment trains only %s",
                           e->from[KEY_TABLE], e->table[i],
                           model_names(m, a, sizeof a),
                           model_names(e->models, b, sizeof b));
    }
    return 0;
}

/* The orders against the population, every combination of the axes
 * against run_check (each against the rows its model trains on), and
 * the settings no combination uses. */
static int finish_checks(exp_t *e, const shapes *sh, bn_error *err)
{
    bn_error sub;
    for (size_t i = 0; i < e->n_orders; i++)
        if (order_parse(e->order_names[i], &sh->all, &e->orders[i], &sub) !=
            0)
            return bn_fail(err, "%s: %s", origin(e, KEY_ORDER, -1), sub.msg);
    if (model_outputs(e, err) != 0)
        return -1;

    key_id ax[KEY_COUNT];
    size_t na = axes(ax), total = 1;
    for (size_t i = 0; i < na; i++) {
        if (total > EXP_MAX_CONFIGS / e->n[ax[i]])
            return bn_fail(err, "%s: more than %d configurations", e->source,
                           EXP_MAX_CONFIGS);
        total *= e->n[ax[i]];
    }

    /* Every combination through the validator `run` uses, with the seed
     * at its first value: no check depends on the seed. */
    size_t pos[KEY_COUNT] = {0};
    unsigned char used[KEY_COUNT] = {0}; /* a combination reads key k */
    for (;;) {
        run_config cfg;
        config_at(e, ax, na, pos, &cfg);
        for (int k = 0; k < KEY_COUNT; k++)
            if (key_used(&cfg, k))
                used[k] = 1;
        int blame[2] = {-1, -1};
        const pop_t *shape =
            run_model_get(cfg.model)->held_out ? &sh->train : &sh->all;
        if (run_check(&cfg, shape, blame, &sub) != 0)
            return exp_blame(e, &cfg, blame, sub.msg, err);
        size_t i = na;
        while (i-- > 0) {
            if (ax[i] == KEY_SEED)
                continue;
            if (++pos[i] < e->n[ax[i]])
                break;
            pos[i] = 0;
        }
        if (i == (size_t)-1)
            break;
    }
    return unused_key(e, used, err);
}
