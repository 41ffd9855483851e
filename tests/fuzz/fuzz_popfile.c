/*
 * The fuzz target of the population-file reader (popfile.h): an input is
 * a population file's bytes after one byte that picks the format it is
 * read as (auto, CSV, TSV, .npy) and whether it names a label and a group
 * column ("label", "group"). Whatever the bytes: no crash or sanitizer
 * report, a refusal says why on one line, and a population read has every
 * value finite and within POP_MAX_SCALE, its classes numbered within
 * their levels, and becomes a population whose truth is finite. The
 * same population, read as a sequence file ([sequence] file) for
 * sequences of its width (a mask) or of 1 + the byte's top bits (lengths
 * when it has one column), is accepted or refused on one line.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/input.h"
#include "model/config.h"
#include "model/seqlayer.h"
#include "pop/popfile.h"
#include "study/exp.h"

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

static void as_sequences(const pop_t *file, uint8_t pick)
{
    run_config cfg;
    run_default_config(&cfg);
    cfg.seq.length = file->f > 1 ? file->f : 1u + (pick >> 5);
    cfg.seq.file = file, cfg.seq.file_name = "fuzz.seq";
    cfg.batch_size = 2;
    pop_t rows;
    memset(&rows, 0, sizeof rows);
    rows.n = file->n * cfg.seq.length, rows.f = 1;
    bn_error err;
    if (seq_check(&cfg, &rows, NULL, &err) != 0 &&
        (!err.msg[0] || strchr(err.msg, '\n')))
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
    if (pop_from_file(&pf, &pop, &err) == 0) {
        for (size_t j = 0; j < pop.f; j++)
            if (!isfinite(pop.mean[j]) || !isfinite(pop.var[j]))
                abort();
        as_sequences(&pop, data[0]);
    }
    pop_free(&pop);
    popfile_free(&pf);
    return 0;
}
