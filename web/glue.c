/*
 * The web page's way into bnstudy: three functions JavaScript calls on the
 * modules `bnstudy run` is built from, compiled to WebAssembly by
 * `make web`. web_tables describes the tables the page builds its
 * controls from (the key table, the orders, the estimators, the scores,
 * the models, the default features), as JSON. web_run takes settings as
 * `bnstudy run --set` takes them, one "section.key=value" per line,
 * applies them with the same function (exp_set_override), checks them
 * with exp_finish and runs every configuration of their product, as a
 * sweep would, each as `bnstudy run` runs it (its populations, held-out
 * rows and evaluation moves, its blame); it answers with the text
 * `bnstudy run --write-features -` prints: summary.tsv's header and a row
 * per configuration, then for each table asked for (features.tsv's,
 * curve.tsv's, effective.tsv's: a bit each) a blank line and its header
 * and rows. Every number is formatted
 * here, by the writers bnstudy uses (%.17g), so the page shows what the
 * command line prints, byte for byte. A refusal is one line starting with
 * '!', the message bnstudy would print.
 *
 * web_figures reads the figures bnstudy plot would draw of a summary.tsv,
 * a features.tsv, a classifier's curve.tsv and feature maps'
 * effective.tsv the page holds (web_run's answers, a sweep of
 * settings), through the same code (plot_tables), and answers with them
 * as JSON (plot_json): each figure's title, findings, labels, axes and
 * series roles, which the page shows instead of wording its own.
 *
 * web_give_file keeps a file's bytes for `population.file` (the page has
 * no filesystem); web_dump_add and web_dump_report diagnose a dump
 * folder's files as `bnstudy diagnose DIR` does, to the byte.
 *
 * Each call's answer lives until the next call; the page copies it out at
 * once (emscripten's UTF8ToString).
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/buf.h"
#include "base/common.h"
#include "figure/plot.h"
#include "model/estimator.h"
#include "study/exp.h"
#include "model/order.h"
#include "study/out.h"
#include "study/report.h"
#include "pop/pop.h"
#include "pop/popfile.h"
#include "pop/popid.h"
#include "model/run.h"
#include "model/score.h"

/* web_run's tables after the summary, each asked for by its bit. */
enum { WEB_FEATURES = 1, WEB_CURVE = 2, WEB_EFFECTIVE = 4, WEB_TABLES = 3 };

static char *answer;
static size_t answer_len;

static FILE *answer_open(void)
{
    free(answer);
    answer = NULL;
    answer_len = 0;
    return open_memstream(&answer, &answer_len);
}

static const char *answer_close(FILE *fp)
{
    if (!fp || fclose(fp) != 0 || !answer)
        return "!out of memory";
    return answer;
}

/* A JSON string: quotes, backslashes and control characters escaped. */
static void json_str(FILE *fp, const char *s)
{
    bn_buf b = {0};
    buf_json_str(&b, s ? s : "", s ? strlen(s) : 0);
    if (b.failed)
        fputs("\"\"", fp); /* out of memory: still JSON */
    else
        fwrite(b.p, 1, b.len, fp);
    buf_free(&b);
}

static void json_field(FILE *fp, const char *name, const char *value,
                       int first)
{
    fprintf(fp, "%s\"%s\":", first ? "" : ",", name);
    json_str(fp, value);
}

/* A number as its %.17g text: JavaScript reads it back to the same
 * double, and DBL_MAX or UINT64_MAX stay exact. */
