/*
 * Experiments: the key table and what derives from it. Every setting an
 * experiment file can make is one row of the table in exp.c (section,
 * name, type, default, range, help, the columns it is written in, its
 * place in the sweep's nesting, and how it is applied to a run's
 * configuration). The INI reader (expfile.c, libinih), the `run` command's
 * options, the defaults, the validation, the configuration count, the
 * decoding of configuration k, the manifest and the key columns of every
 * TSV file all read that table, so a new key is one row.
 *
 *   [experiment]  description = TEXT, table = COLUMN ..., outputs = FILE ...
 *   [population]  rows = N, seed = S, feature = NAME MEAN SD RHO (repeat),
 *                 classes = K, label_noise = S; or file = PATH,
 *                 label = COLUMN, group = COLUMN, holdout = FRACTION,
 *                 holdout_seed = S
 *   [evaluation]  lists: shift, scale, offset; file = PATH
 *   [maps]        image = H W, filters = C, kernel = K (a file's rows as
 *                 images through a filter bank); or size = H W,
 *                 samples = M, channel = NAME MEAN SD R (repeat); seed = S
 *   [model]       lists: type, hidden, norm, freeze_after, lr,
 *                 sgd_momentum, weight_decay, init_seed, layers (networks
 *                 separated by commas), dtype, optimizer, adam_beta1,
 *                 adam_beta2, adam_eps, warmup, schedule, step_epochs,
 *                 step_factor
 *   [layer]       lists: gamma, beta, eps, momentum, momentum_weights,
 *                 variance, estimator; initial = PATH
 *   [sweep]       lists: batch_size, order, seed, epochs, partial,
 *                 precise_batches, drift, drift_size
 * Lists are separated by spaces or commas; integer lists take ranges A..B.
 * Every list is an axis: the sweep is the cartesian product of them all.
 *
 * This module uses no libinih, nettle or GSL, so the web page can build
 * its controls from the table and decode the same configurations.
 */
#ifndef BN_EXP_H
#define BN_EXP_H

#include <stdint.h>
#include <stdio.h>

#include "model/bn.h"
#include "base/buf.h"
#include "base/common.h"
#include "pop/convpop.h"
#include "pop/drift.h"
#include "model/keyid.h"
#include "pop/pop.h"
#include "model/run.h"

#define EXP_MAX_VALUES 10000  /* values in one list, ranges expanded */
#define EXP_MAX_COLUMNS 32    /* reading-table columns */
#define EXP_MAX_CONFIGS 10000000

typedef enum {
    KT_TEXT,     /* one line of text */
    KT_COLUMNS,  /* names of summary.tsv columns */
    KT_OUTPUTS,  /* names of output files (out.h) */
    KT_UINT,     /* one integer */
    KT_REAL,     /* one finite number */
    KT_FEATURE,  /* NAME MEAN SD RHO, one per line, repeatable */
    KT_PATH,     /* a file, relative to the experiment file's directory */
    KT_COLUMN,   /* the name of a column of that file, kept whole */
    KT_REALS,    /* an axis of finite numbers */
    KT_UINTS,    /* an axis of integers, A..B ranges allowed */
    KT_CHOICES,  /* an axis of names from a fixed list */
    KT_ORDERS,   /* an axis of order names (order.h) */
    KT_DRIFTS,   /* an axis of drift profiles (drift.h) */
    KT_SHAPE,    /* two integers H W */
    KT_CHANNEL,  /* NAME MEAN SD R, one per line, repeatable */
    KT_NETS,     /* an axis of networks (nn.h), separated by commas */
    KT_DERIVED,  /* a column only: no key in the file */
} key_type;

typedef union {
    double r;
    uint64_t u;
    int i; /* a choice's index, or an order's index in exp_t.orders */
} key_value;

/* A cell of a TSV or reading table: text, an unsigned integer or a real. */
typedef struct {
    enum { CELL_TEXT, CELL_INT, CELL_REAL } kind;
    const char *text; /* NULL: the text is in buf */
    unsigned long long u;
    double r;
    char buf[512]; /* a network's text fits */
} key_cell;

/* An empty text cell. Not a memset of buf: a cell is made for every
 * column of every row a sweep writes, and its text is read from buf only
 * when text is NULL, up to buf's first NUL. */
static inline void key_cell_clear(key_cell *c)
{
    c->kind = CELL_TEXT;
    c->text = NULL;
    c->u = 0;
    c->r = 0;
    c->buf[0] = '\0';
}

