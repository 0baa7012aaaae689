/* finetune_opts.c — --mode, --lora-*, --freeze: fine-tuning options shared by
 * estimate and plan (docs/finetune.md). */
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static int parse_targets(const char *v, unsigned *mask)
{
    static const char *const names[] = {"q", "k", "v", "o", "gate", "up", "down", "lm_head"};
    if (!strcmp(v, "all-linear")) {
        *mask = PP_LORA_ALL_LINEAR;
        return 0;
    }
    *mask = 0;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int e = pp_enum_parse(names, 8, t);
        if (e < 0) {
            fprintf(stderr, "parplan: --lora-targets: expected all-linear or names among q,k,v,o,gate,up,down,lm_head, got '%s'\n", cli_q(t));
            return 2;
        }
        *mask |= 1u << e;
    }
    return *mask ? 0 : 2;
}

static int parse_freeze(const char *v, pp_finetune *f)
{
    char buf[256];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *end;
        if (!strcmp(t, "embeddings")) f->freeze_embeddings = 1;
        else if (!strncmp(t, "layers:", 7) && (f->freeze_layers = (int)strtol(t + 7, &end, 10)) >= 0 && !*end && end != t + 7)
            continue;
        else {
            fprintf(stderr, "parplan: --freeze: expected embeddings and/or layers:N, got '%s'\n", cli_q(t));
            return 2;
        }
    }
    return 0;
}

int cli_finetune(const cli_args *a, pp_finetune *f)
{
    int rc, n;
    const char *v = cli_get(a, "mode");
    if (v) {
        const char *const *names = pp_enum_names(PP_ENUM_MODE, &n);
        int e = pp_enum_parse(names, n, v);
        if (e < 0) {
            fprintf(stderr, "parplan: --mode: expected full, lora or qlora, got '%s'\n", cli_q(v));
            return 2;
        }
        f->mode = (pp_train_mode)e;
    }
    if ((rc = cli_int(a, "lora-rank", 1, 4096, f->lora_rank, &f->lora_rank)) ||
        (rc = cli_num(a, "lora-alpha", 0, 1e6, f->lora_alpha, &f->lora_alpha)) ||
        (rc = cli_num(a, "lora-dropout", 0, 0.99, f->lora_dropout, &f->lora_dropout)))
        return rc;
    if ((v = cli_get(a, "lora-targets")) && (rc = parse_targets(v, &f->lora_targets))) return rc;
    if ((v = cli_get(a, "freeze")) && (rc = parse_freeze(v, f))) return rc;
    if (f->mode == PP_MODE_FULL && (cli_has(a, "lora-rank") || cli_has(a, "lora-targets") || cli_has(a, "lora-alpha") ||
                                    cli_has(a, "lora-dropout"))) {
        fprintf(stderr, "parplan: --lora-rank/--lora-targets/--lora-alpha/--lora-dropout need --mode lora or qlora\n");
        return 2;
    }
    /* LoRA freezes the whole base already; --freeze chooses what full training leaves out */
    if (f->mode != PP_MODE_FULL && cli_has(a, "freeze")) {
        fprintf(stderr, "parplan: --freeze: needs --mode full (--mode lora and qlora freeze every base weight; "
                "--lora-targets chooses the adapters)\n");
        return 2;
    }
    return 0;
}
