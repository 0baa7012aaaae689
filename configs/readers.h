/*
 * readers.h — private helpers of the launcher-file readers (hf_args_read.c,
 * fsdp_read.c): wording a rule failure with the file's own key, and what
 * TrainingArguments set on a strategy.
 */
#ifndef PARPLAN_READERS_H
#define PARPLAN_READERS_H

#include "configs/jsonread.h"

/* A strategy field and the key of the file that sets it. */
typedef struct pp__key_of {
    const char *field, *key;
} pp__key_of;

/* Words the rule failure e as "where: key (field value): reason [rule id]",
 * the key found in keys (NULL-terminated); keeps e's rule. PP_ERR_INPUT. */
pp_status pp__rule_in_file(const char *where, const pp_error *e, const pp__key_of *keys, pp_error *err);
/* Batch (with s->dp), checkpointing, precision (when given), optimizer,
 * loss and DDP buckets of t onto s. */
void pp__training_args_apply(const pp_training_args *t, pp_strategy *s);

#endif
