/*
 * The trainings a sweep keeps (trained.h): a list of runs, each the
 * configuration it trained (its [evaluation] set aside), the rows it
 * trained on, and after each scored epoch the network's parameters and
 * batch-norm buffers, copied whole, with the scores made then. Copies
 * are of doubles, so that what is put back is the very bits.
 */
#include "model/trained.h"

#include <stdlib.h>
#include <string.h>

struct trained_run {
    run_config key;
    const pop_t *train;
    size_t nv;      /* doubles an epoch: the parameters, then the buffers */
    size_t cap, n;  /* epochs room is made for, recorded */
    unsigned long *epoch;
    run_result *r;
    double *v;      /* n x nv */
    size_t bytes;
    int failed;
    trained_run *next;
};

struct trained_cache {
    size_t max_bytes, bytes;
    void (*lock)(void *), (*unlock)(void *);
    void *lock_ctx;
    trained_run *first;
};

trained_cache *trained_new(size_t max_bytes, void (*lock)(void *),
                           void (*unlock)(void *), void *lock_ctx)
{
    trained_cache *c = calloc(1, sizeof *c);
    if (c)
        *c = (trained_cache){.max_bytes = max_bytes, .lock = lock,
                             .unlock = unlock, .lock_ctx = lock_ctx};
    return c;
}

static void run_free(trained_run *t)
{
    if (!t)
        return;
    free(t->epoch);
    free(t->r);
    free(t->v);
    free(t);
}

void trained_free(trained_cache *c)
{
    if (!c)
        return;
    for (trained_run *t = c->first, *next; t; t = next) {
        next = t->next;
        run_free(t);
    }
    free(c);
}

/* cfg with its [evaluation] set aside: what training depends on. */
static void key_of(const run_config *cfg, run_config *key)
{
    memcpy(key, cfg, sizeof *key);
    memset(&key->eval, 0, sizeof key->eval);
}

static void lock(trained_cache *c)
{
    if (c->lock)
        c->lock(c->lock_ctx);
}

static void unlock(trained_cache *c)
{
    if (c->unlock)
        c->unlock(c->lock_ctx);
}

/* The kept training of key on train, or NULL; the caller holds the
 * lock. */
static const trained_run *kept(const trained_cache *c, const run_config *key,
                               const pop_t *train)
{
    for (const trained_run *t = c->first; t; t = t->next)
        if (t->train == train && memcmp(&t->key, key, sizeof *key) == 0)
            return t;
    return NULL;
}

const trained_run *trained_find(trained_cache *c, const run_config *cfg,
                                const pop_t *train)
{
    run_config key;
    key_of(cfg, &key);
    lock(c);
    const trained_run *hit = kept(c, &key, train);
    unlock(c);
    return hit;
}

/* The doubles of net's parameters and buffers. */
static size_t values_of(const net_t *net)
{
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors((net_t *)net, t), nv = 0;
    for (size_t a = 0; a < nt; a++)
        nv += t[a]->rows * t[a]->cols;
    for (size_t i = 0; i < net_batch_layers(net); i++)
        nv += 2 * net->l[net_batch_layer(net, i)].bn.f;
    return nv;
}

/* Copy net's parameters and buffers into v (back 0) or from it. */
static void values_copy(net_t *net, double *v, int back)
{
    nn_tensor *t[2 * NN_MAX_LAYERS];
    size_t nt = net_tensors(net, t), at = 0;
    double *arrays[2 * NN_MAX_LAYERS + 2 * NN_MAX_LAYERS];
    size_t len[2 * NN_MAX_LAYERS + 2 * NN_MAX_LAYERS], na = 0;
    for (size_t a = 0; a < nt; a++)
        arrays[na] = t[a]->p, len[na++] = t[a]->rows * t[a]->cols;
    for (size_t i = 0; i < net_batch_layers(net); i++) {
        bn_layer *b = &net->l[net_batch_layer(net, i)].bn;
        arrays[na] = b->rm, len[na++] = b->f;
        arrays[na] = b->rv, len[na++] = b->f;
    }
    for (size_t a = 0; a < na; at += len[a], a++)
        if (back)
            memcpy(arrays[a], v + at, len[a] * sizeof *v);
        else
            memcpy(v + at, arrays[a], len[a] * sizeof *v);
}

trained_run *trained_begin(trained_cache *c, const run_config *cfg,
                           const pop_t *train, const net_t *net)
{
    trained_run *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    key_of(cfg, &t->key);
    t->train = train;
    t->nv = values_of(net);
    t->cap = cfg->epochs;
    t->bytes = sizeof *t + t->cap * (sizeof *t->epoch + sizeof *t->r +
                                     t->nv * sizeof *t->v);
    lock(c);
    int room = c->bytes + t->bytes <= c->max_bytes;
    unlock(c);
    if (room && t->cap > 0) {
        t->epoch = malloc(t->cap * sizeof *t->epoch);
        t->r = malloc(t->cap * sizeof *t->r);
        t->v = malloc(t->cap * (t->nv ? t->nv : 1) * sizeof *t->v);
    }
    if (!room || !t->epoch || !t->r || !t->v) {
        run_free(t);
        return NULL;
    }
    return t;
}

void trained_epoch(trained_run *t, unsigned long epoch, const net_t *net,
                   const run_result *r)
{
    if (!t || t->failed)
        return;
    if (t->n == t->cap || values_of(net) != t->nv) {
        t->failed = 1;
        return;
    }
    t->epoch[t->n] = epoch;
    t->r[t->n] = *r;
    values_copy((net_t *)net, t->v + t->n * t->nv, 0);
    t->n++;
}

void trained_end(trained_cache *c, trained_run *t, int ok)
{
    if (!t)
        return;
    if (!ok || t->failed || t->n != t->cap) {
        run_free(t);
        return;
    }
    lock(c);
    /* Not when another thread kept the same training first. */
    int keep = c->bytes + t->bytes <= c->max_bytes &&
               !kept(c, &t->key, t->train);
    if (keep) {
        t->next = c->first;
        c->first = t;
        c->bytes += t->bytes;
    }
    unlock(c);
    if (!keep)
        run_free(t);
}

size_t trained_epochs(const trained_run *t) { return t->n; }

unsigned long trained_epoch_at(const trained_run *t, size_t i,
                               run_result *r, net_t *net)
{
    *r = t->r[i];
    values_copy(net, t->v + i * t->nv, 1);
    return t->epoch[i];
}
