/*
 * uncertainty.c — error bars from the validation residuals (uncertainty.h,
 * docs/validation.md "Error bars").
 *
 * Bounds: split-conformal order statistics (Vovk et al. 2005; Lei et al.
 * 2018, "Distribution-free predictive inference for regression", Sec. 2.2).
 * For n exchangeable ratios sorted r(1) <= ... <= r(n), a new ratio falls in
 * [r(floor((n+1)a)), r(ceil((n+1)(1-a)))] with probability >= 1 - 2a; with
 * a = (1 - level)/2. At level 0.80 that needs n >= 9.
 *
 * Groups, narrowest first (pp__u_levels): GPU family + framework + ZeRO stage
 * + scale band + attention kind; then without the scale band; without ZeRO;
 * without the attention kind; the family alone; the framework alone; all
 * runs. Memory tries the framework alone before the family alone: what a
 * framework keeps (buffers, gathered weights, the loss's tensors) sets the
 * peak, the GPU only the capacity it is compared with. A plan takes the
 * first group that exists with enough rows.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "costmodel/uncertainty.h"

#define F PP__UK_FAMILY
#define W PP__UK_FRAMEWORK
#define Z PP__UK_ZERO
#define B PP__UK_BAND
#define A PP__UK_ATTN
#define E PP__UK_EP

const unsigned char pp__u_levels[PP__U_WHAT][PP__U_LEVELS] = {
    [PP__U_STEP] = {F | W | Z | B | A | E, F | W | Z | A | E, F | W | A | E, F | W | E, F, W, 0},
    [PP__U_MEM] = {F | W | Z | B | A | E, F | W | Z | A | E, F | W | A | E, F | W | E, W, F, 0},
};

/* Catalog names sharing a family's silicon (topologies/gpus.json). */
void pp__gpu_family(const char *gpu, char *out, size_t cap)
{
    static const struct { const char *prefix, *family; } map[] = {
        {"a100", "A100"}, {"h100", "H100"}, {"h200", "H200"}, {"gb200", "GB200"}, {"b200", "B200"},
        {"mi300x", "MI300"}, {"mi325x", "MI300"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strncmp(gpu, map[i].prefix, strlen(map[i].prefix))) {
            snprintf(out, cap, "%s", map[i].family);
            return;
        }
    size_t k = 0;
    for (; gpu[k] && k + 1 < cap; k++) out[k] = (char)(gpu[k] >= 'a' && gpu[k] <= 'z' ? gpu[k] - 32 : gpu[k]);
    if (cap) out[k] = '\0';
}

int pp__band(int gpus) { return gpus <= 8 ? PP__BAND_NODE : gpus <= 64 ? PP__BAND_64 : gpus <= 512 ? PP__BAND_512 : PP__BAND_MORE; }

const char *pp__band_name(int band)
{
    static const char *const n[] = {"1-8 GPUs", "9-64 GPUs", "65-512 GPUs", "over 512 GPUs"};
    return (unsigned)band < PP__BAND_COUNT ? n[band] : "?";
}

static int cmp_d(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Order-statistic ranks (1-based) of the bounds for n ratios. The 1e-9
 * keeps (n+1)a = 1 from rounding to 0.9999. */
static void ranks(int n, double level, int *klo, int *khi)
{
    double a = (1 - level) / 2;
    *klo = (int)floor((n + 1) * a + 1e-9);
    *khi = (int)ceil((n + 1) * (1 - a) - 1e-9);
}

int pp__min_rows(double level)
{
    for (int n = 1; n < 100000; n++) {
        int lo, hi;
        ranks(n, level, &lo, &hi);
        if (lo >= 1 && hi <= n) return n;
    }
    return 100000;
}

int pp__conformal_bounds(double *r, int n, double level, double *lo, double *hi)
{
    int klo, khi;
    ranks(n, level, &klo, &khi);
    if (n < 1 || klo < 1 || khi > n) return 0;
    qsort(r, (size_t)n, sizeof *r, cmp_d);
    *lo = r[klo - 1];
    *hi = r[khi - 1];
    return 1;
}

void pp__ukey_of(const pp_cluster *c, const pp_strategy *s, pp__ukey *k)
{
    memset(k, 0, sizeof *k);
    pp__gpu_family(c->gpu.name, k->family, sizeof k->family);
    k->framework = s->framework;
    k->zero = s->zero;
    k->band = pp__band(pp_cluster_gpus(c));
    k->attention = s->attention;
    k->ep = s->ep > 1;
}

void pp__ukey_of_resid(const pp__resid *r, pp__ukey *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->family, sizeof k->family, "%s", r->family);
    k->framework = r->framework;
    k->zero = r->zero;
    k->band = pp__band(r->gpus);
    k->attention = r->attention;
    k->ep = r->ep > 1;
}

static int same(const pp__ukey *a, const pp__ukey *b, unsigned mask)
{
    return (!(mask & F) || !strcmp(a->family, b->family)) && (!(mask & W) || a->framework == b->framework) &&
           (!(mask & Z) || a->zero == b->zero) && (!(mask & B) || a->band == b->band) &&
           (!(mask & A) || a->attention == b->attention) && (!(mask & E) || a->ep == b->ep);
}

static void group_key(const pp__ugroup *g, pp__ukey *k)
{
    memset(k, 0, sizeof *k);
    snprintf(k->family, sizeof k->family, "%s", g->family);
    k->framework = g->framework, k->zero = g->zero, k->band = g->band, k->attention = g->attention, k->ep = g->ep;
}

static int usable(const pp__resid *rows, const unsigned char *use, int i, int what)
{
    return (!use || use[i]) && rows[i].ratio[what] > 0;
}

/* The group of key k under mask among the usable rows (keys[] theirs), if
 * it holds enough rows for bounds at level. buf: n doubles. */
static int group_of(const pp__resid *rows, const pp__ukey *keys, int n, const unsigned char *use, int what,
                    const pp__ukey *k, unsigned mask, double level, double *buf, pp__ugroup *g)
{
    int m = 0;
    for (int j = 0; j < n; j++)
        if (usable(rows, use, j, what) && same(k, &keys[j], mask)) buf[m++] = rows[j].ratio[what];
    memset(g, 0, sizeof *g);
    if (!pp__conformal_bounds(buf, m, level, &g->lo, &g->hi)) return 0;
    g->what = (unsigned char)what;
    g->mask = (unsigned char)mask;
    if (mask & F) snprintf(g->family, sizeof g->family, "%s", k->family);
    g->framework = (signed char)(mask & W ? k->framework : -1);
    g->zero = (signed char)(mask & Z ? k->zero : -1);
    g->band = (signed char)(mask & B ? k->band : -1);
    g->attention = (signed char)(mask & A ? k->attention : -1);
    g->ep = (signed char)(mask & E ? k->ep : -1);
    g->rows = (short)m;
    return 1;
}

static pp__ukey *keys_of(const pp__resid *rows, int n)
{
    pp__ukey *k = malloc((size_t)(n > 0 ? n : 1) * sizeof *k);
    for (int i = 0; k && i < n; i++) pp__ukey_of_resid(&rows[i], &k[i]);
    return k;
}

int pp__ugroups_build(const pp__resid *rows, int n, const unsigned char *use, double level, pp__ugroup *out, int cap)
{
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    pp__ukey *keys = keys_of(rows, n);
    int m = 0;
    for (int what = 0; buf && keys && what < PP__U_WHAT; what++)
        for (int l = 0; l < PP__U_LEVELS; l++)
            for (int i = 0; i < n && m < cap; i++) {
                if (!usable(rows, use, i, what)) continue;
                int first = 1; /* a group is built once, from its first row */
                for (int j = 0; j < i && first; j++)
                    first = !(usable(rows, use, j, what) && same(&keys[i], &keys[j], pp__u_levels[what][l]));
                if (first && group_of(rows, keys, n, use, what, &keys[i], pp__u_levels[what][l], level, buf, &out[m])) m++;
            }
    free(buf);
    free(keys);
    return m;
}

int pp__ugroup_direct(const pp__resid *rows, int n, const unsigned char *use, int what, const pp__ukey *k, double level,
                      pp__ugroup *g)
{
    double *buf = malloc((size_t)(n > 0 ? n : 1) * sizeof *buf);
    pp__ukey *keys = keys_of(rows, n);
    int found = 0;
    for (int l = 0; buf && keys && l < PP__U_LEVELS && !found; l++)
        found = group_of(rows, keys, n, use, what, k, pp__u_levels[what][l], level, buf, g);
    free(buf);
    free(keys);
    return found;
}

/* Coverage (uncertainty.h). */
static int level_of(int what, unsigned mask)
{
    for (int l = 0; l < PP__U_LEVELS; l++)
        if (pp__u_levels[what][l] == mask) return l;
    return PP__U_LEVELS - 1;
}

/* Run i's ratio against the interval (widened to hold 1, then by the
 * factor q) of its group among the runs use keeps: 1 inside. *f: the
 * factor >= 1 the interval would need to hold it. 0: no group. */
static int inside(const pp__resid *rows, int n, const unsigned char *use, int i, int what, double level, double q,
                  double *f, int *lvl)
{
    pp__ukey k;
    pp__ugroup g;
    pp__ukey_of_resid(&rows[i], &k);
    if (!pp__ugroup_direct(rows, n, use, what, &k, level, &g)) return -1;
    double r = rows[i].ratio[what], lo = (g.lo < 1 ? g.lo : 1) / q, hi = (g.hi > 1 ? g.hi : 1) * q;
    if (f) *f = fmax(1, fmax(lo * q / r, r / (hi / q)));
    if (lvl) *lvl = level_of(what, g.mask);
    return r >= lo && r <= hi;
}

static void check(const pp__resid *rows, int n, const unsigned char *use, int i, int what, double level, double q,
                  pp__ucount *t)
{
    int l, in = inside(rows, n, use, i, what, level, q, NULL, &l);
    if (in < 0) return;
    t->checked++, t->inside += in;
    t->by_level[l][0]++, t->by_level[l][1] += in;
}

/* A plan is a run of a publication no group has seen (the user's own), and
 * a publication's runs share a software version and a way of reporting:
 * each run against its group built without its publication, the factor its
 * interval needs to hold it; the factor at `level` over the runs use keeps
 * (split-conformal rank, the jackknife+ of Barber et al. 2021 with a
 * publication left out instead of a point). 1 when none is needed. */
double pp__publication_widen(const pp__resid *rows, int n, const unsigned char *use, int what, double level)
{
    double *f = malloc((size_t)(n > 0 ? n : 1) * sizeof *f);
    unsigned char *u = malloc((size_t)(n > 0 ? n : 1));
    int m = 0;
    for (int i = 0; f && u && i < n; i++) {
        if (!usable(rows, use, i, what)) continue;
        for (int j = 0; j < n; j++) u[j] = (!use || use[j]) && strcmp(rows[j].source, rows[i].source) != 0;
        if (inside(rows, n, u, i, what, level, 1, &f[m], NULL) >= 0) m++;
    }
    double q = 1;
    if (m > 0) {
        qsort(f, (size_t)m, sizeof *f, cmp_d);
        int k = (int)ceil((m + 1) * level - 1e-9);
        q = f[(k < m ? k : m) - 1];
    }
    free(f);
    free(u);
    return q;
}

void pp__coverage_loo(const pp__resid *rows, int n, int what, double level, pp__ucount *t)
{
    unsigned char *use = malloc((size_t)(n > 0 ? n : 1));
    memset(t, 0, sizeof *t);
    double q = pp__publication_widen(rows, n, NULL, what, level);
    for (int i = 0; use && i < n; i++) {
        if (rows[i].ratio[what] <= 0) continue;
        memset(use, 1, (size_t)n);
        use[i] = 0;
        check(rows, n, use, i, what, level, q, t);
    }
    free(use);
}

void pp__coverage_lso(const pp__resid *rows, int n, int what, double level, pp__ucount *t)
{
    unsigned char *use = malloc((size_t)(n > 0 ? n : 1));
    memset(t, 0, sizeof *t);
    for (int s = 0; use && s < n; s++) {
        int first = rows[s].ratio[what] > 0;
        for (int j = 0; j < s && first; j++) first = !(rows[j].ratio[what] > 0 && !strcmp(rows[j].source, rows[s].source));
        if (!first) continue;
        t->sources++;
        for (int j = 0; j < n; j++) use[j] = strcmp(rows[j].source, rows[s].source) != 0;
        double q = pp__publication_widen(rows, n, use, what, level); /* without s: nested */
        for (int i = 0; i < n; i++)
            if (!use[i] && rows[i].ratio[what] > 0) check(rows, n, use, i, what, level, q, t);
    }
    free(use);
}

static int has_family(const char (*list)[PP__U_FAMILY_LEN], int n, const char *f)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(list[i], f)) return 1;
    return 0;
}

