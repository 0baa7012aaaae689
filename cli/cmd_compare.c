/* cmd_compare.c — `parplan compare`: what-if over cluster types and GPU
 * counts (docs/compare.md). Parses and checks every flag before the first
 * search, runs pp_compare_run, writes the chart, then prints a table, JSON
 * or CSV. */
#include <errno.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

static const cli_opt opts[] = {
    {"model", 1, "model preset or JSON file (native or HF config.json)"},
    {"clusters", 1, "cluster types, comma-separated: NAME or FILE, each optionally NAME:G1:G2 (its own GPU counts)"},
    {"gpus", 1, "GPU counts for every type, e.g. 64,128,256 (default: each type's own size)"},
    {"nodes", 1, "node counts for every type instead of --gpus, e.g. 8,16"},
    CLI_FINETUNE_OPTS,
    {"train-tokens", 1, "tokens to train on, e.g. 2e12, 300B or 1.5T (required)"},
    {"deadline-days", 1, "finish within D days: pick the cheapest option meeting it, find each type's smallest count"},
    {"budget-usd", 1, "spend at most X dollars (suffix k, M, B allowed)"},
    {"price-per-gpu-hour", 1, "rental price overrides, $/GPU-hour: CLUSTER=PRICE,... or one PRICE for all"},
    {"purchase-usd-per-gpu", 1, "cost as a purchase instead: $ per GPU, CLUSTER=PRICE,... or one PRICE for all"},
    {"amortize-years", 1, "period a purchase is spread over, years (required with --purchase-usd-per-gpu)"},
    {"usd-per-kwh", 1, "with a purchase: electricity price added at GPU board power (default: not counted)"},
    {"global-batch", 1, "sequences per optimizer step (default: the power of two nearest 4M tokens)"},
    {"seq", 1, "sequence length (default: the model's)"},
    {"objective", 1, "best plan of each option by throughput (default) or cost"},
    {"framework", 1, "all (default) or a list of pytorch,deepspeed,megatron,megatron-deepspeed,fsdp: each option's "
                     "best plan among them, priced as its framework runs it"},
    {"precision", 1, "fp32,fp16,bf16,fp8 (a list) for every cluster (default bf16, fp16 on GPUs without it)"},
    {"max-nodes", 1, "largest node count the deadline search tries (default 4096)"},
    {"threads", 1, "OpenMP threads per search (default: all); the result is the same for any"},
    {"no-partition", 0, "keep the default even stage split (no ILP): faster for large models"},
    {"ilp-time-limit", 1, "safety net per stage-split ILP, s (default 10)"},
    {"ilp-budget", 1, "all stage-split ILPs of one search together, s (default 5); then default splits"},
    {"format", 1, "table (default), json or csv"},
    {"plot", 1, "write the cost/time chart as SVG to FILE"},
    CLI_REPORT_OPT,
    {"force", 0, "replace an existing --plot or --report file"},
    {NULL, 0, NULL}};

/* ------------------------------------------------------------ parsing */

/* A positive amount (cli_parse_num: suffix k, M, B, T, ...; a leading '$'
 * allowed). 0 ok, 2 after printing the error. */
static int parse_amount(const char *flag, const char *v, double lo, double hi, double *out)
{
    const char *num = *v == '$' ? v + 1 : v; /* --budget-usd '$2M' */
    double d;
    if (cli_parse_num(num, strlen(num), &d) != 0 || d < lo || d > hi) {
        fprintf(stderr, "parplan: --%s: expected a number in [%g, %g] (suffix k, M, B or T allowed), got '%s'\n", flag,
                lo, hi, cli_q(v));
        return 2;
    }
    *out = d;
    return 0;
}

/* Positive integers separated by sep into v (at most cap). */
static int parse_counts(const char *flag, const char *s, char sep, int *v, int cap, int *n)
{
    *n = 0;
    const char *p = s;
    while (1) {
        const char *end = strchr(p, sep);
        if (!end) end = p + strlen(p);
        double x;
        if (cli_parse_num(p, (size_t)(end - p), &x) || x < 1 || x > (1 << 20) || x != floor(x) || *n >= cap) {
            fprintf(stderr, "parplan: --%s: expected up to %d counts in [1, %d] separated by '%c', got '%s'\n", flag,
                    cap, 1 << 20, sep, cli_q(s));
            return 2;
        }
        v[(*n)++] = (int)x;
        if (!*end) return 0;
        p = end + 1;
    }
}

