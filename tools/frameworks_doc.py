#!/usr/bin/env python3
"""Regenerates the tables of docs/frameworks.md from the built parplan:
the support table (`parplan frameworks --format markdown`) and the four
scenarios planned per framework (issue 12). Usage:
    python3 tools/frameworks_doc.py build/parplan [docs/frameworks.md]
Rewrites only what lies between the markers; prints the scenarios' tables."""
import json, re, subprocess, sys

BIN = sys.argv[1]
DOC = sys.argv[2] if len(sys.argv) > 2 else "docs/frameworks.md"
SCENARIOS = [("llama3-8b", "dgx-h100", 1, 512, 8192), ("gpt3-175b", "dgx-a100-80g", 128, 1536, 2048),
             ("llama2-70b", "dgx-a100-80g", 8, 512, 4096), ("mixtral-8x7b", "dgx-h100", 4, 512, 4096)]
FRAMEWORKS = ["all", "pytorch", "deepspeed", "megatron", "megatron-deepspeed", "fsdp"]


def summary(s):
    sched = ""
    if s["pp"] > 1:
        sched = " " + s["schedule"] + ("×%d" % s["virtual_stages"] if s["virtual_stages"] > 1 else "")
    parts = ["%s dp%d tp%d%s pp%d%s" % (s["framework"], s["dp"], s["tp"], " sp" if s["sp"] else "", s["pp"], sched)]
    if s["cp"] > 1: parts.append("cp%d" % s["cp"])
    if s["ep"] > 1: parts.append("ep%d" % s["ep"])
    parts.append("ZeRO-%d %s mb%d" % (s["zero"], s["precision"], s["micro_batch"]))
    if s["recompute"] != "none": parts.append("rc-" + s["recompute"])
    if s["offload"] != "none": parts.append("off-" + s["offload"])
    return " ".join(parts)


def scenario(m, c, n, g, seq):
    out = ["### %s on %d x %s, global batch %d, seq %d" % (m, n, c, g, seq), "",
           "```sh", "parplan plan --model %s --cluster %s --nodes %d --global-batch %d --seq %d --framework F --top 1"
           % (m, c, n, g, seq), "```", "",
           "| framework | best plan | peak GiB | step s | tokens/s | MFU |", "|---|---|---|---|---|---|"]
    for fw in FRAMEWORKS:
        r = subprocess.run([BIN, "plan", "--model", m, "--cluster", c, "--nodes", str(n), "--global-batch", str(g),
                            "--seq", str(seq), "--framework", fw, "--top", "1", "--format", "json"],
                           capture_output=True, text=True, timeout=600)
        if r.returncode != 0:
            line = (r.stderr.strip().splitlines() or ["exit %d" % r.returncode])[0].replace("parplan: ", "")
            line = re.sub(r"\s+", " ", line).replace("|", "/")
            out.append("| %s | %s | | | | |" % (fw, line[:160] + ("…" if len(line) > 160 else "")))
            continue
        p = json.loads(r.stdout)["plans"][0]
        out.append("| %s | %s | %.1f | %.2f | %.0f | %.1f%% |" % (
            fw, summary(p["strategy"]), p["memory"]["peak_bytes"] / 2**30, p["time"]["step_s"],
            p["throughput"]["tokens_per_s"], 100 * p["throughput"]["mfu"]))
    return "\n".join(out)


def replace(doc, name, body):
    b, e = "<!-- frameworks %s: begin -->\n" % name, "<!-- frameworks %s: end -->" % name
    i, j = doc.index(b) + len(b), doc.index(e)
    return doc[:i] + body.rstrip("\n") + "\n" + doc[j:]


doc = open(DOC).read()
table = subprocess.run([BIN, "frameworks", "--format", "markdown"], capture_output=True, text=True, check=True).stdout
scen = "\n\n".join(scenario(*s) for s in SCENARIOS)
doc = replace(replace(doc, "table", table), "scenarios", scen)
open(DOC, "w").write(doc)
print(scen)