static void add_family(char (*list)[PP__U_FAMILY_LEN], int *n, const char *f)
{
    if (has_family(list, *n, f) || *n >= PP__U_MAX_FAMILIES) return;
    snprintf(list[(*n)++], PP__U_FAMILY_LEN, "%s", f);
}

static unsigned bit(int v) { return v >= 0 && v < 32 ? 1u << v : 0; }

void pp__ucover_build(const pp__resid *rows, int n, const unsigned char *use, pp__ucover *c)
{
    memset(c, 0, sizeof *c);
    for (int i = 0; i < n; i++) {
        const pp__resid *r = &rows[i];
        if (usable(rows, use, i, PP__U_MEM)) {
            add_family(c->mem_families, &c->nmem_families, r->family);
            c->mem_frameworks |= bit(r->framework);
        }
        if (!usable(rows, use, i, PP__U_STEP)) continue;
        add_family(c->families, &c->nfamilies, r->family);
        c->frameworks |= bit(r->framework), c->zero |= bit(r->zero), c->bands |= bit(pp__band(r->gpus));
        c->attention |= bit(r->attention), c->precision |= bit(r->precision), c->modes |= bit(r->mode);
        c->offload |= bit(r->offload);
        c->ep |= r->ep > 1, c->cp |= r->cp > 1;
    }
}

