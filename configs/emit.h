/*
 * emit.h — private helpers shared by the launcher-file writers and readers
 * (deepspeed.c, deepspeed_read.c, megatron.c): notes, a growable text
 * buffer, and the DeepSpeed facts the Megatron-DeepSpeed writer reuses.
 */
#ifndef PARPLAN_EMIT_H
#define PARPLAN_EMIT_H

#include <stdarg.h>

#include "configs/configs.h"
#include "costmodel/costmodel.h"
#include "costmodel/framework.h"

/* Appends one line to notes (NULL: dropped silently). */
void pp__note(pp_notes *notes, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The note for a plan whose peak exceeds what is usable: an OOM, or (live
 * tensors that fit) a tight plan that leans on the allocator's retries. */
void pp__note_unfit(pp_notes *notes, const pp_memory *mem, pp_fit fit);

/* s with control characters (C0, DEL, C1) as '?', into buf (cut at cap):
 * names and descriptions come from users' files, and the launcher files
 * put them in comments, where a newline would end the comment and start a
 * command of a sourced script. Returns buf. */
const char *pp__safe(const char *s, char *buf, size_t cap);

/* A growable NUL-terminated string. oom is sticky; sb_take returns NULL then. */
typedef struct pp__sbuf {
    char *p;
    size_t n, cap;
    int oom;
} pp__sbuf;

void pp__sb_printf(pp__sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void pp__sb_vprintf(pp__sbuf *b, const char *fmt, va_list ap);
/* Hands the text to the caller (free with pp_free), or frees it and returns
 * NULL after an allocation failure. */
char *pp__sb_take(pp__sbuf *b);

/* Sets s's framework to fw; each behaviour set to what fw cannot run goes
 * back to AUTO (fw's own), with a note (pp_*_adapt). */
void pp__adapt_framework(const pp_model *m, const pp_cluster *c, pp_strategy *s, pp_framework fw, pp_notes *notes);

/* Blocks of virtual chunk `chunk` of stage `stage` (interleaved splits:
 * Megatron's layout, torchtitan's model parts). */
/* PEFT target_modules: the HF module names of a PP_LORA_* mask (hf_out.c). */
void pp__lora_target_names(cJSON *arr, const pp_model *m, unsigned t);

/* Shortest decimal that reads back as exactly x (for JSON and arguments). */
void pp__fmt_num(char *buf, size_t cap, double x);

/* DeepSpeed v0.14.5 runs ZeRO-0 and BF16_Optimizer gradient all-reduce in
 * fixed buckets of this many elements (engine.py MEMORY_OPT_ALLREDUCE_SIZE). */
#define PP_DS_FIXED_ALLREDUCE_BUCKET 5e8
/* stage3_max_reuse_distance default (zero/config.py); not in pp_buffers. */
#define PP_DS_MAX_REUSE_DISTANCE 1e9

/* Fills the "auto" values of a parsed ds_config.json as the Hugging Face
 * integration does (configs/deepspeed_auto.c), noting each; a mismatch
 * with hf fails jr. dp is the data-parallel size. hf may be NULL. */
void pp__ds_fill_auto(cJSON *root, jr_ctx *jr, const pp_model *m, const pp_cluster *c, int dp,
                      const pp_hf_trainer_args *hf, pp_notes *notes);

/* The generated table of Megatron-LM and Megatron-DeepSpeed flags
 * (megatron_flags.inc, megatron_read.c): 1 when name is a flag of either,
 * with its arity (-1: one or more) and which parsers accept it. */
int pp__megatron_flag_known(const char *name, int *arity, int *lm, int *mds);
/* 1 when the table is sorted (bsearch relies on it). */
int pp__megatron_flags_sorted(void);

#endif
