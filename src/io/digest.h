/*
 * SHA-256, as the manifest records every input it was computed from: the
 * experiment file and a population file. nettle does the hashing; only
 * the command side (expfile.c, sweep.c) uses it, so the modules the web
 * page shares need no nettle.
 */
#ifndef BN_DIGEST_H
#define BN_DIGEST_H

#include <stddef.h>

/* The SHA-256 of len bytes as 64 lowercase hex digits and a NUL. */
void digest_sha256_hex(const unsigned char *bytes, size_t len, char hex[65]);

#endif
