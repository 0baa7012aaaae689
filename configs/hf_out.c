/*
 * hf_out.c — files for the Hugging Face stack most fine-tuners use
 * (docs/finetune.md): a PEFT adapter config (LoraConfig fields) and a
 * Trainer-ready DeepSpeed config in which the keys the HF Trainer fills in
 * are "auto" (transformers' DeepSpeed integration). The plain ds_config.json
 * stays "auto"-free; ZeRO bucket sizes stay numbers because the memory model
 * assumed them.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/configs.h"
#include "configs/emit.h"

/* HF module names: Llama-style for gated MLPs (Llama, Mistral, Qwen,
 * Mixtral's attention), NeoX/BLOOM/Falcon-style fused QKV otherwise. */
void pp__lora_target_names(cJSON *arr, const pp_model *m, unsigned t)
{
    static const char *const llama[] = {"q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj", "lm_head"};
    static const char *const fused[] = {"query_key_value", "query_key_value", "query_key_value", "dense",
                                        NULL, "dense_h_to_4h", "dense_4h_to_h", "lm_head"};
    const char *const *names = m->gated_mlp ? llama : fused;
    for (int i = 0; i < 8; i++) {
        if (!(t & (1u << i)) || !names[i]) continue;
        int dup = 0;
        for (int j = 0; j < i; j++) dup |= (t & (1u << j)) && names[j] && !strcmp(names[j], names[i]);
        if (!dup) cJSON_AddItemToArray(arr, cJSON_CreateString(names[i]));
    }
}

pp_status pp_peft_config_to_string(const pp_model *m, const pp_plan *p, char **out, pp_error *err)
{
    PP__C_NUMERIC;
    const pp_finetune *f = &p->strategy.ft;
    *out = NULL;
    if (f->mode == PP_MODE_FULL)
        return pp__fail(err, PP_ERR_INPUT, "a PEFT adapter config needs --mode lora or qlora");
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "peft_type", "LORA");
    cJSON_AddStringToObject(o, "task_type", "CAUSAL_LM");
    cJSON_AddNumberToObject(o, "r", f->lora_rank);
    cJSON_AddNumberToObject(o, "lora_alpha", f->lora_alpha);
    cJSON_AddNumberToObject(o, "lora_dropout", f->lora_dropout);
    pp__lora_target_names(cJSON_AddArrayToObject(o, "target_modules"), m, f->lora_targets);
    cJSON_AddStringToObject(o, "bias", "none");
    cJSON_AddBoolToObject(o, "inference_mode", 0);
    *out = cJSON_Print(o);
    cJSON_Delete(o);
    return *out ? PP_OK : PP_ERR_NOMEM;
}

static void set_auto(cJSON *o, const char *key)
{
    if (o && cJSON_GetObjectItemCaseSensitive(o, key)) cJSON_ReplaceItemInObjectCaseSensitive(o, key, cJSON_CreateString("auto"));
}

pp_status pp_hf_trainer_deepspeed_to_string(const pp_model *m, const pp_cluster *c, const pp_plan *p,
                                            const pp_deepspeed_opts *o, char **out, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    char *plain = NULL;
    *out = NULL;
    pp_status st = pp_deepspeed_to_string(m, c, p, o, &plain, notes, err);
    if (st != PP_OK) return st;
    cJSON *root = cJSON_Parse(plain);
    pp_free(plain);
    if (!root) return pp__fail(err, PP_ERR_INTERNAL, "re-reading the emitted ds_config.json failed");
    /* what transformers' HfTrainerDeepSpeedConfig fills from TrainingArguments */
    static const char *const top[] = {"train_batch_size", "train_micro_batch_size_per_gpu", "gradient_accumulation_steps",
                                      "gradient_clipping"};
    for (size_t i = 0; i < sizeof top / sizeof *top; i++) set_auto(root, top[i]);
    cJSON *opt = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "optimizer"), "params");
    static const char *const op[] = {"lr", "betas", "eps", "weight_decay", "momentum"};
    for (size_t i = 0; i < sizeof op / sizeof *op; i++) set_auto(opt, op[i]);
    cJSON *sch = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(root, "scheduler"), "params");
    static const char *const sp[] = {"warmup_min_lr", "warmup_max_lr", "warmup_num_steps", "total_num_steps"};
    for (size_t i = 0; i < sizeof sp / sizeof *sp; i++) set_auto(sch, sp[i]);
    set_auto(cJSON_GetObjectItemCaseSensitive(root, "fp16"), "enabled");
    set_auto(cJSON_GetObjectItemCaseSensitive(root, "bf16"), "enabled");
    pp__note(notes, "ds_config_trainer.json: batch, clipping, optimizer and scheduler values are \"auto\": pass "
                    "--per_device_train_batch_size %d --gradient_accumulation_steps %d to the HF Trainer to match the plan",
             p->strategy.micro_batch, p->strategy.grad_accum);
    *out = cJSON_Print(root);
    cJSON_Delete(root);
    return *out ? PP_OK : PP_ERR_NOMEM;
}

/* Sibling path: the directory of ds_path joined with name. */
static void sibling(const char *ds_path, const char *name, char *buf, size_t cap)
{
    const char *slash = strrchr(ds_path, '/');
    int dir = slash ? (int)(slash - ds_path) + 1 : 0;
    snprintf(buf, cap, "%.*s%s", dir, ds_path, name);
}

pp_status pp_hf_write(const pp_model *m, const pp_cluster *c, const pp_plan *p, const pp_deepspeed_opts *o,
                      const char *ds_path, int force, pp_notes *notes, pp_error *err)
{
    PP__C_NUMERIC;
    char trainer[4096], adapter[4096], *text[2] = {NULL, NULL};
    pp_out_file f[2];
    int n = 0;
    pp_status st = pp_hf_trainer_deepspeed_to_string(m, c, p, o, &text[0], notes, err);
    sibling(ds_path, "ds_config_trainer.json", trainer, sizeof trainer);
    if (st == PP_OK) f[n++] = (pp_out_file){trainer, text[0], strlen(text[0])};
    if (st == PP_OK && p->strategy.ft.mode != PP_MODE_FULL) {
        sibling(ds_path, "adapter_config.json", adapter, sizeof adapter);
        st = pp_peft_config_to_string(m, p, &text[1], err);
        if (st == PP_OK) f[n++] = (pp_out_file){adapter, text[1], strlen(text[1])};
    }
    if (st == PP_OK) st = pp_write_files(f, n, force ? PP_WRITE_FORCE : 0, err); /* both or neither */
    pp_free(text[0]);
    pp_free(text[1]);
    return st;
}