/* Levenshtein distance of short names (for "did you mean"). */
static int distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 63 || lb > 63) return 99;
    int prev[64], cur[64];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int d = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < d) d = prev[j] + 1;
            if (cur[j - 1] + 1 < d) d = cur[j - 1] + 1;
            cur[j] = d;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

typedef struct req {
    pp_model m;
    pp_compare_cluster cl[PP_COMPARE_MAX_CLUSTERS];
    char given[PP_COMPARE_MAX_CLUSTERS][PP_TEXT_LEN]; /* as typed in --clusters */
    int ncl;
    pp_compare_opts o;
    const char *fmt, *plot;
    int force;
} req;

/* The cluster an override names: by the name in --clusters or the
 * cluster's own name. -1 after printing the error (with the nearest). */
static int cluster_index(const req *q, const char *flag, const char *name)
{
    for (int i = 0; i < q->ncl; i++)
        if (!strcmp(name, q->given[i]) || !strcmp(name, q->cl[i].cluster.name)) return i;
    int best = -1, bd = 99;
    for (int i = 0; i < q->ncl; i++) {
        int d = distance(name, q->cl[i].cluster.name);
        if (d < bd) bd = d, best = i;
    }
    fprintf(stderr, "parplan: --%s: '%s' is not one of the --clusters", flag, cli_q(name));
    if (best >= 0 && bd <= 3) fprintf(stderr, " (did you mean %s?)", cli_safe(q->cl[best].cluster.name));
    fprintf(stderr, "; expected CLUSTER=PRICE with CLUSTER one of");
    for (int i = 0; i < q->ncl; i++) fprintf(stderr, "%s%s", i ? ", " : " ", cli_safe(q->cl[i].cluster.name));
    fprintf(stderr, "\n");
    return -1;
}

/* --price-per-gpu-hour / --purchase-usd-per-gpu: one PRICE for every
 * cluster, or CLUSTER=PRICE,... Stores into the double at byte offset off
 * of each pp_compare_cluster. */
/* a price of at least one cent: below it a typo, not a price */
static int set_prices(req *q, const char *flag, const char *v, double hi, size_t off)
{
    if (!v) return 0;
    if (!strchr(v, '=')) {
        double d;
        if (parse_amount(flag, v, 0.01, hi, &d)) return 2;
        for (int i = 0; i < q->ncl; i++) *(double *)((char *)&q->cl[i] + off) = d;
        return 0;
    }
    int seen[PP_COMPARE_MAX_CLUSTERS] = {0};
    char buf[2048];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "parplan: --%s: too long\n", flag);
        return 2;
    }
    memcpy(buf, v, strlen(v) + 1);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(it, '=');
        if (!eq || eq == it || !eq[1]) {
            fprintf(stderr, "parplan: --%s: expected CLUSTER=PRICE,... (e.g. dgx-h100=2.99), got '%s'\n", flag, cli_q(it));
            return 2;
        }
        *eq = '\0';
        int ci = cluster_index(q, flag, it);
        if (ci < 0) return 2;
        if (seen[ci]++) {
            fprintf(stderr, "parplan: --%s: %s is given twice\n", flag, cli_q(it));
            return 2;
        }
        double d;
        if (parse_amount(flag, eq + 1, 0.01, hi, &d)) return 2;
        *(double *)((char *)&q->cl[ci] + off) = d;
    }
    return 0;
}