int pp__ugroup_find(const pp__ugroup *tab, int n, int what, const pp__ukey *k)
{
    pp__ukey g;
    for (int l = 0; l < PP__U_LEVELS; l++)
        for (int i = 0; i < n; i++) {
            if (tab[i].what != what || tab[i].mask != pp__u_levels[what][l]) continue;
            group_key(&tab[i], &g);
            if (same(&g, k, tab[i].mask)) return i;
        }
    return -1;
}

void pp__ugroup_label(const pp__ugroup *g, char *buf, size_t cap)
{
    size_t k = 0;
    buf[0] = '\0';
#define PART(...)                                                                                                  \
    do {                                                                                                           \
        if (k < cap) k += (size_t)snprintf(buf + k, cap - k, k ? ", " : "");                                       \
        if (k < cap) k += (size_t)snprintf(buf + k, cap - k, __VA_ARGS__);                                         \
    } while (0)
    if (g->mask & F) PART("%s", g->family);
    if (g->mask & W) PART("%s", pp_framework_name((pp_framework)g->framework));
    if (g->mask & Z) PART("ZeRO-%d", g->zero);
    if (g->mask & B) PART("%s", pp__band_name(g->band));
    if (g->mask & A) PART("%s attention", g->attention == PP_ATTN_MATERIALISED ? "materialised" : "fused");
    if (g->mask & E) PART("%s", g->ep ? "expert-parallel" : "no EP");
#undef PART
    if (!g->mask) snprintf(buf, cap, "all published runs");
}

