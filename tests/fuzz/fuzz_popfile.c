/*
 * The fuzz target of the population-file reader (popfile.h): an input is
 * a population file's bytes after one byte that picks the format it is
 * read as (auto, CSV, TSV, .npy) and whether it names a label and a group
 * column ("label", "group"). Whatever the bytes: no crash or sanitizer
 * report, a refusal says why on one line, and a population read has every
 * value finite and within POP_MAX_SCALE, its classes numbered within
 * their levels, and becomes a population whose truth is finite.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/input.h"
#include "pop/popfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check(const popfile *pf)
{
    for (size_t i = 0; i < pf->n * pf->f; i++)
        if (!isfinite(pf->x[i]) || fabs(pf->x[i]) > POP_MAX_SCALE)
            abort();
    const pop_factor *fac[2] = {&pf->label, &pf->group};
    for (int k = 0; k < 2; k++)
        for (size_t i = 0; fac[k]->of_row && i < pf->n; i++)
            if (fac[k]->of_row[i] >= fac[k]->n_levels)
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    static const popfile_format formats[4] = {POPFILE_AUTO, POPFILE_CSV,
                                              POPFILE_TSV, POPFILE_NPY};
    static const char *const names[4] = {"fuzz.csv", "fuzz.csv", "fuzz.tsv",
                                         "fuzz.npy"};
    popfile_options opt = {.format = formats[data[0] & 3],
                           .label = data[0] & 4 ? "label" : NULL,
                           .group = data[0] & 8 ? "group" : NULL,
                           .min_rows = data[0] & 16 ? 1 : 0};
    input_budget_set((size_t)1 << 30, "--max-memory");
    popfile pf;
    bn_error err;
    memset(&pf, 0, sizeof pf);
    if (popfile_parse(names[data[0] & 3], data + 1, size - 1, &opt, &pf,
                      &err) != 0) {
        if (!err.msg[0] || strchr(err.msg, '\n'))
            abort();
        return 0;
    }
    check(&pf);
    pop_t pop;
    if (pop_from_file(&pf, &pop, &err) == 0)
        for (size_t j = 0; j < pop.f; j++)
            if (!isfinite(pop.mean[j]) || !isfinite(pop.var[j]))
                abort();
    pop_free(&pop);
    popfile_free(&pf);
    return 0;
}
