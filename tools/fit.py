#!/usr/bin/env python3
"""Fits the achievable matmul and attention efficiency of each GPU family to
the published runs, then reports leave-one-source-out errors (a source's rows
predicted with constants fitted on the other sources only).

Usage: tools/fit.py build/validate tests/reference/published_runs.csv [tests/data/new_gpus.csv]

A family's rows are the dense-model rows of the given files whose gpu label
is one of the family's (a mixture of experts adds grouped GEMMs, token
permutation and routing whose maturity changed release by release: those
rows are predicted with the dense rates, not fitted to); each family is fitted on the file that holds its rows. A
family is fitted only when its evaluated rows come from at least two
sources (MIN_SOURCES): with one, a leave-one-source-out error cannot be
measured, and the catalog's estimate stays (printed, marked "not fitted").
"Before" is the error with the catalog's constants as they stand.

Where a family's attention rate is measured (PUBLISHED_ATTN), only the matmul
efficiency is fitted. Most of llm-foundry's runs use an older Triton
attention kernel whose slowdown is fitted first, on MosaicML's Triton H100
rows with the H100 constants as the catalog has them (fit_triton; refit the
two in turn until they agree), and then holds for those rows on every GPU
(tools/validate.c MPT_TRITON_SLOWDOWN).

The fitted values go into topologies/gpus.json ("efficiency"); the output of
this script is pasted into docs/validation.md by `make validate`."""
import csv as csvmod, itertools, json, os, re, statistics, subprocess, sys

FAMILIES = {  # family -> (catalog names sharing the silicon, published gpu labels)
    "A100": (["a100_80g", "a100_40g"], ["A100-80GB", "A100-40GB"]),
    "H100": (["h100_sxm"], ["H100-80GB"]),
    "H200": (["h200"], ["H200-141GB"]),
    "B200": (["b200"], ["B200"]),
    "GB200": (["gb200"], ["GB200"]),
    "B300": (["b300"], ["B300"]),
    "GB300": (["gb300"], ["GB300"]),
    "MI300": (["mi300x", "mi325x"], ["MI300X", "MI325X"]),
}
# FlashAttention-2's measured rate on the H100 SXM5 (head dim 128, causal, 2k
# tokens): forward 298, backward 291 TFLOP/s of 989 (FlashAttention-3 paper,
# Shah et al. 2024, arXiv 2407.08608, Figs. 5 and 7; docs/time.md)
PUBLISHED_ATTN = {"H100": 0.30}
TRITON = [x / 10 for x in range(10, 31)]  # llm-foundry's Triton kernel: slowdown grid
MIN_SOURCES = 2
MM = [x / 100 for x in range(40, 91, 2)]
AT = [x / 100 for x in range(10, 81, 5)]
ROW = re.compile(r"\| (\S+) \| .* \| ([+-][\d.]+)% (hw TFLOP/s|model TFLOP/s|MFU %|throughput \(s/step\)) \|$")

def errors(exe, csvs, env):
    # dense models only: the constants are dense GEMM and attention kernel
    # rates; MoE runs add grouped GEMMs and routing (tools/validate.c)
    env = {**env, "PARPLAN_VALIDATE_DENSE": "1"}
    out = subprocess.run([exe, *csvs], env={**os.environ, **env}, capture_output=True, text=True).stdout
    rows = {}
    for line in out.splitlines():
        m = ROW.match(line)
        if m: rows[m.group(1)] = float(m.group(2))
    return rows

def source(name):
    """the publication: the name's prefix; bloomx rows cite bloom's chronicles-prequel.md"""
    s = re.split(r"[_0-9]", name)[0]
    return "bloom" if s == "bloomx" else s

def grid(exe, csvs, fam):
    """errors of every row for every (matmul, attention) pair of one family"""
    out = {}
    ats = [PUBLISHED_ATTN[fam]] if fam in PUBLISHED_ATTN else AT
    for mm, at in itertools.product(MM, ats):
        env = {f"PARPLAN_FIT_{g}": f"{mm},{at}" for g in FAMILIES[fam][0]}
        out[(mm, at)] = errors(exe, csvs, env)
    return out

DEFAULT = (0.58, 0.25)  # costmodel/compute.c MATMUL_EFF_DEFAULT, ATTN_EFF_DEFAULT

def default(fam):
    """the unfitted constants: the documented defaults, with a measured
    attention rate where there is one"""
    return (DEFAULT[0], PUBLISHED_ATTN.get(fam, DEFAULT[1]))

def best(table, names, dflt=DEFAULT):
    """lowest (median, worst) error; among ties - a constant the rows do not
    constrain, e.g. attention efficiency when no row uses fused attention -
    the value nearest the documented default, not the first on the grid"""
    scored = []
    for k, e in table.items():
        errs = [abs(e[n]) for n in names if n in e]
        if errs:
            near = abs(k[0] - dflt[0]) + abs(k[1] - dflt[1])
            scored.append(((round(statistics.median(errs), 6), round(max(errs), 6)), near, k))
    score, _, k = min(scored)
    return score, k

