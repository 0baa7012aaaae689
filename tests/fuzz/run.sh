#!/bin/sh
# Runs every parplan fuzz harness for SECONDS each (default 150), one after
# another, from the seeds in tests/fuzz/corpus/ plus what earlier runs found.
# Usage: tests/fuzz/run.sh [SECONDS] [BUILD_DIR] [HARNESS...]   (after `make fuzz`)
# With HARNESS names (fuzz_deepspeed ...) only those run.
# New inputs go to BUILD_DIR/corpus/NAME (the seed folders stay untouched),
# crashes to BUILD_DIR/artifacts/NAME/, logs to BUILD_DIR/logs/NAME.log.
# Exit status 1 if any harness found a crash.
set -u
secs=${1:-150}
build=${2:-build-fuzz}
if [ $# -gt 2 ]; then shift 2; else set --; fi
only=" $* "
here=$(cd "$(dirname "$0")" && pwd)
status=0
for pair in model_json:model hf_config:hf gpu_catalog:gpus cluster_json:cluster deepspeed:deepspeed \
            megatron_args:megatron fsdp_config:fsdp sweep_spec:sweep estimate_request:request \
            sweep_resume:resume; do
  name=fuzz_${pair%%:*}
  [ "$only" = "  " ] || case $only in *" $name "*) ;; *) continue ;; esac
  seeds=$here/corpus/${pair##*:}
  bin=$build/$name
  [ -x "$bin" ] || { echo "$bin not built: run make fuzz" >&2; exit 2; }
  mkdir -p "$build/corpus/$name" "$build/artifacts/$name" "$build/logs"
  maxlen=8192
  [ "$name" = fuzz_gpu_catalog ] && maxlen=32768
  dict=$here/json.dict
  [ "$name" = fuzz_megatron_args ] && dict=$here/megatron.dict
  [ "$name" = fuzz_fsdp_config ] && dict=$here/fsdp.dict
  "$bin" "$build/corpus/$name" "$seeds" -dict="$dict" -max_len=$maxlen \
      -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$build/artifacts/$name/" >"$build/logs/$name.log" 2>&1
  rc=$?
  [ $rc -ne 0 ] && status=1
  last=$(grep -E '^#[0-9]+' "$build/logs/$name.log" | tail -1)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$build/logs/$name.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$build/logs/$name.log")
  printf '%-18s rc=%d execs=%s exec/s=%s  %s\n' "$name" "$rc" "$execs" "$rate" "$last"
  ls "$build/artifacts/$name" 2>/dev/null | sed "s|^|    artifact: $build/artifacts/$name/|"
done
exit $status
