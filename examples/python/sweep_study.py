#!/usr/bin/env python3
"""A co-design study in a few cells: model size x GPU count x two clusters.

    python3 examples/python/sweep_study.py [--out DIR]

Runs one parplan sweep (the `parplan` Python package, python/), prints the
best plan of every scenario with its time to train and cost, and plots both
against the GPU count with matplotlib when it is installed (Debian:
python3-matplotlib), writing DIR/sweep_study.png (default: next to this
script, the picture README.md shows). Without matplotlib it prints the table
only. Cells are marked `# %%` for editors that run them one by one.
"""
# %% setup
import argparse
import os
import sys

try:
    import parplan
except ImportError:  # run from the source tree without installing: use python/
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))
    import parplan

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default=os.path.dirname(os.path.abspath(__file__)), help="folder for sweep_study.png")
args = ap.parse_args()

# %% the question: 1T tokens of Llama-3 pretraining, which size, how many GPUs, which cluster?
MODELS = ["llama3-8b", "llama3-70b", "llama3.1-405b"]
CLUSTERS = ["dgx-h100", "dgx-a100-80g"]
GPUS = [64, 128, 256, 512, 1024]
TOKENS = 1e12
spec = {"grid": {"model": MODELS, "cluster": CLUSTERS, "gpus": GPUS, "global_batch": [1024], "seq": [8192],
                 "precision": "bf16", "train_tokens": TOKENS, "top": 1}}  # one precision on both clusters
print("libparplan %s (%s): %d scenarios" % (parplan.version(), parplan.library_path(), parplan.sweep_size(spec)))

# %% run it: rows stream in index order
rows = []
for r in parplan.sweep(spec):
    sc = r["scenario"]
    if "error" in r:
        print("%-14s %-13s %5d GPUs: %s" % (sc["model"], sc["cluster"], sc["gpus"], r["error"]["message"]))
        continue
    p = r["plans"][0]
    s = p["strategy"]
    rows.append((sc["model"], sc["cluster"], sc["gpus"], p["train"]["days"], p["train"]["cost_usd"]))
    print("%-14s %-13s %5d GPUs: dp %-4d tp %d pp %-2d zero %d mb %d  %7.1f days  $%11.0f  MFU %4.1f%%" % (
        sc["model"], sc["cluster"], sc["gpus"], s["dp"], s["tp"], s["pp"], s["zero"], s["micro_batch"],
        p["train"]["days"], p["train"]["cost_usd"], 100 * p["throughput"]["mfu"]))

# %% plot time to train and cost against GPUs, one line per model and cluster
try:
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
except ImportError:
    print("matplotlib is not installed (apt-get install python3-matplotlib): no plot")
    sys.exit(0)
fig, (ax_t, ax_c) = plt.subplots(1, 2, figsize=(11, 4.8))
for m in MODELS:
    for c, style in zip(CLUSTERS, ("-", "--")):
        pts = [(g, d, usd) for (mm, cc, g, d, usd) in rows if mm == m and cc == c]
        if not pts:
            continue
        g, d, usd = zip(*pts)
        ax_t.plot(g, d, style, marker="o", label="%s on %s" % (m, c))
        ax_c.plot(g, usd, style, marker="o", label="%s on %s" % (m, c))
for ax, what in ((ax_t, "days to train on 1T tokens"), (ax_c, "cost, US$ (catalog on-demand prices)")):
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("GPUs")
    ax.set_ylabel(what)
    ax.grid(True, which="both", alpha=0.3)
handles, labels = ax_t.get_legend_handles_labels()
fig.legend(handles, labels, loc="lower center", ncol=3, fontsize=8, frameon=False)
fig.suptitle("parplan sweep: Llama 3 sizes x GPU count x cluster (best bf16 plan each, global batch 1024 x 8192 tokens)",
             fontsize=9)
fig.tight_layout(rect=(0, 0.12, 1, 1))
os.makedirs(args.out, exist_ok=True)
png = os.path.join(args.out, "sweep_study.png")
fig.savefig(png, dpi=110)
print("wrote", png)
