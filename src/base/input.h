/*
 * The one way bnstudy reads a file: an experiment file, a claims file, a
 * population, a result TSV, a shard's rows, the files diagnose reads.
 * Every read is bounded twice: by the limit of its kind of file, and by
 * the reading budget, the memory all inputs (and what is parsed from
 * them) may hold at once, which the command sets from --max-memory. A
 * regular file's size is known before a byte is read and checked against
 * both; a device, a FIFO or a pipe is read until it ends or passes them
 * (and, when text is wanted, until its first NUL byte), never forever.
 *
 * input_read takes a file whole, so that what is parsed and what is
 * hashed are the same bytes; input_lines takes one line at a time, for
 * the merge, which holds one configuration's rows of a shard whatever
 * the shard's size. The budget is the main thread's: no thread reads.
 */
#ifndef BN_INPUT_H
#define BN_INPUT_H

#include <stddef.h>

#include "base/common.h"

/* ---- the reading budget ---- */

/* What every input read from now on may hold at once, with what is
 * parsed from them, and the option that raises it (for messages; NULL
 * for none). What was held is forgotten. Until this is called the budget
 * is unlimited (the library's own tests, the web page). */
void input_budget_set(size_t limit, const char *option);
/* The bytes held now. */
size_t input_held(void);
/* Take bytes more of the budget for what of path is held (what: "its
 * fields", "its values"), or -1 with a message giving the estimate (the
 * bytes already held and these), the limit and the option that raises
 * it. */
int input_charge(const char *path, size_t bytes, const char *what,
                 bn_error *err);
/* Give back bytes charged before. */
void input_release(size_t bytes);

/* ---- whole files ---- */

/* The bytes of path, NUL-terminated, into *text and their count into
 * *len: the caller frees them with input_free. More than max bytes is an
 * error naming the limit (a regular file's before it is read); so is
 * more than the budget leaves, with the estimate; with want_text, so is
 * a NUL byte, naming its line. */
int input_read(const char *path, size_t max, int want_text, char **text,
               size_t *len, bn_error *err);
/* Free what input_read gave (len its *len), its bytes given back to the
 * budget. */
void input_free(char *text, size_t len);

/* ---- a line at a time ---- */

typedef struct {
    int fd;
    char path[BN_PATH_MAX + 64];
    size_t max, max_line; /* the file's limit and a line's */
    size_t got;           /* bytes read so far */
    size_t line;          /* the line last returned, from 1 */
    char *buf;            /* buf[start, end) read and not yet returned */
    size_t cap, start, end;
    int eof;
} input_lines;

/* Open path to read at most max bytes, in lines of at most max_line
 * bytes: a regular file larger than max is refused before it is read. */
int input_lines_open(input_lines *r, const char *path, size_t max,
                     size_t max_line, bn_error *err);
/* The next line without its newline (NUL-terminated in place) into
 * *line and *len: 1, 0 at the end, -1 on a NUL byte, a line past
 * max_line, the file past max, a last line without its newline (a file
 * cut short) or a read error, each naming the file and the line. */
int input_lines_next(input_lines *r, char **line, size_t *len,
                     bn_error *err);
void input_lines_close(input_lines *r);

/* ---- sizes for messages ---- */

/* "1 MiB", "512 KiB", "100 bytes": an exact size (a limit). */
const char *input_size_text(size_t n, char buf[32]);
/* "6.4 GiB", "305 MiB", "812 bytes": a size to three digits (a file's, an
 * estimate). */
const char *input_size_about(double n, char buf[32]);

#endif