/* --clusters: NAME or FILE, optionally NAME:G1:G2. */
static int load_clusters(const cli_args *a, req *q)
{
    const char *v = cli_get(a, "clusters");
    if (!v || !*v) {
        fprintf(stderr, "parplan: --clusters: expected cluster presets or JSON files, comma-separated (see `parplan "
                        "clusters`)\n");
        return 2;
    }
    char buf[4096];
    if (strlen(v) >= sizeof buf) {
        fprintf(stderr, "parplan: --clusters: too long\n");
        return 2;
    }
    memcpy(buf, v, strlen(v) + 1);
    for (char *save = NULL, *it = strtok_r(buf, ",", &save); it; it = strtok_r(NULL, ",", &save)) {
        if (q->ncl >= PP_COMPARE_MAX_CLUSTERS) {
            fprintf(stderr, "parplan: --clusters: expected at most %d cluster types\n", PP_COMPARE_MAX_CLUSTERS);
            return 2;
        }
        pp_compare_cluster *cc = &q->cl[q->ncl];
        char *colon = access(it, F_OK) == 0 ? NULL : strchr(it, ':');
        if (colon) {
            *colon = '\0';
            if (parse_counts("clusters", colon + 1, ':', cc->gpus, PP_COMPARE_MAX_COUNTS, &cc->ncounts)) return 2;
        }
        snprintf(q->given[q->ncl], PP_TEXT_LEN, "%s", it);
        pp_error err = {""};
        pp_status st = pp_cluster_load(it, &cc->cluster, &err);
        if (st != PP_OK) return cli_fail(st, &err);
        q->ncl++;
    }
    if (q->ncl == 0) {
        fprintf(stderr, "parplan: --clusters: expected at least one cluster type\n");
        return 2;
    }
    return 0;
}

/* --gpus / --nodes apply to every type without its own counts. */
static int apply_counts(const cli_args *a, req *q)
{
    int v[PP_COMPARE_MAX_COUNTS], n = 0, rc;
    const char *g = cli_get(a, "gpus"), *nd = cli_get(a, "nodes");
    if (g && nd) {
        fprintf(stderr, "parplan: give --gpus or --nodes, not both\n");
        return 2;
    }
    if (g && (rc = parse_counts("gpus", g, ',', v, PP_COMPARE_MAX_COUNTS, &n))) return rc;
    if (nd && (rc = parse_counts("nodes", nd, ',', v, PP_COMPARE_MAX_COUNTS, &n))) return rc;
    for (int i = 0; i < q->ncl; i++) {
        pp_compare_cluster *cc = &q->cl[i];
        if (cc->ncounts) continue;
        cc->ncounts = n;
        for (int k = 0; k < n; k++) {
            long long x = nd ? (long long)v[k] * cc->cluster.gpus_per_node : v[k];
            if (x > (1 << 20)) {
                fprintf(stderr, "parplan: --nodes %d: %s would have %lld GPUs, more than %d\n", v[k], cli_safe(cc->cluster.name),
                        x, 1 << 20);
                return 2;
            }
            cc->gpus[k] = (int)x;
        }
    }
    return 0;
}

/* A power of two of sequences nearest 4 Mi tokens (GPT-3, Llama 2/3 scale). */
static int default_batch(int seq)
{
    double want = 4194304.0 / (seq > 0 ? seq : 1);
    int g = 1;
    while (g < (1 << 20) && fabs(log2(g * 2.0) - log2(want)) <= fabs(log2((double)g) - log2(want))) g *= 2;
    return g;
}

/* --precision bf16 or a list such as bf16,fp8: the same set on every cluster. */
static int parse_precisions(const cli_args *a, unsigned *mask)
{
    const char *v = cli_get(a, "precision");
    *mask = 0;
    if (!v) return 0;
    int n;
    const char *const *names = pp_enum_names(PP_ENUM_PRECISION, &n);
    for (const char *p = v, *end; *p || p == v; p = *end ? end + 1 : end) {
        end = strchr(p, ',');
        if (!end) end = p + strlen(p);
        int e = -1;
        for (int i = 0; i < n; i++)
            if (i != PP_PREC_TF32 && strlen(names[i]) == (size_t)(end - p) && !strncmp(names[i], p, (size_t)(end - p)))
                e = i;
        if (e < 0) {
            fprintf(stderr, "parplan: --precision: expected a comma-separated list of fp32|fp16|bf16|fp8, got '%s'\n",
                    cli_q(v));
            return 2;
        }
        *mask |= 1u << e;
        if (!*end) break;
    }
    return 0;
}

