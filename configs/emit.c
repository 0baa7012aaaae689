/*
 * emit.c — helpers shared by the launcher-file writers: notes, a text
 * buffer, number formatting, and the training hyper-parameters' defaults
 * and range checks (docs/deepspeed.md, "Hyper-parameters").
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"

const char *pp__safe(const char *s, char *buf, size_t cap)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p && k + 1 < cap; p++) {
        if (*p == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f) p++, buf[k++] = '?';
        else buf[k++] = *p < 0x20 || *p == 0x7f ? '?' : (char)*p;
    }
    if (cap) buf[k] = '\0';
    return buf;
}

void pp__note(pp_notes *notes, const char *fmt, ...)
{
    if (!notes) return;
    if (notes->n < 0 || notes->n >= PP_NOTES_MAX) {
        notes->dropped++;
        return;
    }
    va_list ap;
    va_start(ap, fmt);
    char raw[PP_NOTE_LEN];
    vsnprintf(raw, sizeof raw, fmt, ap);
    va_end(ap);
    pp__safe(raw, notes->line[notes->n], PP_NOTE_LEN); /* one line, whatever a name holds */
    for (int i = 0; i < notes->n; i++) /* the same note twice says nothing new */
        if (!strcmp(notes->line[i], notes->line[notes->n])) return;
    notes->n++;
}

void pp__note_unfit(pp_notes *notes, const pp_memory *mem, pp_fit fit)
{
    double g = 1073741824.0;
    if (!mem->host_fits || !mem->nvme_fits)
        pp__note(notes, "the offloaded states need %.1f GiB of host memory per node (%.1f usable)%s: this config is "
                 "expected to fail", mem->host_bytes_per_node / g, mem->host_usable_bytes / g,
                 mem->nvme_fits ? "" : " or more NVMe than the node has");
    else if (mem->live_fits)
        pp__note(notes, "tight: the predicted peak %.1f GiB per GPU exceeds the %.1f GiB usable with the caching "
                 "allocator's fragmentation allowance; the live tensors need %.1f GiB: it runs if enough of the "
                 "allowance is whole cached segments (freed on a failed allocation and retried, slower), not free "
                 "space inside segments that hold live tensors (which no retry frees)",
                 mem->peak_bytes / g, mem->gpu_bytes / g, mem->live_peak_bytes / g);
    else if (fit == PP_FIT_TIGHT)
        pp__note(notes, "tight: the plan's live tensors need %.1f GiB per GPU, over the %.1f GiB usable, but by less "
                 "than the error bar of the published memory readings: it may run, but more likely runs out of memory",
                 mem->live_peak_bytes / g, mem->gpu_bytes / g);
    else
        pp__note(notes, "the plan's predicted peak %.1f GiB per GPU (%.1f GiB of live tensors) exceeds the %.1f GiB "
                 "usable: this config is expected to run out of memory", mem->peak_bytes / g,
                 mem->live_peak_bytes / g, mem->gpu_bytes / g);
}

void pp__sb_vprintf(pp__sbuf *b, const char *fmt, va_list ap)
{
    if (b->oom) return;
    va_list cp;
    va_copy(cp, ap);
    int need = vsnprintf(NULL, 0, fmt, cp);
    va_end(cp);
    if (need < 0) {
        b->oom = 1;
        return;
    }
    if (b->n + (size_t)need + 1 > b->cap) {
        size_t cap = b->cap ? b->cap : 1024;
        while (b->n + (size_t)need + 1 > cap) cap *= 2;
        char *p = realloc(b->p, cap);
        if (!p) {
            b->oom = 1;
            return;
        }
        b->p = p;
        b->cap = cap;
    }
    vsnprintf(b->p + b->n, (size_t)need + 1, fmt, ap);
    b->n += (size_t)need;
}

void pp__sb_printf(pp__sbuf *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pp__sb_vprintf(b, fmt, ap);
    va_end(ap);
}

