/*
 * cli.h — shared helpers of the parplan subcommands. The CLI is a client of
 * include/parplan.h only. Exit codes: 0 ok, 1 infeasible, 2 bad input or
 * usage, 3 internal error.
 */
#ifndef PARPLAN_CLI_H
#define PARPLAN_CLI_H

#include <stdio.h>

#include "parplan.h"

#define CLI_MAX_ARGS 96

typedef struct cli_opt {
    const char *name;  /* long name without "--" */
    int has_arg;       /* 1 = takes a value */
    const char *help;  /* one line, for --help */
} cli_opt;

typedef struct cli_args {
    int n;
    const char *keys[CLI_MAX_ARGS];
    const char *vals[CLI_MAX_ARGS]; /* NULL for flags */
    int npos;
    const char *pos[16];
} cli_args;

typedef struct cli_cmd {
    const char *name;
    const char *summary;
    const char *usage;     /* synopsis lines */
    const char *examples;  /* example lines */
    const cli_opt *opts;   /* NULL-name terminated */
    int (*run)(const cli_args *a);
} cli_cmd;

/* Parses argv; on error prints to stderr and returns 2, else 0. */
int cli_parse(const cli_cmd *cmd, int argc, char **argv, cli_args *out);
void cli_print_help(const cli_cmd *cmd, FILE *f);
const char *cli_get(const cli_args *a, const char *name);
int cli_has(const cli_args *a, const char *name);
/* The one number parser of every flag: a decimal number with an optional
 * suffix k/K (10^3), M/m (10^6), B/b/G (10^9), T/t (10^12), or Ki, Mi, Gi,
 * Ti (powers of 1024): "300B", "1.5T", "8Ki". s[0..len) only. 0 ok, -1 bad
 * (not a number, not finite, unknown suffix). */
int cli_parse_num(const char *s, size_t len, double *out);
/* Integer option with range; returns 0 ok (or absent: *out = def), 2 on error. */
int cli_int(const cli_args *a, const char *name, long lo, long hi, int def, int *out);
int cli_num(const cli_args *a, const char *name, double lo, double hi, double def, double *out);
/* Output format: "table" (default) or one of the allowed; returns 2 on error. */
int cli_format(const cli_args *a, const char *allowed, const char **out);
/* A value quoted in a message: capped at 64 characters, control characters
 * as '?' (static storage, four at a time). */
const char *cli_q(const char *s);
const char *cli_qn(const char *s, size_t n); /* the first n characters of s */
/* A name or text from a file, for a table: control characters (C0, DEL,
 * C1: a newline, a terminal escape) as '?' (static storage, eight at a
 * time). cli_csv: the same, quoted per RFC 4180 when it holds a comma or a
 * quote (four at a time). */
const char *cli_safe(const char *s);
const char *cli_csv(const char *s);
/* ", activations of N blocks offloaded" when the strategy offloads
 * activations (Megatron's CPU offloading), else "" (static storage). */
const char *cli_extras(const pp_strategy *s);
/* The MoE options after "ep N": " (experts tp N)" when the experts' TP
 * differs from tp, " hierarchical" dispatch, " overlapped" all-to-alls;
 * "" without them (static). */
const char *cli_etp(const pp_strategy *s);
/* Prints multi-line text (an explanation), each line through cli_safe. */
void cli_print_text(FILE *f, const char *text);
/* Prints err and returns the exit code of st. */
int cli_fail(pp_status st, const pp_error *err);

/* --lr, --min-lr, --warmup-steps, --train-steps, --weight-decay,
 * --adam-betas, --adam-eps, --grad-clip into h; returns exit code. */
int cli_hparams(const cli_args *a, pp_hparams *h);
/* --emit DIR: the launch files of n plans (pp_plan_emit; numbered: DIR/1, ... even
 * for one plan); 0 when not asked. */
int cli_emit_plans(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_plan *plans, int n, int numbered);
#define CLI_HPARAM_OPTS                                                                                        \
    {"lr", 1, "emitted peak learning rate (default 3e-4)"},                                                   \
        {"min-lr", 1, "emitted warmup start and final learning rate (default 0)"},                             \
        {"warmup-steps", 1, "emitted linear warmup, optimizer steps (default 2000)"},                          \
        {"train-steps", 1, "emitted optimizer steps of the run (default 100000)"},                             \
        {"weight-decay", 1, "emitted weight decay (default 0.1)"},                                             \
        {"adam-betas", 1, "emitted Adam betas B1,B2 (default 0.9,0.95)"},                                      \
        {"adam-eps", 1, "emitted Adam epsilon (default 1e-8)"},                                                \
        {"grad-clip", 1, "emitted max gradient norm, 0 = off (default 1.0)"}

/* Loads --model/--cluster (+ --nodes/--gpus); returns exit code. */
int cli_load_model(const cli_args *a, pp_model *m);
int cli_load_cluster(const cli_args *a, pp_cluster *c);

/* Strategy options shared by estimate and plan; returns exit code. */
int cli_strategy(const cli_args *a, const pp_model *m, const pp_cluster *c, pp_strategy *s);

/* --mode, --lora-*, --freeze into f (cli/finetune_opts.c); returns exit code. */
int cli_finetune(const cli_args *a, pp_finetune *f);
#define CLI_FINETUNE_OPTS                                                                                   \
    {"mode", 1, "full (default), lora or qlora"}, {"lora-rank", 1, "LoRA rank r (default 16)"},               \
        {"lora-alpha", 1, "LoRA alpha (default 32; no effect on cost)"},                                    \
        {"lora-dropout", 1, "dropout on adapter inputs (default 0; stores a copy)"},                       \
        {"lora-targets", 1, "q,k,v,o,gate,up,down,lm_head or all-linear (default q,v)"},                  \
        {"freeze", 1, "full mode: embeddings and/or layers:N (the first N blocks)"}

/* --report FILE.html (cli/report_opts.c): writes the HTML report when the
 * option is given; returns an exit code (0 also when not asked). */
#define CLI_REPORT_OPT {"report", 1, "write a self-contained HTML report with charts to FILE (docs/report.md)"}
int cli_report_estimate(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_plan *p);
int cli_report_plan(const cli_args *a, const pp_model *m, const pp_cluster *c, const pp_search_opts *o,
                    const pp_plan_list *l, const char *explain);
int cli_report_compare(const cli_args *a, const pp_model *m, const pp_compare_result *r);

extern const cli_cmd cli_cmd_estimate;
extern const cli_cmd cli_cmd_compare;
extern const cli_cmd cli_cmd_plan;
extern const cli_cmd cli_cmd_sweep;
extern const cli_cmd cli_cmd_models, cli_cmd_model, cli_cmd_gpus, cli_cmd_clusters,
    cli_cmd_cluster, cli_cmd_frameworks;

/* --NAME "bf16,fp8" (or "all") into a bit mask of enum `which` values; 0 when absent. */
int cli_enum_list(const cli_args *a, const char *name, int which, unsigned *mask);

#endif
