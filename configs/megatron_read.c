/*
 * megatron_read.c — reads Megatron-LM or Megatron-DeepSpeed arguments
 * (docs/megatron.md "Reading arguments back"): the MEGATRON_ARGS=( ... )
 * file parplan writes, one flag per line, or a command line. Flags are
 * checked against the generated table of both parsers
 * (megatron_flags.inc): unknown ones fail with the nearest flag, the other
 * flavor's with its name; model flags must agree with the model; the flags
 * that change the price set the strategy; the others are named in a
 * warning. Megatron-DeepSpeed's ds_config.json (--deepspeed_config) is read
 * with the DeepSpeed reader. Then the rule table decides, worded with the
 * flag that set the field.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "configs/emit.h"
#include "configs/shell_words.h"

typedef struct mr_flag {
    const char *name;
    int arity; /* values taken; -1: one or more */
    int lm, mds; /* accepted by Megatron-LM, by Megatron-DeepSpeed */
} mr_flag;

static const mr_flag flag_table[] = {
#include "configs/megatron_flags.inc"
};
#define NFLAGS ((int)(sizeof flag_table / sizeof *flag_table))

static int flag_cmp(const void *k, const void *e) { return strcmp(k, ((const mr_flag *)e)->name); }

static const mr_flag *mr_find(const char *name) { return bsearch(name, flag_table, NFLAGS, sizeof *flag_table, flag_cmp); }

int pp__megatron_flag_known(const char *name, int *arity, int *lm, int *mds)
{
    const mr_flag *f = mr_find(name);
    if (!f) return 0;
    if (arity) *arity = f->arity;
    if (lm) *lm = f->lm;
    if (mds) *mds = f->mds;
    return 1;
}

int pp__megatron_flags_sorted(void)
{
    for (int i = 1; i < NFLAGS; i++)
        if (strcmp(flag_table[i - 1].name, flag_table[i].name) >= 0) return 0;
    return 1;
}

/* ------------------------------------------------------------ context */

typedef struct mr_occ {
    const mr_flag *flag;
    int line;
    int first, nval; /* values: word indices [first, first + nval) */
    const char *eq;  /* the value of --flag=value, else NULL */
    int used;
} mr_occ;

typedef struct mr_src {
    const char *field, *flag; /* a strategy field and the flag that set it */
} mr_src;

#define MR_MAX_SRC 48

typedef struct mr_ctx {
    const char *where;
    pp_error *err;
    pp_status st;
    pp_notes *warn;
    const pp_model *m;
    const pp_cluster *c;
    int mds;            /* Megatron-DeepSpeed (the file has --deepspeed) */
    pp__words w;
    mr_occ *occ;
    int nocc;
    mr_src src[MR_MAX_SRC];
    int nsrc;
    int ignored_line;   /* first line outside the arrays that was not read */
    int expandable;     /* the launch's environment sets expandable segments (scan_env) */
    int alloc_conflict; /* PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF disagree */
} mr_ctx;

static const char *word(const mr_ctx *x, int i) { return pp__word_text(&x->w, i); }

/* Keeps text from the file on one printable line, at most 64 characters. */
static const char *quote(const char *s, char *buf, size_t cap)
{
    snprintf(buf, cap, "%.64s%s", s, strlen(s) > 64 ? "..." : "");
    jr_sanitize(buf);
    return buf;
}