static int parse_search(const cli_args *a, req *q)
{
    int rc;
    pp_compare_opts *o = &q->o;
    if ((rc = cli_int(a, "seq", 1, 1 << 24, 0, &o->search.seq))) return rc;
    int seq = o->search.seq ? o->search.seq : q->m.seq;
    if ((rc = cli_int(a, "global-batch", 1, 1 << 26, default_batch(seq), &o->search.global_batch))) return rc;
    if ((rc = cli_int(a, "threads", 1, 1024, 0, &o->search.threads))) return rc;
    if ((rc = cli_finetune(a, &o->search.base.ft))) return rc; /* fine-tuning: docs/finetune.md */
    if ((rc = cli_int(a, "max-nodes", 1, 1 << 20, o->max_nodes, &o->max_nodes))) return rc;
    if ((rc = cli_num(a, "ilp-time-limit", 0.01, 3600, o->search.ilp_time_limit_s, &o->search.ilp_time_limit_s)))
        return rc;
    if ((rc = cli_num(a, "ilp-budget", 0, 86400, o->search.ilp_budget_s, &o->search.ilp_budget_s))) return rc;
    if (cli_has(a, "no-partition")) o->search.stage_partition = 0;
    if ((rc = parse_precisions(a, &o->search.precisions))) return rc;
    if ((rc = cli_enum_list(a, "framework", PP_ENUM_FRAMEWORK, &o->search.frameworks))) return rc;
    const char *obj = cli_get(a, "objective");
    if (obj && strcmp(obj, "throughput") && strcmp(obj, "cost")) {
        fprintf(stderr, "parplan: --objective: expected throughput or cost, got '%s'\n", cli_q(obj));
        return 2;
    }
    o->search.objective = obj && !strcmp(obj, "cost") ? PP_OBJ_COST : PP_OBJ_THROUGHPUT;
    return 0;
}

static int parse_money(const cli_args *a, req *q)
{
    pp_compare_opts *o = &q->o;
    const char *v;
    int rc;
    if (!(v = cli_get(a, "train-tokens"))) {
        fprintf(stderr, "parplan: --train-tokens: expected the number of tokens to train on, e.g. 2e12 or 2T\n");
        return 2;
    }
    if ((rc = parse_amount("train-tokens", v, 1, 1e18, &o->train_tokens))) return rc;
    if ((v = cli_get(a, "deadline-days")) && (rc = parse_amount("deadline-days", v, 0.01, 1e5, &o->deadline_days))) return rc;
    if ((v = cli_get(a, "budget-usd")) && (rc = parse_amount("budget-usd", v, 1, 1e15, &o->budget_usd))) return rc;
    if ((rc = set_prices(q, "price-per-gpu-hour", cli_get(a, "price-per-gpu-hour"), 1e4,
                         offsetof(pp_compare_cluster, price_usd_per_gpu_hour))) ||
        (rc = set_prices(q, "purchase-usd-per-gpu", cli_get(a, "purchase-usd-per-gpu"), 1e8,
                         offsetof(pp_compare_cluster, purchase_usd_per_gpu))))
        return rc;
    int purchase = cli_has(a, "purchase-usd-per-gpu");
    if (cli_has(a, "amortize-years") && !purchase) {
        fprintf(stderr, "parplan: --amortize-years: only with --purchase-usd-per-gpu\n");
        return 2;
    }
    if (cli_has(a, "usd-per-kwh") && !purchase) {
        fprintf(stderr, "parplan: --usd-per-kwh: only with --purchase-usd-per-gpu (rental prices include power)\n");
        return 2;
    }
    if (purchase && !(v = cli_get(a, "amortize-years"))) {
        fprintf(stderr, "parplan: --amortize-years: expected the years a purchase is spread over (e.g. 4) with "
                        "--purchase-usd-per-gpu\n");
        return 2;
    }
    if (purchase && (rc = parse_amount("amortize-years", v, 0.1, 50, &o->amortize_years))) return rc;
    if ((rc = cli_num(a, "usd-per-kwh", 0, 100, 0, &o->usd_per_kwh))) return rc;
    return 0;
}

