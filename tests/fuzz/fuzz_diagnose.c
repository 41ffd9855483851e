/*
 * The fuzz target of what `bnstudy diagnose` reads: a byte that picks the
 * input, then its files.
 *
 *   bit 0 clear  a checkpoint's four files cut at lines "%%" (the
 *                statistics TSV, the activations as CSV, the batches TSV,
 *                the layer TSV), run as `diagnose --stats --activations
 *                --batches --layer` (--batch-size 3 instead of --batches
 *                when the batches piece is empty);
 *   bit 0 set    a dump folder (scripts/dump_bn_inputs.py's, study/dumpdir.h):
 *                pieces cut at lines "%%" (the newline before the cut is
 *                the cut's), each a file name on its first line and the
 *                file's bytes after it, run as `diagnose DIR` (with
 *                --layer a when bit 1 is set).
 *
 * Whatever the files: no crash or sanitizer report, and the command exits
 * 0 or exits 2 with one line.
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <string.h>

#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 16

static void checkpoint(const uint8_t *data, size_t size)
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
}

/* A file name of the folder: letters, digits, '.', '-', '_'. */
static int plain(const unsigned char *s, size_t n)
{
    if (n == 0 || n > 64 || s[0] == '.')
        return 0;
    for (size_t i = 0; i < n; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                    "0123456789.-_", s[i]) || !s[i])
            return 0;
    return 1;
}

static void folder(const uint8_t *data, size_t size, int layer)
{
    static char names[MAX_FILES][65];
    static size_t n_names;
    char path[256], dir[256];
    fuzz_path(dir, sizeof dir, "dump");
    mkdir(dir, 0755);
    /* The folder holds this input's files only. */
    for (size_t i = 0; i < n_names; i++) {
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        unlink(path);
    }
    n_names = 0;
    const unsigned char *piece[MAX_FILES];
    size_t len[MAX_FILES];
    fuzz_split(data, size, MAX_FILES, piece, len);
    for (size_t i = 0; i < MAX_FILES; i++) {
        /* The newline before a "%%" line is the cut's, not the file's. */
        size_t end = len[i];
        if (i + 1 < MAX_FILES && end && piece[i][end - 1] == '\n' &&
            piece[i] + end < data + size)
            end--;
        const unsigned char *nl = memchr(piece[i], '\n', end);
        size_t n = nl ? (size_t)(nl - piece[i]) : 0;
        if (!nl || !plain(piece[i], n))
            continue;
        memcpy(names[n_names], piece[i], n);
        names[n_names][n] = '\0';
        snprintf(path, sizeof path, "dump/%s", names[n_names++]);
        fuzz_write(path, nl + 1, end - n - 1);
    }
    char *argv[] = {"diagnose", dir, "--layer", "a", NULL};
    fuzz_command(cmd_diagnose, layer ? 4 : 2, argv);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    if (data[0] & 1)
        folder(data + 1, size - 1, data[0] & 2);
    else
        checkpoint(data + 1, size - 1);
    return 0;
}