static void interval(const pp__ugroup *tab, int n, int what, const pp__ukey *k, double x, double q, pp_interval *out)
{
    int i = pp__ugroup_find(tab, n, what, k);
    memset(out, 0, sizeof *out);
    out->lo = out->hi = x;
    if (i < 0) {
        snprintf(out->group, sizeof out->group, "none: no published run to build an interval from");
        return;
    }
    const pp__ugroup *g = &tab[i];
    /* the interval holds the estimate itself, then widens by q for a run
     * of a publication no group has seen (pp__publication_widen) */
    out->ratio_lo = (g->lo < 1 ? g->lo : 1) / q;
    out->ratio_hi = (g->hi > 1 ? g->hi : 1) * q;
    out->rows = g->rows;
    out->lo = x * out->ratio_lo;
    out->hi = x * out->ratio_hi;
    pp__ugroup_label(g, out->group, sizeof out->group);
}

__attribute__((format(printf, 2, 3))) void pp__unote(pp_uncertainty *u, const char *fmt, ...)
{
    size_t k = strlen(u->notes);
    if (k && k + 2 < sizeof u->notes) k += (size_t)snprintf(u->notes + k, sizeof u->notes - k, "; ");
    if (k + 1 >= sizeof u->notes) return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(u->notes + k, sizeof u->notes - k, fmt, ap);
    va_end(ap);
}