/* Which files carry a key column. */
#define COL_SUMMARY 1u  /* summary.tsv and the reading tables */
#define COL_FEATURES 2u /* features.tsv */
#define COL_SEEDS 4u    /* distribution.tsv, expectation.tsv (no seed) */
/* The published study fixes the first ten key columns of its files;
 * bnstudy's other key columns follow the file's own columns, so its files
 * keep that layout as a prefix (docs/definitions.md). */
#define KEY_LEAD_COLUMNS 10

struct exp_s;

typedef struct {
    const char *section; /* NULL for KT_DERIVED */
    const char *name;    /* the key, and the column's name */
    key_type type;
    const char *dflt;    /* the default, as it would be written */
    double lo, hi;       /* KT_REAL(S): lo < x (lo_open) or lo <= x; x <= hi */
    int lo_open;
    uint64_t min, max;   /* KT_UINT, KT_UINTS */
    const char *word;    /* KT_UINTS: a word allowed for the value word_value
                          * (outside min..max), written as the word */
    uint64_t word_value;
    const char *(*choice)(int i); /* KT_CHOICES: name i, NULL past */
    const char *arg;     /* the value's placeholder in help texts */
    const char *help;
    int col;             /* the column's place (1, 2, ...), 0 for none */
    unsigned files;      /* COL_* */
    int nest;            /* axes: place in the product, larger varies faster */
    unsigned models;     /* the models whose setting it is (RUN_MODEL_BIT) */
    void (*apply)(run_config *cfg, const struct exp_s *e, key_value v);
    void (*get)(const run_config *cfg, key_cell *out);
} key_def;

/* The population file an experiment names, and once read
 * (exp_population_bytes) the population it holds. */
typedef struct {
    char *file;  /* as written (the manifest's), NULL for none */
    char *path;  /* where it is opened: file, relative to the experiment
                  * file's directory when set there */
    char *label, *group; /* the columns named, or NULL */
    pop_t *pop;          /* NULL until read */
    uint64_t fnv;        /* FNV-1a 64 of the bytes read, for pop_id */
    char sha256[65];     /* of the bytes read, for the manifest */
    char format[4];      /* "csv", "tsv" or "npy", as it was read */
} exp_popfile;

/* [maps]: the population as feature maps (convpop.h), from a file's rows
 * read as images (image_h > 0) or generated (size_h > 0); neither: plain
 * rows. */
typedef struct {
    size_t image_h, image_w;  /* image = H W */
    size_t filters, kernel;   /* the filter bank: C filters of K x K */
    size_t size_h, size_w;    /* size = H W */
    size_t samples;           /* M generated maps */
    uint64_t seed;            /* the filter bank's, or the generated maps' */
    convpop_channel *ch;      /* n_ch generated channels, owned */
    char **ch_names;
    size_t n_ch, cap_ch;
} exp_maps;

typedef struct exp_s {
    char *source;     /* file name as given, for messages */
    int source_is_file; /* source is a path whose directory PATH keys are
                         * relative to (exp_load sets it) */
    char stem[64];    /* file name without directory and .ini */
    char *text;       /* the experiment file's bytes, as read (or NULL) */
    size_t text_len;
    char *description;
    pop_spec pop;     /* the generated population's recipe */
    exp_popfile popfile;
    /* [evaluation] file: the held-out models' evaluation rows instead of
     * held-out ones (its label and group are popfile's, or "label") */
    exp_popfile evalfile;
    /* [layer] initial: the file (its pop unused) and the buffers it holds,
     * once read (exp_read_population) */
    exp_popfile initfile;
    /* [sequence] file: the sequences' lengths or masks, read as a
     * population file's values (no label, no group). */
    exp_popfile seqfile;
    bn_initial initial;
    exp_maps maps;
    double holdout;        /* a population file's held-out share */
    uint64_t holdout_seed; /* and its split's seed */
    char pop_id[17];  /* pop_id of the population, once exp_finish has run */
    /* The identifier of what a held-out model trains and is evaluated on:
     * the population and its held-out rows (popid.h). */
    char held_id[17];
    /* The rows a held-out model trains on and is evaluated on, once
     * exp_finish has run (0 without one): the manifest states them. */
    size_t train_rows, held_rows;
    /* The identifier of the layer's rows: the population's, or with
     * [evaluation] file the population and those rows. */
    char eval_id[17];
    size_t n[KEY_COUNT];     /* the values of each axis */
    key_value *v[KEY_COUNT];
    order_spec *orders;      /* KEY_ORDER's values point here */
    char **order_names;      /* and their names here */
    size_t n_orders;
    drift_spec *drifts;      /* KEY_DRIFT's values point here */
    char **drift_names;      /* and their names here */
    size_t n_drifts;
    nn_net_spec *nets;       /* KEY_LAYERS's values point here (n 0: the
                              * network of hidden and norm) */
    size_t n_nets;
    size_t n_table;          /* reading-table columns */
    char table[EXP_MAX_COLUMNS][64];
    unsigned outputs;        /* bit i: output file i of out.h */
    unsigned models;         /* bit m: a configuration trains model m,
                              * once exp_finish has run */
    /* where each key was set ("FILE:LINE", "--set ...", "--option"; NULL
     * for a default), for the messages of the whole-file checks */
    char *from[KEY_COUNT];
} exp_t;

