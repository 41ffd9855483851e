/*
 * SHA-256, as the manifest records what it was computed from: the
 * experiment file, a population file, and a shard's rows (sweep.h), which
 * the merge holds its rows to. nettle does the hashing; only the command
 * side (expfile.c, sweep.c, shard.c) uses it, so the modules the web page
 * shares need no nettle.
 */
#ifndef BN_DIGEST_H
#define BN_DIGEST_H

#include <stddef.h>

#include <nettle/sha2.h>

/* The SHA-256 of len bytes as 64 lowercase hex digits and a NUL. */
void digest_sha256_hex(const unsigned char *bytes, size_t len, char hex[65]);

/* The SHA-256 of bytes given a piece at a time. */
typedef struct {
    struct sha256_ctx ctx;
} digest_sha256;

void digest_begin(digest_sha256 *d);
void digest_add(digest_sha256 *d, const void *bytes, size_t len);
/* The digest of what was added since digest_begin, as digest_sha256_hex
 * gives it; d begins again. */
void digest_end(digest_sha256 *d, char hex[65]);

#endif
