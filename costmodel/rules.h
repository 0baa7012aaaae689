/*
 * rules.h — the one table of validity rules (rules.c). Each rule names the
 * strategy dimensions it reads, so the search evaluates it as soon as those
 * are chosen; estimate, the emitters and the readers evaluate all of it.
 */
#ifndef PARPLAN_RULES_H
#define PARPLAN_RULES_H

#include "parplan.h"

/* Strategy dimensions, in the order the search chooses them. */
enum {
    PP_DIM_FW = 1u << 0,      /* framework */
    PP_DIM_BASE = 1u << 1,    /* fixed for a search: order, optimizer, attention, fine-tuning,
                                 sequence, global batch, user overrides of behaviours */
    PP_DIM_DEG = 1u << 2,     /* dp, tp, pp, cp */
    PP_DIM_EP = 1u << 3,
    PP_DIM_ZERO = 1u << 4,    /* zero, shard */
    PP_DIM_OFFLOAD = 1u << 5,
    PP_DIM_PREC = 1u << 6,
    PP_DIM_MB = 1u << 7,      /* micro-batch (and the accumulation it implies) */
    PP_DIM_SP = 1u << 8,
    PP_DIM_RC = 1u << 9,      /* recompute, recompute_layers */
    PP_DIM_SCHED = 1u << 10,  /* schedule, virtual stages */
    PP_DIM_BEHAV = 1u << 11,  /* behaviours filled from the framework (pp__fw_fill) */
    PP_DIM_SPLIT = 1u << 12,  /* stage_layers, per-stage recompute */
    PP_DIM_ALL = (1u << 13) - 1,
    PP_DIM_LAUNCH = 1u << 13  /* marks a rule about what parplan can write a launch file for:
                                 the search and the emitters evaluate it, estimate does not
                                 (a run launched some other way is still estimated) */
};

typedef struct pp__rule_ctx {
    const pp_model *m;
    const pp_cluster *c;
    const pp_strategy *s;
    int max_tp; /* > 0: the search's largest TP degree (rule tp-domain); 0: not checked */
} pp__rule_ctx;

/* Dimensions rule r reads (PP_DIM_*). */
unsigned pp__rule_deps(pp_rule r);
/* 1 when rule r holds; else 0, with the failure in err (may be NULL: the
 * search's hot path, nothing formatted). */
int pp__rule_eval(const pp__rule_ctx *x, pp_rule r, pp_error *err);
/* Evaluates every rule whose dimensions are all in `have` and, unless
 * `fresh` is 0, not all in `had` (so each is evaluated once as dimensions
 * are added). PP_OK or PP_ERR_INPUT with the first failure (err may be
 * NULL); *failed (may be NULL) gets its id. */
pp_status pp__rules_eval(const pp__rule_ctx *x, unsigned have, unsigned had, pp_rule *failed, pp_error *err);

#endif