char *pp__sb_take(pp__sbuf *b)
{
    if (b->oom) {
        free(b->p);
        b->p = NULL;
        return NULL;
    }
    if (!b->p) {
        b->p = malloc(1);
        if (b->p) b->p[0] = '\0';
    }
    char *p = b->p;
    b->p = NULL;
    b->n = b->cap = 0;
    return p;
}

void pp__fmt_num(char *buf, size_t cap, double x)
{
    if (x == floor(x) && fabs(x) < 9007199254740992.0) {
        snprintf(buf, cap, "%.0f", x);
        return;
    }
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, cap, "%.*g", prec, x);
        if (strtod(buf, NULL) == x) return;
    }
}

void pp_hparams_default(pp_hparams *h)
{
    h->lr = 3e-4;
    h->min_lr = 0;
    h->beta1 = 0.9;
    h->beta2 = 0.95;
    h->eps = 1e-8;
    h->weight_decay = 0.1;
    h->momentum = 0.9;
    h->warmup_steps = 2000;
    h->total_steps = 100000;
    h->gradient_clipping = 1.0;
    h->initial_scale_power = 16;
    h->loss_scale_window = 1000;
    h->hysteresis = 2;
    h->min_loss_scale = 1;
}

pp_status pp_hparams_check(const pp_hparams *h, const char *where, pp_error *err)
{
    PP__C_NUMERIC;
    const char *w = where ? where : "hyper-parameters";
    if (!(h->lr > 0 && h->lr <= 10)) return pp__fail(err, PP_ERR_INPUT, "%s: learning rate %g: expected (0, 10]", w, h->lr);
    if (!(h->min_lr >= 0 && h->min_lr <= h->lr))
        return pp__fail(err, PP_ERR_INPUT, "%s: minimum learning rate %g: expected [0, lr = %g]", w, h->min_lr, h->lr);
    if (!(h->beta1 >= 0 && h->beta1 < 1 && h->beta2 >= 0 && h->beta2 < 1))
        return pp__fail(err, PP_ERR_INPUT, "%s: Adam betas (%g, %g): expected each in [0, 1)", w, h->beta1, h->beta2);
    if (!(h->eps > 0 && h->eps < 1)) return pp__fail(err, PP_ERR_INPUT, "%s: Adam epsilon %g: expected (0, 1)", w, h->eps);
    if (!(h->weight_decay >= 0 && h->weight_decay <= 10))
        return pp__fail(err, PP_ERR_INPUT, "%s: weight decay %g: expected [0, 10]", w, h->weight_decay);
    if (!(h->momentum >= 0 && h->momentum < 1))
        return pp__fail(err, PP_ERR_INPUT, "%s: SGD momentum %g: expected [0, 1)", w, h->momentum);
    if (h->total_steps < 1) return pp__fail(err, PP_ERR_INPUT, "%s: total steps %d: expected at least 1", w, h->total_steps);
    if (h->warmup_steps < 0 || h->warmup_steps > h->total_steps)
        return pp__fail(err, PP_ERR_INPUT, "%s: warmup steps %d: expected 0 to total steps (%d)", w, h->warmup_steps,
                        h->total_steps);
    if (!(h->gradient_clipping >= 0 && h->gradient_clipping < 1e6))
        return pp__fail(err, PP_ERR_INPUT, "%s: gradient clipping %g: expected >= 0 (0 = off)", w, h->gradient_clipping);
    if (h->initial_scale_power < 0 || h->initial_scale_power > 63)
        return pp__fail(err, PP_ERR_INPUT, "%s: fp16 initial_scale_power %d: expected 0-63", w, h->initial_scale_power);
    if (h->loss_scale_window < 1 || h->hysteresis < 1)
        return pp__fail(err, PP_ERR_INPUT, "%s: fp16 loss_scale_window and hysteresis: expected at least 1", w);
    if (!(h->min_loss_scale > 0 && h->min_loss_scale <= ldexp(1.0, h->initial_scale_power)))
        return pp__fail(err, PP_ERR_INPUT, "%s: fp16 min_loss_scale %g: expected (0, 2^initial_scale_power]", w,
                        h->min_loss_scale);
    return PP_OK;
}

