/* cmd_info.c — listing and showing presets: models, gpus, clusters. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_opt fmt_opts[] = {{"format", 1, "table (default) or json"}, {NULL, 0, NULL}};

static double gib(double b) { return b / 1073741824.0; }

static int list_presets(const char *cmd, pp_preset_kind kind, const cli_args *a, int (*line)(const char *name))
{
    const char *fmt;
    if (cli_format(a, "table|json", &fmt)) return 2;
    if (a->npos) {
        fprintf(stderr, "parplan %s: unexpected argument '%.200s': expected no arguments; usage: parplan %s [--format json]\n",
                cmd, cli_q(a->pos[0]), cmd);
        return 2;
    }
    int n = pp_preset_count(kind), json = !strcmp(fmt, "json");
    if (json) printf("[");
    for (int i = 0; i < n; i++) {
        const char *name = pp_preset_name(kind, i);
        if (json) printf("%s\"%s\"", i ? ", " : "", name);
        else if (line(name)) return 3;
    }
    if (json) printf("]\n");
    return 0;
}

static int model_line(const char *name)
{
    pp_model m;
    pp_error err = {""};
    pp_param_counts pc;
    if (pp_model_load(name, &m, &err) != PP_OK) return cli_fail(PP_ERR_INTERNAL, &err);
    pp_model_param_counts(&m, &pc);
    printf("%-22s %8.2fB params  %3d layers  h=%-6d %s\n", name, pc.total / 1e9, m.layers, m.hidden,
           m.description);
    return 0;
}

static int gpu_line(const char *name)
{
    pp_gpu g;
    pp_error err = {""};
    if (pp_gpu_load(name, &g, &err) != PP_OK) return cli_fail(PP_ERR_INTERNAL, &err);
    printf("%-14s %6.0f GiB  %6.0f TFLOP/s bf16  %s\n", name, gib(g.mem_bytes),
           g.peak_flops[PP_PREC_BF16] / 1e12, g.full_name);
    return 0;
}

static int cluster_line(const char *name)
{
    pp_cluster c;
    pp_error err = {""};
    if (pp_cluster_load(name, &c, &err) != PP_OK) return cli_fail(PP_ERR_INTERNAL, &err);
    printf("%-16s %3d x %-14s %s\n", name, c.gpus_per_node, cli_safe(c.gpu.name), cli_safe(c.description));
    return 0;
}

static int run_models(const cli_args *a) { return list_presets("models", PP_PRESET_MODEL, a, model_line); }
static int run_gpus(const cli_args *a) { return list_presets("gpus", PP_PRESET_GPU, a, gpu_line); }
static int run_clusters(const cli_args *a) { return list_presets("clusters", PP_PRESET_CLUSTER, a, cluster_line); }

static int print_json(char *s)
{
    if (!s) return 3;
    printf("%s\n", s);
    pp_free(s);
    return 0;
}

static int show_model(const pp_model *m)
{
    pp_param_counts pc;
    pp_model_param_counts(m, &pc);
    int moe = 0;
    for (int i = 0; i < m->layers; i++) moe += m->block_kind[i] == PP_BLOCK_MOE;
    printf("%s — %s\n", cli_safe(m->name), cli_safe(m->description));
    printf("  shape      %d layers, hidden %d, %d heads (%d kv, head dim %d), ffn %d%s\n", m->layers,
           m->hidden, m->heads, m->kv_heads, m->head_dim ? m->head_dim : m->hidden / m->heads, m->ffn,
           m->gated_mlp ? " gated" : "");
    printf("  vocab      %d%s, seq %d\n", m->vocab, m->tied_embeddings ? " (tied)" : "", m->seq);
    if (m->experts)
        printf("  moe        %d experts top-%d, %d shared, expert ffn %d, %d of %d blocks MoE\n", m->experts,
               m->topk, m->shared_experts, m->expert_ffn, moe, m->layers);
    printf("  params     %.4gB total", pc.total / 1e9);
    if (m->experts) printf(", %.4gB active per token", pc.active / 1e9);
    if (m->params_reported > 0)
        printf("  (published %s, %+.2f%%)", m->params_reported_str, 100 * (pc.total / m->params_reported - 1));
    printf("\n  parts      embedding %.4gB, lm head %.4gB, attention %.4gB, mlp %.4gB, experts %.4gB\n",
           pc.embedding / 1e9, pc.lm_head / 1e9, pc.attention / 1e9, pc.mlp / 1e9, pc.experts / 1e9);
    printf("  flops      %.4g GFLOP forward per token at seq %d\n",
           pp_model_fwd_flops_per_token(m, m->seq) / 1e9, m->seq);
    if (m->source[0]) printf("  source     %s\n", cli_safe(m->source));
    return 0;
}

static int run_model(const cli_args *a)
{
    const char *fmt;
    if (cli_format(a, "table|json", &fmt)) return 2;
    if (a->npos != 2 || strcmp(a->pos[0], "show") != 0) {
        fprintf(stderr, "parplan model: usage: parplan model show NAME|FILE [--format json]\n");
        return 2;
    }
    pp_model m;
    pp_error err = {""};
    pp_status st = pp_model_load(a->pos[1], &m, &err);
    if (st != PP_OK) return cli_fail(st, &err);
    return !strcmp(fmt, "json") ? print_json(pp_model_to_json(&m)) : show_model(&m);
}

static const char *link_str(const pp_link *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s %.1f GB/s per GPU per direction, %.1f us", pp_link_kind_name(l->kind), l->bw / 1e9,
             l->latency * 1e6);
    return buf;
}

static int show_cluster(const pp_cluster *c)
{
    char b[160];
    printf("%s — %s\n", cli_safe(c->name), cli_safe(c->description));
    printf("  gpus       %d nodes x %d = %d x %s (%.0f GiB, %.0f TFLOP/s bf16 dense)\n", c->nodes,
           c->gpus_per_node, pp_cluster_gpus(c), cli_safe(c->gpu.full_name), gib(c->gpu.mem_bytes),
           c->gpu.peak_flops[PP_PREC_BF16] / 1e12);
    printf("  intra      %s (domain %d GPUs)\n", link_str(&c->intra, b, sizeof b), c->nvlink_domain);
    printf("  inter      %s (%d NICs x %.0f Gb/s per node)\n", link_str(&c->inter, b, sizeof b),
           c->nics_per_node, c->nic_bw * 8 / 1e9);
    printf("  pcie       %.1f GB/s per direction\n", c->pcie.bw / 1e9);
    printf("  host       %.0f GiB per node\n", gib(c->host_mem_bytes));
    if (c->nvme_bytes > 0)
        printf("  nvme       %.2f TB per node, %.2f GB/s read, %.2f GB/s write per node\n", c->nvme_bytes / 1e12,
               c->nvme_read_bw / 1e9, c->nvme_write_bw / 1e9);
    else
        printf("  nvme       none\n");
    if (c->gpu.price_usd_per_hour > 0)
        printf("  price      $%.2f per GPU-hour (%s)\n", c->gpu.price_usd_per_hour, cli_safe(c->gpu.price_date));
    if (c->source[0]) printf("  source     %s\n", cli_safe(c->source));
    return 0;
}

static int run_cluster(const cli_args *a)
{
    const char *fmt;
    if (cli_format(a, "table|json", &fmt)) return 2;
    if (a->npos != 2 || strcmp(a->pos[0], "show") != 0) {
        fprintf(stderr, "parplan cluster: usage: parplan cluster show NAME|FILE [--nodes N|--gpus N] [--format json]\n");
        return 2;
    }
    if (a->n >= CLI_MAX_ARGS) { /* no room to add --cluster below */
        fprintf(stderr, "parplan cluster: too many options: expected at most %d\n", CLI_MAX_ARGS - 1);
        return 2;
    }
    cli_args b = *a;
    b.keys[b.n] = "cluster";
    b.vals[b.n++] = a->pos[1];
    pp_cluster c;
    int rc = cli_load_cluster(&b, &c);
    if (rc) return rc;
    return !strcmp(fmt, "json") ? print_json(pp_cluster_to_json(&c)) : show_cluster(&c);
}

