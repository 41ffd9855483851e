/*
 * A fuzz target without libFuzzer: every file named on the command line
 * through LLVMFuzzerTestOneInput once (after LLVMFuzzerInitialize, for a
 * target that has one), so that `make test` replays each target's corpus
 * and every input that ever crashed it with the compiler it has. Prints
 * "N passed, 0 failed"; a failing input aborts with the sanitizers'
 * report instead.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
/* Weak: only some targets set anything up. */
int LLVMFuzzerInitialize(int *argc, char ***argv) __attribute__((weak));

int main(int argc, char **argv)
{
    size_t n = 0;
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++) {
        FILE *fp = fopen(argv[i], "rb");
        if (!fp)
            continue; /* an empty directory's unexpanded glob */
        size_t cap = 1 << 16, len = 0, got;
        uint8_t *buf = malloc(cap);
        while (buf && (got = fread(buf + len, 1, cap - len, fp)) > 0)
            if ((len += got) == cap) {
                uint8_t *nb = realloc(buf, cap *= 2);
                if (!nb)
                    free(buf);
                buf = nb;
            }
        fclose(fp);
        if (!buf) {
            fprintf(stderr, "%s: out of memory\n", argv[i]);
            return 1;
        }
        LLVMFuzzerTestOneInput(buf, len);
        free(buf);
        n++;
    }
    printf("%zu passed, 0 failed\n", n);
    return 0;
}
