/* cmd_frameworks.c — `parplan frameworks`: what each framework can run, read
 * from the cost model's framework table (pp_framework_supports), as a table
 * for the terminal, Markdown (docs/frameworks.md embeds it; a test checks
 * they are the same) or JSON. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const cli_opt opts[] = {{"format", 1, "table (default), markdown or json"}, {NULL, 0, NULL}};

/* One row: a dimension and how its supported values are shown. */
typedef struct row {
    const char *title, *dim;
    int which;   /* PP_ENUM_* for named values; -1: yes/no on value 1 */
    int lo, hi;  /* -1 with named values: every value */
} row;

static const row rows[] = {
    {"tensor parallel (tp > 1)", "tp", -1, 2, 2},
    {"sequence parallel (with tp)", "sp", -1, 1, 1},
    {"pipeline parallel (pp > 1)", "pp", -1, 2, 2},
    {"pipeline schedules", "schedule", PP_ENUM_SCHEDULE, -1, -1},
    {"stage split: any counts per stage", "split", -1, 0, 0},
    {"stage split: DeepSpeed partition_method", "split", -1, 1, 1},
    {"context parallel (cp > 1)", "cp", -1, 2, 2},
    {"context-parallel exchange", "cp_comm", PP_ENUM_CP_COMM, -1, -1},
    {"expert parallel (ep > 1)", "ep", -1, 2, 2},
    {"ZeRO stages", "zero", -1, 0, 3},
    {"ZeRO stages with pp > 1", "zero_pp", -1, 0, 3},
    {"hybrid sharding (shard < dp*cp)", "shard", -1, 1, 1},
    {"offload", "offload", PP_ENUM_OFFLOAD, -1, -1},
    {"precision", "precision", PP_ENUM_PRECISION, -1, -1},
    {"recompute", "recompute", PP_ENUM_RECOMPUTE, -1, -1},
    {"recompute k blocks per stage", "partial_recompute", -1, 1, 1},
    {"selective recompute of chosen modules", "recompute_modules", -1, 1, 1},
    {"fp8 primary weights (zero 1 or 3)", "fp8_param_gather", -1, 1, 1},
    {"activation offload to CPU (pp 1)", "act_offload", -1, 1, 1},
    {"optimizer", "optimizer", PP_ENUM_OPTIMIZER, -1, -1},
    {"bf16 optimizer states (AdamW, zero 1)", "opt_states", -1, 1, 1},
    {"training mode", "mode", PP_ENUM_MODE, -1, -1},
    {"frozen layers", "freeze", -1, 1, 1},
    {"loss kernel", "loss", PP_ENUM_LOSS, -1, -1},
    {"expandable segments (launch sets them)", "expandable_segments", -1, 1, 1},
    {"cuDNN attention on Hopper+ (TE)", "te_attention", -1, 1, 1},
    {"TP keeps gathered GEMM inputs (DTensor)", "tp_gathered_inputs", -1, 1, 1},
    {"recompute stops at the last saved tensor (Accelerate)", "recompute_early_stop", -1, 1, 1},
};
#define NROWS (sizeof rows / sizeof *rows)

/* The supported values of one row for one framework, e.g. "0 1 2 3",
 * "1f1b interleaved", "yes", "no" or "-". */
static void cell(const row *r, pp_framework f, char *out, size_t cap)
{
    size_t used = 0;
    out[0] = '\0';
    if (r->which < 0 && r->lo == r->hi) {
        snprintf(out, cap, "%s", pp_framework_supports(f, r->dim, r->lo) ? "yes" : "no");
        return;
    }
    int n = r->hi + 1;
    const char *const *names = r->which >= 0 ? pp_enum_names(r->which, &n) : NULL;
    for (int v = r->which >= 0 ? 0 : r->lo; v < n; v++) {
        if (r->which == PP_ENUM_PRECISION && v == PP_PREC_TF32) continue; /* tf32 is fp32 math, not a mode */
        if (!pp_framework_supports(f, r->dim, v)) continue;
        char num[16];
        if (!names) snprintf(num, sizeof num, "%d", v);
        used += (size_t)snprintf(out + used, used < cap ? cap - used : 0, "%s%s", used ? " " : "", names ? names[v] : num);
    }
    if (!used) snprintf(out, cap, "-");
}

static void print_markdown(void)
{
    printf("| dimension |");
    for (int f = 0; f < PP_FW_COUNT; f++) printf(" %s |", pp_framework_name((pp_framework)f));
    printf("\n|---|");
    for (int f = 0; f < PP_FW_COUNT; f++) printf("---|");
    printf("\n");
    for (size_t i = 0; i < NROWS; i++) {
        printf("| %s |", rows[i].title);
        for (int f = 0; f < PP_FW_COUNT; f++) {
            char c[128];
            cell(&rows[i], (pp_framework)f, c, sizeof c);
            printf(" %s |", c);
        }
        printf("\n");
    }
}

static void print_table(void)
{
    for (int f = 0; f < PP_FW_COUNT; f++) printf("%-20s %s\n", pp_framework_name((pp_framework)f),
                                                 pp_framework_title((pp_framework)f));
    printf("\n%-40s", "");
    for (int f = 0; f < PP_FW_COUNT; f++) printf(" %-20s", pp_framework_name((pp_framework)f));
    printf("\n");
    for (size_t i = 0; i < NROWS; i++) {
        printf("%-40s", rows[i].title);
        for (int f = 0; f < PP_FW_COUNT; f++) {
            char c[128];
            cell(&rows[i], (pp_framework)f, c, sizeof c);
            printf(" %-20s", c);
        }
        printf("\n");
    }
}

/* JSON by hand: every string is a fixed ASCII name from the tables. */
static int print_json(void)
{
    printf("[");
    for (int f = 0; f < PP_FW_COUNT; f++) {
        printf("%s\n  {\"name\": \"%s\", \"title\": \"%s\", \"supports\": {", f ? "," : "",
               pp_framework_name((pp_framework)f), pp_framework_title((pp_framework)f));
        for (size_t i = 0; i < NROWS; i++) {
            char c[128];
            cell(&rows[i], (pp_framework)f, c, sizeof c);
            printf("%s\n    \"%s\": \"%s\"", i ? "," : "", rows[i].title, c);
        }
        printf("}}");
    }
    printf("\n]\n");
    return 0;
}

static int run(const cli_args *a)
{
    const char *fmt = cli_get(a, "format");
    if (!fmt || !strcmp(fmt, "table")) print_table();
    else if (!strcmp(fmt, "markdown")) print_markdown();
    else if (!strcmp(fmt, "json")) return print_json();
    else {
        fprintf(stderr, "parplan: frameworks: --format: expected table, markdown or json, got '%s'\n", cli_q(fmt));
        return 2;
    }
    return 0;
}

const cli_cmd cli_cmd_frameworks = {"frameworks", "what each framework can run (docs/frameworks.md)",
    "  parplan frameworks [--format table|markdown|json]", "  parplan frameworks", opts, run};