static int parse_all(const cli_args *a, req *q)
{
    int rc;
    pp_compare_opts_default(&q->o);
    if ((rc = cli_format(a, "table|json|csv", &q->fmt)) || (rc = cli_load_model(a, &q->m)) ||
        (rc = load_clusters(a, q)) || (rc = apply_counts(a, q)) || (rc = parse_search(a, q)) ||
        (rc = parse_money(a, q)))
        return rc;
    q->plot = cli_get(a, "plot");
    q->force = cli_has(a, "force");
    if (q->plot && !*q->plot) {
        fprintf(stderr, "parplan: --plot: expected a file name for the SVG chart\n");
        return 2;
    }
    pp_error err = {""};
    pp_status st = q->plot ? pp_write_check(q->plot, q->force, &err) : PP_OK; /* before the searches */
    if (st != PP_OK) return cli_fail(st, &err);
    return 0;
}

/* ------------------------------------------------------------ table */

static void fmt_usd(char *out, size_t cap, double v)
{
    if (!isfinite(v)) snprintf(out, cap, "?");
    else if (v >= 1e9) snprintf(out, cap, "$%.2fB", v / 1e9);
    else if (v >= 1e6) snprintf(out, cap, "$%.2fM", v / 1e6);
    else if (v >= 1e4) snprintf(out, cap, "$%.1fk", v / 1e3);
    else snprintf(out, cap, "$%.0f", v);
}

static void fmt_tokens(char *out, size_t cap, double t)
{
    if (t >= 1e12) snprintf(out, cap, "%gT", t / 1e12);
    else if (t >= 1e9) snprintf(out, cap, "%gB", t / 1e9);
    else if (t >= 1e6) snprintf(out, cap, "%gM", t / 1e6);
    else snprintf(out, cap, "%g", t);
}

static void plan_summary(const pp_strategy *s, char *out, size_t cap)
{
    static const char *const rc[] = {"", " rc-sel", " rc-full"};
    static const char *const off[] = {"", " off-opt", " off-opt+p", " off-nvme"};
    int n, used;
    used = snprintf(out, cap, "%s dp%d tp%d pp%d", pp_framework_name(s->framework), s->dp, s->tp, s->pp);
    if (s->cp > 1) used += snprintf(out + used, cap - (size_t)used, " cp%d", s->cp);
    if (s->ep > 1) used += snprintf(out + used, cap - (size_t)used, " ep%d", s->ep);
    if (s->sp) used += snprintf(out + used, cap - (size_t)used, " sp");
    if (s->schedule == PP_SCHED_INTERLEAVED) used += snprintf(out + used, cap - (size_t)used, " v%d", s->virtual_stages);
    snprintf(out + used, cap - (size_t)used, " Z%d%s%s mb%d %s", s->zero, rc[s->recompute % 3], off[s->offload % 4],
             s->micro_batch, pp_enum_names(PP_ENUM_PRECISION, &n)[s->precision]);
}

/* Catalog prices of different providers (a hyperscaler's list price beside
 * a GPU cloud's, a marketplace's) compare the providers as much as the
 * GPUs: said, with the options to give like-for-like rates. */
static void mixed_providers(const pp_compare_result *r)
{
    const char *first = NULL;
    int mixed = 0;
    for (int ci = 0; ci < r->nclusters; ci++) {
        const pp_compare_cluster *cc = &r->clusters[ci];
        const pp_gpu *g = &cc->cluster.gpu;
        if (cc->purchase_usd_per_gpu > 0 || cc->price_usd_per_gpu_hour > 0 || g->price_usd_per_hour <= 0) continue;
        const char *p = g->price_provider[0] ? g->price_provider : "unknown";
        if (!first) first = p;
        else if (strcmp(first, p)) mixed = 1;
    }
    if (!mixed) return;
    printf("  note: these catalog prices come from different providers (");
    for (int ci = 0, n = 0; ci < r->nclusters; ci++) {
        const pp_compare_cluster *cc = &r->clusters[ci];
        const pp_gpu *g = &cc->cluster.gpu;
        if (cc->purchase_usd_per_gpu > 0 || cc->price_usd_per_gpu_hour > 0 || g->price_usd_per_hour <= 0) continue;
        printf("%s%s: %s", n++ ? ", " : "", cli_safe(cc->cluster.name), g->price_provider[0] ? cli_safe(g->price_provider) : "unknown");
    }
    printf("): the cost ranking compares providers too; give --price-per-gpu-hour CLUSTER=PRICE,... with one "
           "provider's rates for a like-for-like ranking\n");
}