/* Mechanisms of the plan that no validated run has. */
static void uncovered(const pp__ucover *cov, const pp__ukey *k, const pp_strategy *s, pp_uncertainty *u)
{
    int n;
    if (!has_family(cov->families, cov->nfamilies, k->family))
        pp__unote(u, "%s: no published run; constants are estimates", k->family);
    if (!(cov->frameworks & bit(s->framework)))
        pp__unote(u, "%s: no published run of this framework", pp_framework_name(s->framework));
    if (!(cov->zero & bit(s->zero))) pp__unote(u, "ZeRO-%d: no published run", s->zero);
    if (!(cov->bands & bit(k->band))) pp__unote(u, "%s: no published run at this scale", pp__band_name(k->band));
    if (!(cov->attention & bit(s->attention)))
        pp__unote(u, "%s attention: no published run", pp_attention_name(s->attention));
    if (!(cov->precision & bit(s->precision)))
        pp__unote(u, "%s: no published run at this precision", pp_precision_name(s->precision));
    if (!(cov->modes & bit(s->ft.mode)))
        pp__unote(u, "%s fine-tuning: no published run", pp_enum_names(PP_ENUM_MODE, &n)[s->ft.mode]);
    if (!(cov->offload & bit(s->offload))) pp__unote(u, "offload %s: no published run", pp_offload_name(s->offload));
    /* no evaluated run offloads activations (tools/validate.c reads none) */
    if (s->act_offload_layers > 0) pp__unote(u, "activation offload: no published run");
    /* every evaluated memory reading ran PyTorch's caching allocator (BLOOM, 2022) */
    if (s->buf.expandable_segments > 0) pp__unote(u, "expandable segments: no published memory measurement with them");
    if (s->ep > 1 && !cov->ep) pp__unote(u, "expert parallelism: no published run");
    if (s->cp > 1 && !cov->cp) pp__unote(u, "context parallelism: no published run");
    if (!has_family(cov->mem_families, cov->nmem_families, k->family) || !(cov->mem_frameworks & bit(s->framework)))
        pp__unote(u, "memory: no published measurement of %s with %s, so the peak interval is that of %s", k->family,
             pp_framework_name(s->framework), u->peak_bytes.group);
}

/* Widens out to bounds [lo, hi] of truth / prediction over `rows` runs
 * (the interval still holds the estimate x), named `why`. */
static void widen(pp_interval *out, double x, double lo, double hi, int rows, const char *why)
{
    if (!rows) return;
    out->ratio_lo = fmin(out->rows ? out->ratio_lo : 1, lo), out->ratio_hi = fmax(out->rows ? out->ratio_hi : 1, hi);
    out->rows = rows;
    out->lo = fmin(out->lo, x * lo), out->hi = fmax(out->hi, x * hi);
    snprintf(out->group, sizeof out->group, "%.95s", why);
}

/* A mechanism no published run has (a training mode, an offload, a
 * framework without a memory reading, a precision, EP or CP) borrows no
 * group's interval but the widest any group of the validated runs has. */
static void widest(const pp__ugroup *tab, int n, int what, double x, double q, const char *mech, pp_interval *out)
{
    double lo = 1, hi = 1;
    int rows = 0;
    char why[PP_TEXT_LEN];
    for (int i = 0; i < n; i++)
        if (tab[i].what == what) {
            lo = fmin(lo, tab[i].lo), hi = fmax(hi, tab[i].hi);
            rows = tab[i].rows > rows ? tab[i].rows : rows;
        }
    snprintf(why, sizeof why, "the widest group: no published run with %s", mech);
    widen(out, x, lo / q, hi * q, rows, why); /* and a new publication's factor, as every group */
}

/* The first mechanism of s that no validated run has, for the step time
 * (what) or the peak, into buf; NULL when every one is covered. The GPU
 * family is handled apart (its own bounds, below). */
static const char *unvalidated(const pp__ucover *cov, const pp_strategy *s, int what, char *buf, size_t cap)
{
    int n;
    if (!(cov->modes & bit(s->ft.mode))) snprintf(buf, cap, "%s fine-tuning", pp_enum_names(PP_ENUM_MODE, &n)[s->ft.mode]);
    else if (!(cov->offload & bit(s->offload))) snprintf(buf, cap, "offload %s", pp_offload_name(s->offload));
    else if (s->act_offload_layers > 0) snprintf(buf, cap, "activation offload");
    else if (what == PP__U_MEM && !(cov->mem_frameworks & bit(s->framework)))
        snprintf(buf, cap, "%s (memory)", pp_framework_name(s->framework));
    else if (what == PP__U_MEM) return NULL; /* the rest moves time, not what is kept */
    else if (!(cov->frameworks & bit(s->framework))) snprintf(buf, cap, "%s", pp_framework_name(s->framework));
    else if (!(cov->precision & bit(s->precision))) snprintf(buf, cap, "%s", pp_precision_name(s->precision));
    else if (s->ep > 1 && !cov->ep) snprintf(buf, cap, "expert parallelism");
    else if (s->cp > 1 && !cov->cp) snprintf(buf, cap, "context parallelism");
    else return NULL;
    return buf;
}

