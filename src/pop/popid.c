/* The population identifier; see popid.h. */
#include "pop/popid.h"

#include <stdio.h>
#include <string.h>

#define FNV_OFFSET 0xcbf29ce484222325ULL

uint64_t pop_fnv1a64_more(uint64_t h, const void *data, size_t len)
{
    const unsigned char *p = data;
    for (size_t i = 0; i < len; i++) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t pop_fnv1a64(const void *data, size_t len)
{
    return pop_fnv1a64_more(FNV_OFFSET, data, len);
}

/* Where a description goes: a buffer (cut, like snprintf) and the hash
 * (never cut), so that names of any length describe in full. */
typedef struct {
    char *buf;
    size_t cap, len;
    uint64_t h;
} sink;

static void put(sink *s, const char *text)
{
    size_t n = strlen(text);
    s->h = pop_fnv1a64_more(s->h, text, n);
    if (s->len < s->cap) {
        size_t room = s->cap - 1 - s->len, k = n < room ? n : room;
        memcpy(s->buf + s->len, text, k);
        s->buf[s->len + k] = '\0';
    }
    s->len += n;
}

static void put_num(sink *s, const char *fmt, double v)
{
    char num[40];
    snprintf(num, sizeof num, fmt, v);
    put(s, num);
}

static void describe(const pop_spec *spec, sink *s)
{
    char head[100];
    snprintf(head, sizeof head, "bnstudy population 1\nrows %zu\nseed %llu\n",
             spec->n_rows, (unsigned long long)spec->seed);
    put(s, head);
    for (size_t j = 0; j < spec->n_features; j++) {
        const pop_feature *f = &spec->features[j];
        put(s, "feature ");
        put(s, f->name);
        put_num(s, " %.17g", f->mean);
        put_num(s, " %.17g", f->sd);
        put_num(s, " %.17g\n", f->rho);
    }
    if (spec->classes) {
        snprintf(head, sizeof head, "classes %zu\n", spec->classes);
        put(s, head);
        put_num(s, "label_noise %.17g\n", spec->label_noise);
    }
}

static void describe_file(const pop_file_desc *d, sink *s)
{
    char head[100];
    snprintf(head, sizeof head, "bnstudy population 1\nfile %016llx %s\n",
             (unsigned long long)d->bytes_fnv, d->format);
    put(s, head);
    const char *what[2] = {"label ", "group "}, *col[2] = {d->label, d->group};
    for (int i = 0; i < 2; i++)
        if (col[i]) {
            put(s, what[i]);
            put(s, col[i]);
            put(s, "\n");
        }
}

static void describe_held(const pop_held_desc *h, sink *s)
{
    char line[100];
    if (h->kind == POP_HELD_DRAW) {
        put(s, "held-out draw\n");
    } else if (h->kind == POP_HELD_SPLIT) {
        put_num(s, "held-out split %.17g", h->fraction);
        snprintf(line, sizeof line, " %llu\n", (unsigned long long)h->seed);
        put(s, line);
    } else {
        snprintf(line, sizeof line, "held-out file %016llx %s\n",
                 (unsigned long long)h->file_fnv, h->file_format);
        put(s, line);
    }
}

static sink new_sink(char *buf, size_t cap)
{
    sink s = {buf, cap, 0, FNV_OFFSET};
    if (cap)
        buf[0] = '\0';
    return s;
}

size_t pop_describe(const pop_spec *spec, char *buf, size_t cap)
{
    sink s = new_sink(buf, cap);
    describe(spec, &s);
    return s.len;
}

size_t pop_describe_file(const pop_file_desc *d, char *buf, size_t cap)
{
    sink s = new_sink(buf, cap);
    describe_file(d, &s);
    return s.len;
}

static void hex(uint64_t h, char out[17])
{
    snprintf(out, 17, "%016llx", (unsigned long long)h);
}

void pop_id(const pop_spec *spec, char out[17])
{
    sink s = new_sink(NULL, 0);
    describe(spec, &s);
    hex(s.h, out);
}

void pop_id_file(const pop_file_desc *d, char out[17])
{
    sink s = new_sink(NULL, 0);
    describe_file(d, &s);
    hex(s.h, out);
}

static void describe_with_held(const pop_spec *spec, const pop_file_desc *d,
                               const pop_held_desc *h, sink *s)
{
    if (spec)
        describe(spec, s);
    else
        describe_file(d, s);
    describe_held(h, s);
}

size_t pop_describe_held(const pop_spec *spec, const pop_file_desc *d,
                         const pop_held_desc *h, char *buf, size_t cap)
{
    sink s = new_sink(buf, cap);
    describe_with_held(spec, d, h, &s);
    return s.len;
}

void pop_id_held(const pop_spec *spec, const pop_file_desc *d,
                 const pop_held_desc *h, char out[17])
{
    sink s = new_sink(NULL, 0);
    describe_with_held(spec, d, h, &s);
    hex(s.h, out);
}

static void describe_maps(const pop_file_desc *d, const pop_maps_desc *m,
                          sink *s)
{
    char line[160];
    if (d) {
        describe_file(d, s);
        snprintf(line, sizeof line,
                 "maps image %zu %zu filters %zu kernel %zu seed %llu\n",
                 m->image_h, m->image_w, m->filters, m->kernel,
                 (unsigned long long)m->seed);
        put(s, line);
        return;
    }
    snprintf(line, sizeof line,
             "bnstudy population 1\nmaps size %zu %zu samples %zu seed "
             "%llu\n",
             m->size_h, m->size_w, m->samples, (unsigned long long)m->seed);
    put(s, line);
    for (size_t c = 0; c < m->n_ch; c++) {
        put(s, "channel ");
        put(s, m->names[c]);
        put_num(s, " %.17g", m->ch[c].mean);
        put_num(s, " %.17g", m->ch[c].sd);
        put_num(s, " %.17g\n", m->ch[c].r);
    }
}

size_t pop_describe_maps(const pop_file_desc *d, const pop_maps_desc *m,
                         char *buf, size_t cap)
{
    sink s = new_sink(buf, cap);
    describe_maps(d, m, &s);
    return s.len;
}

void pop_id_maps(const pop_file_desc *d, const pop_maps_desc *m,
                 char out[17])
{
    sink s = new_sink(NULL, 0);
    describe_maps(d, m, &s);
    hex(s.h, out);
}
