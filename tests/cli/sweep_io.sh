#!/bin/bash
# tests/cli/sweep_io.sh PARPLAN — `parplan sweep` against failing writes and
# bad paths (issue 14 items 1, 2, 5, 8; docs/sweep.md). Each case checks the
# exit code, the one-line message (file and errno named), and that nothing
# but a finished sweep is ever left under the --output name; interrupted
# and resumed runs must equal an uninterrupted one byte for byte.
# Run by ctest (tests/CMakeLists.txt), plain and under ASan.
set -u
P=$(realpath "${1:?usage: sweep_io.sh PATH/TO/parplan}")
T=$(mktemp -d "${TMPDIR:-/tmp}/parplan-sweep-io.XXXXXX")
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 2
fails=0
fail() { echo "FAIL: $*" >&2; fails=$((fails + 1)); }
# expect CODE PATTERN CMD... : exit code and a stderr line matching PATTERN
# (an empty PATTERN: stderr is empty)
expect() {
  local code=$1 pat=$2; shift 2
  "$@" >out.txt 2>err.txt; local rc=$?
  [ "$rc" = "$code" ] || fail "$*: exit $rc, expected $code; stderr: $(head -c 400 err.txt)"
  if [ -z "$pat" ]; then [ ! -s err.txt ] || fail "$*: unexpected stderr: $(head -c 400 err.txt)"
  else grep -Eq -- "$pat" err.txt || fail "$*: stderr does not match /$pat/: $(head -c 400 err.txt)"; fi
}
absent() { [ ! -e "$1" ] || fail "$1 exists after a failed sweep"; }

# 240 small pinned scenarios (~0.2 ms each), and the reference outputs
cat > spec.json <<'EOF'
{"grid": {"model": ["gpt3-125m", "gpt3-350m", "gpt3-760m"], "cluster": ["dgx-a100-80g", "dgx-h100"],
 "gpus": [1, 2, 4, 8], "global_batch": [8, 16, 32, 64, 128], "seq": [512, 1024],
 "tp": 1, "pp": 1, "zero": 1, "micro_batch": 1, "precision": "bf16", "recompute": "none", "offload": "none", "top": 1}}
EOF
"$P" sweep spec.json --jobs 2 --output ref.jsonl || fail "reference run"
"$P" sweep spec.json --jobs 2 --format csv --output ref.csv || fail "reference CSV run"
[ "$(wc -l < ref.jsonl)" = 240 ] || fail "reference has $(wc -l < ref.jsonl) lines, expected 240"
absent ref.jsonl.part

# ---- writes that fail: exit 3, the file and errno named ----
expect 3 '^parplan sweep: /dev/full: write failed: No space left on device$' "$P" sweep spec.json --output /dev/full
expect 3 '^parplan sweep: stdout: write failed: No space left on device$' sh -c "exec \"$P\" sweep spec.json > /dev/full"
[ "$(wc -l < err.txt)" = 1 ] || fail "stdout to /dev/full: more than one line: $(cat err.txt)"

# ulimit -f: EFBIG (SIGXFSZ ignored); complete lines kept in FILE.part, none under FILE
( ulimit -f 64; exec "$P" sweep spec.json --output lim.jsonl ) >out.txt 2>err.txt; rc=$?
[ $rc = 3 ] || fail "ulimit -f: exit $rc, expected 3: $(cat err.txt)"
grep -Eq 'parplan sweep: --output lim.jsonl: write failed: File too large; the [0-9]+ complete lines are kept in lim.jsonl.part \(--resume lim.jsonl continues\)' err.txt ||
  fail "ulimit -f message: $(cat err.txt)"
