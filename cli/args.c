/* args.c — option parsing, help and common loaders for the subcommands. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const cli_opt *find_opt(const cli_cmd *cmd, const char *name, size_t len)
{
    for (const cli_opt *o = cmd->opts; o && o->name; o++)
        if (strlen(o->name) == len && strncmp(o->name, name, len) == 0) return o;
    return NULL;
}

/* Levenshtein distance, capped at 64 characters (longer names never match). */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 64 || lb > 64) return 1 << 20;
    int prev[65], cur[65];
    for (size_t j = 0; j <= lb; j++) prev[j] = (int)j;
    for (size_t i = 1; i <= la; i++) {
        cur[0] = (int)i;
        for (size_t j = 1; j <= lb; j++) {
            int v = prev[j - 1] + (a[i - 1] != b[j - 1]);
            if (prev[j] + 1 < v) v = prev[j] + 1;
            if (cur[j - 1] + 1 < v) v = cur[j - 1] + 1;
            cur[j] = v;
        }
        memcpy(prev, cur, sizeof(int) * (lb + 1));
    }
    return prev[lb];
}

/* The option nearest to name: the smallest edit distance if within a third
 * of the name's length (at least 1), else one the name is a prefix of or
 * that is a prefix of the name (--micro -> --micro-batch, --zero-stage ->
 * --zero). NULL when nothing is close. */
static const cli_opt *nearest_opt(const cli_cmd *cmd, const char *name, size_t len)
{
    char buf[80];
    if (len == 0 || len >= sizeof buf) return NULL;
    memcpy(buf, name, len);
    buf[len] = '\0';
    const cli_opt *best = NULL, *prefix = NULL;
    int bd = 1 << 20, limit = (int)len / 3 > 1 ? (int)len / 3 : 1;
    for (const cli_opt *o = cmd->opts; o && o->name; o++) {
        int d = edit_distance(buf, o->name);
        if (d < bd) bd = d, best = o;
        size_t ol = strlen(o->name);
        if (!prefix && len >= 2 && (strncmp(o->name, buf, len < ol ? len : ol) == 0)) prefix = o;
    }
    return bd <= limit ? best : prefix;
}

static int unknown_opt(const cli_cmd *cmd, const char *arg)
{
    const char *eq = strchr(arg, '=');
    size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
    const cli_opt *near = nearest_opt(cmd, arg + 2, len);
    fprintf(stderr, "parplan %s: unknown option '%s'", cmd->name, cli_qn(arg, len + 2));
    if (near) fprintf(stderr, " (did you mean --%s?)", near->name);
    fprintf(stderr, "; see `parplan %s --help`\n", cmd->name);
    return 2;
}

/* 'value' for a message (cut and made printable), or "the flag" without one. */
static void cli_quote(const char *v, char *buf, size_t cap)
{
    if (!v) {
        snprintf(buf, cap, "the flag");
        return;
    }
    size_t k = 0;
    buf[k++] = '\'';
    for (; *v && k + 5 < cap; v++) buf[k++] = (unsigned char)*v < 0x20 || *v == 0x7f ? '?' : *v;
    if (*v) buf[k++] = '.', buf[k++] = '.';
    buf[k++] = '\'';
    buf[k] = '\0';
}

int cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out)
{
    memset(out, 0, sizeof *out);
    for (int i = 0; i < argc; i++) {
        const char *arg = argv[i];
        if (strncmp(arg, "--", 2) != 0 || arg[2] == '\0') {
            if (out->npos >= 16) {
                fprintf(stderr, "parplan %s: too many arguments\n", cmd->name);
                return 2;
            }
            out->pos[out->npos++] = arg;
            continue;
        }
        const char *eq = strchr(arg, '=');
        size_t len = eq ? (size_t)(eq - arg - 2) : strlen(arg + 2);
        const cli_opt *o = find_opt(cmd, arg + 2, len);
        if (!o) return unknown_opt(cmd, arg);
        const char *val = NULL;
        if (o->has_arg) {
            if (eq) val = eq + 1;
            else if (i + 1 < argc) val = argv[++i];
            else {
                fprintf(stderr, "parplan %s: --%s: expected a value\n", cmd->name, o->name);
                return 2;
            }
        } else if (eq) {
            fprintf(stderr, "parplan %s: --%s: takes no value\n", cmd->name, o->name);
            return 2;
        }
        if (out->n >= CLI_MAX_ARGS) {
            fprintf(stderr, "parplan %s: too many options\n", cmd->name);
            return 2;
        }
        /* scripts concatenate command lines: a second value must not win
         * silently (red team rt12), as a JSON or YAML key given twice */
        for (int k = 0; k < out->n; k++)
            if (out->keys[k] == o->name) {
                char was[64], now[64];
                cli_quote(out->vals[k], was, sizeof was);
                cli_quote(val, now, sizeof now);
                fprintf(stderr, "parplan %s: --%s: given twice (%s, then %s); give it once\n", cmd->name, o->name, was, now);
                return 2;
            }
        out->keys[out->n] = o->name;
        out->vals[out->n++] = val;
    }
    return 0;
}

