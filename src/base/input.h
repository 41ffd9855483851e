/*
 * Reading an input whole, once: an experiment file, a claims file, a
 * result TSV. What is parsed and what is hashed are then the same bytes,
 * so a FIFO, a pipe or /dev/stdin works like a file, and a device that
 * never ends is refused once it passes the limit (or at its first NUL byte
 * when text is wanted) instead of being read forever.
 */
#ifndef BN_INPUT_H
#define BN_INPUT_H

#include <stddef.h>

#include "base/common.h"

/* The bytes of path, NUL-terminated, into *text (the caller frees it) and
 * their count into *len. More than max bytes is an error naming the
 * limit; with want_text, so is a NUL byte, naming its line. */
int input_read(const char *path, size_t max, int want_text, char **text,
               size_t *len, bn_error *err);

/* "1 MiB", "512 KiB", "100 bytes": a size for a message. */
const char *input_size_text(size_t n, char buf[32]);

#endif
