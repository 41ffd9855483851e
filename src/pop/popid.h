/*
 * The population identifier: a short, stable name for the population a
 * row was computed on, so that rows of different populations never share
 * their key columns. It is the FNV-1a 64-bit hash of the population's
 * canonical description, printed as 16 lowercase hex digits. FNV-1a is
 * ten lines of integer arithmetic, so the web page (which has no nettle)
 * prints the same identifier; it names, it does not authenticate (the
 * manifest's SHA-256 of the experiment file, and of a population file,
 * does that).
 */
#ifndef BN_POPID_H
#define BN_POPID_H

#include <stddef.h>
#include <stdint.h>

#include "pop/convpop.h"
#include "pop/pop.h"

/* A population read from a file, as its identifier sees it: the file's
 * bytes (by their FNV-1a 64), how they were read (the same bytes read as
 * CSV or as TSV are different rows), and the columns kept out of the
 * features. */
typedef struct {
    uint64_t bytes_fnv;
    const char *format;        /* "csv", "tsv" or "npy" */
    const char *label, *group; /* the columns' names, or NULL */
} pop_file_desc;

/* The canonical description of a generated population: a version line,
 * then "rows N", "seed S" and one "feature NAME MEAN SD RHO" line per
 * feature, then "classes K" and "label_noise S" when it has classes,
 * numbers %.17g, each line ending in a newline. Of a population
 * read from a file: the version line, then "file FNV FORMAT" (the bytes'
 * hash in 16 hex digits), then "label NAME" and "group NAME" when the file
 * has them. Like snprintf, at most cap - 1 characters and a NUL go to buf
 * and the whole description's length is returned. */
size_t pop_describe(const pop_spec *spec, char *buf, size_t cap);
size_t pop_describe_file(const pop_file_desc *d, char *buf, size_t cap);
uint64_t pop_fnv1a64(const void *data, size_t len);
/* FNV-1a 64 continued over len more bytes from the hash h. */
uint64_t pop_fnv1a64_more(uint64_t h, const void *data, size_t len);
/* The hash of the whole description, however long: 16 hex digits and a
 * NUL. */
void pop_id(const pop_spec *spec, char out[17]);
void pop_id_file(const pop_file_desc *d, char out[17]);

/* What a model evaluated on held-out rows adds to its population's
 * description, one line: "held-out draw" (a generated population's second
 * draw), "held-out split FRACTION SEED" (a file's stratified split) or
 * "held-out file HASH FORMAT" ([evaluation] file). */
typedef enum { POP_HELD_DRAW, POP_HELD_SPLIT, POP_HELD_FILE } pop_held_kind;
typedef struct {
    pop_held_kind kind;
    double fraction;   /* POP_HELD_SPLIT */
    uint64_t seed;     /* POP_HELD_SPLIT */
    uint64_t file_fnv; /* POP_HELD_FILE */
    const char *file_format;
} pop_held_desc;
/* The description and identifier of a population (spec, or the file d
 * when spec is NULL) with its held-out rows. */
size_t pop_describe_held(const pop_spec *spec, const pop_file_desc *d,
                         const pop_held_desc *h, char *buf, size_t cap);
void pop_id_held(const pop_spec *spec, const pop_file_desc *d,
                 const pop_held_desc *h, char out[17]);

/* A population of feature maps (convpop.h, exp.h's [maps]): a file's rows
 * through a filter bank, or generated maps. The description is the
 * file's, then "maps image H W filters C kernel K seed S"; or the version
 * line, "maps size H W samples M seed S" and one "channel NAME MEAN SD R"
 * line per channel. */
typedef struct {
    size_t image_h, image_w, filters, kernel; /* of a file's images */
    size_t size_h, size_w, samples;           /* of generated maps */
    uint64_t seed;
    size_t n_ch;
    const convpop_channel *ch;
    char *const *names;
} pop_maps_desc;
/* d is the file's description, or NULL for generated maps. */
size_t pop_describe_maps(const pop_file_desc *d, const pop_maps_desc *m,
                         char *buf, size_t cap);
void pop_id_maps(const pop_file_desc *d, const pop_maps_desc *m,
                 char out[17]);

#endif