void cli_print_help(const cli_cmd *cmd, FILE *f)
{
    fprintf(f, "parplan %s — %s\n\nUsage:\n%s\n", cmd->name, cmd->summary, cmd->usage);
    if (cmd->opts && cmd->opts->name) {
        fprintf(f, "\nOptions:\n");
        for (const cli_opt *o = cmd->opts; o->name; o++) {
            char lhs[64];
            snprintf(lhs, sizeof lhs, "--%s%s", o->name, o->has_arg ? " X" : "");
            fprintf(f, "  %-24s %s\n", lhs, o->help);
        }
    }
    if (cmd->examples) fprintf(f, "\nExamples:\n%s\n", cmd->examples);
}

const char *cli_get(const cli_args *a, const char *name)
{
    const char *v = NULL;
    for (int i = 0; i < a->n; i++)
        if (strcmp(a->keys[i], name) == 0) v = a->vals[i] ? a->vals[i] : "";
    return v;
}

int cli_has(const cli_args *a, const char *name) { return cli_get(a, name) != NULL; }

int cli_parse_num(const char *s, size_t len, double *out)
{
    static const struct { const char *suf; double f; } suf[] = {
        {"Ki", 1024.0}, {"Mi", 1048576.0}, {"Gi", 1073741824.0}, {"Ti", 1099511627776.0},
        {"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"m", 1e6}, {"B", 1e9}, {"b", 1e9}, {"G", 1e9}, {"T", 1e12}, {"t", 1e12}};
    char buf[128];
    if (len == 0 || len >= sizeof buf || isspace((unsigned char)s[0])) return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    char *end;
    errno = 0;
    double d = strtod(buf, &end);
    if (end == buf || errno || !isfinite(d)) return -1;
    if (*end) {
        size_t k = 0;
        while (k < sizeof suf / sizeof *suf && strcmp(end, suf[k].suf) != 0) k++;
        if (k == sizeof suf / sizeof *suf) return -1;
        d *= suf[k].f;
    }
    if (!isfinite(d)) return -1;
    *out = d;
    return 0;
}

int cli_num(const cli_args *a, const char *name, double lo, double hi, double def, double *out)
{
    const char *v = cli_get(a, name);
    *out = def;
    if (!v) return 0;
    double d;
    if (cli_parse_num(v, strlen(v), &d) != 0 || d < lo || d > hi) {
        fprintf(stderr, "parplan: --%s: expected a number in [%g, %g] (suffix k, M, B, T or Ki, Mi, Gi allowed), got "
                        "'%s'\n", name, lo, hi, cli_q(v));
        return 2;
    }
    *out = d;
    return 0;
}

int cli_int(const cli_args *a, const char *name, long lo, long hi, int def, int *out)
{
    const char *v = cli_get(a, name);
    *out = def;
    if (!v) return 0;
    double d;
    if (cli_parse_num(v, strlen(v), &d) != 0 || d != floor(d) || d < (double)lo || d > (double)hi) {
        fprintf(stderr, "parplan: --%s: expected an integer in [%ld, %ld] (suffix k, M or Ki, Mi allowed), got '%s'\n",
                name, lo, hi, cli_q(v));
        return 2;
    }
    *out = (int)d;
    return 0;
}

int cli_format(const cli_args *a, const char *allowed, const char **out)
{
    const char *v = cli_get(a, "format");
    *out = "table";
    if (!v) return 0;
    const char *p = allowed;
    size_t n = strlen(v);
    while (p && *p) {
        const char *bar = strchr(p, '|');
        size_t l = bar ? (size_t)(bar - p) : strlen(p);
        if (l == n && strncmp(p, v, n) == 0) {
            *out = v;
            return 0;
        }
        p = bar ? bar + 1 : NULL;
    }
    fprintf(stderr, "parplan: --format: expected one of %s, got '%s'\n", allowed, cli_q(v));
    return 2;
}

/* The flag of a strategy or search field the library names (its JSON
 * name): snake_case to --kebab-case, with the exceptions below. */
static void flag_of(const char *field, char *buf, size_t cap)
{
    static const struct { const char *field, *flag; } map[] = {
        {"grad_accum_dtype", "grad-accum"}, {"overlap_dp", "no-dp-overlap"}, {"overlap_tp", "tp-overlap"},
        {"top_k", "top"}, {"ilp_time_limit_s", "ilp-time-limit"}, {"ilp_budget_s", "ilp-budget"}, {"price_usd_per_gpu_hour", "price-per-gpu-hour"},
        {"freeze_layers", "freeze"}, {"expandable_segments", "allocator"}, {"overlap_ep", "ep-overlap"}, {"grad_accum", "global-batch"}, {"stage_recompute", "stage-layers"},
        {"opt_states", "optimizer-states"}, {"recompute_modules", "recompute-modules"}, {"fp8_param_gather", "fp8-param-gather"}};
    for (size_t i = 0; i < sizeof map / sizeof *map; i++)
        if (!strcmp(field, map[i].field)) {
            snprintf(buf, cap, "--%s", map[i].flag);
            return;
        }
    snprintf(buf, cap, "--%s", field);
    for (char *p = buf; *p; p++)
        if (*p == '_') *p = '-';
}

/* A quotable copy of a value from the command line or a file: at most 64
 * characters (then "...", N characters), control characters as '?'. Four
 * rotating buffers, so up to four may appear in one message. */
const char *cli_q(const char *s) { return cli_qn(s, strlen(s)); }

/* The first n characters of s, quoted as cli_q does. */
const char *cli_qn(const char *s, size_t n)
{
    static char buf[4][112];
    static int next;
    char *b = buf[next++ % 4];
    size_t k = 0;
    for (; k < n && k < 64; k++) b[k] = (unsigned char)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
    if (n > 64) snprintf(b + k, sizeof buf[0] - k, "... (%zu characters)", n);
    else b[k] = '\0';
    return b;
}

/* Control characters of s as '?': C0 (newline, ESC), DEL, and C1 (U+0080
 * to U+009F, which some terminals obey). */
static void safe_copy(const char *s, char *b, size_t cap)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && k + 1 < cap; p++) {
        if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) p++, b[k++] = '?';
        else b[k++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
    }
    b[k] = '\0';
}