/* Row k of the key table (k < KEY_COUNT). */
const key_def *exp_key(key_id k);
/* The key of section and name, or -1. */
int exp_key_find(const char *section, const char *name);

/* Every key's default; stem "run". exp_free releases what it holds, also
 * after a failure, and before e is initialised again. */
int exp_init(exp_t *e, bn_error *err);
void exp_free(exp_t *e);
/* Set key k from text, replacing what it held (KT_FEATURE appends a
 * feature). A message reads "ORIGIN: KEY: problem", or "ORIGIN: problem"
 * when name_key is 0 (the origin already names it). A KT_PATH value is
 * relative to the experiment file's directory (source_is_file). */
int exp_set(exp_t *e, key_id k, const char *value, const char *origin,
            int name_key, bn_error *err);
/* One override "section.key=value" (a command line's --set), its origin
 * "--set section.key=value". *set_features records the feature and
 * channel lines set so far (0 at first): the first of each replaces
 * those held, later ones add. */
int exp_set_override(exp_t *e, const char *set, int *set_features,
                     bn_error *err);
/* Every override of a command line, in order, by exp_set_override; a
 * key given twice (but population.feature, whose lines add up) is
 * refused. */
int exp_set_overrides(exp_t *e, char *const *sets, size_t n, bn_error *err);
/* The population file of a command line (--population, --label,
 * --group; label and group may be NULL): the path is relative to the
 * current directory, and the file's label and group are replaced. */
int exp_set_population(exp_t *e, const char *path, const char *label,
                       const char *group, bn_error *err);
/* The population file's bytes, read once by the caller (expfile.c's
 * exp_read_population): parsed with the label and group named, hashed for
 * the population identifier, sha256 (64 hex digits) kept for the
 * manifest. */
int exp_population_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err);
/* The same for [evaluation] file, parsed with the population's label and
 * group columns. */
/* [layer] initial's buffers from the bytes of its file (initial.h). */
int exp_seqfile_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err);
int exp_initial_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err);
/* The file a KT_PATH key names: the population's, the evaluation rows' or
 * the initial buffers'. */
const exp_popfile *exp_file_of(const exp_t *e, key_id k);
int exp_evaluation_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err);
/* The checks that need every key: the population, the orders against
 * its features, and every combination of the axes through run_check,
 * each message prefixed with where the blamed key was set. A population
 * file must have been read. */
int exp_finish(exp_t *e, bn_error *err);
/* The population a finished experiment runs on: the file's (owned by e)
 * or one generated into *tmp, which the caller frees with pop_free. */
const pop_t *exp_population(const exp_t *e, pop_t *tmp, bn_error *err);

/* The population stage of a finished experiment (run.h's run_pops):
 * every row, and when held_out is set the held-out models' training and
 * held-out rows (a file's split, a generated population's second draw,
 * or [evaluation] file's rows). What it makes it owns: free it with
 * exp_pops_free, also after a failure. */
typedef struct {
    run_pops p;
    pop_t made[3]; /* generated, and the held-out split's two parts */
} exp_pops;
int exp_populations(const exp_t *e, int held_out, exp_pops *out,
                    bn_error *err);
void exp_pops_free(exp_pops *p);
/* Whether the models in the mask include one that trains on a part of
 * the rows and is evaluated on held-out ones. */
int exp_held_out_models(unsigned models);

/* What a command line adds to an experiment file: overrides
 * "section.key=value" and a population file (NULL for none). */
