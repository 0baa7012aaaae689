"""Reads tools/fit_expert_launch.sh's grid (A ms, B ms, row, configuration,
error) and prints the fit of docs/time.md, "Expert launches": the pair with
the least mean absolute log error over the eagerly launched rows, its errors
by local experts, and the errors held out by local-expert count, GPU family
and container release (each held-out group predicted by the pair fitted on
the others)."""
import csv
import math
import statistics as st
import sys


def graphed(name):
    # tools/validate.c bridge_graphs: 26.06+ recipes on GB200, GB300 and B300
    # (B300's DeepSeek-V3 apart) replay the whole iteration as CUDA graphs
    gpu = name.split("_")[1]
    since = name.startswith(("mbridge2606", "mbridge2608"))
    return since and gpu in ("gb200", "gb300", "b300") and not (gpu == "b300" and "DeepSeek" in name)


ep = {}
for path in sys.argv[1:]:  # the rows' CSV files: their ep column
    with open(path, newline="") as f:
        for row in csv.DictReader(f):
            ep[row["name"]] = int(row["ep"] or 1)
grid, local = {}, {}
for line in sys.stdin:
    a, b, name, conf, err = [f.strip() for f in line.split("\t")]
    local[name] = (256 if "DeepSeek" in name else 128) // ep[name]
    grid.setdefault((float(a), float(b)), {})[name] = float(err.split("%")[0]) / 100
eager = sorted(n for n in next(iter(grid.values())) if not graphed(n))


def l1(k, rows):
    return sum(abs(math.log(1 + grid[k][n])) for n in rows) / len(rows)


best = min(grid, key=lambda k: l1(k, eager))
errs = [abs(grid[best][n]) for n in eager]
print(f"{len(eager)} eager rows; fit {best[0]:g} ms a block + {best[1]:g} ms a local expert: "
      f"median {st.median(errs):.1%}, worst {max(errs):.1%}")
for n_local in sorted(set(local[n] for n in eager)):
    g = [math.log(1 + grid[best][n]) for n in eager if local[n] == n_local]
    print(f"  {n_local} local experts: {len(g)} rows, mean error {math.exp(sum(g) / len(g)) - 1:+.1%}")
keys = {"local experts": lambda n: local[n], "GPU family": lambda n: n.split("_")[1],
        "release": lambda n: n.split("_")[0]}
for what, key in keys.items():
    pooled = []
    for g in sorted(set(key(n) for n in eager), key=str):
        rest = [n for n in eager if key(n) != g]
        held = [n for n in eager if key(n) == g]
        k = min(grid, key=lambda k: l1(k, rest))
        pooled += [abs(grid[k][n]) for n in held]
        print(f"  held out {what} {g}: fit {k[0]:g} + {k[1]:g} ms, {len(held)} rows")
    print(f"held out by {what}: median {st.median(pooled):.1%}, worst {max(pooled):.1%}")
