#!/bin/bash
# tests/cli/sweep_mpi.sh PARPLAN — `mpirun -np N parplan sweep` (issue 16):
# the output of 1, 2 and 4 ranks (oversubscribed on this machine) equals the
# serial run byte for byte, for JSON lines, CSV, a shard and --resume; bad
# input under MPI (a bad spec, an unwritable output, a bad scenario, a full
# disk, a rank that dies) gives the serial run's exit code and parplan's
# own stderr lines, and never a partial file under the --output name.
# Skipped (exit 77) with a message only when mpirun is not installed.
set -u
P=$(realpath "${1:?usage: sweep_mpi.sh PATH/TO/parplan}")
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun not found: MPI is not installed (apt-get install libopenmpi-dev openmpi-bin; make test installs it)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 # Open MPI refuses root without these
export OMPI_MCA_rmaps_base_oversubscribe=1
# under ASan: keep Open MPI's components loaded so their allocations are
# named, and leave those (not parplan's) out of the leak report
export OMPI_MCA_mca_base_component_disable_dlclose=1
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}fast_unwind_on_malloc=0" # whole stacks, to find them
export LSAN_OPTIONS="suppressions=$(dirname "$(realpath "$0")")/lsan_openmpi.supp:print_suppressions=0${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
T=$(mktemp -d "${TMPDIR:-/tmp}/parplan-sweep-mpi.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
absent() { [ ! -e "$1" ] || fail "$1 exists after a failed sweep"; }
mpi() { local np=$1; shift; timeout 600 mpirun --oversubscribe -np "$np" "$P" "$@"; }
# same_failure NAME CODE SERIAL_ARGS -- : serial and 3 ranks exit CODE with the same parplan lines
same_failure() {
  local name=$1 code=$2; shift 2
  "$P" "$@" >s.out 2>s.err; local rs=$?
  mpi 3 "$@" >m.out 2>m.err; local rm=$?
  [ $rs = "$code" ] || fail "$name: serial exit $rs, expected $code: $(cat s.err)"
  [ $rm = "$code" ] || fail "$name: MPI exit $rm, expected $code: $(cat m.err)"
  cmp -s <(grep '^parplan' s.err) <(grep '^parplan' m.err) ||
    fail "$name: MPI says $(grep '^parplan' m.err), serial says $(grep '^parplan' s.err)"
  [ -s s.err ] || fail "$name: no message"
}

# Costs differ by ~100x: pinned 125M scenarios (~0.2 ms) among full searches
# of 8B-13B models (~30 ms); one scenario has no model (an error line).
{
  echo '{"grid": {"model": ["gpt3-125m", "llama3-8b", "gpt3-350m", "llama2-13b"], "cluster": ["dgx-a100-80g", "dgx-h100"],'
  echo '          "gpus": [8, 16, 32], "global_batch": [256, 512], "seq": [2048]},'
  echo ' "scenarios": [{"model": "gpt3-125m", "cluster": "dgx-h100", "gpus": 1, "global_batch": 8, "tp": 1, "pp": 1},'
  echo '               {"model": "no-such-model", "cluster": "dgx-h100", "global_batch": 8}]}'
} > spec.json
"$P" sweep spec.json --output ref.jsonl 2>ref.err; rc=$?
[ $rc = 1 ] || fail "serial reference: exit $rc, expected 1 (one bad scenario): $(cat ref.err)"
"$P" sweep spec.json --format csv --output ref.csv 2>/dev/null
"$P" sweep spec.json --shard 2/3 --output ref_shard.jsonl 2>/dev/null
[ "$(wc -l < ref.jsonl)" = 50 ] || fail "reference has $(wc -l < ref.jsonl) lines, expected 50"

for np in 1 2 4; do
  mpi $np sweep spec.json --output m$np.jsonl 2>m$np.err; rc=$?
  [ $rc = 1 ] || fail "np $np: exit $rc, expected 1: $(cat m$np.err)"
  cmp -s m$np.jsonl ref.jsonl && echo "np $np: JSON lines identical to the serial run" || fail "np $np: output differs from the serial run"
  cmp -s <(grep '^parplan' ref.err) <(grep '^parplan' m$np.err) || fail "np $np: stderr lines differ: $(grep '^parplan' m$np.err)"
  absent m$np.jsonl.part
done
mpi 2 sweep spec.json --format csv --output m.csv 2>/dev/null
cmp -s m.csv ref.csv && echo "np 2: CSV identical" || fail "np 2: CSV differs from the serial run"
mpi 4 sweep spec.json --shard 2/3 --output m_shard.jsonl 2>/dev/null
cmp -s m_shard.jsonl ref_shard.jsonl && echo "np 4: --shard 2/3 identical" || fail "np 4: shard 2/3 differs"
mpi 2 sweep spec.json --jobs 2 --output mj.jsonl 2>/dev/null
cmp -s mj.jsonl ref.jsonl || fail "np 2 --jobs 2: output differs from the serial run"

# --resume under MPI: a journal cut inside a line is cut back and continued
size=$(wc -c < ref.jsonl)
head -c $((size / 3)) ref.jsonl > r.jsonl.part
mpi 2 sweep spec.json --output r.jsonl --resume r.jsonl 2>r.err
grep -q 'cut a half-written last line' r.err || fail "MPI resume did not say it cut the half line: $(cat r.err)"
cmp -s r.jsonl ref.jsonl && echo "np 2: --resume identical" || fail "MPI --resume differs from the serial run"

# bad input: the serial run's code and words
echo '{"grid": {"model": []}}' > bad.json
same_failure "bad spec" 2 sweep bad.json --output bad.jsonl
absent bad.jsonl; absent bad.jsonl.part
same_failure "unwritable output" 2 sweep spec.json --output /nonexistent-dir/out.jsonl
same_failure "existing output" 2 sweep spec.json --output ref.jsonl
same_failure "full disk" 3 sweep spec.json --output /dev/full
same_failure "bad scenario" 1 sweep spec.json --output bs.jsonl --force
cmp -s bs.jsonl ref.jsonl || fail "bad scenario: MPI output differs"

# a rank that dies: the job ends as a killed serial run does (exit 137),
# nothing under the final name, and --resume finishes it identically
{
  echo '{"grid": {"model": ["llama3-8b", "mistral-7b", "llama2-13b"], "cluster": ["dgx-h100", "dgx-a100-80g"],'
  echo '          "gpus": [8, 16, 32, 64], "global_batch": [256, 512], "seq": [2048, 4096, 8192]}}'
} > heavy.json
"$P" sweep heavy.json --output heavy_ref.jsonl 2>/dev/null
mpirun --oversubscribe -np 3 "$P" sweep heavy.json --jobs 1 --output d.jsonl >d.out 2>d.err & mp=$!
# wait (up to 10 minutes: the sanitizers on a loaded machine are slow) for
# three lines in the journal and rank 1 among mpirun's children
victim=""
for _ in $(seq 60000); do
  kill -0 $mp 2>/dev/null || break
  if [ -s d.jsonl.part ] && [ "$(wc -l < d.jsonl.part)" -ge 3 ]; then
    for c in $(awk -v p=$mp '$4 == p {print $1}' /proc/[0-9]*/stat 2>/dev/null); do # mpirun's children: the ranks
      tr '\0' '\n' < /proc/$c/environ 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1' && victim=$c
    done
    [ -n "$victim" ] && break
  fi
  sleep 0.01
done
[ -n "$victim" ] && kill -9 "$victim" || fail "rank 1 not found among mpirun's children"
wait $mp; rc=$?
[ $rc = 137 ] || fail "a dead rank: mpirun exit $rc, expected 137 (as a serial run killed by signal 9)"
absent d.jsonl
[ -e d.jsonl.part ] || fail "a dead rank: no journal left to resume"
mpi 2 sweep heavy.json --output d.jsonl --resume d.jsonl 2>/dev/null
cmp -s d.jsonl heavy_ref.jsonl && echo "a dead rank: resumed output identical" || fail "after a dead rank, --resume differs from the serial run"

[ $fails = 0 ] && echo "sweep_mpi: all cases passed" || echo "sweep_mpi: $fails failed" >&2
exit $((fails > 0))
