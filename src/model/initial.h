/*
 * Running statistics loaded from elsewhere ([layer] initial = PATH): a
 * checkpoint's buffers, possibly of another population or of only some
 * features, as a TSV with the columns feature, running_mean and
 * running_var (a dump's NAME.stats.tsv has them). The layer starts from
 * them instead of 0 and 1; a feature the file does not name keeps 0 and 1,
 * as a partially loaded state_dict leaves it. The classifier's units are
 * named LAYER.UNIT (classifier.c), its weights file's names.
 */
#ifndef BN_INITIAL_H
#define BN_INITIAL_H

#include <stddef.h>

#include "base/common.h"
#include "pop/pop.h"

/* Rows of a file: a layer's features, never millions. */
#define BN_INITIAL_MAX_ROWS 100000

typedef struct {
    char *file;    /* as the messages name it, owned */
    size_t n;      /* rows of the file */
    char **names;  /* n feature names, owned */
    double *mean, *var;
} bn_initial;

/* Parse len bytes of the TSV called name in messages. Every row names a
 * feature once, with a finite mean and a finite variance >= 0. */
int bn_initial_parse(const char *name, const char *bytes, size_t len,
                     bn_initial *out, bn_error *err);
void bn_initial_free(bn_initial *ini);
/* The row naming `name`, or ini->n. */
size_t bn_initial_find(const bn_initial *ini, const char *name);
/* Whether every row names one of pop's features. */
int bn_initial_check(const bn_initial *ini, const pop_t *pop, bn_error *err);
/* The buffers before the first update: the file's where it names the
 * feature, 0 and 1 elsewhere. */
void bn_initial_apply(const bn_initial *ini, const pop_t *pop, double *rm,
                      double *rv);

#endif