absent lim.jsonl
n=$(wc -l < lim.jsonl.part)
[ "$n" -gt 0 ] && [ "$n" -lt 240 ] || fail "ulimit -f: journal has $n lines"
[ "$(tail -c 1 lim.jsonl.part | od -An -c | tr -d ' ')" = '\n' ] || fail "ulimit -f: the journal ends in a half line"
cmp -s lim.jsonl.part <(head -n "$n" ref.jsonl) || fail "ulimit -f: the kept lines differ from the reference"
expect 0 '' "$P" sweep spec.json --output lim.jsonl --resume lim.jsonl
cmp -s lim.jsonl ref.jsonl || fail "resume after ulimit -f differs from the uninterrupted run"
absent lim.jsonl.part
( ulimit -f 1; exec "$P" sweep spec.json --output zero.jsonl ) >out.txt 2>err.txt; rc=$? # 1 KiB: the first line is 2 KiB
[ $rc = 3 ] && grep -q 'nothing was kept' err.txt || fail "ulimit -f 1: exit $rc: $(cat err.txt)"
absent zero.jsonl
absent zero.jsonl.part

# ---- bad paths: exit 2, nothing created ----
expect 2 'parplan sweep: --output /nonexistent-dir/x.jsonl: cannot create /nonexistent-dir/x.jsonl.part: No such file or directory' \
  "$P" sweep spec.json --output /nonexistent-dir/x.jsonl
mkdir adir
expect 2 'parplan sweep: --output adir: is a directory' "$P" sweep spec.json --output adir
expect 2 'parplan sweep: adir: is a directory: expected a regular file' "$P" sweep adir
expect 2 'parplan sweep: missing.json: cannot open: No such file or directory' "$P" sweep missing.json
expect 2 'parplan sweep: --output ref.jsonl exists: pass --force' "$P" sweep spec.json --output ref.jsonl
cmp -s ref.jsonl <("$P" sweep spec.json --jobs 1) || fail "stdout output differs from --output"

# ---- FIFOs: never a hang ----
mkfifo fifo
expect 2 'parplan sweep: fifo: is not a regular file \(a FIFO, socket or device\)' timeout 20 "$P" sweep fifo
expect 2 'parplan sweep: --output fifo: cannot open: no process is reading the FIFO' timeout 20 "$P" sweep spec.json --output fifo
timeout 60 cat fifo > from_fifo & reader=$!
sleep 0.3
timeout 60 "$P" sweep spec.json --output fifo || fail "writing into a FIFO with a reader"
wait $reader
cmp -s from_fifo ref.jsonl || fail "what went through the FIFO differs from the reference"
expect 2 'parplan sweep: --resume fifo: is not a regular file' timeout 20 "$P" sweep spec.json --resume fifo

# ---- a half-written last line: cut, said, and resumed to the same bytes ----
for fmt in jsonl csv; do
  ref=ref.$fmt
  size=$(wc -c < "$ref")
  head -c $((size / 2)) "$ref" > half.$fmt      # ends inside a line
  tail -c 1 half.$fmt | grep -q . || fail "$fmt: the cut fell on a line end"
  expect 0 "parplan sweep: --resume half.$fmt.part: cut a half-written last line \([0-9]+ bytes\) back to the last complete line" \
    "$P" sweep spec.json --format $fmt --output half.$fmt --resume half.$fmt
  cmp -s half.$fmt "$ref" || fail "$fmt: resuming a half line differs from the uninterrupted run"
  absent half.$fmt.part
done
# resuming a finished output runs nothing and changes nothing
cp ref.jsonl done.jsonl
expect 0 '' "$P" sweep spec.json --output done.jsonl --resume done.jsonl
cmp -s done.jsonl ref.jsonl || fail "resuming a finished sweep changed it"
# a resume file from another format or another spec is refused
cp ref.csv other.jsonl
expect 2 'parplan sweep: --resume other.jsonl: holds CSV rows but --format is jsonl' "$P" sweep spec.json --output other.jsonl --resume other.jsonl
cmp -s other.jsonl ref.csv && absent other.jsonl.part || fail "a refused --resume moved or changed the file"
# one.json: scenario 0 of spec.json alone (its echo), so line 1 passes and line 2 is out of range
echo "{\"scenarios\": [$(head -n 1 ref.jsonl | sed 's/^.*"scenario":\({[^}]*}\),.*$/\1/')]}" > one.json
expect 2 'line 2 has index 1 but the spec holds 1 scenarios' "$P" sweep one.json --output x.jsonl --resume ref.jsonl
absent x.jsonl

