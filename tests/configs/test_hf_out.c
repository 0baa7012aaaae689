/*
 * test_hf_out.c — the Hugging Face files for fine-tuning plans: PEFT's
 * LoraConfig fields, the Trainer's "auto" keys, and a plain ds_config.json
 * that stays "auto"-free.
 */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "parplan.h"

static pp_plan plan_for(const char *model, pp_train_mode mode, unsigned targets, pp_model *m, pp_cluster *c)
{
    pp_error err = {""};
    cr_assert_eq(pp_model_load(model, m, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_load("dgx-h100", c, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_cluster_resize(c, 0, 2, &err), PP_OK, "%s", err.msg);
    pp_strategy s;
    pp_strategy_default(&s);
    s.dp = 2, s.zero = 2, s.global_batch = 16, s.seq = 2048;
    s.ft.mode = mode;
    s.ft.lora_rank = 8;
    s.ft.lora_alpha = 16;
    s.ft.lora_dropout = 0.05;
    s.ft.lora_targets = targets;
    pp_plan p;
    cr_assert_eq(pp_estimate(m, c, &s, &p, &err), PP_OK, "%s", err.msg);
    return p;
}

Test(hf_out, peft_adapter_config)
{
    pp_model m;
    pp_cluster c;
    pp_plan p = plan_for("llama3-8b", PP_MODE_LORA, PP_LORA_Q | PP_LORA_V, &m, &c);
    char *s = NULL;
    pp_error err = {""};
    cr_assert_eq(pp_peft_config_to_string(&m, &p, &s, &err), PP_OK, "%s", err.msg);
    cr_expect(strstr(s, "\"r\":\t8") && strstr(s, "\"lora_alpha\":\t16") && strstr(s, "\"lora_dropout\":\t0.05"), "%s", s);
    cr_expect(strstr(s, "[\"q_proj\", \"v_proj\"]") && strstr(s, "\"task_type\":\t\"CAUSAL_LM\"") &&
              strstr(s, "\"bias\":\t\"none\""), "%s", s);
    pp_free(s);
    p.strategy.ft.mode = PP_MODE_FULL;
    cr_expect_eq(pp_peft_config_to_string(&m, &p, &s, &err), PP_ERR_INPUT);
}

Test(hf_out, trainer_config_has_auto_plain_has_none)
{
    pp_model m;
    pp_cluster c;
    pp_plan p = plan_for("llama3-8b", PP_MODE_LORA, PP_LORA_ALL_LINEAR, &m, &c);
    char *t = NULL, *plain = NULL;
    pp_notes notes = {0};
    pp_error err = {""};
    cr_assert_eq(pp_hf_trainer_deepspeed_to_string(&m, &c, &p, NULL, &t, &notes, &err), PP_OK, "%s", err.msg);
    cr_assert_eq(pp_deepspeed_to_string(&m, &c, &p, NULL, &plain, &notes, &err), PP_OK, "%s", err.msg);
    const char *keys[] = {"\"train_batch_size\":\t\"auto\"", "\"train_micro_batch_size_per_gpu\":\t\"auto\"",
                          "\"gradient_accumulation_steps\":\t\"auto\"", "\"gradient_clipping\":\t\"auto\"",
                          "\"lr\":\t\"auto\"", "\"enabled\":\t\"auto\""};
    for (size_t i = 0; i < sizeof keys / sizeof *keys; i++) cr_expect(strstr(t, keys[i]), "missing %s", keys[i]);
    cr_expect(strstr(t, "\"reduce_bucket_size\":\t\"auto\"") == NULL, "bucket sizes stay the memory model's");
    cr_expect(strstr(plain, "auto") == NULL, "the plain ds_config.json is auto-free");
    pp_free(t);
    pp_free(plain);
}

Test(hf_out, writes_both_files_beside_ds_config)
{
    pp_model m;
    pp_cluster c;
    pp_plan p = plan_for("mistral-7b", PP_MODE_QLORA, PP_LORA_Q | PP_LORA_V, &m, &c);
    char dir[] = "/tmp/parplan-hf-XXXXXX", path[256];
    cr_assert(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/ds_config.json", dir);
    pp_notes notes = {0};
    pp_error err = {""};
    cr_assert_eq(pp_hf_write(&m, &c, &p, NULL, path, 0, &notes, &err), PP_OK, "%s", err.msg);
    char a[256], b[256];
    snprintf(a, sizeof a, "%s/adapter_config.json", dir);
    snprintf(b, sizeof b, "%s/ds_config_trainer.json", dir);
    cr_expect_eq(access(a, R_OK), 0);
    cr_expect_eq(access(b, R_OK), 0);
    cr_expect_eq(pp_hf_write(&m, &c, &p, NULL, path, 0, &notes, &err), PP_ERR_IO, "no overwrite without force");
    cr_expect_eq(pp_hf_write(&m, &c, &p, NULL, path, 1, &notes, &err), PP_OK, "%s", err.msg);
    unlink(a);
    unlink(b);
    rmdir(dir);
}