static const cli_opt cluster_opts[] = {{"format", 1, "table (default) or json"},
                                       {"nodes", 1, "number of nodes"},
                                       {"gpus", 1, "total GPUs"},
                                       {NULL, 0, NULL}};

const cli_cmd cli_cmd_models = {"models", "list bundled model presets, name first",
    "  parplan models [--format json]", "  parplan models | grep llama", fmt_opts, run_models};
const cli_cmd cli_cmd_model = {"model", "show a model: shape, parameter counts, FLOPs, source",
    "  parplan model show NAME|FILE [--format json]",
    "  parplan model show llama3-70b\n  parplan model show ./config.json --format json", fmt_opts, run_model};
const cli_cmd cli_cmd_gpus = {"gpus", "list the GPU catalog",
    "  parplan gpus [--format json]", "  parplan gpus", fmt_opts, run_gpus};
const cli_cmd cli_cmd_clusters = {"clusters", "list bundled cluster presets",
    "  parplan clusters [--format json]", "  parplan clusters", fmt_opts, run_clusters};
const cli_cmd cli_cmd_cluster = {"cluster", "show a cluster: GPUs, link tiers, host memory",
    "  parplan cluster show NAME|FILE [--nodes N | --gpus N] [--format json]",
    "  parplan cluster show dgx-h100 --nodes 16", cluster_opts, run_cluster};