def stats(errs):
    a = [abs(e) for e in errs]
    return f"{statistics.median(a):.1f}% | {max(a):.1f}%"

def fit_family(exe, fam, csvs, names):
    """The fit on all rows, each source predicted from the others, and the
    verdict: the fit is adopted only when the held-out predictions, pooled,
    have a smaller median error (equal medians: a smaller worst) than the
    unfitted default on the same rows
    (a fit that does not carry to a source it has not seen is no better
    than the documented estimate)."""
    table = grid(exe, csvs, fam)
    dflt = default(fam)
    (med, worst), (mm, at) = best(table, names, dflt)
    print(f"| {fam} | all {len(names)} rows | matmul {mm:.2f}, attention {at:.2f} | {med:.1f}% | {worst:.1f}% |")
    pooled = []
    for src in sorted({source(n) for n in names}):
        train = [n for n in names if source(n) != src]
        test = [n for n in names if source(n) == src]
        if not train: continue
        _, (m2, a2) = best(table, train, dflt)
        errs = [table[(m2, a2)][n] for n in test]
        pooled += errs
        print(f"| {fam} | held out: {src} ({len(test)} rows) | matmul {m2:.2f}, attention {a2:.2f} | {stats(errs)} |")
    if dflt not in table:
        table[dflt] = errors(exe, csvs, {f"PARPLAN_FIT_{g}": f"{dflt[0]},{dflt[1]}" for g in FAMILIES[fam][0]})
    base = [table[dflt][n] for n in names]
    print(f"| {fam} | all held-out rows, pooled | each from the other sources | {stats(pooled)} |")
    print(f"| {fam} | unfitted default | matmul {dflt[0]:.2f}, attention {dflt[1]:.2f} | {stats(base)} |")
    score = lambda e: (round(statistics.median(map(abs, e)), 1), round(max(map(abs, e)), 1))
    ok = score(pooled) < score(base)  # median first, then the worst
    print(f"| {fam} | verdict | {'fit adopted' if ok else 'not adopted: held out, the fit is worse than the default'} | — | — |")

def catalog(gpu):
    """a GPU's efficiencies as topologies/gpus.json has them"""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "topologies", "gpus.json")
    for g in json.load(open(path))["gpus"]:
        if g["name"] == gpu: return g["efficiency"]["matmul"], g["efficiency"]["attention"]

def triton_row(source, model):
    """tools/validate.c mpt_triton: MosaicML's rows but the Large Scale
    table's 1b, 3b, 7b and 70b (--attn_impl flash) ran the Triton kernel"""
    return "Large Scale" not in source or "13b" in model or "30b" in model

def fit_triton(exe, labels, before):
    """llm-foundry's Triton attention: its slowdown against the
    FlashAttention-2 class, fitted on MosaicML's Triton H100 runs with the
    H100 constants as the catalog has them (attention the measured rate)"""
    names = sorted(n for n in before if source(n) == "mpt" and labels[n][0] in FAMILIES["H100"][1]
                   and triton_row(labels[n][2], labels[n][3]))
    if not names: return
    csvs, (mm, at), table = sorted({labels[n][1] for n in names}), catalog("h100-sxm"), {}
    for k in TRITON:
        e = errors(exe, csvs, {"PARPLAN_FIT_TRITON": str(k)})
        errs = [abs(e[n]) for n in names if n in e]
        table[k] = (round(statistics.median(errs), 6), round(max(errs), 6))
    k = min(table, key=table.get)
    med, worst = table[k]
    print(f"| llm-foundry's Triton attention | MosaicML's {len(names)} Triton H100 runs, H100 matmul {mm:.2f}, "
          f"attention {at:.2f} | slowdown {k:.1f} | {med:.1f}% | {worst:.1f}% |")

def main():
    exe, files = sys.argv[1], sys.argv[2:]
    labels = {}
    for f in files:
        for r in csvmod.DictReader(open(f)):
            labels[r["name"]] = (r["gpu"], f, r["source"], r["model"])
    before = errors(exe, files, {})
    fit_triton(exe, labels, before)
    for fam, (_, gl) in FAMILIES.items():
        names = sorted(n for n in before if labels.get(n, ("",))[0] in gl)
        if not names:
            print(f"| {fam} | no evaluated row | catalog estimate, not fitted | — | — |")
            continue
        srcs = sorted({source(n) for n in names})
        print(f"| {fam} | before: {len(names)} rows, {len(srcs)} source(s) ({', '.join(srcs)}) "
              f"| catalog constants | {stats([before[n] for n in names])} |")
        if len(srcs) < MIN_SOURCES:
            print(f"| {fam} | not fitted: one source | catalog estimate kept | — | — |")
            continue
        fit_family(exe, fam, sorted({labels[n][1] for n in names}), names)

main()