# ---- kill -9 mid-sweep, then --resume: byte-identical ----
# 48 searched scenarios (~30 ms each): the kill lands after the 5th line
cat > heavy.json <<'EOF'
{"grid": {"model": ["llama3-8b", "mistral-7b"], "cluster": ["dgx-h100"], "gpus": [8, 16, 32, 64],
 "global_batch": [256, 512], "seq": [2048, 4096, 8192]}}
EOF
"$P" sweep heavy.json --jobs 2 --output heavy_ref.jsonl || fail "heavy reference run"
"$P" sweep heavy.json --jobs 1 --output k.jsonl 2>/dev/null & pid=$!
for _ in $(seq 1000); do [ -s k.jsonl.part ] && [ "$(wc -l < k.jsonl.part)" -ge 5 ] && break; sleep 0.01; done
kill -9 $pid 2>/dev/null; wait $pid 2>/dev/null
absent k.jsonl
[ -e k.jsonl.part ] || fail "kill -9: no journal"
"$P" sweep heavy.json --jobs 2 --output k.jsonl --resume k.jsonl 2>err.txt || fail "resume after kill -9: $(cat err.txt)"
cmp -s k.jsonl heavy_ref.jsonl || fail "resume after kill -9 differs from the uninterrupted run"

# ---- --force replaces a regular file; an interrupted journal needs --resume or --force ----
head -n 3 ref.jsonl > j.jsonl.part
expect 2 'j.jsonl.part holds an interrupted sweep: --resume j.jsonl continues it, --force starts over' "$P" sweep spec.json --output j.jsonl
"$P" sweep spec.json --output j.jsonl --force && cmp -s j.jsonl ref.jsonl || fail "--force over a journal"

# ---- a journal of another sweep (another spec, or --top) is refused, nothing mixed ----
head -n 1 ref.jsonl > mix.jsonl.part
echo '{"grid": {"model": ["gpt3-1.3b"], "cluster": ["dgx-a100-80g"], "gpus": [64], "global_batch": [512], "seq": [2048]}}' > mix.json
expect 2 'line 1 \(index 0\) is not scenario 0 of this spec' "$P" sweep mix.json --output mix.jsonl --resume mix.jsonl
expect 2 'is not scenario 0 of this spec with these options' "$P" sweep spec.json --framework fsdp --output mix.jsonl --resume mix.jsonl
absent mix.jsonl

# ---- every scenario bad input: exit 2 (not 1, "nothing fits"); a mix exits 1 ----
echo '{"grid": {"model": ["llama3-8bx"], "cluster": ["dgx-h100"], "gpus": [8], "global_batch": [64], "seq": [2048]}}' > allbad.json
expect 2 'every one of the 1 scenarios is bad input' "$P" sweep allbad.json --output allbad.jsonl
grep -q '"field":"$.model"' allbad.jsonl || fail "all bad: the line names the field"
# a path that cannot be read is bad input too (PP_ERR_IO exits 2)
echo '{"grid": {"model": ["no-such-model.json"], "cluster": ["dgx-h100"], "gpus": [8], "global_batch": [64], "seq": [2048]}}' > nofile.json
expect 2 'every one of the 1 scenarios is bad input' "$P" sweep nofile.json --output nofile.jsonl
echo '{"grid": {"model": ["llama3-8bx", "llama3-8b"], "cluster": ["dgx-h100"], "gpus": [8], "global_batch": [64], "seq": [2048]}}' > somebad.json
expect 1 '1 of 2 scenarios gave no plan' "$P" sweep somebad.json --output somebad.jsonl

[ $fails = 0 ] && echo "sweep_io: all cases passed" || echo "sweep_io: $fails failed" >&2
exit $((fails > 0))
