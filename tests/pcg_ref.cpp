// The second, independent PCG32 the tests compare ours with: Debian's
// pcg_random.hpp (O'Neill's C++ library), driven only through its public
// pcg32(initstate, initseq) constructor. Usage: pcg_ref INITSTATE INITSEQ N;
// writes N outputs to stdout as raw little-endian uint32 so the reader
// needs no parsing and the comparison is of bits, not of formatting.
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

#include <pcg_random.hpp>

static bool parse_u64(const char *s, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = std::strtoull(s, &end, 0);
    if (end == s || *end != '\0' || errno == ERANGE)
        return false;
    *out = v;
    return true;
}

int main(int argc, char **argv)
{
    uint64_t initstate, initseq, n;
    if (argc != 4 || !parse_u64(argv[1], &initstate) ||
        !parse_u64(argv[2], &initseq) || !parse_u64(argv[3], &n)) {
        std::fprintf(stderr, "usage: pcg_ref INITSTATE INITSEQ N\n");
        return 2;
    }
    pcg32 rng(initstate, initseq);
    unsigned char buf[4096];
    size_t used = 0;
    for (uint64_t k = 0; k < n; k++) {
        uint32_t v = rng();
        // Byte by byte, so the stream is little-endian on any host.
        for (int b = 0; b < 4; b++)
            buf[used++] = (unsigned char)(v >> (8 * b));
        if (used == sizeof buf) {
            if (std::fwrite(buf, 1, used, stdout) != used)
                return 1;
            used = 0;
        }
    }
    if (used && std::fwrite(buf, 1, used, stdout) != used)
        return 1;
    return std::fflush(stdout) == 0 ? 0 : 1;
}
