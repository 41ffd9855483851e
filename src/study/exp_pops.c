/*
 * The population stage of an experiment: a population file's bytes
 * parsed and named (the caller reads them, expfile.c), and the rows a
 * finished experiment runs on (a file's, generated, or feature maps) with
 * a held-out model's training and held-out rows.
 */
#include "study/exp.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pop/evalpop.h"
#include "pop/popfile.h"
#include "pop/popid.h"
#include "study/exp_parts.h"

/* A file's bytes into f->pop, parsed with the label and group columns
 * given; key names the line to blame. */
static int read_bytes(exp_t *e, exp_popfile *f, key_id key,
                      const char *label, const char *group,
                      const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err)
{
    if (f->pop) {
        pop_free(f->pop);
        free(f->pop);
        f->pop = NULL;
    }
    popfile_options opt = {.format = POPFILE_AUTO, .label = label,
                           .group = group};
    popfile pf;
    bn_error sub;
    if (popfile_parse(f->path, bytes, len, &opt, &pf, &sub) != 0)
        return bn_fail(err, "%s: %s", origin(e, key, -1), sub.msg);
    f->pop = malloc(sizeof *f->pop);
    if (!f->pop || pop_from_file(&pf, f->pop, &sub) != 0) {
        popfile_free(&pf);
        free(f->pop);
        f->pop = NULL;
        return bn_fail(err, "%s: out of memory", f->path);
    }
    /* The format as the parser told it: .npy by its magic bytes. */
    snprintf(f->format, sizeof f->format, "%s",
             popfile_format_name(popfile_detect(f->path, bytes, len)));
    snprintf(f->sha256, sizeof f->sha256, "%s", sha256);
    f->fnv = pop_fnv1a64(bytes, len);
    return 0;
}

int exp_population_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err)
{
    exp_popfile *f = &e->popfile;
    if (file_excludes(e, err) != 0)
        return -1; /* the keys' conflict before the file's faults */
    if (read_bytes(e, f, KEY_POP_FILE, f->label, f->group, bytes, len,
                   sha256, err) != 0)
        return -1;
    pop_file_desc d = {f->fnv, f->format, f->label, f->group};
    pop_id_file(&d, e->pop_id);
    return 0;
}

int exp_evaluation_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                         const char *sha256, bn_error *err)
{
    /* The evaluation rows have the population's label column: a file's,
     * or the generated classes' "label". */
    const char *label = e->popfile.file ? e->popfile.label
                        : e->pop.classes ? "label"
                                         : NULL;
    return read_bytes(e, &e->evalfile, KEY_EVAL_FILE, label,
                      e->popfile.file ? e->popfile.group : NULL, bytes, len,
                      sha256, err);
}

/* The sequences' lengths or masks: a population file's values, checked
 * against the sequences by the run's check (seqlayer.c). */
int exp_seqfile_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err)
{
    return read_bytes(e, &e->seqfile, KEY_SEQ_FILE, NULL, NULL, bytes, len,
                      sha256, err);
}

int exp_initial_bytes(exp_t *e, const unsigned char *bytes, size_t len,
                      const char *sha256, bn_error *err)
{
    exp_popfile *f = &e->initfile;
    bn_initial_free(&e->initial);
    if (memchr(bytes, '\0', len))
        return bn_fail(err, "%s: a NUL byte: not a TSV", f->file);
    if (bn_initial_parse(f->file, (const char *)bytes, len, &e->initial,
                         err) != 0)
        return -1;
    memcpy(f->sha256, sha256, sizeof f->sha256);
    return 0;
}

/* The feature maps into *out: the file's rows through the filter bank, or
 * generated (convpop.h). */
static int maps_population(const exp_t *e, pop_t *out, bn_error *err)
{
    const exp_maps *m = &e->maps;
    convpop_t cp;
    size_t mm, h, w, c;
    maps_shape(e, &mm, &h, &w, &c);
    int rc = m->image_h
                 ? convpop_from_images(e->popfile.pop->x, mm, m->image_h,
                                       m->image_w, m->filters, m->kernel,
                                       m->seed, &cp, NULL, err)
                 : convpop_field(mm, h, w, c, m->ch, m->seed, &cp, err);
    if (rc != 0)
        return -1;
    char **names = maps_names(e, c);
    if (!names) {
        convpop_free(&cp);
        return bn_fail(err, "out of memory");
    }
    rc = convpop_take(&cp, (const char *const *)names, out, err);
    free_names(names, c);
    return rc;
}

const pop_t *exp_population(const exp_t *e, pop_t *tmp, bn_error *err)
{
    memset(tmp, 0, sizeof *tmp);
    if (exp_maps_active(e))
        return maps_population(e, tmp, err) == 0 ? tmp : NULL;
    if (e->popfile.file)
        return e->popfile.pop;
    return pop_generate(&e->pop, tmp, err) == 0 ? tmp : NULL;
}

int exp_populations(const exp_t *e, int held_out, exp_pops *out,
                    bn_error *err)
{
    memset(out, 0, sizeof *out);
    const pop_t *pop = exp_population(e, &out->made[0], err);
    if (!pop)
        return -1;
    out->p.pop = out->p.train = pop;
    out->p.eval_file = e->evalfile.file ? e->evalfile.pop : NULL;
    if (!held_out)
        return 0;
    if (e->evalfile.file) {
        out->p.held_out = e->evalfile.pop;
    } else if (e->popfile.file) {
        if (evalpop_split(pop, e->holdout, e->holdout_seed, &out->made[1],
                          &out->made[2], err) != 0)
            return -1;
        out->p.train = &out->made[1];
        out->p.held_out = &out->made[2];
    } else {
        if (pop_generate_held_out(&e->pop, &out->made[2], err) != 0)
            return -1;
        out->p.held_out = &out->made[2];
    }
    return 0;
}

void exp_pops_free(exp_pops *p)
{
    for (int i = 0; i < 3; i++)
        pop_free(&p->made[i]);
    memset(&p->p, 0, sizeof p->p);
}
