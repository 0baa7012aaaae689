#!/bin/sh
# Refits the two constants of Megatron MoE expert launches (costmodel/compute.c
# EXPERT_HOST_BLOCK_S, EXPERT_HOST_S; docs/time.md, "Expert launches") on a
# grid of 0-6 ms a block x 0.05-0.55 ms a local expert: each point is built
# into a scratch copy of the tree and run through validate; then
# tools/fit_expert_launch.py picks the pair and prints the held-out errors.
# Usage: tools/fit_expert_launch.sh [SCRATCH_DIR]   (about 10 minutes)
set -eu
src=$(cd "$(dirname "$0")/.." && pwd)
tmp=${1:-/tmp/parplan-fit-expert}
rm -rf "$tmp" && mkdir -p "$tmp"
git -C "$src" archive HEAD | tar -x -C "$tmp"
cmake -S "$tmp" -B "$tmp/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
make -C "$tmp/build" -j2 validate >/dev/null
files="tests/data/new_gpus.csv tests/data/moe_h100.csv tests/reference/published_runs.csv"
for a in 0 1 2 3 4 5 6; do
    for b in 0.05 0.1 0.15 0.2 0.25 0.3 0.4 0.55; do
        sed -i "s/^#define EXPERT_HOST_BLOCK_S .*/#define EXPERT_HOST_BLOCK_S ${a}e-3/; \
s/^#define EXPERT_HOST_S .*/#define EXPERT_HOST_S ${b}e-3/" "$tmp/costmodel/compute.c"
        make -C "$tmp/build" -j2 validate >/dev/null
        for f in $files; do
            (cd "$tmp" && ./build/validate "$f" 2>/dev/null) | grep -E '^\| mbridge.*(Qwen3|DeepSeek)' |
                grep -E 'TFLOP|s/step' | awk -F'|' -v a="$a" -v b="$b" '{print a "\t" b "\t" $2 "\t" $4 "\t" $7}'
        done
    done
done | (cd "$src" && python3 tools/fit_expert_launch.py $files)
