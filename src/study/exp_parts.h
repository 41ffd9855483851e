/*
 * What the pieces of the experiment module share, and only they include
 * (exp.h is the module's interface). The module is a file per job: the
 * key table (exp.c), the values of keys as an experiment holds them,
 * parsed from text (exp_values.c), the product of the axes and the
 * decoding of configuration k (exp_product.c), the checks that need
 * every key (exp_checks.c), the population stage (exp_pops.c), and the
 * manifest and the key columns of every file (exp_manifest.c).
 */
#ifndef BN_EXP_PARTS_H
#define BN_EXP_PARTS_H

#include <stddef.h>
#include <stdint.h>

#include "base/common.h"
#include "study/exp.h"

/* The key table, in key_id order (exp.c). */
extern const key_def keys[KEY_COUNT];

/* ---- values (exp_values.c) ---- */

/* Where a value comes from, for its messages: "ORIGIN: KEY: problem",
 * or "ORIGIN: problem" when name_key is 0. */
typedef struct {
    const char *origin, *key;
    int name_key;
    bn_error *err;
} where;

/* Names of a KT_COLUMNS or KT_OUTPUTS key. */
int set_names(exp_t *e, key_id k, const where *w, const char *value);
void free_names(char **names, size_t n);
char *copy_text(const char *s);
/* The value of a one-value key (KT_UINT, KT_REAL). */
uint64_t uint_of(const exp_t *e, key_id k);
double real_of(const exp_t *e, key_id k);

/* ---- the product (exp_product.c) ---- */

/* The axes, slowest first; returns how many. */
size_t axes(key_id *out);
/* Apply the axes' values at index pos[] to cfg. */
void config_at(const exp_t *e, const key_id *ax, size_t na,
               const size_t *pos, run_config *cfg);
/* The maps' samples, height, width and channels (a file's samples once
 * it is read); 0 where a kernel does not fit. */
void maps_shape(const exp_t *e, size_t *m, size_t *h, size_t *w, size_t *c);

/* ---- the checks (exp_checks.c) ---- */

/* Where key k0 (else k1; -1 for none) was set, else the experiment's
 * source: the head of a message that blames it. */
const char *origin(const exp_t *e, int k0, int k1);
/* A population read from a file has no rows, seed, feature or classes
 * lines, and a file's columns need a file. */
int file_excludes(const exp_t *e, bn_error *err);
/* The maps' channel names (freed by the caller with free_names). */
char **maps_names(const exp_t *e, size_t c);

#endif