/* What follows the recompute in a strategy's line: the modules a selective
 * recompute redoes (when not Megatron's default), offloaded activations,
 * bf16 optimizer states, FP8 primary weights. */
const char *cli_extras(const pp_strategy *s)
{
    static char buf[160];
    int n = 0;
    buf[0] = '\0';
    if (s->recompute == PP_RECOMPUTE_SELECTIVE && s->recompute_modules && s->recompute_modules != PP_RC_CORE_ATTN) {
        char mods[96];
        n = snprintf(buf, sizeof buf, " (%s)", pp_rc_modules_format(s->recompute_modules, ',', mods, sizeof mods));
    }
    if (s->act_offload_layers > 0)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ", activations of %d blocks offloaded", s->act_offload_layers);
    if (s->opt_states == PP_OPT_STATES_BF16)
        n += snprintf(buf + n, sizeof buf - (size_t)n, ", bf16 optimizer states");
    if (s->precision == PP_PREC_FP8 && s->fp8_param_gather > 0)
        snprintf(buf + n, sizeof buf - (size_t)n, ", fp8 primary weights");
    return buf;
}

const char *cli_etp(const pp_strategy *s)
{
    static char buf[96];
    int n = 0;
    buf[0] = '\0';
    if (s->etp > 0 && s->etp != s->tp) n += snprintf(buf + n, sizeof buf - (size_t)n, " (experts tp %d)", s->etp);
    if (s->ep > 1 && s->ep_dispatch) n += snprintf(buf + n, sizeof buf - (size_t)n, " hierarchical");
    if (s->ep > 1 && s->overlap_ep) snprintf(buf + n, sizeof buf - (size_t)n, " overlapped");
    return buf;
}

const char *cli_safe(const char *s)
{
    static char buf[8][2 * PP_TEXT_LEN];
    static int next;
    char *b = buf[next++ % 8];
    safe_copy(s ? s : "", b, sizeof buf[0]);
    return b;
}

