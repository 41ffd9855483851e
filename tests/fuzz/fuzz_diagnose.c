/*
 * The fuzz target of what `bnstudy diagnose` reads of a checkpoint: an
 * input is the four files scripts/dump_bn_inputs.py writes, cut at lines
 * "%%" (the statistics TSV, the activations as CSV, the batches TSV, the
 * layer TSV), and `diagnose --stats --activations --batches --layer` runs
 * on them as a user would (with --batch-size 3 instead of --batches when
 * the batches piece is empty). Whatever the files: no crash or sanitizer
 * report, and the command exits 0 or exits 2 with one line.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <string.h>

#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const files[4] = {"d.stats.tsv", "d.csv",
                                         "d.batches.tsv", "d.layer.tsv"};
    const unsigned char *piece[4];
    size_t len[4];
    char path[4][256];
    fuzz_split(data, size, 4, piece, len);
    for (int i = 0; i < 4; i++) {
        fuzz_write(files[i], piece[i], len[i]);
        fuzz_path(path[i], sizeof path[i], files[i]);
    }
    char *argv[] = {"diagnose", "--tsv",    "--stats", path[0],
                    "--activations", path[1], "--layer", path[3],
                    len[2] ? "--batches" : "--batch-size",
                    len[2] ? path[2] : "3", NULL};
    fuzz_command(cmd_diagnose, 10, argv);
    return 0;
}
