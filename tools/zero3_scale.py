#!/usr/bin/env python3
"""docs/zero3_scale.svg: predicted per-GPU throughput of GPT-3 175B with ZeRO-3
(Megatron-DeepSpeed, DeepSpeed v0.14.5's collectives) at a fixed global batch of
1,536 sequences, from 64 to 4,096 A100-80GB GPUs, beside the ZeRO-3 runs of
Narayanan et al. 2021 Table 2 (an older DeepSpeed). Usage:
    python3 tools/zero3_scale.py build/parplan docs/zero3_scale.svg"""
import json, subprocess, sys

BIN, OUT = sys.argv[1], sys.argv[2]
COUNTS = [64, 128, 256, 384, 512, 768, 1024, 1536, 2048, 3072, 4096]
GB = 1536
PUBLISHED = [(384, 144), (768, 88), (1536, 44)]  # hardware TFLOP/s per GPU, Narayanan 2021 Table 2


def predict(n):
    """The fastest ZeRO-3 plan that fits: tp 1 (ZeRO-3 over every GPU) while
    the batch allows, else the least tp (Megatron-DeepSpeed's TP with ZeRO-3);
    any micro-batch up to 8 that divides the per-rank batch."""
    for tp in (1, 2, 4, 8):
        dp = n // tp
        if GB % dp:
            continue
        best = None
        for mb in range(1, 9):
            if (GB // dp) % mb:
                continue
            r = subprocess.run([BIN, "estimate", "--model", "gpt3-175b", "--cluster", "dgx-a100-80g", "--gpus", str(n),
                                "--framework", "megatron-deepspeed", "--zero", "3", "--tp", str(tp), "--micro-batch",
                                str(mb), "--global-batch", str(GB), "--recompute", "full", "--format", "json"],
                               capture_output=True, text=True)
            if r.returncode:
                continue
            p = json.loads(r.stdout)
            if not p["memory"]["fits"]:
                continue
            t = p["time"]
            row = dict(n=n, tp=tp, mb=mb, tf=p["throughput"]["hardware_tflops_per_gpu"], step=t["step_s"],
                       comm=t["dp_comm_s"], exposed=t["dp_comm_exposed_s"])
            if not best or row["tf"] > best["tf"]:
                best = row
        if best:
            return best
    return None


rows = [r for r in (predict(n) for n in COUNTS) if r]
W, H, L, R, T, B = 720, 420, 70, 30, 40, 60
xs = [r["n"] for r in rows] + [n for n, _ in PUBLISHED]
import math
lx0, lx1 = math.log2(min(xs)), math.log2(max(xs))
ymax = max([r["tf"] for r in rows] + [t for _, t in PUBLISHED]) * 1.1
X = lambda n: L + (math.log2(n) - lx0) / (lx1 - lx0) * (W - L - R)
Y = lambda t: T + (1 - t / ymax) * (H - T - B)
svg = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
       'font-family="DejaVu Sans, sans-serif" font-size="12">' % (W, H, W, H),
       '<rect width="100%" height="100%" fill="white"/>',
       '<text x="%d" y="22" font-size="14">GPT-3 175B, ZeRO-3, global batch 1,536, A100-80GB: TFLOP/s per GPU</text>' % L]
for t in range(0, int(ymax) + 1, 25):
    svg.append('<line x1="%d" x2="%d" y1="%.1f" y2="%.1f" stroke="#ddd"/>' % (L, W - R, Y(t), Y(t)))
    svg.append('<text x="%d" y="%.1f" text-anchor="end">%d</text>' % (L - 6, Y(t) + 4, t))
for n in COUNTS:
    svg.append('<text x="%.1f" y="%d" text-anchor="middle">%d</text>' % (X(n), H - B + 18, n))
svg.append('<text x="%d" y="%d" text-anchor="middle">GPUs (log scale)</text>' % ((L + W - R) // 2, H - 18))
pts = " ".join("%.1f,%.1f" % (X(r["n"]), Y(r["tf"])) for r in rows)
svg.append('<polyline points="%s" fill="none" stroke="#1f77b4" stroke-width="2"/>' % pts)
for r in rows:
    svg.append('<circle cx="%.1f" cy="%.1f" r="3" fill="#1f77b4"><title>%d GPUs, tp %d, micro-batch %d: %.0f TFLOP/s, '
               'step %.1f s, ZeRO traffic %.1f s (%.1f s exposed)</title></circle>'
               % (X(r["n"]), Y(r["tf"]), r["n"], r["tp"], r["mb"], r["tf"], r["step"], r["comm"], r["exposed"]))
for n, t in PUBLISHED:
    svg.append('<rect x="%.1f" y="%.1f" width="8" height="8" fill="#d62728"><title>Narayanan 2021 Table 2: %d GPUs, '
               '%d TFLOP/s</title></rect>' % (X(n) - 4, Y(t) - 4, n, t))
svg.append('<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="#1f77b4" stroke-width="2"/>' % (W - 300, W - 280, T + 10, T + 10))
svg.append('<text x="%d" y="%d">parplan (DeepSpeed v0.14.5 ZeRO-3)</text>' % (W - 275, T + 14))
svg.append('<rect x="%d" y="%d" width="8" height="8" fill="#d62728"/>' % (W - 294, T + 24))
svg.append('<text x="%d" y="%d">published ZeRO-3 (DeepSpeed, 2021)</text>' % (W - 275, T + 32))
svg.append('</svg>')
open(OUT, "w").write("\n".join(svg) + "\n")
for r in rows:
    print("%5d GPUs tp %d mb %d: %6.1f TFLOP/s, step %6.1f s, ZeRO %5.1f s (%5.1f exposed)"
          % (r["n"], r["tp"], r["mb"], r["tf"], r["step"], r["comm"], r["exposed"]))
