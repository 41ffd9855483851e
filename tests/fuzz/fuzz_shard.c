/*
 * The fuzz target of the merge's shard reader (io/shard.h): the two
 * shards of tests/fuzz/shard.ini, swept once when the target starts, and
 * an input that replaces one of their files: its first byte picks the
 * shard (bit 0) and the file (summary.tsv, features.tsv, manifest.tsv),
 * the rest is the file's bytes. `bnstudy merge` then runs on them as a
 * user would. Whatever the file: no crash or sanitizer report, and the
 * merge exits 0 (the shard is intact, or its edit is one the writers and
 * the digests cannot tell apart: none) or 2 with one line. Run from the
 * repository's root (make fuzz, make fuzz-replay).
 */
#define _GNU_SOURCE /* memmem */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_run.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerInitialize(int *argc, char ***argv);

static const char *const files[3] = {"summary.tsv", "features.tsv",
                                     "manifest.tsv"};
/* Each shard's files as the sweep wrote them. */
static struct {
    char *bytes;
    size_t len;
} made[2][3];

static char *slurp(const char *path, size_t *len)
{
    FILE *fp = fopen(path, "rb");
    char *b = NULL;
    if (!fp || fseek(fp, 0, SEEK_END) != 0)
        abort();
    long n = ftell(fp);
    rewind(fp);
    if (n < 0 || !(b = malloc((size_t)n + 1)) ||
        fread(b, 1, (size_t)n, fp) != (size_t)n)
        abort();
    fclose(fp);
    *len = (size_t)n;
    return b;
}

static const char *shard_file(char *buf, size_t cap, int k, int f)
{
    char name[128];
    snprintf(name, sizeof name, "sh/shard.shard-%d-of-2/%s", k + 1, files[f]);
    return fuzz_path(buf, cap, name);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc, (void)argv;
    size_t len;
    char *ini = slurp("tests/fuzz/shard.ini", &len);
    fuzz_write("shard.ini", ini, len);
    free(ini);
    char exp[256], out[256], path[256];
    fuzz_path(exp, sizeof exp, "shard.ini");
    fuzz_path(out, sizeof out, "sh");
    for (int k = 0; k < 2; k++) {
        char which[16];
        snprintf(which, sizeof which, "%d/2", k + 1);
        char *a[] = {"sweep", exp, "--out", out, "--shard", which, "--jobs",
                     "1", NULL};
        if (fuzz_command(cmd_sweep, 8, a) != 0)
            abort();
        for (int f = 0; f < 3; f++)
            made[k][f].bytes = slurp(shard_file(path, sizeof path, k, f),
                                     &made[k][f].len);
    }
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    int k = data[0] & 1, f = (data[0] >> 1) % 3;
    char path[256], exp[256], s1[256], s2[256], out[256];
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 3; j++) {
            FILE *fp = fopen(shard_file(path, sizeof path, i, j), "wb");
            const char *b = i == k && j == f ? (const char *)data + 1
                                             : made[i][j].bytes;
            size_t n = i == k && j == f ? size - 1 : made[i][j].len;
            if (!fp || fwrite(b, 1, n, fp) != n || fclose(fp) != 0)
                abort();
        }
    fuzz_path(exp, sizeof exp, "shard.ini");
    fuzz_path(s1, sizeof s1, "sh/shard.shard-1-of-2");
    fuzz_path(s2, sizeof s2, "sh/shard.shard-2-of-2");
    fuzz_path(out, sizeof out, "merged");
    char *argv[] = {"merge", exp, s1, s2, "--out", out, NULL};
    int rc = fuzz_command(cmd_merge, 6, argv);
    /* The files as the sweep wrote them merge; anything else the merge
     * took must be those bytes. */
    if (rc == 1 || (rc != 0 && size - 1 == made[k][f].len &&
                    memcmp(data + 1, made[k][f].bytes, size - 1) == 0))
        abort();
    return 0;
}
