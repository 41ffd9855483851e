/*
 * A test driver, not part of bnstudy: read one population file with
 * popfile.c and print what the peer tests compare with NumPy, as TSV with
 * every real %.17g (which reads back as the same double):
 *
 *   popstats FILE [--label COL] [--group COL]            feature mean var
 *   popstats FILE ... --values                           the n x f values
 *   popstats FILE --label COL --levels label|group       index name rows
 *
 * Exit status 2 with the reader's message on a bad file.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "popfile.h"

static int usage(void)
{
    fputs("usage: popstats FILE [--label COL] [--group COL] "
          "[--values | --levels label|group]\n",
          stderr);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc < 2)
        return usage();
    popfile_options opt = {POPFILE_AUTO, NULL, NULL};
    const char *levels = NULL;
    int values = 0;
    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--label") == 0 && i + 1 < argc)
            opt.label = argv[++i];
        else if (strcmp(argv[i], "--group") == 0 && i + 1 < argc)
            opt.group = argv[++i];
        else if (strcmp(argv[i], "--levels") == 0 && i + 1 < argc)
            levels = argv[++i];
        else if (strcmp(argv[i], "--values") == 0)
            values = 1;
        else
            return usage();
    }
    unsigned char *bytes;
    size_t len;
    bn_error err;
    popfile pf;
    if (popfile_slurp(argv[1], POPFILE_MAX_BYTES, &bytes, &len, &err) != 0) {
        fprintf(stderr, "popstats: %s\n", err.msg);
        return 2;
    }
    int rc = popfile_parse(argv[1], bytes, len, &opt, &pf, &err);
    free(bytes);
    if (rc != 0) {
        fprintf(stderr, "popstats: %s\n", err.msg);
        return 2;
    }

    if (levels) {
        const popfile_factor *fac = strcmp(levels, "label") == 0 ? &pf.label
                                    : strcmp(levels, "group") == 0
                                        ? &pf.group
                                        : NULL;
        if (!fac || !fac->column)
            return popfile_free(&pf), usage();
        size_t *count = calloc(fac->n_levels, sizeof *count);
        if (!count)
            return popfile_free(&pf), 2;
        for (size_t i = 0; i < pf.n; i++)
            count[fac->of_row[i]]++;
        puts("index\tname\trows");
        for (size_t k = 0; k < fac->n_levels; k++)
            printf("%zu\t%s\t%zu\n", k, fac->levels[k], count[k]);
        free(count);
    } else if (values) {
        for (size_t j = 0; j < pf.f; j++)
            printf("%s%s", j ? "\t" : "", pf.names[j]);
        putchar('\n');
        for (size_t i = 0; i < pf.n; i++)
            for (size_t j = 0; j < pf.f; j++)
                printf("%.17g%c", pf.x[i * pf.f + j],
                       j + 1 < pf.f ? '\t' : '\n');
    } else {
        double *mean = malloc(pf.f * sizeof *mean);
        double *var = malloc(pf.f * sizeof *var);
        if (!mean || !var)
            return popfile_free(&pf), 2;
        popfile_truth(&pf, mean, var);
        puts("feature\tmean\tvar");
        for (size_t j = 0; j < pf.f; j++)
            printf("%s\t%.17g\t%.17g\n", pf.names[j], mean[j], var[j]);
        free(mean);
        free(var);
    }
    popfile_free(&pf);
    return fflush(stdout) != 0 || ferror(stdout) ? 2 : 0;
}