static void print_prices(const pp_compare_result *r)
{
    printf("\nprices (cost = GPU-hours x $/GPU-hour; catalog prices are on-demand list prices, not reserved or spot:\n"
           "give --price-per-gpu-hour CLUSTER=PRICE,... for your own rates):\n");
    for (int ci = 0; ci < r->nclusters; ci++) {
        const pp_compare_cluster *cc = &r->clusters[ci];
        const pp_gpu *g = &cc->cluster.gpu;
        printf("  %-16s %-14s ", cli_safe(cc->cluster.name), cli_safe(g->name));
        if (cc->purchase_usd_per_gpu > 0) {
            double rate = cc->purchase_usd_per_gpu / (r->opts.amortize_years * 8766.0);
            printf("purchase $%.0f/GPU over %g years = $%.3f/GPU-hour", cc->purchase_usd_per_gpu, r->opts.amortize_years,
                   rate);
            if (r->opts.usd_per_kwh > 0)
                printf(" + power %.0f W x $%g/kWh = $%.3f", g->tdp_w, r->opts.usd_per_kwh,
                       rate + g->tdp_w / 1000 * r->opts.usd_per_kwh);
            printf("\n");
        } else if (cc->price_usd_per_gpu_hour > 0) {
            printf("$%.2f/GPU-hour given (your rate; catalog ", cc->price_usd_per_gpu_hour);
            if (g->price_usd_per_hour > 0)
                printf("on-demand $%.2f of %s)\n", g->price_usd_per_hour, cli_safe(g->price_date));
            else printf("has none)\n");
        } else if (g->price_usd_per_hour > 0) {
            printf("$%.2f/GPU-hour on-demand, catalog price of %s%s%s\n", g->price_usd_per_hour, cli_safe(g->price_date),
                   g->price_provider[0] ? ", " : "", cli_safe(g->price_provider));
        } else {
            printf("no catalog price: cost unknown (give --price-per-gpu-hour %s=PRICE)\n", cli_safe(cc->cluster.name));
        }
    }
    mixed_providers(r);
}

static void print_table(const pp_compare_result *r)
{
    const pp_compare_opts *o = &r->opts;
    char t[32];
    fmt_tokens(t, sizeof t, o->train_tokens);
    int seq = 0;
    for (int i = 0; i < r->n && !seq; i++)
        if (r->options[i].status == PP_OK) seq = r->options[i].plan.strategy.seq;
    printf("%s on %s tokens: global batch %d x %d tokens, best plan of each option by %s\n\n", cli_safe(r->model), t,
           o->search.global_batch, seq, o->search.objective == PP_OBJ_COST ? "cost" : "throughput");
    printf("  %-3s %-18s %6s  %-52s %-5s %6s %9s %10s %10s %9s %s\n", "#", "option", "GPUs", "best plan", "prec", "MFU",
           "days", "cost", "kWh", "tok/s/$", o->deadline_days > 0 ? "deadline" : "");
    for (int i = 0; i < r->n; i++) {
        const pp_compare_option *e = &r->options[i];
        char name[PP_NAME_LEN + 2], plan[128], cost[24];
        snprintf(name, sizeof name, "%s%s", cli_safe(r->clusters[e->cluster].cluster.name), e->from_search ? "*" : "");
        if (e->status != PP_OK) {
            printf("%c %-3d %-18s %6d  %-52s %-5s %6s %9s %10s %10s %9s %s\n", ' ', i, name, e->gpus,
                   e->status == PP_ERR_INFEASIBLE ? "nothing fits (below)" : "no valid strategy (below)", "-", "-", "-",
                   "-", "-", "-", o->deadline_days > 0 ? "-" : "");
            continue;
        }
        plan_summary(&e->plan.strategy, plan, sizeof plan);
        if (e->plan.uncertainty.fit == PP_FIT_TIGHT) /* the memory verdict, as plan prints it (review7) */
            snprintf(plan + strlen(plan), sizeof plan - strlen(plan), " TIGHT");
        fmt_usd(cost, sizeof cost, e->cost_usd);
        char rate[24] = "?";
        if (isfinite(e->tokens_per_s_per_usd_hour)) snprintf(rate, sizeof rate, "%.0f", e->tokens_per_s_per_usd_hour);
        const char *dl = o->deadline_days > 0 ? (e->meets_deadline ? "yes" : "no") : "";
        char mark = i == r->cheapest ? '>' : e->pareto ? '+' : ' ';
        char mfu[16] = "?";
        if (isfinite(e->mfu_bf16)) snprintf(mfu, sizeof mfu, "%.1f%%", 100 * e->mfu_bf16);
        printf("%c %-3d %-18s %6d  %-52s %-5s %6s %9.1f %10s %10.0f %9s %s%s\n", mark, i, name, e->gpus, plan,
               pp_precision_name(e->plan.strategy.precision), mfu, e->days, cost, e->energy_kwh, rate, dl,
               o->budget_usd > 0 && !e->within_budget ? " (over budget)" : "");
    }
    printf("\n  > cheapest meeting the constraints   + Pareto front (no option both cheaper and faster)\n"
           "  * added by the deadline search        tok/s/$ = tokens/s per $/hour of the whole option\n"
           "  kWh = GPU board power (TDP) x GPU-hours; host CPUs, network and cooling are not counted\n"
           "  MFU = model FLOP/s per GPU over its dense bf16 peak (fp16 where it has none), the same basis in every row;\n"
           "  prec = the plan's precision (%s)\n",
           o->search.precisions ? "as asked with --precision" : "bf16 on every GPU that has it, unless --precision says");
    for (int i = 0; i < r->n; i++)
        if (r->options[i].status != PP_OK)
            printf("  #%d %s x %d: %s\n", i, cli_safe(r->clusters[r->options[i].cluster].cluster.name), r->options[i].gpus,
                   cli_safe(r->options[i].error));
}

