/* SHA-256 of bytes in memory, by nettle; see digest.h. */
#include "io/digest.h"

#include <stdio.h>

#include <nettle/sha2.h>

void digest_sha256_hex(const unsigned char *bytes, size_t len, char hex[65])
{
    struct sha256_ctx ctx;
    unsigned char dig[SHA256_DIGEST_SIZE];
    sha256_init(&ctx);
    sha256_update(&ctx, len, bytes);
    sha256_digest(&ctx, sizeof dig, dig);
    for (size_t i = 0; i < sizeof dig; i++)
        snprintf(hex + 2 * i, 3, "%02x", dig[i]);
}
