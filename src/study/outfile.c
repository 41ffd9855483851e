/* The output-file table (outfile.h). */
#include "study/outfile.h"

#include <string.h>

#include "base/common.h"
#include "model/config.h"

static const out_file_def files[OUT_FILE_COUNT] = {
    [OUT_SUMMARY] = {.name = "summary", .file = "summary.tsv",
                     .many_seeds = 0, .model = -1,
                     .help = "one row per configuration: every key and "
                             "score"},
    [OUT_FEATURES] = {.name = "features", .file = "features.tsv",
                      .many_seeds = 0, .model = RUN_MODEL_LAYER,
                      .help = "one row per configuration and feature: the "
                              "truth and the running statistics"},
    [OUT_TABLE] = {.name = "table", .file = "table.md", .many_seeds = 0,
                   .model = -1, .help = "the reading table"},
    [OUT_MANIFEST] = {.name = "manifest", .file = "manifest.tsv",
                      .many_seeds = 0, .model = -1,
                      .help = "version, SHA-256 of the experiment file, "
                              "settings"},
    [OUT_DISTRIBUTION] = {.name = "distribution",
                          .file = "distribution.tsv", .many_seeds = 1,
                          .model = -1,
                          .help = "each score across the seeds"},
    [OUT_EXPECTATION] = {.name = "expectation", .file = "expectation.tsv",
                         .many_seeds = 1, .model = RUN_MODEL_LAYER,
                         .help = "the closed form beside the seeds"},
    [OUT_CURVE] = {.name = "curve", .file = "curve.tsv", .many_seeds = 0,
                   .model = RUN_MODEL_CLASSIFIER,
                   .help = "one row per classifier configuration and "
                           "epoch: its scores had training stopped there"},
    [OUT_EFFECTIVE] = {.name = "effective", .file = "effective.tsv",
                       .many_seeds = 0, .model = RUN_MODEL_LAYER,
                       .help = "one row per configuration and feature: the "
                               "values a batch mean counts, and the "
                               "independent values it is worth"},
};

const out_file_def *out_file_get(int i)
{
    return i >= 0 && i < OUT_FILE_COUNT ? &files[i] : NULL;
}

int out_file_find(const char *name)
{
    for (int i = 0; i < OUT_FILE_COUNT; i++)
        if (strcmp(files[i].name, name) == 0)
            return i;
    return -1;
}

static const char *file_name(int i)
{
    return i >= 0 && i < OUT_FILE_COUNT ? files[i].name : NULL;
}

const char *out_file_list(const char *sep, char *buf, size_t cap)
{
    return bn_join(buf, cap, sep, sep, file_name);
}