static void print_option(const pp_compare_result *r, int i)
{
    const pp_compare_option *e = &r->options[i];
    char cost[24];
    fmt_usd(cost, sizeof cost, e->cost_usd);
    printf("%s x %d GPU%s (%d node%s): %.1f days, %s", cli_safe(r->clusters[e->cluster].cluster.name), e->gpus,
           e->gpus == 1 ? "" : "s", e->nodes, e->nodes == 1 ? "" : "s", e->days, cost);
}

static void print_summary(const pp_compare_result *r)
{
    const pp_compare_opts *o = &r->opts;
    printf("\n");
    char b[24];
    fmt_usd(b, sizeof b, o->budget_usd);
    if (o->deadline_days > 0 || o->budget_usd > 0) {
        char what[96];
        if (o->deadline_days > 0 && o->budget_usd > 0)
            snprintf(what, sizeof what, "meeting the %g-day deadline within %s", o->deadline_days, b);
        else if (o->deadline_days > 0) snprintf(what, sizeof what, "meeting the %g-day deadline", o->deadline_days);
        else snprintf(what, sizeof what, "within the %s budget", b);
        if (r->cheapest >= 0) {
            printf("cheapest option %s: #%d ", what, r->cheapest);
            print_option(r, r->cheapest);
            printf("\n");
        } else {
            printf("no option is %s", what);
            if (r->fastest >= 0) {
                printf("; fastest%s: #%d ", o->budget_usd > 0 ? " within budget" : "", r->fastest);
                print_option(r, r->fastest);
            }
            printf("\n");
        }
    } else if (r->cheapest >= 0) {
        printf("cheapest: #%d ", r->cheapest);
        print_option(r, r->cheapest);
        printf("\n");
    }
    if (r->fastest >= 0 && !(o->deadline_days > 0 && r->cheapest < 0)) {
        printf("fastest%s: #%d ", o->budget_usd > 0 ? " within budget" : "", r->fastest);
        print_option(r, r->fastest);
        printf("\n");
    }
    if (o->deadline_days > 0) {
        printf("smallest GPU count meeting the %g-day deadline (search over whole nodes):\n", o->deadline_days);
        for (int ci = 0; ci < r->nclusters; ci++) {
            const pp_compare_min *mn = &r->mins[ci];
            printf("  %-16s ", cli_safe(r->clusters[ci].cluster.name));
            if (mn->found && mn->option >= 0) {
                printf("%d GPU%s (%d node%s): %.1f days, ", mn->gpus, mn->gpus == 1 ? "" : "s", mn->nodes,
                       mn->nodes == 1 ? "" : "s", r->options[mn->option].days);
                char c[24];
                fmt_usd(c, sizeof c, r->options[mn->option].cost_usd);
                printf("%s; #%d, %d evaluation%s\n", c, mn->option, mn->probes, mn->probes == 1 ? "" : "s");
            } else {
                printf("none found: %s (%d evaluation%s)\n", mn->note[0] ? mn->note : "-", mn->probes,
                       mn->probes == 1 ? "" : "s");
            }
        }
    }
}