/* The live tensors at the error bar's low end, stage by stage: a stage's
 * weights, gradients and optimizer states are counted exactly (no error
 * bar shrinks them: red team rt17, 82.2 GiB of states on an 80 GB GPU
 * was called tight; review8, 76 GiB of states and 6 of activations), the
 * rest scaled by lo; the model's load moment (live_peak_bytes) by lo. */
static double live_low(const pp_memory *mem, double lo)
{
    double most = mem->live_peak_bytes * lo;
    for (int i = 0; i < mem->nstages && i < PP_MAX_STAGES; i++) {
        const pp_stage_mem *st = &mem->stages[i];
        double states = st->params_bytes + st->grads_persistent_bytes + st->optimizer_bytes;
        most = fmax(most, states + lo * fmax(0, st->live_bytes - states));
    }
    return most;
}

/* The memory verdict (issue 13: "tight" is the interval crossing the
 * limit). Does not fit: host memory or NVMe does not, or the live tensors
 * exceed the GPU even at the interval's low end (the peak's truth /
 * prediction bound applied to all but the model states, live_low): the
 * run is expected to fail. Fits:
 * the peak with the allocator's allowance, and its interval's top, are
 * within it. Tight: between, whether the peak with the allowance, the live
 * tensors' point estimate or only the interval's top is over (a caching
 * allocator short of memory frees its cache and retries, slower;
 * fragmentation it cannot free still OOMs). */
pp_fit pp__fit_verdict(const pp_memory *mem, const pp_interval *peak)
{
    double usable = mem->gpu_bytes, lo = mem->peak_bytes > 0 ? fmin(1, peak->lo / mem->peak_bytes) : 1;
    if (!mem->host_fits || !mem->nvme_fits || live_low(mem, lo) > usable) return PP_FIT_NO;
    if (!mem->fits || peak->hi > usable) return PP_FIT_TIGHT;
    return PP_FIT_FITS;
}

void pp__uncertainty_with(const pp__ugroup *tab, int n, const pp__ucover *cov, const pp_cluster *c, const pp_plan *p,
                          pp_uncertainty *out)
{
    pp__ukey k;
    memset(out, 0, sizeof *out);
    out->level = PP_INTERVAL_LEVEL;
    pp__ukey_of(c, &p->strategy, &k);
    double qs = cov ? fmax(1, cov->widen[PP__U_STEP]) : 1, qm = cov ? fmax(1, cov->widen[PP__U_MEM]) : 1;
    interval(tab, n, PP__U_STEP, &k, p->time.step_s, qs, &out->step_s);
    interval(tab, n, PP__U_MEM, &k, p->memory.peak_bytes, qm, &out->peak_bytes);
    char mech[PP_TEXT_LEN];
    if (cov && !has_family(cov->families, cov->nfamilies, k.family)) {
        char why[PP_TEXT_LEN];
        snprintf(why, sizeof why, "%s: no published run; every run's error at default constants", k.family);
        widen(&out->step_s, p->time.step_s, cov->unfitted_lo / qs, cov->unfitted_hi * qs, cov->unfitted_rows, why);
    }
    if (cov && unvalidated(cov, &p->strategy, PP__U_STEP, mech, sizeof mech))
        widest(tab, n, PP__U_STEP, p->time.step_s, qs, mech, &out->step_s);
    if (cov && unvalidated(cov, &p->strategy, PP__U_MEM, mech, sizeof mech))
        widest(tab, n, PP__U_MEM, p->memory.peak_bytes, qm, mech, &out->peak_bytes);
    out->fit = pp__fit_verdict(&p->memory, &out->peak_bytes);
    if (cov) uncovered(cov, &k, &p->strategy, out);
}

void pp_uncertainty_estimate(const pp_cluster *c, const pp_plan *p, pp_uncertainty *out)
{
    pp__uncertainty_with(pp__ugroups, pp__nugroups, &pp__ucoverage, c, p, out);
}

const char *pp_fit_name(pp_fit f)
{
    static const char *const n[] = {"fits", "tight", "does not fit"};
    return (unsigned)f < PP_FIT_COUNT ? n[f] : "?";
}