const char *cli_csv(const char *s)
{
    static char buf[4][4 * PP_TEXT_LEN];
    static int next;
    char *b = buf[next++ % 4], tmp[2 * PP_TEXT_LEN];
    safe_copy(s ? s : "", tmp, sizeof tmp);
    if (!strpbrk(tmp, ",\"")) return memcpy(b, tmp, strlen(tmp) + 1);
    size_t k = 0;
    b[k++] = '"';
    for (const char *p = tmp; *p && k + 3 < sizeof buf[0]; p++) {
        if (*p == '"') b[k++] = '"';
        b[k++] = *p;
    }
    b[k++] = '"';
    b[k] = '\0';
    return b;
}

void cli_print_text(FILE *f, const char *text)
{
    for (const unsigned char *p = (const unsigned char *)text; p && *p; p++) {
        if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) p++, fputc('?', f);
        else fputc(*p == '\n' || (*p >= 0x20 && *p != 0x7f) ? *p : '?', f);
    }
}

/* Prints err as one line: control characters (a newline or a terminal
 * escape quoted from a file or an argument) become '?'. A rule's failure
 * names the field as its flag. */
int cli_fail(pp_status st, const pp_error *err)
{
    char line[PP_ERR_LEN + 64];
    if (err->field[0] && err->detail > 0 && err->detail < (int)sizeof err->msg) {
        char flag[64];
        flag_of(err->field, flag, sizeof flag);
        snprintf(line, sizeof line, "%s%s%s: %s", flag, err->value[0] ? " " : "", err->value, err->msg + err->detail);
    } else {
        snprintf(line, sizeof line, "%s", err->msg[0] ? err->msg : pp_status_str(st));
    }
    fprintf(stderr, "parplan: %s\n", cli_safe(line));
    return pp_status_exit_code(st);
}

int cli_load_model(const cli_args *a, pp_model *m)
{
    pp_error err = {""};
    const char *name = cli_get(a, "model");
    if (!name) {
        fprintf(stderr, "parplan: --model: expected a preset name or a JSON file (see `parplan models`)\n");
        return 2;
    }
    pp_status st = pp_model_load(name, m, &err);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

int cli_load_cluster(const cli_args *a, pp_cluster *c)
{
    pp_error err = {""};
    const char *name = cli_get(a, "cluster");
    if (!name) {
        fprintf(stderr, "parplan: --cluster: expected a preset name or a JSON file (see `parplan clusters`)\n");
        return 2;
    }
    pp_status st = pp_cluster_load(name, c, &err);
    if (st != PP_OK) return cli_fail(st, &err);
    int nodes = 0, gpus = 0, rc;
    if ((rc = cli_int(a, "nodes", 1, 1 << 20, 0, &nodes))) return rc;
    if ((rc = cli_int(a, "gpus", 1, 1 << 24, 0, &gpus))) return rc;
    if (nodes && gpus) {
        fprintf(stderr, "parplan: give --nodes or --gpus, not both\n");
        return 2;
    }
    st = pp_cluster_resize(c, nodes, gpus, &err);
    return st == PP_OK ? 0 : cli_fail(st, &err);
}

/* "bf16,fp8" (or "all") into a bit mask of enum values. */
int cli_enum_list(const cli_args *a, const char *name, int which, unsigned *mask)
{
    const char *v = cli_get(a, name);
    *mask = 0;
    if (!v) return 0;
    int n;
    const char *const *names = pp_enum_names(which, &n);
    if (!strcmp(v, "all")) {
        for (int i = 0; i < n; i++)
            if (!(which == PP_ENUM_PRECISION && i == PP_PREC_TF32)) *mask |= 1u << i;
        return 0;
    }
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int e = pp_enum_parse(names, n, t);
        if (e < 0 || (which == PP_ENUM_PRECISION && e == PP_PREC_TF32)) {
            fprintf(stderr, "parplan: --%s: expected a comma-separated list of", name);
            for (int i = 0, k = 0; i < n; i++)
                if (!(which == PP_ENUM_PRECISION && i == PP_PREC_TF32)) fprintf(stderr, "%s%s", k++ ? "|" : " ", names[i]);
            fprintf(stderr, " (or all), got '%s'\n", cli_q(t));
            return 2;
        }
        *mask |= 1u << e;
    }
    if (!*mask) {
        fprintf(stderr, "parplan: --%s: expected at least one value\n", name);
        return 2;
    }
    return 0;
}
