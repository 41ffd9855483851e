/* SHA-256 by nettle; see digest.h. */
#include "io/digest.h"

#include <stdio.h>

static void hex_of(const unsigned char dig[SHA256_DIGEST_SIZE], char hex[65])
{
    for (size_t i = 0; i < SHA256_DIGEST_SIZE; i++)
        snprintf(hex + 2 * i, 3, "%02x", dig[i]);
}

void digest_sha256_hex(const unsigned char *bytes, size_t len, char hex[65])
{
    digest_sha256 d;
    digest_begin(&d);
    digest_add(&d, bytes, len);
    digest_end(&d, hex);
}

void digest_begin(digest_sha256 *d) { sha256_init(&d->ctx); }

void digest_add(digest_sha256 *d, const void *bytes, size_t len)
{
    sha256_update(&d->ctx, len, bytes);
}

void digest_end(digest_sha256 *d, char hex[65])
{
    unsigned char dig[SHA256_DIGEST_SIZE];
    sha256_digest(&d->ctx, sizeof dig, dig); /* which also begins again */
    hex_of(dig, hex);
}