static int fail(mr_ctx *x, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail(mr_ctx *x, int line, const char *fmt, ...)
{
    if (x->st != PP_OK) return 0;
    char what[PP_ERR_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    jr_sanitize(what);
    if (line > 0) pp__fail(x->err, PP_ERR_INPUT, "%.200s:%d: %s", x->where, line, what);
    else pp__fail(x->err, PP_ERR_INPUT, "%.200s: %s", x->where, what);
    x->st = PP_ERR_INPUT;
    return 0;
}

static void warn(mr_ctx *x, int line, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void warn(mr_ctx *x, int line, const char *fmt, ...)
{
    char what[PP_NOTE_LEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    jr_sanitize(what);
    if (line > 0) pp__note(x->warn, "%.120s:%d: %s", x->where, line, what);
    else pp__note(x->warn, "%.120s: %s", x->where, what);
}

static void set_src(mr_ctx *x, const char *field, const char *flag)
{
    for (int i = 0; i < x->nsrc; i++)
        if (!strcmp(x->src[i].field, field)) {
            x->src[i].flag = flag;
            return;
        }
    if (x->nsrc < MR_MAX_SRC) x->src[x->nsrc++] = (mr_src){field, flag};
}

static const char *src_of(const mr_ctx *x, const char *field)
{
    for (int i = 0; i < x->nsrc; i++)
        if (!strcmp(x->src[i].field, field)) return x->src[i].flag;
    return NULL;
}

/* ------------------------------------------------------------ flags */

static const char *flavor(int mds) { return mds ? "Megatron-DeepSpeed" : "Megatron-LM"; }

static void unknown_flag(mr_ctx *x, const char *name, int line)
{
    const char **names = malloc(NFLAGS * sizeof *names);
    int n = 0, len = (int)strlen(name), slack = len / 3 + 2;
    for (int i = 0; names && i < NFLAGS; i++) { /* jr_nearest's reach: lengths within a third */
        int l = (int)strlen(flag_table[i].name);
        if ((x->mds ? flag_table[i].mds : flag_table[i].lm) && l >= len - slack && l <= len + slack)
            names[n++] = flag_table[i].name;
    }
    const char *near = names ? jr_nearest(name, names, n) : NULL;
    char q[80], hint[96] = "";
    if (near) snprintf(hint, sizeof hint, " (did you mean %s?)", near);
    fail(x, line, "%s: unknown flag: neither Megatron-LM nor Megatron-DeepSpeed has it%s", quote(name, q, sizeof q), hint);
    free(names);
}

/* A word that is a value, not a flag: anything but --x (and -x unless a number). */
static int is_value(const char *s)
{
    if (s[0] != '-') return 1;
    if (s[1] == '-') return 0;
    return (s[1] >= '0' && s[1] <= '9') || s[1] == '.';
}

/* Where the arguments start: the array contents, or after the script of a
 * command line (torchrun ... pretrain_gpt.py --flags) and leading VAR=x. */
static int first_arg(mr_ctx *x)
{
    int n = x->w.n, start = 0;
    if (x->w.arrays) return 0;
    for (int i = 0; i < n && !start; i++) { /* the launcher and its flags go before the script */
        const char *s = word(x, i);
        size_t l = strlen(s);
        if (l > 3 && !strcmp(s + l - 3, ".py")) start = i + 1;
    }
    while (start < n && word(x, start)[0] != '-' && strchr(word(x, start), '=')) start++;
    return start;
}

/* PyTorch's allocator configuration: comma-separated key:value options,
 * blanks ignored (c10 CUDAAllocatorConfig). Expandable segments need
 * expandable_segments:True and the native backend (cudaMallocAsync is
 * another allocator). */
static int expandable_value(const char *v)
{
    int on = 0, async = 0;
    while (*v) {
        char opt[128];
        size_t len = strcspn(v, ","), k = 0;
        for (size_t i = 0; i < len && k + 1 < sizeof opt; i++)
            if (v[i] != ' ' && v[i] != '\t') opt[k++] = v[i];
        opt[k] = '\0';
        if (!strncmp(opt, "expandable_segments:", 20)) on = !strcmp(opt + 20, "True");
        if (!strncmp(opt, "backend:", 8)) async = !strcmp(opt + 8, "cudaMallocAsync");
        v += len + (v[len] == ',');
    }
    return on && !async;
}

/* Length of the shell identifier s starts with (0: none). */
static size_t ident_len(const char *s)
{
    if (s[0] >= '0' && s[0] <= '9') return 0;
    return strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_");
}

/* NAME=value (value NULL for a bare NAME): which of the two allocator
 * variables it is, -1 another. */
static int alloc_var(const char *s, const char **value)
{
    static const char *const names[] = {"PYTORCH_ALLOC_CONF", "PYTORCH_CUDA_ALLOC_CONF"};
    size_t n = ident_len(s);
    *value = s[n] == '=' ? s + n + 1 : NULL;
    for (int k = 0; k < 2; k++)
        if (n == strlen(names[k]) && !strncmp(s, names[k], n)) return k;
    return -1;
}

static int is_assignment(const char *s)
{
    size_t n = ident_len(s);
    return n > 0 && s[n] == '=';
}

static const char *base_name(const char *s)
{
    const char *b = strrchr(s, '/');
    return b ? b + 1 : s;
}

/* Words [a, b) start training: a launcher running Megatron's training
 * script (pretrain_*.py, train*.py, finetune*.py). A prefix assignment
 * reaches the training processes only through such a command. */
static int is_launch(const mr_ctx *x, int a, int b)
{
    static const char *const l[] = {"torchrun", "python", "python3", "deepspeed", "srun", "mpirun", "mpiexec", NULL};
    int launcher = 0;
    for (int i = 0; l[i]; i++) launcher |= !strcmp(base_name(word(x, a)), l[i]);
    for (int i = a + 1; launcher && i < b; i++) {
        const char *w = base_name(word(x, i));
        size_t n = strlen(w);
        if (n > 3 && !strcmp(w + n - 3, ".py") &&
            (!strncmp(w, "pretrain", 8) || !strncmp(w, "train", 5) || !strncmp(w, "finetune", 8)))
            return 1;
    }
    return 0;
}

/* The two variables as the shell holds them: value -1 unset, else 0/1
 * (expandable); exported or not. */
typedef struct shell_env {
    int val[2], exp[2];
} shell_env;

/* env's value of variable k: -1 when not in the environment. */
static int env_of(const shell_env *e, int k) { return e->exp[k] ? e->val[k] : -1; }

/* One command line (words [a, b)): export/declare -x/typeset -x (-n
 * unexports), unset (-f: functions, nothing here), assignments alone on the
 * line (a shell variable; the environment's too once exported), and
 * NAME=value or `env NAME=value` before a launcher: that launch's
 * environment, returned in launch (else launch untouched). */
static void env_command(const mr_ctx *x, int a, int b, shell_env *e, shell_env *launch, int *launched)
{
    const char *w0 = word(x, a), *v;
    int k;
    if (!strcmp(w0, "export") || ((!strcmp(w0, "declare") || !strcmp(w0, "typeset")) && a + 1 < b &&
                                  !strcmp(word(x, a + 1), "-x"))) {
        int un = 0;
        for (int i = a + 1; i < b; i++) {
            const char *s = word(x, i);
            if (s[0] == '-') {
                un |= strchr(s, 'n') != NULL;
                continue;
            }
            if ((k = alloc_var(s, &v)) < 0) continue;
            if (v) e->val[k] = expandable_value(v);
            e->exp[k] = !un;
        }
        return;
    }
    if (!strcmp(w0, "unset")) {
        int fn = 0;
        for (int i = a + 1; i < b; i++) {
            const char *s = word(x, i);
            if (s[0] == '-') fn = strchr(s, 'f') != NULL;
            else if (!fn && (k = alloc_var(s, &v)) >= 0) e->val[k] = -1, e->exp[k] = 0;
        }
        return;
    }
    int i = a;
    if (!strcmp(w0, "env")) i++;
    int first = i;
    while (i < b && is_assignment(word(x, i))) i++;
    if (i == b && first == a) { /* assignments alone: shell variables */
        for (int j = a; j < b; j++)
            if ((k = alloc_var(word(x, j), &v)) >= 0) e->val[k] = expandable_value(v);
        return;
    }
    if (i < b && is_launch(x, i, b)) { /* this launch's environment: the exported one and its prefix */
        *launch = *e;
        for (int j = first; j < i; j++)
            if ((k = alloc_var(word(x, j), &v)) >= 0) launch->val[k] = expandable_value(v), launch->exp[k] = 1;
        *launched = 1;
    }
}

/* The allocator the training processes get, from the words outside the
 * arrays (a command-line file: those before its arguments), command by
 * command (docs/megatron.md, "Allocator"): the environment at the last
 * launch command the file runs, else the one it leaves when sourced (what
 * parplan's own file is for). PyTorch >= 2.9 reads PYTORCH_ALLOC_CONF and
 * older releases PYTORCH_CUDA_ALLOC_CONF: where both are set and disagree,
 * the caching allocator, with a warning. */
static void scan_env(mr_ctx *x)
{
    shell_env e = {{-1, -1}, {0, 0}}, launch;
    int end = x->w.arrays ? x->w.n : first_arg(x), launched = 0;
    for (int a = 0; a < end;) {
        if (x->w.word[a].in_array) {
            a++;
            continue;
        }
        int b = a + 1;
        while (b < end && !x->w.word[b].cmd_start && !x->w.word[b].in_array) b++;
        env_command(x, a, b, &e, &launch, &launched);
        a = b;
    }
    const shell_env *f = launched ? &launch : &e;
    int v0 = env_of(f, 0), v1 = env_of(f, 1);
    x->expandable = v0 >= 0 && v1 >= 0 ? v0 && v1 : v0 >= 0 ? v0 : v1 > 0;
    x->alloc_conflict = v0 >= 0 && v1 >= 0 && v0 != v1;
}

static int collect(mr_ctx *x)
{
    int n = x->w.n;
    x->occ = calloc((size_t)(n ? n : 1), sizeof *x->occ);
    if (!x->occ) return pp__fail(x->err, PP_ERR_NOMEM, "%.200s: out of memory", x->where), x->st = PP_ERR_NOMEM, 0;
    for (int i = 0; i < n; i++)
        if (!strcmp(word(x, i), "--deepspeed") || !strcmp(word(x, i), "--deepscale")) x->mds = 1;
    scan_env(x);
    for (int i = first_arg(x); i < n && x->st == PP_OK;) {
        const char *s = word(x, i);
        int line = x->w.word[i].line;
        char q[80];
        if (x->w.arrays && !x->w.word[i].in_array) { /* export X=1, torchrun ... "${ARGS[@]}" */
            if (!x->ignored_line && strcmp(s, "export") && !strchr(s, '=')) x->ignored_line = line;
            i++;
            continue;
        }
        if (s[0] != '-' || s[1] != '-' || !s[2])
            return fail(x, line, "%s: expected a flag starting with --", quote(s, q, sizeof q));
        char name[128];
        const char *eq = strchr(s, '=');
        snprintf(name, sizeof name, "%.*s", eq ? (int)(eq - s) : (int)strlen(s), s);
        const mr_flag *f = mr_find(name);
        if (!f) return unknown_flag(x, name, line), 0;
        if (x->mds ? !f->mds : !f->lm)
            return fail(x, line, "%s is a %s flag, but this file is for %s (%s): %s rejects it", name,
                        flavor(!x->mds), flavor(x->mds), x->mds ? "it has --deepspeed" : "no --deepspeed",
                        flavor(x->mds));
        mr_occ *o = &x->occ[x->nocc++];
        *o = (mr_occ){f, line, i + 1, 0, eq ? eq + 1 : NULL, 0};
        i++;
        int want = f->arity;
        if (!strcmp(name, "--num-experts") && x->mds) want = -1; /* nargs='+' there */
        if (eq) {
            if (want == 0) return fail(x, line, "%s takes no value, got '%s'", name, quote(eq + 1, q, sizeof q));
            if (want > 1) return fail(x, line, "%s takes %d values: write them after the flag", name, want);
            continue;
        }
        while (i < n && is_value(word(x, i)) && (want < 0 || o->nval < want) && (!x->w.arrays || x->w.word[i].in_array))
            o->nval++, i++;
        if (want > 0 && o->nval < want)
            return fail(x, line, "%s: expected %d value%s after it, got %d", name, want, want > 1 ? "s" : "", o->nval);
        if (want < 0 && o->nval == 0) return fail(x, line, "%s: expected one or more values after it", name);
        if (want == 0 && i < n && is_value(word(x, i)) && (!x->w.arrays || x->w.word[i].in_array))
            return fail(x, x->w.word[i].line, "%s takes no value, got '%s' (argparse rejects it as an unrecognized "
                        "argument)", name, quote(word(x, i), q, sizeof q));
    }
    if (x->st == PP_OK && x->nocc == 0) fail(x, 0, "no arguments: expected Megatron flags (--num-layers ...), as a "
                                                  "MEGATRON_ARGS=( ... ) array, one flag per line or a command line");
    return x->st == PP_OK;
}

static const char *val_text(const mr_ctx *x, const mr_occ *o, int k)
{
    return o->eq && k == 0 ? o->eq : word(x, o->first + k);
}

/* The last occurrence of a flag (argparse keeps the last), or NULL. */
static mr_occ *get(mr_ctx *x, const char *name)
{
    mr_occ *last = NULL;
    for (int i = 0; i < x->nocc; i++)
        if (!strcmp(x->occ[i].flag->name, name)) {
            if (last && !x->occ[i].used && last->nval && x->occ[i].nval &&
                strcmp(val_text(x, last, 0), val_text(x, &x->occ[i], 0)))
                warn(x, x->occ[i].line, "%s given twice: Megatron uses the last", name);
            last = &x->occ[i];
            last->used = 1;
        }
    return last;
}

static int has(mr_ctx *x, const char *name) { return get(x, name) != NULL; }

static int parse_int(const char *s, long lo, long hi, long *out)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end || v < lo || v > hi) return 0;
    *out = v;
    return 1;
}

/* An integer flag: 1 when given (in *out), 0 when absent or wrong. */
static int int_flag(mr_ctx *x, const char *name, long lo, long hi, long *out)
{
    mr_occ *o = get(x, name);
    if (!o || x->st) return 0;
    char q[80];
    if (!parse_int(val_text(x, o, 0), lo, hi, out))
        return fail(x, o->line, "%s '%s': expected an integer in [%ld, %ld]", name, quote(val_text(x, o, 0), q, sizeof q),
                    lo, hi);
    return 1;
}

static int num_flag(mr_ctx *x, const char *name, double lo, double hi, double *out)
{
    mr_occ *o = get(x, name);
    if (!o || x->st) return 0;
    char q[80], *end;
    const char *s = val_text(x, o, 0);
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || v > hi)
        return fail(x, o->line, "%s '%s': expected a number in [%g, %g]", name, quote(s, q, sizeof q), lo, hi);
    *out = v;
    return 1;
}

/* A choice flag: index into names, -1 when absent. */
static int choice_flag(mr_ctx *x, const char *name, const char *const *names, int k)
{
    mr_occ *o = get(x, name);
    if (!o || x->st) return -1;
    const char *v = val_text(x, o, 0);
    for (int i = 0; names[i]; i++)
        if (!strcmp(v, names[i])) return i;
    char q[80], list[256] = "";
    size_t n = 0;
    for (int i = 0; names[i] && n + 32 < sizeof list; i++) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", names[i]);
    (void)k;
    fail(x, o->line, "%s '%s': expected one of %s", name, quote(v, q, sizeof q), list);
    return -1;
}

/* ------------------------------------------------------------ the model
 * Model flags must build the model given with --model: a value that
 * contradicts it (or a Megatron default that does, when the flag is
 * absent) fails naming the flag, the file's value and the model's.
 * Defaults: Megatron-LM d98e8a64dd (FACTS.md A1), Megatron-DeepSpeed
 * f4157bea megatron/arguments.py. */

/* file value v (given or the default) against the model's want */
static void agree_int(mr_ctx *x, const char *flag, long v, int given, long want, const char *what)
{
    if (x->st || v == want) return;
    mr_occ *o = get(x, flag);
    if (given)
        fail(x, o ? o->line : 0, "%s %ld contradicts %s's %s %ld: the file builds another model", flag, v, x->m->name,
             what, want);
    else
        fail(x, 0, "%s is absent: %s's default %ld contradicts %s's %s %ld (add %s %ld)", flag, flavor(x->mds), v,
             x->m->name, what, want, flag, want);
}

static void agree_num(mr_ctx *x, const char *flag, double v, int given, double want, const char *what)
{
    if (x->st || fabs(v - want) <= 1e-9 * fmax(fabs(v), fabs(want))) return;
    mr_occ *o = get(x, flag);
    if (given)
        fail(x, o ? o->line : 0, "%s %g contradicts %s's %s %g: the file builds another model", flag, v, x->m->name,
             what, want);
    else
        fail(x, 0, "%s is absent: %s's default %g contradicts %s's %s %g (add %s %g)", flag, flavor(x->mds), v,
             x->m->name, what, want, flag, want);
}

/* a switch the model needs on (want 1) or off (want 0) */
static void agree_switch(mr_ctx *x, const char *flag, int on, int want, const char *what)
{
    if (x->st || on == want) return;
    mr_occ *o = get(x, flag);
    if (on) fail(x, o ? o->line : 0, "%s contradicts %s, which has %s", flag, x->m->name, what);
    else fail(x, 0, "%s is absent, but %s has %s (add %s)", flag, x->m->name, what, flag);
}

static long int_or(mr_ctx *x, const char *flag, long lo, long hi, long def, int *given)
{
    long v = def;
    *given = int_flag(x, flag, lo, hi, &v);
    return v;
}

static double num_or(mr_ctx *x, const char *flag, double lo, double hi, double def, int *given)
{
    double v = def;
    *given = num_flag(x, flag, lo, hi, &v);
    return v;
}

/* Megatron's FFN size when --ffn-hidden-size is absent (arguments.py:1320-1329). */
static long default_ffn(long hidden, int swiglu) { return swiglu ? (long)((4.0 * hidden * 2 / 3) / 64) * 64 : 4 * hidden; }

static void check_shape(mr_ctx *x)
{
    const pp_model *m = x->m;
    int g;
    long layers = int_or(x, "--num-layers", 1, PP_MAX_LAYERS, 0, &g);
    if (!g && !x->st) fail(x, 0, "--num-layers is absent: Megatron requires it (%s has %d)", m->name, m->layers);
    agree_int(x, "--num-layers", layers, g, m->layers, "layers");
    long hidden = int_or(x, "--hidden-size", 1, 1 << 20, 0, &g);
    if (!g && !x->st) fail(x, 0, "--hidden-size is absent: Megatron requires it (%s has %d)", m->name, m->hidden);
    agree_int(x, "--hidden-size", hidden, g, m->hidden, "hidden size");
    long heads = int_or(x, "--num-attention-heads", 1, 1 << 16, 0, &g);
    if (!g && !x->st) fail(x, 0, "--num-attention-heads is absent: Megatron requires it (%s has %d)", m->name, m->heads);
    agree_int(x, "--num-attention-heads", heads, g, m->heads, "attention heads");
    int swiglu = has(x, "--swiglu");
    long ffn = int_or(x, "--ffn-hidden-size", 1, 1 << 24, default_ffn(hidden, swiglu), &g);
    agree_int(x, "--ffn-hidden-size", ffn, g, m->ffn, "FFN size");
    if (m->mla.kv_lora_rank == 0) {
        long kvc = int_or(x, "--kv-channels", 1, 1 << 16, heads ? hidden / heads : 0, &g);
        agree_int(x, "--kv-channels", kvc, g, pp__head_dim(m), "head dimension");
    }
    long kv = heads;
    if (x->mds) {
        kv = int_or(x, "--num-key-value-heads", 1, 1 << 16, heads, &g);
        agree_int(x, "--num-key-value-heads", kv, g, m->kv_heads, "key/value heads");
    } else if (has(x, "--group-query-attention")) {
        kv = int_or(x, "--num-query-groups", 1, 1 << 16, 1, &g);
        agree_int(x, "--num-query-groups", kv, g, m->kv_heads, "key/value heads");
    } else {
        mr_occ *o = get(x, "--num-query-groups");
        if (o) warn(x, o->line, "--num-query-groups without --group-query-attention: Megatron ignores it (attention "
                    "is multi-head)");
        if (m->kv_heads != m->heads && m->mla.kv_lora_rank == 0)
            agree_switch(x, "--group-query-attention", 0, 1, "grouped-query attention");
    }
    agree_switch(x, "--swiglu", swiglu, m->gated_mlp && m->activation == PP_ACT_SILU, "a SwiGLU MLP");
    agree_switch(x, "--untie-embeddings-and-output-weights", has(x, "--untie-embeddings-and-output-weights"),
                 !m->tied_embeddings, "an untied output layer");
    static const char *const lm_norms[] = {"LayerNorm", "RMSNorm", NULL}, *const mds_norms[] = {"layernorm", "rmsnorm", NULL};
    int norm = choice_flag(x, "--normalization", x->mds ? mds_norms : lm_norms, 2);
    if (!x->st && (norm < 0 ? 0 : norm) != (m->norm == PP_NORM_RMSNORM)) {
        mr_occ *o = get(x, "--normalization");
        fail(x, o ? o->line : 0, "--normalization %s contradicts %s's %s", norm < 0 ? "absent (LayerNorm, the default)"
             : (x->mds ? mds_norms : lm_norms)[norm], m->name, m->norm == PP_NORM_RMSNORM ? "RMSNorm" : "LayerNorm");
    }
    const char *eps_flag = x->mds ? "--layernorm-epsilon" : "--norm-epsilon";
    double eps = num_or(x, eps_flag, 0, 1, 1e-5, &g);
    if (m->norm_eps > 0) agree_num(x, eps_flag, eps, g, m->norm_eps, "norm epsilon");
    for (int k = 0; k < 2; k++) { /* dropout keeps masks for the backward: Megatron's default is 0.1 */
        const char *f = k ? "--hidden-dropout" : "--attention-dropout";
        double drop = num_or(x, f, 0, 1, 0.1, &g);
        agree_num(x, f, drop, g, m->dropout, "dropout");
    }
    long vocab;
    if (int_flag(x, "--vocab-size", 1, 1L << 30, &vocab)) agree_int(x, "--vocab-size", vocab, 1, m->vocab, "vocabulary");
}

/* Bias layout: all linear biases, none (--disable-bias-linear), or q/k/v
 * only (--disable-bias-linear --add-qkv-bias, Megatron-LM). */
static void check_bias(mr_ctx *x)
{
    const pp_model *m = x->m;
    int none = has(x, "--disable-bias-linear"), qkv = !x->mds && has(x, "--add-qkv-bias");
    int fq = !none || qkv, fo = !none, fm = !none;
    if (x->st || (fq == m->qkv_bias && fo == m->out_bias && fm == m->mlp_bias)) return;
    mr_occ *o = get(x, none ? "--disable-bias-linear" : "--num-layers");
    fail(x, o ? o->line : 0, "%s builds biases qkv %d, out %d, mlp %d; %s has qkv %d, out %d, mlp %d",
         none ? (qkv ? "--disable-bias-linear --add-qkv-bias" : "--disable-bias-linear") : "no --disable-bias-linear",
         fq, fo, fm, m->name, m->qkv_bias, m->out_bias, m->mlp_bias);
}

static void check_positions(mr_ctx *x, const pp_strategy *s)
{
    const pp_model *m = x->m;
    int g;
    pp_pos pos = PP_POS_LEARNED;
    int yarn = 0;
    if (x->mds) {
        if (has(x, "--use-rotary-position-embeddings")) pos = PP_POS_ROPE;
        else if (has(x, "--no-position-embedding")) pos = PP_POS_COUNT;
    } else {
        static const char *const kinds[] = {"learned_absolute", "rope", "yarn", "mrope", "relative", "none", NULL};
        int k = choice_flag(x, "--position-embedding-type", kinds, 6);
        if (k == 1 || k == 2 || has(x, "--use-rotary-position-embeddings")) pos = PP_POS_ROPE;
        if (k >= 3) pos = PP_POS_COUNT;
        yarn = k == 2;
    }
    if (x->st) return;
    if (pos != m->position) {
        static const char *const names[] = {"rotary", "learned", "ALiBi", "no or another kind of"};
        mr_occ *o = get(x, x->mds ? "--use-rotary-position-embeddings" : "--position-embedding-type");
        fail(x, o ? o->line : 0, "the file builds %s positions (%s), but %s has %s positions", names[pos],
             x->mds ? "--use-rotary-position-embeddings / --no-position-embedding"
                    : "--position-embedding-type, default learned_absolute", m->name, names[m->position]);
        return;
    }
    long maxpos = int_or(x, "--max-position-embeddings", 1, 1L << 30, 0, &g);
    if (!g && !x->mds) fail(x, 0, "--max-position-embeddings is absent: Megatron requires it (at least --seq-length %d)", s->seq);
    else if (g && maxpos < s->seq)
        fail(x, get(x, "--max-position-embeddings")->line, "--max-position-embeddings %ld is less than --seq-length %d: "
             "Megatron asserts max_position_embeddings >= seq_length", maxpos, s->seq);
    else if (g && m->position == PP_POS_LEARNED)
        agree_int(x, "--max-position-embeddings", maxpos, 1, m->max_positions > s->seq ? m->max_positions : s->seq,
                  "learned positions (max of the model's and the sequence)");
    if (pos != PP_POS_ROPE || x->st) return;
    const char *base_flag = x->mds ? "--rotary-position-embeddings-theta" : "--rotary-base";
    long base = int_or(x, base_flag, 1, 1L << 40, 10000, &g);
    if (m->rope_theta > 0) agree_num(x, base_flag, (double)base, g, m->rope_theta, "rotary base");
    if (x->mds) return;
    int llama3 = has(x, "--use-rope-scaling");
    double f = num_or(x, "--rope-scaling-factor", 0, 1e6, 8, &g);
    pp_rope_scaling kind = llama3 ? PP_ROPE_LLAMA3 : yarn ? PP_ROPE_YARN : PP_ROPE_NONE;
    long lin;
    if (int_flag(x, "--rotary-seq-len-interpolation-factor", 1, 1 << 20, &lin)) kind = PP_ROPE_LINEAR, f = (double)lin;
    if (kind == PP_ROPE_YARN) f = num_or(x, "--rotary-scaling-factor", 0, 1e6, 1, &g);
    if (x->st) return;
    static const char *const kinds[PP_ROPE_COUNT] = {"none", "llama3", "yarn", "linear", "dynamic"};
    if (kind != m->rope_scaling) {
        fail(x, 0, "rotary scaling %s (--use-rope-scaling, --position-embedding-type yarn, "
             "--rotary-seq-len-interpolation-factor) contradicts %s's %s", kinds[kind], m->name, kinds[m->rope_scaling % PP_ROPE_COUNT]);
        return;
    }
    const char *ff = kind == PP_ROPE_LLAMA3 ? "--rope-scaling-factor" : kind == PP_ROPE_YARN ? "--rotary-scaling-factor"
                                                                                              : "--rotary-seq-len-interpolation-factor";
    if (kind != PP_ROPE_NONE && m->rope_factor > 0) agree_num(x, ff, f, 1, m->rope_factor, "rotary scaling factor");
    long orig;
    if (kind == PP_ROPE_YARN && m->rope_original_max > 0 &&
        int_flag(x, "--yarn-original-max-position-embeddings", 1, 1L << 30, &orig))
        agree_int(x, "--yarn-original-max-position-embeddings", orig, 1, m->rope_original_max, "original context");
}

/* --moe-layer-freq: an integer N (one MoE block every N) or a list pattern
 * "([0]*3+[1]*58)": which blocks are MoE. Returns 0 and fails on syntax. */
static int moe_freq(mr_ctx *x, const char *v, unsigned char *kind, int layers, int line)
{
    long n;
    if (parse_int(v, 1, PP_MAX_LAYERS, &n)) {
        for (int i = 0; i < layers; i++) kind[i] = i % n == 0;
        return 1;
    }
    /* ( [a]*k + [b]*k ... ) with optional repetition of a group: ( ... )*r */
    int count = 0;
    const char *p = v;
    while (*p == ' ') p++;
    int paren = *p == '(';
    if (paren) p++;
    while (*p && *p != ')') {
        int bit, rep;
        char *end;
        while (*p == ' ' || *p == '+') p++;
        if (*p != '[' || (p[1] != '0' && p[1] != '1') || p[2] != ']') break;
        bit = p[1] - '0';
        p += 3;
        rep = 1;
        if (*p == '*') {
            rep = (int)strtol(p + 1, &end, 10);
            if (end == p + 1 || rep < 1 || rep > PP_MAX_LAYERS) break;
            p = end;
        }
        for (int k = 0; k < rep && count < PP_MAX_LAYERS; k++) kind[count++] = (unsigned char)bit;
        while (*p == ' ') p++;
    }
    if ((paren && *p != ')') || (paren && p[1]) || (!paren && *p)) {
        char q[80];
        return fail(x, line, "--moe-layer-freq '%s': expected an integer or a pattern such as ([0]*3+[1]*58)",
                    quote(v, q, sizeof q));
    }
    if (count != layers)
        return fail(x, line, "--moe-layer-freq pattern gives %d blocks, but --num-layers is %d", count, layers);
    return 1;
}

static void check_moe(mr_ctx *x)
{
    const pp_model *m = x->m;
    int g;
    long experts = int_or(x, "--num-experts", 1, 1 << 20, 0, &g);
    if (experts == 1 && x->mds) experts = 0; /* Megatron-DeepSpeed's default [1]: dense */
    agree_int(x, "--num-experts", experts, g, m->experts, "routed experts");
    if (!m->experts || x->st) return;
    unsigned char kind[PP_MAX_LAYERS];
    const char *pat_flag = x->mds ? "--expert-interval" : "--moe-layer-freq";
    mr_occ *o = get(x, pat_flag);
    if (x->mds) {
        long iv = int_or(x, "--expert-interval", 1, PP_MAX_LAYERS, 2, &g); /* MDS default 2 */
        for (int i = 0; i < m->layers; i++) kind[i] = (i + 1) % iv == 0;
    } else if (!o) {
        for (int i = 0; i < m->layers; i++) kind[i] = 1;
    } else if (!moe_freq(x, val_text(x, o, 0), kind, m->layers, o->line)) {
        return;
    }
    for (int i = 0; i < m->layers && !x->st; i++)
        if (kind[i] != (m->block_kind[i] == PP_BLOCK_MOE))
            fail(x, o ? o->line : 0, "%s%s makes block %d %s, but it is %s in %s", pat_flag, o ? "" : " (absent: the default)",
                 i, kind[i] ? "an MoE block" : "dense", kind[i] ? "dense" : "an MoE block", m->name);
    if (x->mds) {
        long k = int_or(x, "--topk", 1, 64, 1, &g);
        agree_int(x, "--topk", k, g, m->topk, "experts per token");
        int dropless = !has(x, "--disable-moe-token-dropping") ? 0 : 1;
        double cf = num_or(x, "--moe-train-capacity-factor", 0, 1e6, 1.0, &g);
        if (!x->st && (dropless ? 0.0 : cf) != m->capacity_factor)
            fail(x, 0, "token capacity %s (--moe-train-capacity-factor, --disable-moe-token-dropping) contradicts %s's %s",
                 dropless ? "dropless" : "factor", m->name, m->capacity_factor > 0 ? "capacity factor" : "dropless routing");
        return;
    }
    long k = int_or(x, "--moe-router-topk", 1, 64, 2, &g);
    agree_int(x, "--moe-router-topk", k, g, m->topk, "experts per token");
    /* group-limited routing decides how many nodes a token's experts span
     * (the hierarchical dispatch's traffic); argparse default None: none */
    long ng = int_or(x, "--moe-router-num-groups", 1, 1 << 20, 0, &g);
    agree_int(x, "--moe-router-num-groups", ng, g, m->expert_groups, "expert groups (group-limited routing)");
    long gt = int_or(x, "--moe-router-group-topk", 1, 1 << 20, 0, &g);
    agree_int(x, "--moe-router-group-topk", gt, g, m->topk_groups, "groups a token is routed within");
    long effn = int_or(x, "--moe-ffn-hidden-size", 1, 1 << 24, m->ffn, &g);
    agree_int(x, "--moe-ffn-hidden-size", effn, g, m->expert_ffn, "expert FFN size");
    long shared = int_or(x, "--moe-shared-expert-intermediate-size", 0, 1L << 30, 0, &g);
    agree_int(x, "--moe-shared-expert-intermediate-size", shared, g, (long)m->shared_experts * m->expert_ffn,
              "shared-expert size (shared experts x expert FFN)");
    double cf = num_or(x, "--moe-expert-capacity-factor", 0, 1e6, 0, &g);
    agree_num(x, "--moe-expert-capacity-factor", cf, g, m->capacity_factor, "capacity factor (0 = dropless)");
}

static void check_mla(mr_ctx *x)
{
    const pp_model *m = x->m;
    int on = !x->mds && has(x, "--multi-latent-attention"), g;
    agree_switch(x, "--multi-latent-attention", on, m->mla.kv_lora_rank > 0, "multi-head latent attention");
    if (!on || x->st) return;
    long v = int_or(x, "--q-lora-rank", 1, 1 << 20, 0, &g); /* argparse default None: no q compression */
    agree_int(x, "--q-lora-rank", v, g, m->mla.q_lora_rank, "q LoRA rank");
    v = int_or(x, "--kv-lora-rank", 1, 1 << 20, 32, &g);
    agree_int(x, "--kv-lora-rank", v, g, m->mla.kv_lora_rank, "kv LoRA rank");
    v = int_or(x, "--qk-head-dim", 1, 1 << 16, 128, &g);
    agree_int(x, "--qk-head-dim", v, g, m->mla.qk_nope_head_dim, "qk head dimension");
    v = int_or(x, "--qk-pos-emb-head-dim", 1, 1 << 16, 64, &g);
    agree_int(x, "--qk-pos-emb-head-dim", v, g, m->mla.qk_rope_head_dim, "rotary head dimension");
    v = int_or(x, "--v-head-dim", 1, 1 << 16, 128, &g);
    agree_int(x, "--v-head-dim", v, g, m->mla.v_head_dim, "value head dimension");
}

/* --make-vocab-size-divisible-by: parplan prices the vocabulary padded as
 * its own arguments pad it (framework.c pp__vocab); another divisor that
 * pads to a different size is named. */
static void check_vocab(mr_ctx *x, const pp_strategy *s)
{
    int g;
    long d = int_or(x, "--make-vocab-size-divisible-by", 1, 1 << 20, 128, &g);
    long q = d * s->tp, padded = (x->m->vocab + q - 1) / q * q;
    long mine = (long)pp__megatron_divisor(x->m->vocab, s->tp) * s->tp;
    long priced = (x->m->vocab + mine - 1) / mine * mine;
    if (x->st || padded == priced) return;
    mr_occ *o = get(x, "--make-vocab-size-divisible-by");
    warn(x, o ? o->line : 0, "--make-vocab-size-divisible-by %ld%s pads the %d-row vocabulary to %ld rows with tp %d; "
         "parplan prices %ld rows (--make-vocab-size-divisible-by %d)", d, g ? "" : " (the default)", x->m->vocab, padded,
         s->tp, priced, pp__megatron_divisor(x->m->vocab, s->tp));
}

static void check_model(mr_ctx *x, const pp_strategy *s)
{
    check_shape(x);
    check_bias(x);
    check_positions(x, s);
    check_moe(x);
    check_mla(x);
    check_vocab(x, s);
}

/* ------------------------------------------------------------ the strategy
 * The flags that change the price, as Megatron reads them (FACTS.md A2-A8;
 * Megatron-DeepSpeed: DeepSpeed decides ZeRO, offload and overlap from its
 * ds_config.json). */

static void read_degrees(mr_ctx *x, pp_strategy *s)
{
    long v;
    s->tp = int_flag(x, "--tensor-model-parallel-size", 1, 1 << 16, &v) ? (int)v : 1;
    set_src(x, "tp", "--tensor-model-parallel-size");
    s->pp = int_flag(x, "--pipeline-model-parallel-size", 1, PP_MAX_STAGES, &v) ? (int)v : 1;
    set_src(x, "pp", "--pipeline-model-parallel-size");
    const char *cpf = x->mds ? "--ds-sequence-parallel-size" : "--context-parallel-size";
    s->cp = int_flag(x, cpf, 1, 1 << 16, &v) ? (int)v : 1;
    set_src(x, "cp", cpf);
    const char *epf = x->mds ? "--moe-expert-parallel-size" : "--expert-model-parallel-size";
    s->ep = int_flag(x, epf, 1, 1 << 16, &v) ? (int)v : 1;
    set_src(x, "ep", epf);
    /* MoE parallel folding: the experts' own TP degree (Megatron's default: tp) */
    long etp;
    s->etp = 0;
    s->ep_dispatch = 0;
    if (!x->mds && int_flag(x, "--expert-tensor-parallel-size", 1, 1 << 16, &etp)) s->etp = etp == s->tp ? 0 : (int)etp;
    /* Megatron-DeepSpeed splits experts over TP only when asked: without it
     * every TP rank holds each expert whole, which is not priced */
    if (x->mds && x->m->experts > 0 && s->tp > 1 && !has(x, "--enable-expert-tensor-parallelism"))
        fail(x, 0, "--enable-expert-tensor-parallelism is absent: Megatron-DeepSpeed then keeps each expert whole on "
                   "every one of the %d TP ranks, which parplan does not price (it splits experts over TP): add the flag",
             s->tp);
    set_src(x, "etp", "--expert-tensor-parallel-size");
    /* the flex dispatcher's DeepEP/HybridEP send a token once per NVLink domain */
    static const char *const disp[] = {"allgather", "alltoall", "flex", NULL}, *const be[] = {"deepep", "hybridep", "ncclep", NULL};
    if (!x->mds && choice_flag(x, "--moe-token-dispatcher-type", disp, 3) == 2) {
        int b = choice_flag(x, "--moe-flex-dispatcher-backend", be, 3);
        if (b == 2)
            fail(x, get(x, "--moe-flex-dispatcher-backend")->line, "--moe-flex-dispatcher-backend ncclep: not priced "
                 "(parplan prices the all-to-all and the DeepEP/HybridEP hierarchy)");
        s->ep_dispatch = 1;
    } else if (!x->mds) {
        has(x, "--moe-flex-dispatcher-backend");
    }
    set_src(x, "ep_dispatch", "--moe-token-dispatcher-type");
    s->sp = has(x, "--sequence-parallel");
    set_src(x, "sp", "--sequence-parallel");
    if (s->sp && s->tp == 1 && !x->mds) {
        warn(x, get(x, "--sequence-parallel")->line, "--sequence-parallel with tensor-parallel size 1: Megatron turns "
             "it off (a warning in validate_args)");
        s->sp = 0;
    }
    if (x->st) return;
    long rest = (long)s->tp * s->pp * s->cp, gpus = pp_cluster_gpus(x->c);
    if (gpus % rest) {
        fail(x, 0, "%s x %s x %s = %d x %d x %d = %ld does not divide the %ld GPUs: Megatron asserts world_size %% "
             "(tp x pp x cp) == 0", "--tensor-model-parallel-size", "--pipeline-model-parallel-size", cpf, s->tp, s->pp,
             s->cp, rest, gpus);
        return;
    }
    s->dp = (int)(gpus / rest);
    mr_occ *npp = get(x, "--no-pipeline-parallel");
    if (x->mds && npp && s->pp > 1)
        fail(x, npp->line, "--no-pipeline-parallel with --pipeline-model-parallel-size %d: the pipeline is off", s->pp);
    else if (x->mds && !npp && s->pp == 1)
        warn(x, 0, "without --no-pipeline-parallel, Megatron-DeepSpeed runs a one-stage PipelineModule (which refuses "
             "ZeRO-2/3); priced as no pipeline");
}

static void read_batch_seq(mr_ctx *x, pp_strategy *s)
{
    long v;
    if (!int_flag(x, "--micro-batch-size", 1, 1 << 20, &v)) {
        if (!x->st) fail(x, 0, "--micro-batch-size is absent: expected the sequences per GPU per micro-step");
        return;
    }
    s->micro_batch = (int)v;
    set_src(x, "micro_batch", "--micro-batch-size");
    s->global_batch = int_flag(x, "--global-batch-size", 1, 1 << 26, &v) ? (int)v : s->micro_batch * s->dp;
    set_src(x, "global_batch", "--global-batch-size");
    set_src(x, "grad_accum", "--global-batch-size");
    if (get(x, "--rampup-batch-size"))
        warn(x, get(x, "--rampup-batch-size")->line, "--rampup-batch-size: parplan prices the final global batch "
             "(%d sequences)", s->global_batch);
    if (!int_flag(x, "--seq-length", 1, 1 << 24, &v)) {
        if (!x->st) fail(x, 0, "--seq-length is absent: expected the tokens per sequence (%s has %d)", x->m->name, x->m->seq);
        return;
    }
    s->seq = (int)v;
    set_src(x, "seq", "--seq-length");
}

/* --fp8-recipe (transformer_config.py: tensorwise, delayed, mxfp8,
 * blockwise, custom; delayed when absent). parplan prices current
 * per-tensor scaling, the casts of compute.c and the fp32 master of bf16
 * optimizer states, and its files write --fp8-recipe tensorwise; the other
 * recipes quantise and keep states differently and are refused. */
static void read_fp8_recipe(mr_ctx *x, const mr_occ *f8)
{
    static const char *const recipes[] = {"tensorwise", "delayed", "mxfp8", "blockwise", "custom", NULL};
    mr_occ *fr = get(x, "--fp8-recipe");
    int r = choice_flag(x, "--fp8-recipe", recipes, 5);
    if (x->st || r == 0) return;
    fail(x, fr ? fr->line : f8->line, "--fp8-recipe %s: parplan prices fp8 with current per-tensor scaling "
         "(--fp8-recipe tensorwise, which its Megatron files write); the %s recipe is not priced",
         fr ? val_text(x, fr, 0) : "absent (Megatron's default, delayed)", r < 0 ? "delayed" : recipes[r]);
}

static void read_precision(mr_ctx *x, pp_strategy *s)
{
    int bf = has(x, "--bf16"), fp = has(x, "--fp16");
    mr_occ *f8 = get(x, "--fp8-format");
    if (bf && fp) {
        fail(x, get(x, "--fp16")->line, "--fp16 with --bf16: Megatron asserts only one of them is given");
        return;
    }
    s->precision = bf ? PP_PREC_BF16 : fp ? PP_PREC_FP16 : PP_PREC_FP32;
    set_src(x, "precision", bf ? "--bf16" : fp ? "--fp16" : "--bf16/--fp16 (absent: fp32)");
    if (f8) {
        static const char *const fmts[] = {"e4m3", "hybrid", NULL};
        choice_flag(x, "--fp8-format", fmts, 2);
        if (!bf && !x->st)
            fail(x, f8->line, "--fp8-format without --bf16: parplan prices fp8 as Transformer Engine runs it with "
                 "bf16 outside the fp8 GEMMs (add --bf16)");
        s->precision = PP_PREC_FP8;
        set_src(x, "precision", "--fp8-format");
        if (!x->mds) read_fp8_recipe(x, f8);
    }
    /* main_grad: fp32 with --bf16 unless --grad-reduce-in-bf16; with --fp16
     * only with --accumulate-allreduce-grads-in-fp32 (FACTS.md A4) */
    int acc32 = has(x, "--accumulate-allreduce-grads-in-fp32"), bf16grad = !x->mds && has(x, "--grad-reduce-in-bf16");
    if (x->mds) return; /* DeepSpeed decides (its ds_config.json) */
    if (s->precision == PP_PREC_FP16) {
        s->grad_accum_dtype = acc32 ? PP_GRAD_FP32 : PP_GRAD_16;
        set_src(x, "grad_accum_dtype", "--accumulate-allreduce-grads-in-fp32");
    } else if (s->precision != PP_PREC_FP32) {
        s->grad_accum_dtype = bf16grad ? PP_GRAD_16 : PP_GRAD_FP32;
        set_src(x, "grad_accum_dtype", bf16grad ? "--grad-reduce-in-bf16" : "--bf16");
    }
}

/* --recompute-modules (transformer_config.py d98e8a64dd: a list, nargs +
 * (argument_utils.py), default core_attn; its assert names the allowed
 * modules and takes each value whole). parplan prices
 * core_attn, mlp, moe_act, layernorm and mla_up_proj; moe, shared_experts
 * and the hybrid models' modules are refused as not priced. */
static void read_rc_modules(mr_ctx *x, pp_strategy *s)
{
    static const char *const other[] = {"moe", "shared_experts", "gdn_norm_out", "gdp_in_proj", "gdp_qkv", "mhc", NULL};
    mr_occ *o = get(x, "--recompute-modules");
    s->recompute_modules = 0;
    set_src(x, "recompute_modules", "--recompute-modules");
    if (!o) return;
    unsigned mask = 0;
    int n;
    const char *const *names = pp_enum_names(PP_ENUM_RECOMPUTE_MODULES, &n);
    for (int i = 0; i < o->nval && !x->st; i++) {
        const char *v = val_text(x, o, i);
        int e = pp_enum_parse(names, n, v);
        char q[80];
        if (e >= 0) {
            mask |= 1u << e;
            continue;
        }
        int known = 0;
        for (int k = 0; other[k]; k++) known |= !strcmp(v, other[k]);
        if (known) fail(x, o->line, "--recompute-modules %s: not priced (parplan prices core_attn, mlp, moe_act, "
                        "layernorm and mla_up_proj)", v);
        else fail(x, o->line, "--recompute-modules '%s': expected one of core_attn, mlp, moe_act, layernorm, mla_up_proj "
                  "(Megatron asserts its own list)", quote(v, q, sizeof q));
    }
    /* transformer_config.py: "moe_act in recompute_modules is only supported with moe_grouped_gemm" */
    if (!x->st && (mask & PP_RC_MOE_ACT) && !has(x, "--moe-grouped-gemm"))
        fail(x, o->line, "--recompute-modules moe_act without --moe-grouped-gemm: Megatron asserts moe_act needs the "
             "grouped GEMM");
    /* core_attn alone is the default (an empty list is refused: nargs +) */
    if (!x->st) s->recompute_modules = mask == PP_RC_CORE_ATTN ? 0 : mask;
}

/* --recompute-granularity/-method/-num-layers as Megatron validates and
 * counts them (FACTS.md A3): full needs a method and a count; block
 * recomputes the first k blocks of each model chunk (v chunks per stage:
 * k x v per stage); uniform recomputes every block. */
static void read_recompute(mr_ctx *x, pp_strategy *s)
{
    static const char *const gran[] = {"full", "selective", NULL}, *const meth[] = {"uniform", "block", NULL};
    int g = choice_flag(x, "--recompute-granularity", gran, 2);
    const char *gflag = "--recompute-granularity";
    if (g < 0 && has(x, "--recompute-activations")) g = 1, gflag = "--recompute-activations";
    if (g < 0 && has(x, "--checkpoint-activations")) g = 0, gflag = "--checkpoint-activations";
    int method = choice_flag(x, "--recompute-method", meth, 2);
    long k = 0;
    int has_k = int_flag(x, "--recompute-num-layers", 0, PP_MAX_LAYERS, &k);
    if (!has_k && g == 0 && !strcmp(gflag, "--checkpoint-activations")) { /* the old flags: uniform, 1 by default */
        if (!int_flag(x, "--checkpoint-num-layers", 0, PP_MAX_LAYERS, &k)) k = 1;
        has_k = 1;
        if (method < 0) method = 0;
    }
    set_src(x, "recompute", gflag);
    set_src(x, "recompute_layers", "--recompute-num-layers");
    if (x->st) return;
    mr_occ *mo = get(x, "--recompute-method"), *ko = get(x, "--recompute-num-layers");
    if (g == 1) {
        if (mo || ko) {
            fail(x, (mo ? mo : ko)->line, "%s with selective recompute: Megatron asserts that recompute method and "
                 "number of layers are only for full recompute", mo ? "--recompute-method" : "--recompute-num-layers");
            return;
        }
        s->recompute = PP_RECOMPUTE_SELECTIVE;
        read_rc_modules(x, s);
        return;
    }
    mr_occ *mods = get(x, "--recompute-modules");
    if (mods) warn(x, mods->line, "--recompute-modules without selective recompute: Megatron reads it only with "
                   "--recompute-granularity selective");
    if (g < 0) {
        if (mo || ko) warn(x, (mo ? mo : ko)->line, "%s without --recompute-granularity: Megatron recomputes nothing",
                           mo ? "--recompute-method" : "--recompute-num-layers");
        s->recompute = PP_RECOMPUTE_NONE;
        return;
    }
    if (method < 0 || !has_k) {
        fail(x, get(x, gflag) ? get(x, gflag)->line : 0, "full recompute needs --recompute-method (uniform or block) "
             "and --recompute-num-layers: Megatron asserts both are given");
        return;
    }
    s->recompute = PP_RECOMPUTE_FULL;
    s->per_stage_recompute = 0;
    if (method == 0) { /* uniform: every block, checkpoints every k */
        if (k < 1) {
            fail(x, ko ? ko->line : 0, "--recompute-num-layers 0 with --recompute-method uniform: expected at least 1");
            return;
        }
        if (k > 1)
            warn(x, ko ? ko->line : 0, "--recompute-method uniform --recompute-num-layers %ld checkpoints every %ld "
                 "blocks; parplan prices one checkpoint per block (more memory than the file uses)", k, k);
        s->recompute_layers = -1;
        return;
    }
    s->recompute_layers = (int)k * (s->virtual_stages > 1 ? s->virtual_stages : 1);
}

/* --cpu-offloading-num-layers N (Megatron-Core's CPU offloading through
 * Transformer Engine; validate_args turns cpu_offloading on for N > 0):
 * the first N blocks' activations go to host memory (rule fw-act-offload
 * holds Megatron's own asserts). */
static void read_act_offload(mr_ctx *x, pp_strategy *s)
{
    long n = 0;
    if (int_flag(x, "--cpu-offloading-num-layers", 0, PP_MAX_LAYERS, &n)) s->act_offload_layers = (int)n;
    set_src(x, "act_offload_layers", "--cpu-offloading-num-layers");
    if (x->st || n <= 0) return;
    /* transformer_config.py: neither per-module offload nor per-layer CUDA
     * graphs with it */
    mr_occ *fg = get(x, "--fine-grained-activation-offloading"), *cg = get(x, "--cuda-graph-impl");
    const char *impl = cg && cg->nval > 0 ? val_text(x, cg, 0) : "none";
    if (fg)
        fail(x, fg->line, "--fine-grained-activation-offloading with --cpu-offloading-num-layers: Megatron asserts "
             "fine_grained_activation_offloading cannot be enabled with cpu_offloading");
    else if (strcmp(impl, "none") && strcmp(impl, "full_iteration"))
        fail(x, cg->line, "--cuda-graph-impl %s with --cpu-offloading-num-layers: Megatron raises \"CUDA graphs not "
             "supported with CPU offloading\" (only full_iteration graphs are)", impl);
}

/* Full-iteration CUDA graphs (--cuda-graph-impl full_iteration, or the
 * older local with --cuda-graph-scope full_iteration) replay the MoE
 * experts: no host launch wait (docs/time.md, "Expert launches"). Per-layer
 * graphs leave the experts' launches eager, priced as such, and stay among
 * the flags named as not priced. */
static void read_cuda_graphs(mr_ctx *x, pp_strategy *s)
{
    mr_occ *cg = get(x, "--cuda-graph-impl"), *sc = get(x, "--cuda-graph-scope");
    const char *impl = cg && cg->nval > 0 ? val_text(x, cg, 0) : "none";
    int full = !strcmp(impl, "full_iteration");
    for (int i = 0; sc && !strcmp(impl, "local") && i < sc->nval; i++)
        full |= !strcmp(val_text(x, sc, i), "full_iteration");
    s->buf.expert_graphs = full;
    if (full) return;
    if (cg) cg->used = 0;
    if (sc) sc->used = 0;
}

static int split_even(int layers, int p, int *out)
{
    if (layers % p) return 0;
    for (int i = 0; i < p; i++) out[i] = layers / p;
    return 1;
}

/* --pipeline-model-parallel-layout "Et*9|(t*10|)*6t*11L" (FACTS.md A2):
 * stages read virtual-stage-major; counts blocks per stage and chunk. */
typedef struct layout {
    int n;                       /* virtual stages */
    int blocks[PP_MAX_STAGES * 8];
    int e_stage, l_stage, e_pos_ok, l_pos_ok;
} layout;

static int layout_expand(const char *p, int depth, char *out, size_t cap, size_t *n)
{
    while (*p) {
        if (*p == '(') {
            int lvl = 1;
            const char *q = p + 1;
            while (*q && lvl) lvl += *q == '(' ? 1 : *q == ')' ? -1 : 0, q++;
            if (lvl || depth > 8) return -1;
            size_t len = (size_t)(q - 1 - (p + 1));
            char inner[512];
            if (len >= sizeof inner) return -1;
            memcpy(inner, p + 1, len);
            inner[len] = '\0';
            long rep = 1;
            char *end;
            if (*q == '*') {
                rep = strtol(q + 1, &end, 10);
                if (end == q + 1 || rep < 1 || rep > 4096) return -1;
                q = end;
            }
            for (long r = 0; r < rep; r++)
                if (layout_expand(inner, depth + 1, out, cap, n)) return -1;
            p = q;
            continue;
        }
        if (*p == ')') return -1;
        char sym = *p++;
        if (sym == ',' || sym == ' ') continue;
        long rep = 1;
        char *end;
        if (*p == '*') {
            rep = strtol(p + 1, &end, 10);
            if (end == p + 1 || rep < 0 || rep > 65536) return -1;
            p = end;
        }
        for (long r = 0; r < rep; r++) {
            if (*n + 1 >= cap) return -1;
            out[(*n)++] = sym;
        }
    }
    out[*n] = '\0';
    return 0;
}

static int read_layout(mr_ctx *x, const mr_occ *o, layout *lo)
{
    const char *v = val_text(x, o, 0);
    char q[80];
    char *flat = malloc(1 << 16);
    size_t n = 0;
    if (!flat) return pp__fail(x->err, PP_ERR_NOMEM, "out of memory"), x->st = PP_ERR_NOMEM, 0;
    int bad = layout_expand(v, 0, flat, 1 << 16, &n);
    memset(lo, 0, sizeof *lo);
    lo->e_stage = lo->l_stage = -1;
    for (size_t i = 0; !bad && i < n; i++) {
        char c = flat[i];
        if (c == '|') {
            if (++lo->n >= (int)(sizeof lo->blocks / sizeof *lo->blocks)) bad = 1;
        } else if (c == 't') {
            lo->blocks[lo->n]++;
        } else if (c == 'E' || c == 'L') {
            int *st = c == 'E' ? &lo->e_stage : &lo->l_stage;
            if (*st >= 0) bad = 1;
            *st = lo->n;
            if (c == 'E') lo->e_pos_ok = i == 0;
            else lo->l_pos_ok = i + 1 == n;
        } else if (c == 'm') {
            free(flat);
            return fail(x, o->line, "--pipeline-model-parallel-layout '%s': multi-token prediction layers (m) are "
                        "not priced", quote(v, q, sizeof q));
        } else {
            bad = 1;
        }
    }
    lo->n++;
    free(flat);
    if (bad || lo->e_stage != 0 || lo->l_stage != lo->n - 1 || !lo->e_pos_ok || !lo->l_pos_ok)
        return fail(x, o->line, "--pipeline-model-parallel-layout '%s': expected stages of t (blocks) separated by |, "
                    "with E first and L last once each, x*n and (...)*n repeats (Megatron's layout syntax)",
                    quote(v, q, sizeof q));
    return 1;
}

static void split_from_layout(mr_ctx *x, const mr_occ *o, pp_strategy *s)
{
    layout lo;
    if (!read_layout(x, o, &lo)) return;
    if (lo.n % s->pp)
        return (void)fail(x, o->line, "--pipeline-model-parallel-layout has %d stages, not a multiple of "
                          "--pipeline-model-parallel-size %d: Megatron asserts it", lo.n, s->pp);
    int v = lo.n / s->pp;
    s->virtual_stages = v;
    s->schedule = v > 1 ? PP_SCHED_INTERLEAVED : PP_SCHED_1F1B;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    for (int j = 0; j < lo.n; j++) s->stage_layers[j % s->pp] += lo.blocks[j];
    memset(s->chunk_layers, 0, sizeof s->chunk_layers);
    for (int j = 0; j < lo.n && v > 1; j++)
        if (pp__chunk_blocks(s, j % s->pp, j / s->pp) != lo.blocks[j]) {
            if (lo.n > PP_MAX_CHUNKS)
                return (void)fail(x, o->line, "--pipeline-model-parallel-layout: %d uneven virtual stages; parplan "
                                  "prices explicit layouts of at most %d", lo.n, PP_MAX_CHUNKS);
            for (int k = 0; k < lo.n; k++) s->chunk_layers[k] = (unsigned short)lo.blocks[k];
            break;
        }
}

/* --decoder-first/last-pipeline-num-layers: the middle stages share the
 * rest evenly, or Megatron refuses (transformer_config.py:2294-2368). */
static void split_first_last(mr_ctx *x, pp_strategy *s, long first, int hf, long last, int hl)
{
    int p = s->pp, mids = p - hf - hl, v = s->virtual_stages;
    long rest = x->m->layers - (hf ? first : 0) - (hl ? last : 0);
    mr_occ *o = get(x, hf ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers");
    if ((mids == 0) != (rest == 0) || (mids > 0 && rest % mids) || rest < 0)
        return (void)fail(x, o->line, "the %ld blocks left after the first/last stages do not split evenly over the %d "
                          "middle stages: Megatron refuses it", rest, mids);
    for (int i = 0; i < p; i++) s->stage_layers[i] = mids ? (int)(rest / mids) : 0;
    if (hf) s->stage_layers[0] = (int)first;
    if (hl) s->stage_layers[p - 1] = (int)last;
    for (int i = 0; i < p && v > 1; i++)
        if (s->stage_layers[i] % v)
            return (void)fail(x, o->line, "stage %d holds %d blocks, not divisible by the %d virtual stages: Megatron "
                              "refuses it", i, s->stage_layers[i], v);
}

static void read_split(mr_ctx *x, pp_strategy *s)
{
    long per = 0, v = 1, first = 0, last = 0;
    int hper = int_flag(x, "--num-layers-per-virtual-pipeline-stage", 1, PP_MAX_LAYERS, &per);
    int hv = int_flag(x, "--num-virtual-stages-per-pipeline-rank", 1, 64, &v);
    long group = 0; /* the micro-batches each chunk runs back to back: the warm-up's length (rt14) */
    if (int_flag(x, "--microbatch-group-size-per-virtual-pipeline-stage", 1, 1 << 24, &group)) {
        s->vp_group = (int)group;
        set_src(x, "vp_group", "--microbatch-group-size-per-virtual-pipeline-stage");
    } else
        s->vp_group = 0;
    int hf = int_flag(x, "--decoder-first-pipeline-num-layers", 1, PP_MAX_LAYERS, &first);
    int hl = int_flag(x, "--decoder-last-pipeline-num-layers", 1, PP_MAX_LAYERS, &last);
    mr_occ *lay = get(x, "--pipeline-model-parallel-layout");
    int acc_e = has(x, "--account-for-embedding-in-pipeline-split"), acc_l = has(x, "--account-for-loss-in-pipeline-split");
    set_src(x, "stage_layers", lay ? "--pipeline-model-parallel-layout" : hf || hl ? "--decoder-first/last-pipeline-num-layers"
                                                                                  : "--pipeline-model-parallel-size");
    set_src(x, "virtual_stages", hper ? "--num-layers-per-virtual-pipeline-stage" : "--num-virtual-stages-per-pipeline-rank");
    set_src(x, "schedule", hper ? "--num-layers-per-virtual-pipeline-stage" : "--num-virtual-stages-per-pipeline-rank");
    if (x->st) return;
    if (hper + hv + (lay != NULL) > 1)
        return (void)fail(x, 0, "--pipeline-model-parallel-layout, --num-layers-per-virtual-pipeline-stage and "
                          "--num-virtual-stages-per-pipeline-rank: Megatron asserts no more than one is given");
    if (lay && (hf || hl || acc_e || acc_l))
        return (void)fail(x, lay->line, "--pipeline-model-parallel-layout with --decoder-first/last-pipeline-num-layers "
                          "or --account-for-*-in-pipeline-split: Megatron refuses the combination");
    if ((hf || hl) && (acc_e || acc_l))
        return (void)fail(x, 0, "--decoder-first/last-pipeline-num-layers with --account-for-*-in-pipeline-split: "
                          "Megatron refuses the combination");
    int L = x->m->layers, p = s->pp;
    if ((hper || hv || lay || hf || hl || acc_e || acc_l) && p == 1 && !lay)
        warn(x, 0, "pipeline split flags with --pipeline-model-parallel-size 1 are not used");
    if (lay) return split_from_layout(x, lay, s);
    if (hper) {
        if ((hf || hl) || (L + acc_e + acc_l) % p || ((L + acc_e + acc_l) / p) % per)
            return (void)fail(x, get(x, "--num-layers-per-virtual-pipeline-stage")->line, "--num-layers-per-virtual-"
                              "pipeline-stage %ld does not divide the %d blocks per stage: Megatron asserts it", per,
                              (L + acc_e + acc_l) / p);
        v = (L + acc_e + acc_l) / p / per;
    }
    s->virtual_stages = v > 1 && p > 1 ? (int)v : 1;
    s->schedule = s->virtual_stages > 1 ? PP_SCHED_INTERLEAVED : PP_SCHED_1F1B;
    memset(s->stage_layers, 0, sizeof s->stage_layers);
    if (p == 1) return;
    if (hf || hl) return split_first_last(x, s, first, hf, last, hl);
    if (acc_e || acc_l) {
        int per_rank = (L + acc_e + acc_l) / p;
        if ((L + acc_e + acc_l) % p || per_rank % s->virtual_stages)
            return (void)fail(x, 0, "--account-for-*-in-pipeline-split: %d blocks + %d do not split evenly over %d "
                              "stages and %d virtual stages: Megatron asserts it", L, acc_e + acc_l, p, s->virtual_stages);
        for (int i = 0; i < p; i++) s->stage_layers[i] = per_rank;
        s->stage_layers[0] -= acc_e;
        s->stage_layers[p - 1] -= acc_l;
        return;
    }
    if (!split_even(L, p, s->stage_layers) || (L / p) % s->virtual_stages)
        fail(x, 0, "%d blocks do not split evenly over --pipeline-model-parallel-size %d (x %d virtual stages): Megatron "
             "asserts num_layers %% pp == 0 without an uneven split", L, p, s->virtual_stages);
}

/* Megatron-FSDP (--use-megatron-fsdp) is ZeRO-3 with the v1 implementation
 * and the optim_grads_params sharding parplan prices; arguments.py asserts
 * the fsdp_dtensor checkpoint format. Returns 1 when the file asks for it. */
static int read_megatron_fsdp(mr_ctx *x)
{
    mr_occ *u = get(x, "--use-megatron-fsdp");
    if (!u) return 0;
    static const char *const strat[] = {"optim_grads_params", "optim_grads", "optim", "no_shard", NULL};
    int k = choice_flag(x, "--data-parallel-sharding-strategy", strat, 4);
    if (k > 0)
        fail(x, get(x, "--data-parallel-sharding-strategy")->line, "--data-parallel-sharding-strategy %s: not priced "
             "(parplan prices Megatron-FSDP's optim_grads_params, ZeRO-3)", strat[k]);
    static const char *const ver[] = {"1", "2", NULL};
    if (choice_flag(x, "--megatron-fsdp-version", ver, 2) == 1)
        fail(x, get(x, "--megatron-fsdp-version")->line, "--megatron-fsdp-version 2: not priced (parplan prices "
             "version 1, which runs with the distributed optimizer)");
    mr_occ *c = get(x, "--ckpt-format");
    if (!x->st && (!c || strcmp(val_text(x, c, 0), "fsdp_dtensor")))
        fail(x, c ? c->line : u->line, "--use-megatron-fsdp needs --ckpt-format fsdp_dtensor: Megatron asserts "
             "\"Megatron-FSDP requires the `fsdp_dtensor` checkpointing format\"");
    has(x, "--fsdp-double-buffer");
    return 1;
}

/* The precision-aware optimizer (Megatron-LM d98e8a64dd arguments.py:
 * --main-grads-dtype fp32|bf16, --main-params-dtype fp32|fp16,
 * --exp-avg(-sq)-dtype fp32|fp16|bf16|fp8, each other than fp32 only with
 * --use-precision-aware-optimizer; optimizer_config.py asserts so).
 * parplan prices bf16 moments with an fp32 master. bf16 main grads leave
 * accumulate_allreduce_grads_in_fp32 off under --bf16 (arguments.py), so
 * the gradient buffer is bf16: as --grad-reduce-in-bf16 (Megatron-Bridge's
 * DeepSeek-V3 recipe runs so). */
static void read_opt_states(mr_ctx *x, pp_strategy *s)
{
    static const char *const dt[] = {"fp32", "fp16", "bf16", "fp8", NULL};
    static const char *const grads[] = {"fp32", "bf16", NULL}, *const params[] = {"fp32", "fp16", NULL};
    int pa = has(x, "--use-precision-aware-optimizer");
    int m = choice_flag(x, "--exp-avg-dtype", dt, 4), v = choice_flag(x, "--exp-avg-sq-dtype", dt, 4);
    int g = choice_flag(x, "--main-grads-dtype", grads, 2), p = choice_flag(x, "--main-params-dtype", params, 2);
    s->opt_states = PP_OPT_STATES_FP32;
    set_src(x, "opt_states", "--use-precision-aware-optimizer");
    if (x->st) return;
    const char *lowered = m > 0 ? "--exp-avg-dtype" : v > 0 ? "--exp-avg-sq-dtype" : g > 0 ? "--main-grads-dtype"
                          : p > 0 ? "--main-params-dtype" : NULL;
    if (!pa) {
        if (lowered)
            fail(x, get(x, lowered)->line, "%s other than fp32 needs --use-precision-aware-optimizer: Megatron "
                 "asserts it", lowered);
        return;
    }
    const char *why = m != 2 || v != 2 ? (m != 2 ? "--exp-avg-dtype" : "--exp-avg-sq-dtype")
                      : p > 0 ? "--main-params-dtype" : NULL;
    if (why) {
        mr_occ *o = get(x, why);
        fail(x, o ? o->line : get(x, "--use-precision-aware-optimizer")->line, "--use-precision-aware-optimizer: "
             "parplan prices it with --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16 and fp32 main params "
             "(%s is %s)", why, o ? val_text(x, o, 0) : "fp32, the default");
        return;
    }
    /* optimizer_config.py: with an fp8 recipe other than delayed
     * (use_precision_aware_optimizer_no_fp8_or_ds_fp8 false, read from
     * --fp8-recipe even without --fp8-format) the distributed optimizer keeps
     * its own fp32 master shard: 8 bytes a weight, as parplan prices fp8
     * (tensorwise) training; in bf16 training it prices TE's 6 */
    mr_occ *fr = get(x, "--fp8-recipe");
    if (fr && s->precision != PP_PREC_FP8 && strcmp(val_text(x, fr, 0), "delayed")) {
        char q[80];
        return (void)fail(x, fr->line, "--fp8-recipe %s with --use-precision-aware-optimizer and no --fp8-format: "
                          "Megatron then keeps an fp32 master copy beside the bf16 moments (8 bytes a weight), "
                          "which parplan prices only in fp8 training; drop --fp8-recipe or give --fp8-format",
                          quote(val_text(x, fr, 0), q, sizeof q));
    }
    s->opt_states = PP_OPT_STATES_BF16;
    if (g == 1) {
        if (has(x, "--accumulate-allreduce-grads-in-fp32"))
            return (void)fail(x, get(x, "--main-grads-dtype")->line, "--main-grads-dtype bf16 with "
                              "--accumulate-allreduce-grads-in-fp32: Megatron asserts main grads are fp32 then");
        s->grad_accum_dtype = PP_GRAD_16;
        set_src(x, "grad_accum_dtype", "--main-grads-dtype");
    }
}

/* --fp8-param-gather (Megatron-LM d98e8a64dd: transformer_config.py asserts
 * fp8; arguments.py asserts the distributed optimizer or an FSDP). Read as
 * given, so that a file without it is priced with bf16 weights. */
static void read_fp8_params(mr_ctx *x, pp_strategy *s)
{
    mr_occ *o = get(x, "--fp8-param-gather");
    s->fp8_param_gather = o != NULL && !x->mds;
    set_src(x, "fp8_param_gather", "--fp8-param-gather");
    if (!o || x->st || x->mds) return;
    if (s->precision != PP_PREC_FP8)
        return (void)fail(x, o->line, "--fp8-param-gather without --fp8-format: Megatron asserts FP8 primary weights "
                          "are used with fp8 training");
    if (s->zero == 0)
        fail(x, o->line, "--fp8-param-gather needs --use-distributed-optimizer or --use-megatron-fsdp: Megatron "
             "asserts it");
}

static void read_behaviour(mr_ctx *x, pp_strategy *s)
{
    if (!x->mds) {
        s->zero = has(x, "--use-distributed-optimizer");
        set_src(x, "zero", "--use-distributed-optimizer");
        if (read_megatron_fsdp(x)) {
            s->zero = 3;
            set_src(x, "zero", "--use-megatron-fsdp");
        }
        int ogr = has(x, "--overlap-grad-reduce"), opg = has(x, "--overlap-param-gather");
        if (opg && (!s->zero || !ogr))
            return (void)fail(x, get(x, "--overlap-param-gather")->line, "--overlap-param-gather needs "
                              "--use-distributed-optimizer and --overlap-grad-reduce: Megatron asserts both");
        s->overlap_dp = ogr;
        set_src(x, "overlap_dp", "--overlap-grad-reduce");
        /* elements a gradient bucket holds (distributed_data_parallel.py);
         * absent: Megatron's max(4e7, 1e6 x dp), filled as for a plan */
        long bucket; /* arguments.py: type=int */
        if (int_flag(x, "--ddp-bucket-size", 1, 1000000000000L, &bucket)) s->buf.reduce_bucket = (double)bucket;
        mr_occ *nbk = get(x, "--ddp-num-buckets");
        if (nbk && !x->st)
            return (void)fail(x, nbk->line, "--ddp-num-buckets: not priced (parplan prices the buckets of "
                              "--ddp-bucket-size, or Megatron's default max(4e7, 1e6 x dp x cp) elements)");
        set_src(x, "reduce_bucket", "--ddp-bucket-size");
        if (s->zero && !opg && ogr && s->dp * s->cp > 1)
            warn(x, get(x, "--overlap-grad-reduce")->line, "--overlap-grad-reduce without --overlap-param-gather: "
                 "parplan prices the parameter all-gather overlapped too");
        int tpo = has(x, "--tp-comm-overlap");
        if (tpo && !s->sp)
            return (void)fail(x, get(x, "--tp-comm-overlap")->line, "--tp-comm-overlap without --sequence-parallel: "
                              "Megatron asserts it needs sequence parallelism");
        s->overlap_tp = tpo;
        set_src(x, "overlap_tp", "--tp-comm-overlap");
        s->overlap_ep = has(x, "--overlap-moe-expert-parallel-comm");
        set_src(x, "overlap_ep", "--overlap-moe-expert-parallel-comm");
        mr_occ *dt = get(x, "--moe-token-dispatcher-type");
        if (s->overlap_ep && !x->st && (!dt || !strcmp(val_text(x, dt, 0), "allgather")))
            return (void)fail(x, get(x, "--overlap-moe-expert-parallel-comm")->line, "--overlap-moe-expert-parallel-"
                              "comm needs --moe-token-dispatcher-type alltoall or flex: Megatron asserts it (the "
                              "default is allgather)");
        s->loss = has(x, "--cross-entropy-loss-fusion") ? PP_LOSS_FUSED : PP_LOSS_FP32;
        set_src(x, "loss", "--cross-entropy-loss-fusion");
        mr_occ *ct = get(x, "--cp-comm-type");
        s->cp_comm = PP_CP_RING; /* p2p, the default */
        for (int k = 0; ct && k < ct->nval && !x->st; k++) {
            const char *t = val_text(x, ct, k);
            pp_cp_comm kind = !strcmp(t, "p2p") ? PP_CP_RING : !strcmp(t, "all_gather") || !strcmp(t, "allgather")
                              ? PP_CP_ALLGATHER : !strcmp(t, "a2a") ? PP_CP_A2A : PP_CP_COUNT;
            char q[80];
            if (kind == PP_CP_COUNT)
                fail(x, ct->line, "--cp-comm-type '%s': parplan prices p2p, all_gather and a2a (a2a+p2p is not priced)",
                     quote(t, q, sizeof q));
            else if (k && kind != s->cp_comm)
                fail(x, ct->line, "--cp-comm-type: one kind per layer is not priced: expected one value");
            s->cp_comm = kind;
        }
        set_src(x, "cp_comm", "--cp-comm-type");
    } else {
        s->cp_comm = PP_CP_A2A;
        s->loss = PP_LOSS_FP32;
        mr_occ *d = get(x, "--use-distributed-optimizer");
        if (d) warn(x, d->line, "--use-distributed-optimizer is not used with --deepspeed: DeepSpeed's ZeRO "
                    "(ds_config.json) shards the optimizer");
    }
    static const char *const opts[] = {"adam", "sgd", NULL};
    int o = choice_flag(x, "--optimizer", opts, 2);
    s->optimizer = o == 1 ? PP_OPT_SGD : PP_OPT_ADAMW;
    set_src(x, "optimizer", "--optimizer");
    /* attention: Megatron-LM picks flash/fused unless told unfused;
     * Megatron-DeepSpeed materialises the scores without a flash flag */
    if (x->mds) {
        s->attention = has(x, "--use-flash-attn-v2") || has(x, "--use-flash-attn") || has(x, "--use-flash-attn-triton")
                       ? PP_ATTN_FLASH : PP_ATTN_MATERIALISED;
    } else {
        static const char *const be[] = {"flash", "fused", "unfused", "local", "auto", NULL};
        int b = choice_flag(x, "--attention-backend", be, 5);
        s->attention = b == 2 || b == 3 ? PP_ATTN_MATERIALISED : PP_ATTN_FLASH;
        int fa = has(x, "--use-flash-attn");
        /* flash: flash-attn's kernel instead of the cuDNN one Transformer
         * Engine picks on Hopper and later (docs/time.md) */
        if ((b == 0 || fa) && x->c && x->c->gpu.cudnn_attn_speedup > 0) {
            mr_occ *fo = get(x, b == 0 ? "--attention-backend" : "--use-flash-attn");
            warn(x, fo ? fo->line : 0, "%s: priced as Transformer Engine's cuDNN attention, as for --attention-backend auto; "
                 "FlashAttention-3 runs at about its rate, FlashAttention-2 at 1/%.2g of it on %s",
                 b == 0 ? "--attention-backend flash" : "--use-flash-attn", x->c->gpu.cudnn_attn_speedup, x->c->gpu.name);
        }
    }
    set_src(x, "attention", x->mds ? "--use-flash-attn-v2" : "--attention-backend");
    if (!x->mds) read_opt_states(x, s);
    read_fp8_params(x, s);
    static const char *const refused[] = {"--use-torch-fsdp2", "--optimizer-cpu-offload", "--cpu-offloading", NULL};
    for (int i = 0; refused[i] && !x->st; i++) {
        mr_occ *r = get(x, refused[i]);
        if (r) fail(x, r->line, "%s: not priced (parplan prices Megatron's DDP, the distributed optimizer and "
                    "Megatron-FSDP, without optimizer offload)", refused[i]);
    }
    if (x->mds) has(x, "--cpu-optimizer"), has(x, "--deepspeed-activation-checkpointing"), has(x, "--zero-stage");
}

static void read_strategy(mr_ctx *x, pp_strategy *s)
{
    s->framework = x->mds ? PP_FW_MEGATRON_DEEPSPEED : PP_FW_MEGATRON;
    s->filled = 0;
    s->grad_accum = 0;
    s->overlap_dp = s->overlap_tp = -1;
    s->grad_accum_dtype = PP_GRAD_AUTO;
    s->cp_comm = PP_CP_AUTO;
    s->loss = PP_LOSS_AUTO;
    s->buf.free_pipeline_outputs = -1;
    /* the file's environment, or PyTorch's default; the deepspeed launcher
     * does not forward it to other nodes (rule fw-allocator) */
    s->buf.expandable_segments = x->mds ? 0 : x->expandable;
    if (x->alloc_conflict)
        warn(x, 0, "PYTORCH_ALLOC_CONF and PYTORCH_CUDA_ALLOC_CONF disagree on expandable_segments (PyTorch >= 2.9 reads the "
                   "first, older releases the second): priced with the caching allocator");
    if (x->mds && x->expandable)
        warn(x, 0, "expandable segments: parplan prices Megatron-DeepSpeed with the caching allocator (the deepspeed "
                   "launcher forwards only MLFLOW, PYTHON, MV2 and UCX variables, and .deepspeed_env, to other nodes)");
    s->zero = 0;
    s->offload = PP_OFFLOAD_NONE;
    s->recompute_layers = -1;
    s->per_stage_recompute = 0;
    read_degrees(x, s);
    if (!x->st) read_batch_seq(x, s);
    if (!x->st) read_precision(x, s);
    if (!x->st) read_split(x, s);
    if (!x->st) read_recompute(x, s);
    if (!x->st && !x->mds) read_act_offload(x, s);
    if (!x->st && !x->mds) read_cuda_graphs(x, s);
    if (!x->st) read_behaviour(x, s);
}

/* ------------------------------------------------------------ Megatron-DeepSpeed */

/* The ds_config.json --deepspeed_config names, relative to the arguments'
 * folder, read with the DeepSpeed reader; batch, precision and ZeRO stage
 * must agree with the flags. */
static void read_ds_config(mr_ctx *x, pp_strategy *s)
{
    mr_occ *o = get(x, "--deepspeed_config");
    if (!o) o = get(x, "--deepscale_config");
    if (!o) return (void)fail(x, 0, "--deepspeed without --deepspeed_config: expected the ds_config.json that "
                              "DeepSpeed reads (parplan reads it too)");
    const char *name = val_text(x, o, 0), *slash = strrchr(x->where, '/');
    char path[PP_TEXT_LEN * 2];
    if (name[0] == '/' || !slash) snprintf(path, sizeof path, "%s", name);
    else snprintf(path, sizeof path, "%.*s/%s", (int)(slash - x->where), x->where, name);
    pp_strategy ds = *s;
    pp_deepspeed_opts dso;
    pp_error e = {""};
    /* no Trainer fills "auto" here: DeepSpeed reads the file as it is */
    pp_status st = pp_deepspeed_read(path, x->m, x->c, &ds, &dso, x->warn, &e);
    if (st != PP_OK) {
        pp__fail(x->err, st, "%.200s:%d: --deepspeed_config %s: %s", x->where, o->line, name, e.msg);
        if (x->err) x->err->rule = e.rule;
        x->st = st;
        return;
    }
    if (ds.micro_batch != s->micro_batch || ds.global_batch != s->global_batch)
        return (void)fail(x, o->line, "%s gives micro-batch %d and global batch %d, the flags --micro-batch-size %d "
                          "and --global-batch-size %d: they must agree", name, ds.micro_batch, ds.global_batch,
                          s->micro_batch, s->global_batch);
    int ds16 = ds.precision == PP_PREC_FP16, dsbf = ds.precision == PP_PREC_BF16 || ds.precision == PP_PREC_FP8;
    if (ds16 != (s->precision == PP_PREC_FP16) || dsbf != (s->precision == PP_PREC_BF16))
        return (void)fail(x, o->line, "%s runs %s, the flags %s: they must agree", name, pp_precision_name(ds.precision),
                          s->precision == PP_PREC_FP32 ? "neither --bf16 nor --fp16" : s->precision == PP_PREC_FP16 ? "--fp16" : "--bf16");
    long zs;
    mr_occ *z = get(x, "--zero-stage");
    int wrapped = pp__ds_wrapper_of(&ds) == PP_DS_ZERO ? ds.zero : 0; /* what parplan writes */
    if (z && int_flag(x, "--zero-stage", 0, 3, &zs) && zs != ds.zero && zs != wrapped)
        return (void)fail(x, z->line, "--zero-stage %ld, but %s has zero_optimization.stage %d: keep them equal", zs,
                          name, ds.zero);
    static const char *const ds_fields[][2] = {
        {"zero", "--deepspeed_config (zero_optimization.stage)"}, {"offload", "--deepspeed_config (offload_optimizer)"},
        {"grad_accum_dtype", "--deepspeed_config (data_types.grad_accum_dtype)"},
        {"overlap_dp", "--deepspeed_config (overlap_comm)"}};
    for (size_t i = 0; i < sizeof ds_fields / sizeof *ds_fields; i++) set_src(x, ds_fields[i][0], ds_fields[i][1]);
    int cpu = has(x, "--cpu-optimizer");
    if (cpu != (ds.offload != PP_OFFLOAD_NONE))
        warn(x, cpu ? get(x, "--cpu-optimizer")->line : o->line, "--cpu-optimizer %s while %s %s the optimizer: "
             "priced as the JSON says", cpu ? "given" : "absent", name, ds.offload != PP_OFFLOAD_NONE ? "offloads" : "keeps");
    *s = ds;
}

/* ------------------------------------------------------------ rules */

/* Words a rule failure with the flag that set the field. */
static void resolve(mr_ctx *x, pp_strategy *s)
{
    pp_strategy r = *s;
    pp_error e = {""};
    if (pp_strategy_resolve(&r, x->m, x->c, &e) == PP_OK) return;
    const char *flag = e.field[0] ? src_of(x, e.field) : NULL;
    if (!flag && !strcmp(e.field, "model")) flag = "--model";
    if (flag && e.detail > 0)
        pp__fail(x->err, PP_ERR_INPUT, "%.200s: %s (%s %s): %s", x->where, flag, e.field, e.value, e.msg + e.detail);
    else if (e.field[0] && e.detail > 0)
        pp__fail(x->err, PP_ERR_INPUT, "%.200s: with %s %s: %s", x->where, e.field, e.value, e.msg + e.detail);
    else
        pp__fail(x->err, PP_ERR_INPUT, "%.200s: the strategy these arguments give cannot run here: %s", x->where, e.msg);
    if (x->err) x->err->rule = e.rule;
    x->st = PP_ERR_INPUT;
}

/* ------------------------------------------------------------ unpriced */

/* Flags with no effect on memory or step time: data, tokenizer,
 * checkpoints, logging, the learning-rate schedule, initialisation. A
 * prefix ends in '-'. Every other flag the reader does not use is named in
 * a warning. */
static const char *const silent[] = {
    "--data-", "--train-data-path", "--valid-data-path", "--test-data-path", "--split", "--tokenizer-",
    "--vocab-file", "--merge-file", "--save", "--save-", "--load", "--no-load-", "--pretrained-checkpoint",
    "--finetune", "--use-checkpoint-args", "--ckpt-", "--auto-detect-ckpt-format", "--async-save", "--log-",
    "--log-interval", "--tensorboard-", "--wandb-", "--timing-log-", "--eval-", "--exit-", "--lr", "--lr-",
    "--min-lr", "--weight-decay", "--start-weight-decay", "--end-weight-decay", "--weight-decay-incr-style",
    "--clip-grad", "--adam-", "--sgd-momentum", "--loss-scale", "--initial-loss-scale", "--min-loss-scale",
    "--loss-scale-window", "--hysteresis", "--seed", "--init-method-std", "--init-method-xavier-uniform",
    "--train-iters", "--train-samples", "--distributed-backend", "--distributed-timeout-minutes", "--num-workers",
    "--mock-data", "--dataloader-type", "--num-dataset-builder-threads", "--reset-position-ids",
    "--reset-attention-mask", "--eod-mask-loss", "--no-create-attention-mask-in-dataloader", "--use-mcore-models",
    "--transformer-impl", "--deepspeed", "--deepscale", "--deepspeed_mpi", "--profile", "--profile-",
    "--use-pytorch-profiler", "--override-opt_param-scheduler", "--use-checkpoint-opt_param-scheduler",
    "--micro-batch-size", "--global-batch-size", "--no-bias-", "--bias-", "--no-masked-softmax-fusion",
    "--masked-softmax-fusion", "--no-persist-layer-norm", "--apply-query-key-layer-scaling",
    "--attention-softmax-in-fp32", "--no-async-tensor-model-parallel-allreduce",
    "--ddp-average-in-collective", "--check-for-nan-in-loss-and-grad", "--no-check-for-nan-in-loss-and-grad",
    "--manual-gc", "--manual-gc-", "--empty-unused-memory-level", "--rerun-mode",
    /* MoE: the load-balancing loss's weight (the balance is priced, not its
     * weight); the grouped GEMM is the experts' GEMM as priced */
    "--moe-aux-loss-coeff", "--moe-grouped-gemm",
    /* the router's form and the QK norm come from the model (its qk_norm
     * prices the norms' inputs): what trains, not its cost */
    "--moe-router-load-balancing-type", "--moe-router-score-function", "--moe-router-enable-expert-bias",
    "--moe-router-topk-scaling-factor", "--qk-layernorm", NULL};

static int is_silent(const char *name)
{
    for (int i = 0; silent[i]; i++) {
        size_t n = strlen(silent[i]);
        if (silent[i][n - 1] == '-' ? !strncmp(name, silent[i], n) : !strcmp(name, silent[i])) return 1;
    }
    return 0;
}

static void warn_unpriced(mr_ctx *x)
{
    char list[PP_NOTE_LEN - 120] = "";
    size_t n = 0;
    int count = 0, line = 0;
    for (int i = 0; i < x->nocc; i++) {
        const mr_occ *o = &x->occ[i];
        if (o->used || is_silent(o->flag->name)) continue;
        int dup = 0;
        for (int k = 0; k < i && !dup; k++) dup = x->occ[k].flag == o->flag;
        if (dup) continue;
        if (!count++) line = o->line;
        if (n + strlen(o->flag->name) + 8 < sizeof list) n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", o->flag->name);
        else if (n + 6 < sizeof list && list[n - 1] != '.') n += (size_t)snprintf(list + n, sizeof list - n, ", ...");
    }
    if (count) warn(x, line, "%d flag%s not priced (parplan's estimate does not model %s): %s", count, count > 1 ? "s" : "",
                    count > 1 ? "them" : "it", list);
    if (x->ignored_line)
        warn(x, x->ignored_line, "words outside the NAME=( ... ) arrays are not read (only the arrays' flags are, "
                                 "and PYTORCH_ALLOC_CONF / PYTORCH_CUDA_ALLOC_CONF)");
}

/* ------------------------------------------------------------ entry */

pp_status pp_megatron_parse(const char *text, size_t len, const char *where, const pp_model *m, const pp_cluster *c,
                            pp_strategy *s, pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    mr_ctx *x = calloc(1, sizeof *x);
    if (!x) return pp__fail(err, PP_ERR_NOMEM, "%.200s: out of memory", where);
    *x = (mr_ctx){where, err, PP_OK, warnings, m, c};
    size_t i = 0;
    while (i < len && (text[i] == ' ' || text[i] == '\n' || text[i] == '\t' || text[i] == '\r')) i++;
    pp_status st = i == len ? pp__fail(err, PP_ERR_INPUT, "%.200s: empty file: expected Megatron arguments", where)
                            : pp__shell_words(text, len, where, &x->w, err);
    pp_strategy out = *s;
    pp_notes local = {0};
    if (warnings) local = *warnings;
    x->warn = &local;
    if (st == PP_OK) x->ignored_line = x->w.skipped_line;
    if (st == PP_OK && collect(x)) read_strategy(x, &out);
    if (st == PP_OK && x->st == PP_OK) check_model(x, &out);
    if (st == PP_OK && x->st == PP_OK && x->mds) read_ds_config(x, &out);
    if (st == PP_OK && x->st == PP_OK) resolve(x, &out);
    if (st == PP_OK && x->st == PP_OK) warn_unpriced(x);
    if (st == PP_OK) st = x->st;
    if (st == PP_OK) {
        *s = out;
        if (warnings) *warnings = local;
    }
    pp__words_free(&x->w);
    free(x->occ);
    free(x);
    return st;
}

pp_status pp_megatron_read(const char *path, const pp_model *m, const pp_cluster *c, pp_strategy *s,
                           pp_notes *warnings, pp_error *err)
{
    PP__C_NUMERIC;
    char *text;
    size_t len;
    pp_status st = pp__read_text_file(path, &text, &len, err);
    if (st != PP_OK) return st;
    st = pp_megatron_parse(text, len, path, m, c, s, warnings, err);
    free(text);
    return st;
}