static void json_num(FILE *fp, const char *name, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
static void json_num(FILE *fp, const char *name, const char *fmt, ...)
{
    char buf[64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    json_field(fp, name, buf, 0);
}

static const char *type_name(key_type t)
{
    switch (t) {
    case KT_TEXT: return "text";
    case KT_COLUMNS: return "columns";
    case KT_OUTPUTS: return "outputs";
    case KT_UINT: return "uint";
    case KT_REAL: return "real";
    case KT_FEATURE: return "feature";
    case KT_PATH: return "path";
    case KT_COLUMN: return "column";
    case KT_REALS: return "reals";
    case KT_UINTS: return "uints";
    case KT_CHOICES: return "choices";
    case KT_ORDERS: return "orders";
    case KT_DRIFTS: return "drifts";
    case KT_SHAPE: return "shape";
    case KT_CHANNEL: return "channel";
    case KT_NETS: return "networks";
    case KT_DERIVED: return "derived";
    }
    return "other";
}

static const char *order_arg_name(order_arg a)
{
    switch (a) {
    case ORDER_ARG_NONE: return "none";
    case ORDER_ARG_LABEL: return "label";
    case ORDER_ARG_GROUP: return "group";
    case ORDER_ARG_FEATURE: return "feature";
    case ORDER_ARG_COUNT: return "count";
    }
    return "other";
}

static void keys_json(FILE *fp)
{
    fputs("\"keys\":[", fp);
    for (int k = 0; k < KEY_COUNT; k++) {
        const key_def *d = exp_key((key_id)k);
        fputs(k ? ",{" : "{", fp);
        json_field(fp, "section", d->section ? d->section : "", 1);
        json_field(fp, "name", d->name, 0);
        json_field(fp, "type", type_name(d->type), 0);
        json_field(fp, "default", d->dflt ? d->dflt : "", 0);
        json_num(fp, "lo", "%.17g", d->lo);
        json_num(fp, "hi", "%.17g", d->hi);
        fprintf(fp, ",\"lo_open\":%d", d->lo_open);
        json_num(fp, "min", "%llu", (unsigned long long)d->min);
        json_num(fp, "max", "%llu", (unsigned long long)d->max);
        json_field(fp, "arg", d->arg ? d->arg : "", 0);
        json_field(fp, "help", d->help ? d->help : "", 0);
        fprintf(fp, ",\"nest\":%d,\"models\":%u,\"choices\":[", d->nest,
                d->models);
        for (int i = 0; d->type == KT_CHOICES && d->choice(i); i++) {
            fputs(i ? "," : "", fp);
            json_str(fp, d->choice(i));
        }
        fputs("]}", fp);
    }
    fputc(']', fp);
}

static void orders_json(FILE *fp)
{
    fputs(",\"orders\":[", fp);
    for (size_t i = 0; order_get(i); i++) {
        const order_def *o = order_get(i);
        fputs(i ? ",{" : "{", fp);
        json_field(fp, "name", o->name, 1);
        json_field(fp, "arg", order_arg_name(o->arg), 0);
        json_field(fp, "help", o->help, 0);
        fprintf(fp, ",\"optional\":%d,\"uniform\":%d}", o->arg_optional,
                o->uniform);
    }
    fputc(']', fp);
}

/* A list of {"name", "help"} objects. */
static void named_json(FILE *fp, const char *list, size_t n,
                       const char *const *name, const char *const *help)
{
    fprintf(fp, ",\"%s\":[", list);
    for (size_t i = 0; i < n; i++) {
        fputs(i ? ",{" : "{", fp);
        json_field(fp, "name", name[i], 1);
        json_field(fp, "help", help[i], 0);
        fputc('}', fp);
    }
    fputc(']', fp);
}

static void estimators_json(FILE *fp)
{
    const char *name[BN_EST_COUNT], *help[BN_EST_COUNT];
    for (int i = 0; i < BN_EST_COUNT; i++) {
        name[i] = bn_estimator_get((bn_estimator)i)->name;
        help[i] = bn_estimator_get((bn_estimator)i)->help;
    }
    named_json(fp, "estimators", BN_EST_COUNT, name, help);
}

static void scores_json(FILE *fp)
{
    static const char *const kinds[] = {"real", "count", "feature"};
    fputs(",\"scores\":[", fp);
    for (size_t i = 0; score_get(i); i++) {
        const score_def *s = score_get(i);
        fputs(i ? ",{" : "{", fp);
        json_field(fp, "name", s->name, 1);
        json_field(fp, "definition", s->definition, 0);
        json_field(fp, "kind", kinds[s->kind], 0);
        fprintf(fp, ",\"models\":%u}", s->models);
    }
    fputc(']', fp);
}

static void models_json(FILE *fp)
{
    const char *name[RUN_MODEL_COUNT], *help[RUN_MODEL_COUNT];
    for (int m = 0; m < RUN_MODEL_COUNT; m++) {
        name[m] = run_model_get((run_model_id)m)->name;
        help[m] = run_model_get((run_model_id)m)->help;
    }
    named_json(fp, "models", RUN_MODEL_COUNT, name, help);
}

/* The default features, as the key table's own default has none. */
static int features_json(FILE *fp)
{
    pop_spec spec;
    if (pop_default_spec(&spec) != 0)
        return -1;
    fputs(",\"features\":[", fp);
    for (size_t j = 0; j < spec.n_features; j++) {
        const pop_feature *f = &spec.features[j];
        fputs(j ? ",{" : "{", fp);
        json_field(fp, "name", f->name, 1);
        json_num(fp, "mean", "%.17g", f->mean);
        json_num(fp, "sd", "%.17g", f->sd);
        json_num(fp, "rho", "%.17g", f->rho);
        fputc('}', fp);
    }
    fputc(']', fp);
    pop_spec_free(&spec);
    return 0;
}

const char *web_tables(void)
{
    FILE *fp = answer_open();
    if (!fp)
        return "!out of memory";
    fputc('{', fp);
    json_field(fp, "version", BNSTUDY_VERSION, 1);
    fputc(',', fp);
    keys_json(fp);
    orders_json(fp);
    estimators_json(fp);
    scores_json(fp);
    models_json(fp);
    if (features_json(fp) != 0) {
        fclose(fp);
        return "!out of memory";
    }
    fputc('}', fp);
    return answer_close(fp);
}

/* The populations of the last call, kept while the settings describe
 * the same ones (a generated population's canonical description, popid.h,
 * names every number to the bit; the held-out rows' id beside it): the
 * figures' calls share them, and generating them is most of a call's
 * time. A file's rows or feature maps are made anew at each call. */
static char *kept_desc;
static exp_pops kept;

static char *pops_desc(const exp_t *e, int held_out)
{
    if (e->popfile.file || exp_maps_active(e))
        return NULL;
    size_t n = pop_describe(&e->pop, NULL, 0);
    size_t cap = n + sizeof e->held_id + 4;
    char *desc = malloc(cap);
    if (desc) {
        pop_describe(&e->pop, desc, n + 1);
        snprintf(desc + n, cap - n, "|%d|%s", held_out, e->held_id);
    }
    return desc;
}

static const run_pops *populations(const exp_t *e, bn_error *err)
{
    int held_out = exp_held_out_models(e->models);
    char *desc = pops_desc(e, held_out);
    if (desc && kept_desc && strcmp(desc, kept_desc) == 0) {
        free(desc);
        return &kept.p;
    }
    free(kept_desc);
    kept_desc = NULL;
    exp_pops_free(&kept);
    if (exp_populations(e, held_out, &kept, err) != 0) {
        free(desc);
        return NULL;
    }
    kept_desc = desc;
    return &kept.p;
}

/* The file the page was given (dropped, or chosen), by its name: the
 * wasm build has no filesystem, so the rows `population.file` names are
 * these bytes, read as bnstudy reads a file's (exp_population_bytes). */
static unsigned char *given;
static size_t given_len;
static char *given_name;

static int read_given(exp_t *e, bn_error *err)
{
    if (!e->popfile.file)
        return 0;
    if (!given_name || strcmp(e->popfile.file, given_name) != 0)
        return bn_fail(err, "--set population.file=%s: no such file was "
                            "given to the page", e->popfile.file);
    /* The manifest's sha256 needs nettle, which the page has not: the
     * summary's population id is the bytes' FNV-1a, as bnstudy's. */
    return exp_population_bytes(e, given, given_len, "-", err);
}

/* Keep a file's bytes under its name, and say what bnstudy reads of them:
 * {"name", "rows", "features": [names]}, or a refusal naming the file
 * and line, as `bnstudy run --population FILE` words it. */
const char *web_give_file(const char *name, const unsigned char *bytes,
                          size_t len)
{
    static char refusal[sizeof ((bn_error *)0)->msg + 2];
    bn_error err;
    popfile pf;
    free(given);
    free(given_name);
    given = malloc(len + 1);
    given_name = malloc(strlen(name) + 1);
    given_len = len;
    if (!given || !given_name) {
        free(given);
        free(given_name);
        given = NULL;
        given_name = NULL;
        return "!out of memory";
    }
    memcpy(given, bytes, len);
    given[len] = '\0';
    strcpy(given_name, name);
    if (popfile_parse(name, given, len, NULL, &pf, &err) != 0) {
        snprintf(refusal, sizeof refusal, "!%s", err.msg);
        return refusal;
    }
    FILE *fp = answer_open();
    if (!fp) {
        popfile_free(&pf);
        return "!out of memory";
    }
    fputc('{', fp);
    json_field(fp, "name", name, 1);
    fprintf(fp, ",\"rows\":%zu,\"features\":[", pf.n);
    for (size_t j = 0; j < pf.f; j++) {
        fputs(j ? "," : "", fp);
        json_str(fp, pf.names[j]);
    }
    fputs("]}", fp);
    popfile_free(&pf);
    return answer_close(fp);
}

/* A dump folder's files as the page was given them (dropped, or chosen
 * as a folder), each its path ("dump/model.tsv") and a copy of its
 * bytes: web_dump_report reads them as `bnstudy diagnose DIR` reads the
 * folder (dumpdir_read_files) and words the same report (diagnose_dump). */
static dump_file *dump_files;
static size_t dump_n;

static void dump_clear(void)
{
    for (size_t i = 0; i < dump_n; i++) {
        free((char *)dump_files[i].path);
        free((unsigned char *)dump_files[i].bytes);
    }
    free(dump_files);
    dump_files = NULL;
    dump_n = 0;
}

/* 0, or -1 out of memory (the files given so far dropped). */
int web_dump_add(const char *path, const unsigned char *bytes, size_t len)
{
    dump_file *grown = realloc(dump_files, (dump_n + 1) * sizeof *grown);
    char *p = malloc(strlen(path) + 1);
    unsigned char *b = malloc(len ? len : 1);
    if (!grown || !p || !b) {
        free(p);
        free(b);
        if (grown)
            dump_files = grown;
        dump_clear();
        return -1;
    }
    dump_files = grown;
    strcpy(p, path);
    memcpy(b, bytes, len);
    dump_files[dump_n++] = (dump_file){.path = p, .bytes = b, .len = len};
    return 0;
}

/* The report of the files given, the folder called dir; they are
 * dropped after. A refusal is '!' and the message bnstudy diagnose
 * prints after "bnstudy diagnose: ". */
const char *web_dump_report(const char *dir)
{
    static char refusal[sizeof ((bn_error *)0)->msg + 2];
    bn_error err;
    dump_dir d;
    FILE *fp = answer_open();
    int rc = !fp ? bn_fail(&err, "out of memory")
             : dumpdir_read_files(dir, dump_files, dump_n, &d, &err) != 0
                 ? -1
                 : diagnose_dump(fp, &d, dir, NULL, 0, &err);
    if (fp)
        dumpdir_free(&d);
    dump_clear();
    if (rc != 0) {
        if (fp)
            fclose(fp);
        free(answer);
        answer = NULL;
        snprintf(refusal, sizeof refusal, "!%s", err.msg);
        return refusal;
    }
    return answer_close(fp);
}

/* Apply the settings, one "section.key=value" per line, as `run --set`
 * does (exp_set_overrides); then the checks of exp_finish. */
static int apply(exp_t *e, const char *sets, bn_error *err)
{
    size_t n = 0, cap = 1;
    for (const char *c = sets; *c; c++)
        cap += *c == '\n';
    char *copy = malloc(strlen(sets) + 1);
    char **lines = malloc(cap * sizeof *lines);
    if (!copy || !lines) {
        free(copy);
        free(lines);
        return bn_fail(err, "out of memory");
    }
    strcpy(copy, sets);
    for (char *s = copy; *s;) {
        char *nl = strchr(s, '\n');
        if (nl)
            *nl = '\0';
        if (*s)
            lines[n++] = s;
        if (!nl)
            break;
        s = nl + 1;
    }
    int rc = exp_set_overrides(e, lines, n, err);
    free(lines);
    free(copy);
    return rc != 0 || read_given(e, err) != 0 ? -1 : exp_finish(e, err);
}

/* A run's curve.tsv rows, as `run --write-curve` writes them after
 * every epoch. */
typedef struct {
    bn_buf *b;
    unsigned models;
    const pop_t *pop;
    const run_config *cfg;
} curve_ctx;

static void curve_row(void *ctx, unsigned long epoch, const run_result *r)
{
    curve_ctx *c = ctx;
    out_curve_row(c->b, c->models, c->pop, c->cfg, epoch + 1, r);
}

/* Every configuration of the experiment, run as `bnstudy run` runs one
 * (its populations, its blame), its rows into the tables asked for. */
static int run_all(exp_t *e, int tables, bn_buf *out, bn_error *err)
{
    static bn_error sub;
    const run_pops *p = populations(e, err);
    if (!p)
        return -1;
    bn_buf t[WEB_TABLES] = {{0}};
    run_result res;
    memset(&res, 0, sizeof res);
    int rc = 0;
    size_t count = exp_count(e);
    for (size_t k = 0; rc == 0 && k < count; k++) {
        run_config cfg;
        exp_config(e, k, &cfg);
        /* The columns bnstudy run writes: the model's, and a network's
         * own when the experiment names one (run_cmd_models). */
        unsigned m = RUN_MODEL_BIT(cfg.model) | (e->models & RUN_NET_EXT);
        if (k == 0) {
            out_summary_header(out, m);
            out_features_header(&t[0], m);
            out_curve_header(&t[1], m);
            out_effective_header(&t[2], m);
        }
        curve_ctx cc = {&t[1], m, p->pop, &cfg};
        run_observer obs = {NULL, NULL, tables & WEB_CURVE ? curve_row : NULL,
                            &cc, NULL, NULL};
        int blame[2] = {-1, -1};
        if (run_execute_blamed(p, &cfg, &obs, &res, blame, &sub) != 0) {
            exp_blame(e, &cfg, blame, sub.msg, err);
            rc = -1;
            break;
        }
        out_summary_row(out, m, p->pop, &cfg, &res);
        if (tables & WEB_FEATURES)
            out_features_rows(&t[0], m, p->pop, &cfg, &res);
        if (tables & WEB_EFFECTIVE)
            out_effective_rows(&t[2], m, p->pop, &cfg, &res);
        run_result_free(&res);
    }
    run_result_free(&res);
    for (int i = 0; i < WEB_TABLES; i++) {
        if (rc == 0 && (tables & (1 << i))) {
            buf_putc(out, '\n');
            buf_add(out, t[i].p, t[i].len);
        }
        if (t[i].failed)
            rc = bn_fail(err, "out of memory");
        buf_free(&t[i]);
    }
    if (rc == 0 && out->failed)
        rc = bn_fail(err, "out of memory");
    return rc;
}

const char *web_run(const char *sets, int tables)
{
    exp_t *e = malloc(sizeof *e);
    bn_error err;
    int failed = 1, inited = 0;
    FILE *fp = answer_open();
    /* The writers format into buffers, as the sweep's threads do. */
    bn_buf out = {0};
    if (!e || !fp) {
        snprintf(err.msg, sizeof err.msg, "out of memory");
        goto done;
    }
    inited = 1;
    if (exp_init(e, &err) != 0 || apply(e, sets, &err) != 0 ||
        run_all(e, tables, &out, &err) != 0)
        goto done;
    fwrite(out.p, 1, out.len, fp);
    failed = 0;
done:
    buf_free(&out);
    if (inited)
        exp_free(e);
    free(e);
    if (failed) {
        if (fp)
            fclose(fp);
        free(answer);
        answer = NULL;
        /* The message bnstudy run prints after "bnstudy run: ". */
        static char refusal[sizeof err.msg + 2];
        snprintf(refusal, sizeof refusal, "!%s", err.msg);
        return refusal;
    }
    return answer_close(fp);
}

/* The experiment's manifest.tsv as the figures read it: the keys as
 * resolved (population.rows, population.feature, ...). */
static int manifest_of(const char *sets, bn_buf *m, bn_error *err)
{
    exp_t *e = malloc(sizeof *e);
    if (!e)
        return bn_fail(err, "out of memory");
    int rc = exp_init(e, err) != 0 || apply(e, sets, err) != 0 ? -1 : 0;
    if (rc == 0) {
        buf_puts(m, "key\tvalue\n");
        exp_manifest(m, e);
    }
    exp_free(e);
    free(e);
    return rc;
}

/* The figures of plot.h that a summary.tsv and the tables beside it, a
 * features.tsv, a curve.tsv and an effective.tsv (each NULL or "" for
 * none), support, as bnstudy plot draws them of
 * a sweep of the settings sets: a JSON array of plot_json's objects. */
static int figures(const char *sets, const char *summary,
                   const char *const tables[3], bn_buf *out, bn_error *err)
{
    bn_buf m = {0};
    plot_list l = {0};
    int rc = manifest_of(sets, &m, err);
    if (rc == 0 && m.failed)
        rc = bn_fail(err, "out of memory");
    static const char *const names[3] = {"features.tsv", "curve.tsv",
                                         "effective.tsv"};
    plot_file files[5] = {
        {.name = "manifest.tsv", .text = m.p, .len = m.len},
        {.name = "summary.tsv", .text = summary, .len = strlen(summary)},
    };
    size_t n = 2;
    for (int i = 0; i < 3; i++)
        if (tables[i] && tables[i][0])
            files[n++] = (plot_file){.name = names[i], .text = tables[i],
                                     .len = strlen(tables[i])};
    if (rc == 0 && plot_tables(files, n, "page", &l, err) < 0)
        rc = -1;
    buf_putc(out, '[');
    for (size_t i = 0; rc == 0 && i < l.n; i++) {
        if (i)
            buf_putc(out, ',');
        if (plot_json(&l.fig[i], out) != 0)
            rc = bn_fail(err, "out of memory");
    }
    buf_putc(out, ']');
    if (rc == 0 && out->failed)
        rc = bn_fail(err, "out of memory");
    plot_list_free(&l);
    buf_free(&m);
    return rc;
}

const char *web_figures(const char *sets, const char *summary,
                        const char *features, const char *curve,
                        const char *effective)
{
    bn_error err;
    bn_buf b = {0};
    FILE *fp = answer_open();
    if (!fp || figures(sets, summary, (const char *const[3]){features, curve, effective},
                           &b, &err) != 0) {
        if (!fp)
            snprintf(err.msg, sizeof err.msg, "out of memory");
        else
            fclose(fp);
        buf_free(&b);
        free(answer);
        answer = NULL;
        static char refusal[sizeof err.msg + 2];
        snprintf(refusal, sizeof refusal, "!%s", err.msg);
        return refusal;
    }
    fwrite(b.p, 1, b.len, fp);
    buf_free(&b);
    return answer_close(fp);
}