typedef struct {
    char *const *sets;
    size_t n_sets;
    const char *population, *label, *group;
} exp_overrides;

/* Defaults, then the file, then the overrides, then the population file
 * read (exp_read_population), then exp_finish (expfile.c, which reads
 * the INI with libinih). The file is read once, whole (EXP_MAX_FILE bytes
 * at most), into e->text. ov may be NULL. */
#define EXP_MAX_FILE (1u << 20)
int exp_load(exp_t *e, const char *path, const exp_overrides *ov,
             bn_error *err);
/* The same from text already in memory (len bytes, NUL-terminated, no
 * NUL inside), named path; e->text stays NULL. */
int exp_load_text(exp_t *e, const char *path, const char *text, size_t len,
                  const exp_overrides *ov, bn_error *err);
/* Read the population file, if the experiment names one: the whole file
 * once (popfile_slurp, bounded), its SHA-256, then exp_population_bytes;
 * and [evaluation] file the same way. */
int exp_read_population(exp_t *e, bn_error *err);

/* A failure of configuration cfg blamed on the keys blame[0] and
 * blame[1] (-1 for none): msg prefixed with where the first of them that
 * was set came from, and their values when they vary. */
int exp_blame(const exp_t *e, const run_config *cfg, const int *blame,
              const char *msg, bn_error *err);

/* A result that means nothing, though no rule refuses it: a beta so much
 * larger than gamma (2^52 times) that the layer's outputs, gamma times
 * the normalised value plus beta, round to beta, and the scores of the
 * outputs (the score table's that gamma and beta scale) measure only
 * that. 1 with the words for a warning in buf, naming where beta was
 * set; 0 when every configuration means what it says. */
int exp_swamped(const exp_t *e, char *buf, size_t cap);

struct score_def_s;

/* A column of summary.tsv: a key column (exp.h) or a score (score.h). */
typedef struct {
    int key;               /* key_id, or -1 */
    const struct score_def_s *score;
} exp_column;

/* 0 and *col filled (when not NULL) if name is a summary.tsv column. */
int exp_column_find(const char *name, exp_column *col);
const char *exp_column_name(const exp_column *col);

/* The defaults of every experiment key, as a run's configuration. */
void run_default_config(run_config *cfg);

/* Number of configurations in the product. */
size_t exp_count(const exp_t *e);
/* The rows and features of the population e runs on (a file's, once
 * read, or the spec's; of feature maps, a row per sample and position
 * and a feature per channel). */
size_t exp_rows(const exp_t *e);
size_t exp_features(const exp_t *e);
/* Whether the population is feature maps ([maps] image or size). */
int exp_maps_active(const exp_t *e);
/* The population's classes (0: no labels). */
size_t exp_classes(const exp_t *e);
/* The work of the whole product in row passes: epochs x rows x the
 * model's work per row (run_work: the features for the layer, the
 * weights for the classifier) summed over the configurations. */
double exp_work(const exp_t *e);
/* The k-th configuration, k < exp_count(e). */
void exp_config(const exp_t *e, size_t k, run_config *cfg);
/* The index k of the configuration with batch size number ib and seed
 * number is among the configurations that share everything else (group
 * r < exp_count / (batch sizes x seeds)): batch size varies fastest, then
 * the seed, so a group's seeds of one batch size are easy to gather. */
size_t exp_index(const exp_t *e, size_t r, size_t is, size_t ib);

/* "section.key\tvalue" lines of every key, as resolved. */
void exp_manifest(bn_buf *fp, const exp_t *e);

/* The key columns of a file (COL_*), leading (the study's) or trailing,
 * of the models in the mask `models` (bit m: run_model_id m trained in
 * the file): names, and a configuration's cells (reals with real_fmt; "-"
 * for a key of a model the configuration does not train). Each column is
 * preceded by a tab unless it is the line's first and first is set. */
void exp_key_header(bn_buf *fp, unsigned file, int lead, int first,
                    unsigned models);
void exp_key_cells(bn_buf *fp, const run_config *cfg, unsigned file, int lead,
                   int first, const char *real_fmt, unsigned models);
/* The key column named name, or -1 (any file's). */
int exp_key_column(const char *name);
/* A cell, printed as TSV (%.17g) or table (%.4f) wants it. */
void exp_cell_print(bn_buf *fp, const key_cell *c, const char *real_fmt);

#endif