/* ------------------------------------------------------------ run */

static void progress(void *user, int done, const struct pp_compare_option *e)
{
    const req *q = user;
    fprintf(stderr, "\rparplan: %d searched, last %.30s x %d GPUs   ", done, cli_safe(q->cl[e->cluster].cluster.name), e->gpus);
    fflush(stderr);
}

static int run(const cli_args *a)
{
    req *q = calloc(1, sizeof *q);
    pp_compare_result *r = calloc(1, sizeof *r);
    int rc = 3;
    if (!q || !r) goto done;
    if ((rc = parse_all(a, q))) goto done;
    int bar = isatty(2);
    if (bar) {
        q->o.progress = progress;
        q->o.progress_user = q;
    }
    pp_error err = {""};
    pp_status st = pp_compare_run(&q->m, q->cl, q->ncl, &q->o, r, &err);
    if (bar) fprintf(stderr, "\r%60s\r", "");
    if (st != PP_OK) {
        rc = cli_fail(st, &err);
        goto done;
    }
    if (q->plot && (st = pp_compare_write_svg(r, q->plot, q->force, &err)) != PP_OK) {
        rc = cli_fail(st, &err);
        goto done;
    }
    if ((rc = cli_report_compare(a, &q->m, r))) goto done;
    char *text = NULL;
    if (!strcmp(q->fmt, "json")) text = pp_compare_to_json(&q->m, r);
    else if (!strcmp(q->fmt, "csv")) text = pp_compare_to_csv(r);
    if (strcmp(q->fmt, "table") && !text) {
        rc = 3;
        goto done;
    }
    if (text) {
        fputs(text, stdout);
        if (!strcmp(q->fmt, "json")) fputs("\n", stdout);
        pp_free(text);
    } else {
        print_table(r);
        print_prices(r);
        print_summary(r);
    }
    if (q->plot) fprintf(stderr, "parplan: wrote %s\n", q->plot);
    rc = 0;
done:
    pp_compare_free(r);
    free(r);
    free(q);
    return rc;
}

const cli_cmd cli_cmd_compare = {"compare", "what-if: cluster types x GPU counts, time, cost, energy, deadline",
    "  parplan compare --model M --clusters A,B[:G1:G2],... [--gpus N,... | --nodes N,...] --train-tokens T\n"
    "                  [--deadline-days D] [--budget-usd X] [--price-per-gpu-hour CLUSTER=PRICE,...]\n"
    "                  [--purchase-usd-per-gpu CLUSTER=PRICE,... --amortize-years Y [--usd-per-kwh E]]\n"
    "                  [--global-batch G] [--seq S] [--precision bf16] [--objective throughput|cost] [--max-nodes N]\n"
    "                  [--no-partition] [--ilp-time-limit S] [--ilp-budget S] [--format table|json|csv] [--plot FILE.svg [--force]]",
    "  parplan compare --model llama3-70b --clusters dgx-h100,dgx-a100-80g --gpus 256,512 --train-tokens 2T\n"
    "  parplan compare --model llama3-8b --clusters dgx-h100,dgx-a100-80g,dgx-b200 --nodes 4,8 \\\n"
    "                  --train-tokens 1T --deadline-days 14 --plot cost.svg\n"
    "  parplan compare --model llama3-8b --clusters dgx-h100,dgx-a100-80g --gpus 64 --train-tokens 500B \\\n"
    "                  --price-per-gpu-hour dgx-h100=2.99,dgx-a100-80g=1.79 --format csv\n"
    "  parplan compare --model llama3-8b --clusters dgx-h100 --gpus 64 --train-tokens 1T \\\n"
    "                  --purchase-usd-per-gpu 30000 --amortize-years 4 --usd-per-kwh 0.12",
    opts, run};
