#!/usr/bin/env bash
# One call on a GPU machine: GPU tests, benchmarks, Nsight Compute captures and sanitizer runs.
# Usage (device tool): bash scripts/gpu_check.sh [stage ...]   stages: env gputests tests bench ncu captures bugs sanitize ncubench ncufast ceilings tune sgemm95 shapes why why_hopper ncurep verdicts verdicts_noisy foreign wgmma cluster cluster1 splitk auto sannew sanv9sk addmm bf16 grid tunegrid why_step sanbf16 clusterk sanclusterk narrow sannarrow streamk sksquare padprobe padb padc serial hold sweeppred san64 sanids epilogue hopper_ab v9var staged hsk hskbf16 residency epi4 why8192 hskc hskcbf16 sanac closecalls newcfg sgemm98 icache tunerounds padlaunch fused padbalone tilecopy coopprobe pdl catalog sanauto outbid tmaprobe skhybrid
# Everything lands in $OUT/evidence/ and is packed into $OUT/evidence.tar.gz; a summary table prints last.
set -u
OUT=${OUT:-/tmp/gemmlens-out}
EV="$OUT/evidence"
mkdir -p "$EV"
export PYTHONUNBUFFERED=1 CUPY_TF32=0 CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-/tmp/cupy-cache}"
# The .git the device tool sends can be stale (HEAD 3fb42cc under a tree from af7fa2a on 2026-11-22), so git there
# names the wrong commit (then "-dirty"): pass the real one in, GEMMLENS_COMMIT=<commit> bash scripts/gpu_check.sh.
[ -n "${GEMMLENS_COMMIT:-}" ] || echo "warning: GEMMLENS_COMMIT unset: results record git's view of this copy" >&2
PY=${PY:-python3}
STAGES=${*:-env tests bench ncu captures sanitize}
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
LADDER=v1,v1-coalesced,v2,tiled-8,tiled-16,tiled-32,v3,v4,v5
declare -A STATUS

stage() { echo; echo "=== $1 ($(date -u +%H:%M:%S))"; }
record() { STATUS[$1]="$2"; }
gpu_clocks() {  # gpu_clocks FILE: the time, and the GPU's name, driver, clocks, power and temperature, into FILE
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv; } > "$1" 2>&1
}

config_ids() {  # config_ids LIST: the ids of kernels/tuning.py's LIST of tuning configurations, comma-separated
  $PY -c "from kernels.tuning import $1 as C; print(','.join(c['id'] for c in C))"
}

job() {  # job FILE OP KERNELS M N K
  $PY - "$@" <<'PY'
import json, sys
from profiling.gpu.jobs import BenchSettings, Job, Task
path, op, kernels, m, n, k = sys.argv[1:7]
tasks = [Task(kid, int(m), int(n), int(k)) for kid in kernels.split(",")]
json.dump(Job(op=op, tasks=tasks, settings=BenchSettings(repeats=1, warmup=1, flush_l2=False)).to_dict(), open(path, "w"))
PY
}

sweep_in_rounds() {  # sweep_in_rounds LIST DIR: for each 'MxNxK id,id,...' line of LIST, those configurations and
  # cuBLAS timed together at the shape in 30 interleaved rounds (tune --interleaved) into this GPU's tuning record;
  # DIR gets tune_<i>.json and .txt per line and log.txt, a "<shape> exit=<status>" line each
  local i=0 shape ids
  while read -r shape ids; do
    i=$((i + 1))
    timeout 300 $PY -m profiling tune --kernels "$ids" --sizes "$shape" --repeats 30 --interleaved --record \
       --json "$2/tune_$i.json" > "$2/tune_$i.txt" 2>&1; echo "$shape exit=$?" >> "$2/log.txt"
  done < "$1"
}

sanitize_jobs() {  # sanitize_jobs SECONDS DIR STAGE NAME...: memcheck and racecheck of /tmp/san_<NAME>.json each, then
  # their summaries, printed and recorded for STAGE
  local secs=$1 dir=$2 name=$3 j; shift 3
  # --report-api-errors no: v9-splitk's launches after an operation's first go through cuda-bindings
  # (profiling.gpu.pdl), whose start-up lookups of driver entry points the driver lacks count as API errors; the
  # kernels' memory errors and races are still counted.
  for j in "$@"; do
    timeout "$secs" "$SAN" --tool memcheck --report-api-errors no $PY -m profiling worker --job /tmp/san_$j.json > "$dir/memcheck_$j.txt" 2>&1
    timeout "$secs" "$SAN" --tool racecheck --report-api-errors no --racecheck-report hazard $PY -m profiling worker --job /tmp/san_$j.json > "$dir/racecheck_$j.txt" 2>&1
  done
  grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$dir"/*.txt
  record "$name" "$(grep -h -E 'ERROR SUMMARY|RACECHECK SUMMARY' "$dir"/*.txt | sort | uniq -c | tr -s ' ' | tr '\n' ';')"
}

sanitize_at_shapes() {  # sanitize_at_shapes SECONDS DIR STAGE PREFIX IDS SHAPES: memcheck and racecheck (at most
  # SECONDS each) of the configurations IDS (comma-separated) at each of SHAPES (MxNxK, comma-separated), every result
  # verified against cuBLAS, into DIR (configs.txt names IDS), recorded for STAGE
  local secs=$1 dir=$2 name=$3 prefix=$4 ids=$5 shapes=$6 i=0 shape jobs=()
  mkdir -p "$dir"; echo "$ids" > "$dir/configs.txt"
  for shape in ${shapes//,/ }; do
    i=$((i + 1)); job "/tmp/san_$prefix$i.json" verify "$ids" ${shape//x/ }; jobs+=("$prefix$i")
  done
  sanitize_jobs "$secs" "$dir" "$name" "${jobs[@]}"
}

ab_pairs() {  # ab_pairs DIR SIZES PAIR...: the paired, interleaved A/B of each PAIR (A,B) at SIZES (comma-separated),
  # 30 pairs each, into DIR/ab_<A>_vs_<B>.json and .txt, each table printed
  local dir=$1 sizes=$2 pair rows; shift 2
  rows=$(( $(tr -cd , <<< "$sizes" | wc -c) + 2 ))
  for pair in "$@"; do
    timeout 150 $PY -m profiling bench --ab "$pair" --sizes "$sizes" --repeats 30 --max-seconds 30 \
       --json "$dir/ab_${pair//,/_vs_}.json" > "$dir/ab_${pair//,/_vs_}.txt" 2>&1; tail -"$rows" "$dir/ab_${pair//,/_vs_}.txt"
  done
}

ab_verdicts() {  # ab_verdicts DIR: how many A/B rows of DIR/ab_*.txt reached a verdict (faster, same or slower)
  cat "$1"/ab_*.txt | grep -c -E " (faster|same|slower) "
}

rested_ab_pairs() {  # rested_ab_pairs DIR PAIR:SIZES...: the paired A/B of each PAIR (A,B) at its SIZES, every pair
  # after 2 s of rest (none power-capped), 20 pairs each, into DIR/ab_<A>,<B>.json and .txt, each table printed
  local dir=$1 pair; shift
  for pair in "$@"; do
    timeout "${REST_AB_SECONDS:-150}" $PY -m profiling bench --ab "${pair%%:*}" --sizes "${pair#*:}" --rest 2 --repeats 20 \
       --json "$dir/ab_${pair%%:*}.json" > "$dir/ab_${pair%%:*}.txt" 2>&1; tail -3 "$dir/ab_${pair%%:*}.txt"
  done
}

why_capture() {  # why_capture NAME KERNELS M N K SECONDS VIEW...: ncu's full set with source counters of the kernels at
  # M x N x K into $EV/why/, exported as the raw and details pages and the source page in each VIEW (gzipped), under
  # the names the Why page looks for (ncu_why_<NAME>_raw.csv, source_why_<NAME>_<view>.csv.gz)
  local name=$1 kernels=$2 m=$3 n=$4 k=$5 secs=$6 view F="$EV/why"; shift 6; mkdir -p "$F"
  job /tmp/why_$name.json profile "$kernels" "$m" "$n" "$k"
  timeout "$secs" "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --set full --import-source yes \
     -f -o /tmp/why_$name $PY -m profiling worker --job /tmp/why_$name.json > "$F/why_${name}_log.txt" 2>&1
  echo "exit=$?" >> "$F/why_${name}_log.txt"
  [ -f /tmp/why_$name.ncu-rep ] || return 0
  "$NCU" --import /tmp/why_$name.ncu-rep --csv --page raw > "$F/ncu_why_${name}_raw.csv" 2>&1
  "$NCU" --import /tmp/why_$name.ncu-rep --csv --page details > "$F/ncu_why_${name}_details.csv" 2>&1
  for view in "$@"; do
    "$NCU" --import /tmp/why_$name.ncu-rep --csv --page source --print-source "$view" > "$F/source_why_${name}_${view//,/_}.csv" 2>&1
    gzip -f "$F/source_why_${name}_${view//,/_}.csv"
  done
}

v9splitk_check() {  # v9splitk_check STAGE SECONDS SUFFIX JOB MxNxK...: into $EV/STAGE/, v9-splitk's GPU tests (at most
  # SECONDS), then memcheck and racecheck (files named after JOB1, JOB2, ...) of its configurations whose ids end in
  # SUFFIX (or hold it before a later part: -ser in -d8-ser-padc) at each shape, every result verified
  local name=$1 secs=$2 suffix=$3 prefix=$4 F="$EV/$1"; shift 4; mkdir -p "$F"
  timeout "$secs" $PY -m pytest tests/gpu/test_gpu_v9_splitk.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  local cfgs; cfgs=$($PY -c "from kernels.tuning import V9_SPLITK_TUNING_CONFIGS as C; print(','.join(c['id'] for c in C if c['id'].endswith('$suffix') or '$suffix-' in c['id']))")
  sanitize_at_shapes 120 "$F" "${name}_sanitizer" "$prefix" "$cfgs" "$(IFS=,; echo "$*")"
  record "$name" "tests: $(tail -1 "$F/gpu_tests.txt")"
}

stream_k_variant_check() {  # stream_k_variant_check STAGE SUFFIX JOB: into $OUT/STAGE.tar.gz, v9-splitk's stream-K
  # configurations ending in SUFFIX: their GPU tests, each beside its twin padding B and C (-pad, three launches) and
  # cuBLAS in 30 interleaved rounds at the narrow deep-K shapes, the launch probe at 4096x127x4096 (the padded
  # operation's copy back took 7.3 of its 110.6 us there on an H200, results/h200-2026-11-30/padlaunch/), then memcheck
  # and racecheck (files named after JOB1, JOB2, ...) at shapes with N % 4 != 0, N = 1 and an odd M x N, every result
  # verified. About 5 minutes for two configurations.
  local name=$1 suffix=$2 prefix=$3 F="$EV/$1"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  local ids pairs cases
  ids=$($PY -c "from kernels.tuning import V9_SPLITK_TUNING_CONFIGS as C; print(','.join(c['id'] for c in C if c['id'].endswith('$suffix')))")
  pairs=$($PY -c "print(','.join(f\"{i.removesuffix('$suffix')}-pad,{i}\" for i in '$ids'.split(',')))")
  cases=$($PY -c "print(','.join(f'4096x127x4096:{i}' for i in '$pairs'.split(',')))")
  timeout 150 $PY -m pytest tests/gpu/test_gpu_v9_splitk.py -q -m gpu -k "${suffix##*-}" -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  timeout 200 $PY -m profiling bench --kernels "cublas,$pairs" --interleaved \
     --sizes 4096x127x4096,4096x127x8191,2048x127x4096,1024x127x8191,4096x333x4096,333x127x8191 --repeats 30 \
     --json "$F/bench_narrow.json" > "$F/bench_narrow.txt" 2>"$F/bench_narrow.log"; echo "exit=$?" >> "$F/bench_narrow.log"
  [ -f "$F/bench_narrow.json" ] && $PY scripts/ratio_table.py "$F/bench_narrow.json" > "$F/ratios_narrow.md" 2>&1
  grep -E -e "$suffix|sk-pad \|" "$F/ratios_narrow.md" 2>/dev/null | head -30
  timeout 120 $PY scripts/split_launch_probe.py --repeats 40 --cases "$cases" \
     > "$F/launch_probe.md" 2>&1; echo "exit=$?" >> "$F/launch_probe.md"; tail -6 "$F/launch_probe.md"
  sanitize_at_shapes 60 "$F" "${name}_sanitizer" "$prefix" "$ids" 300x263x2000,333x1x4097,127x129x8189
  record "$name" "$(tail -1 "$F/gpu_tests.txt"); bench ok rows: $(grep -c ' ok ' "$F/bench_narrow.txt")"
  # The device tool brings back at most 8 files: the folder travels as one archive.
  tar -C "$EV" -czf "$OUT/$name.tar.gz" "$name" && rm -rf "$F"
}

for s in $STAGES; do case $s in
env)
  stage env
  { date -u; nvidia-smi; nvidia-smi -q -d CLOCK,POWER,PERFORMANCE | head -120; $PY -c "import cupy,sys;print(sys.version);print('cupy',cupy.__version__)";
    "$NCU" --version; "$SAN" --version; nvcc --version; } > "$EV/env.txt" 2>&1
  record env "$(grep -m1 -o 'NVIDIA H[0-9]*[^|]*' "$EV/env.txt" | head -1 | tr -s ' ')"
  ;;
gputests)
  # Only the GPU tests GPU_TESTS names (pytest arguments, e.g. "tests/gpu/test_gpu_pdl.py -k ncu"), into
  # gpu_tests_selected.txt.
  stage gputests
  timeout "${GPU_TESTS_SECONDS:-300}" $PY -m pytest ${GPU_TESTS:?GPU_TESTS names the tests} -q -m gpu -p no:cacheprovider \
     > "$EV/gpu_tests_selected.txt" 2>&1; tail -5 "$EV/gpu_tests_selected.txt"
  record gputests "$(tail -1 "$EV/gpu_tests_selected.txt")"
  ;;
tests)
  stage tests
  timeout 540 $PY -m pytest tests/gpu -q -m gpu -p no:cacheprovider 2>&1 | tee "$EV/gpu_tests.txt" | tail -30
  record tests "$(tail -1 "$EV/gpu_tests.txt")"
  ;;
bench)
  stage bench
  timeout 400 $PY -m profiling bench --kernels all --sizes 1024,2048,4096 --repeats 30 --json "$EV/bench_ladder.json" 2>"$EV/bench_ladder.log" | tee "$EV/bench_ladder.txt"
  fast=$($PY -c "from kernels.catalog import CATALOG; print(','.join(s.id for s in CATALOG if s.group in ('reference','beyond','tensor-core') or s.id in ('v3','v4','v5')))")
  timeout 240 $PY -m profiling bench --kernels "$fast" --sizes 8192 --repeats 20 --json "$EV/bench_8192.json" 2>"$EV/bench_8192.log" | tee "$EV/bench_8192.txt"
  record bench "$(grep -c ' ok ' "$EV/bench_ladder.txt") ok rows at 1024-4096; $(grep -c ' ok ' "$EV/bench_8192.txt") at 8192"
  ;;
ncu)
  stage ncu
  F="$EV/ncu"; mkdir -p "$F"
  timeout 300 $PY -m profiling profile --kernels "cublas,$LADDER" --sizes 1024 --set quick -o "$F/ladder_1024.ncu-rep" > "$F/profile_cli.txt" 2>&1
  echo "profile rc=$?" >> "$F/profile_cli.txt"; tail -5 "$F/profile_cli.txt"
  R="$F/ladder_1024.ncu-rep"
  if [ -f "$R" ]; then
    "$NCU" --import "$R" --csv --page raw > "$F/raw.csv" 2>&1
    "$NCU" --import "$R" --csv --page details > "$F/details.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-metric-name name > "$F/details_names.csv" 2>&1
    "$NCU" --import "$R" --csv --print-summary per-kernel > "$F/summary.csv" 2>&1
    # --print-units auto is ncu's default for --import (details.csv already has it): capture base units.
    "$NCU" --import "$R" --csv --page details --print-units base > "$F/details_base_units.csv" 2>&1
    "$NCU" --import "$R" --csv --page raw --print-units base > "$F/raw_base_units.csv" 2>&1
  fi
  job /tmp/small.json profile v1,v5 256 256 256
  timeout 120 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --section LaunchStats --section Occupancy \
     --metrics gpu__time_duration.sum,sm__sass_thread_inst_executed_op_ffma_pred_on.sum -f -o "$F/small" $PY -m profiling worker --job /tmp/small.json > "$F/small_log.txt" 2>&1
  timeout 120 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --csv \
     --metrics gpu__time_duration.sum,launch__registers_per_thread,sm__sass_thread_inst_executed_op_ffma_pred_on.sum $PY -m profiling worker --job /tmp/small.json > "$F/stdout_mixed.txt" 2>&1
  timeout 120 "$NCU" --clock-control none --metrics no_such__metric.sum -k regex:sgemm $PY -m profiling worker --job /tmp/small.json > "$F/err_unknown_metric.txt" 2>&1; echo "exit=$?" >> "$F/err_unknown_metric.txt"
  timeout 120 "$NCU" --clock-control none -k regex:no_kernel_has_this_name --metrics gpu__time_duration.sum $PY -m profiling worker --job /tmp/small.json > "$F/err_no_kernels.txt" 2>&1; echo "exit=$?" >> "$F/err_no_kernels.txt"
  job /tmp/fault.json selftest_fault selftest 1 1 1
  timeout 120 "$NCU" --clock-control none --metrics gpu__time_duration.sum $PY -m profiling worker --job /tmp/fault.json > "$F/err_target_crashed.txt" 2>&1; echo "exit=$?" >> "$F/err_target_crashed.txt"
  timeout 60 "$NCU" --query-metrics --chip gh100 > "$F/query_metrics.txt" 2>&1
  job /tmp/full.json profile v4 1024 1024 1024
  timeout 200 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --set full -f -o "$F/full_v4" $PY -m profiling worker --job /tmp/full.json > "$F/full_log.txt" 2>&1
  [ -f "$F/full_v4.ncu-rep" ] && "$NCU" --import "$F/full_v4.ncu-rep" --csv --page raw > "$F/full_raw.csv" 2>&1 && "$NCU" --import "$F/full_v4.ncu-rep" --csv --page details > "$F/full_details.csv" 2>&1
  record ncu "$(ls "$F" | wc -l) files; raw rows: $(($(wc -l < "$F/raw.csv" 2>/dev/null || echo 2) - 2))"
  ;;
captures)
  # Real tool text for the CPU parser tests (tests/fixtures/ncu): ncu's banner and error messages, and
  # base-unit exports of the committed --set full report (its default, auto-unit, exports are fixtures already).
  stage captures
  F="$EV/captures"; mkdir -p "$F"
  FULL=results/h200-2026-11-22/v4_full_1024.ncu-rep
  "$NCU" --version > "$F/version.txt" 2>&1
  "$NCU" --import "$FULL" --csv --page details --print-units base > "$F/full_details_base_units.csv" 2>&1
  "$NCU" --import "$FULL" --csv --page raw --print-units base > "$F/full_raw_base_units.csv" 2>&1
  # Checks, not fixtures: is the committed report the one full_*.csv came from, and is "auto" the default?
  "$NCU" --import "$FULL" --csv --page details > "$F/check_full_details.csv" 2>&1
  "$NCU" --import "$FULL" --csv --page raw > "$F/check_full_raw.csv" 2>&1
  "$NCU" --import "$FULL" --csv --page details --print-units auto > "$F/check_full_details_auto.csv" 2>&1
  { cmp "$F/check_full_details.csv" tests/fixtures/ncu/full_details.csv && echo "details re-export == fixture";
    cmp "$F/check_full_raw.csv" tests/fixtures/ncu/full_raw.csv && echo "raw re-export == fixture";
    cmp "$F/check_full_details.csv" "$F/check_full_details_auto.csv" && echo "--print-units auto == default";
    cmp "$F/check_full_details.csv" "$F/full_details_base_units.csv" >/dev/null || echo "base units differ from default"; } > "$F/checks.txt" 2>&1
  job /tmp/small.json profile v1,v5 256 256 256
  # A metric name that does not exist (FIELD-NOTES: "Failed to find metric", exit 9) and a target that raises.
  timeout 120 "$NCU" --clock-control none --metrics sm__maxwarps_per_active_cycle_pct -k regex:sgemm $PY -m profiling worker --job /tmp/small.json > "$F/err_failed_to_find_metric.txt" 2>&1; echo "exit=$?" >> "$F/err_failed_to_find_metric.txt"
  timeout 120 "$NCU" --clock-control none --metrics gpu__time_duration.sum $PY -c "raise RuntimeError('boom')" > "$F/err_target_traceback.txt" 2>&1; echo "exit=$?" >> "$F/err_target_traceback.txt"
  # ERR_NVGPUCTRPERM needs a user without access to the performance counters (the driver's default).
  if command -v runuser >/dev/null && id nobody >/dev/null 2>&1; then
    timeout 120 runuser -u nobody -- env HOME=/tmp CUPY_CACHE_DIR=/tmp/nobody-cupy "$NCU" --clock-control none --metrics gpu__time_duration.sum $PY -c "import cupy; print(int(cupy.arange(4).sum()))" > "$F/err_permission.txt" 2>&1; echo "exit=$?" >> "$F/err_permission.txt"
  fi
  record captures "$(ls "$F" | wc -l) files; $(tr '\n' ';' < "$F/checks.txt")"
  ;;
bugs)
  # Issue 19's evidence on the GPU: each deliberate bug of scripts/deliberate_bugs.py that the GPU tests must catch,
  # applied alone (files restored after each run); one JSON line per bug in deliberate_bugs_gpu.jsonl.
  stage bugs
  B="$EV/deliberate_bugs_gpu.jsonl"; : > "$B"
  timeout 300 $PY scripts/deliberate_bugs.py --only 1 2 3 -- tests/gpu/test_gpu_wrong_kernels.py >> "$B" 2>&1
  timeout 200 $PY scripts/deliberate_bugs.py --only 5 -- tests/gpu/test_gpu_kernels.py -k hgemm >> "$B" 2>&1
  timeout 150 $PY scripts/deliberate_bugs.py --only 8 9 -- tests/gpu/test_gpu_flush.py >> "$B" 2>&1
  cat "$B"
  record bugs "$(grep -c '"caught": true' "$B") of $(grep -c '"bug"' "$B") caught"
  ;;
sanitize)
  stage sanitize
  F="$EV/sanitizer"; mkdir -p "$F"
  job /tmp/san.json verify v5,v2 200 136 72
  job /tmp/fault.json selftest_fault selftest 1 1 1
  timeout 180 "$SAN" --tool racecheck --racecheck-report hazard $PY -m profiling worker --job /tmp/san.json > "$F/racecheck_v5.txt" 2>&1
  timeout 180 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/san.json > "$F/memcheck_v5.txt" 2>&1
  timeout 180 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/fault.json > "$F/memcheck_fault.txt" 2>&1
  timeout 200 $PY -m profiling sanitize --kernel v5 --size 256 --tool racecheck > "$F/sanitize_cli.txt" 2>&1; echo "rc=$?" >> "$F/sanitize_cli.txt"
  # The pipelined kernels are where races hide: racecheck and memcheck at an awkward size.
  job /tmp/san_fast.json verify v6-vectorized,v7-warptile,v8-async,v9-regdb 300 264 72
  timeout 300 "$SAN" --tool racecheck --racecheck-report hazard $PY -m profiling worker --job /tmp/san_fast.json > "$F/racecheck_fast.txt" 2>&1
  timeout 300 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/san_fast.json > "$F/memcheck_fast.txt" 2>&1
  job /tmp/san_tc.json verify wmma-addmm,wmma-async 272 400 96
  timeout 300 "$SAN" --tool racecheck --racecheck-report hazard $PY -m profiling worker --job /tmp/san_tc.json > "$F/racecheck_tensor.txt" 2>&1
  timeout 300 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/san_tc.json > "$F/memcheck_tensor.txt" 2>&1
  record sanitize "$(grep -h 'ERROR SUMMARY' "$F"/*.txt | tr '\n' ';')"
  ;;
ncubench)
  stage ncubench
  F="$EV/ncubench"; mkdir -p "$F"
  t0=$(date +%s.%N)
  timeout 400 $PY -m profiling profile --kernels "$LADDER" --sizes 4096 --set quick -o "$F/ladder_4096.ncu-rep" > "$F/one_process.txt" 2>&1
  t1=$(date +%s.%N)
  for k in ${LADDER//,/ }; do timeout 200 $PY -m profiling profile --kernels "$k" --sizes 4096 --set quick -o "$F/single_$k.ncu-rep" > "$F/single_$k.txt" 2>&1; rm -f "$F/single_$k.ncu-rep"; done
  t2=$(date +%s.%N)
  one=$($PY -c "print(round($t1 - $t0, 1))"); sep=$($PY -c "print(round($t2 - $t1, 1))")
  echo "{\"one_process_s\": $one, \"separate_processes_s\": $sep, \"kernels\": \"$LADDER\", \"size\": 4096}" > "$F/ncu_timing.json"
  [ -f "$F/ladder_4096.ncu-rep" ] && "$NCU" --import "$F/ladder_4096.ncu-rep" --csv --page raw > "$F/raw_4096.csv" 2>&1
  record ncubench "one process ${one}s vs separate ${sep}s"
  ;;
ncufast)
  stage ncufast
  F="$EV/ncufast"; mkdir -p "$F"
  fast=$($PY -c "from kernels.catalog import CATALOG; print(','.join(s.id for s in CATALOG if s.group in ('reference','beyond','tensor-core')))")
  timeout 300 $PY -m profiling profile --kernels "$fast" --sizes 4096 --set quick -o "$F/fast_4096.ncu-rep" > "$F/profile_cli.txt" 2>&1
  [ -f "$F/fast_4096.ncu-rep" ] && "$NCU" --import "$F/fast_4096.ncu-rep" --csv --page raw > "$F/raw_fast_4096.csv" 2>&1 && "$NCU" --import "$F/fast_4096.ncu-rep" --csv --page details > "$F/details_fast_4096.csv" 2>&1
  rm -f "$F/fast_4096.ncu-rep"
  record ncufast "$(grep -c '^\[' "$F/profile_cli.txt") launches profiled"
  ;;
ceilings)
  stage ceilings
  GEMMLENS_CACHE_DIR=/tmp/gemmlens-cache timeout 300 $PY -m profiling ceilings --refresh --json > "$EV/ceilings.json" 2>"$EV/ceilings.log"
  GEMMLENS_CACHE_DIR=/tmp/gemmlens-cache $PY -m profiling ceilings | tee "$EV/ceilings.txt"
  record ceilings "$(grep -c measured "$EV/ceilings.txt") lines"
  ;;
tune)
  # v8 and v9 configurations at TUNE_SIZES, then v8-splitk's at the split-K shapes; each --record adds to this GPU's
  # record (results/tuning/<gpu>.json keeps the shapes a sweep did not run). About 80 s + 30 s.
  stage tune
  timeout 400 $PY -m profiling tune --kernels v8-async,v9-regdb --sizes "${TUNE_SIZES:-2048,4096,8192}" --record --json "$EV/tuning.json" 2>"$EV/tuning.log" | tail -16
  timeout 200 $PY -m profiling tune --kernels v8-splitk --sizes "${SPLITK_TUNE_SIZES:-127x127x8191,333x4096x4096,64x64x65536}" --record \
     --json "$EV/tuning_splitk.json" 2>"$EV/tuning_splitk.log" | tail -8
  cp results/tuning/*.json "$EV/" 2>/dev/null
  record tune "$(test -f "$EV/tuning.json" && echo written || echo missing); split-K $(test -f "$EV/tuning_splitk.json" && echo written || echo missing)"
  ;;
sgemm95)
  # Issue 15's SGEMM target: every v9 configuration (tile shapes, FFMA orders, 128-thread blocks) against cuBLAS at
  # 2048-8192 in one run, then the quick set (stall ratios) of cuBLAS and the candidates at 4096 for the why.
  stage sgemm95
  F="$EV/sgemm95"; mkdir -p "$F"
  v9=${SGEMM95_KERNELS:-$(config_ids V9_TUNING_CONFIGS)}
  timeout 420 $PY -m profiling bench --kernels "cublas,$v9" --repeats "${SGEMM95_REPEATS:-30}" \
     --sizes "${SGEMM95_SIZES:-2048,4096,8192}" --json "$F/bench.json" 2>"$F/bench.log" | tee "$F/bench.txt"
  pick=${SGEMM95_NCU:-cublas,v9-regdb-256x128x16-w64x64-t16x8-s3,v9-regdb-256x128x16-w64x64-t16x8-s3-o2,v9-regdb-128x256x16-w64x64-t8x16-s3-o1,v9-regdb-128x128x8-w64x64-t8x16-s4,v9-regdb-128x256x16-w32x128-t8x16-s3}
  timeout 240 $PY -m profiling profile --kernels "$pick" --sizes 4096 --set quick -o "$F/quick_4096.ncu-rep" > "$F/profile_cli.txt" 2>&1
  [ -f "$F/quick_4096.ncu-rep" ] && "$NCU" --import "$F/quick_4096.ncu-rep" --csv --page raw > "$F/raw_4096.csv" 2>&1 \
     && $PY scripts/stall_table.py "$F/raw_4096.csv" | tee "$F/stalls_4096.txt"
  record sgemm95 "$(grep -c ' ok ' "$F/bench.txt") ok rows; $(wc -l < "$F/stalls_4096.txt" 2>/dev/null || echo 0) stall rows"
  ;;
shapes)
  # Issue 15's sizes and shapes, the tunable kernels and v8-splitk (small M*N, large K) against cuBLAS in one run
  # (after `tune` on this GPU, the configuration is the one the record predicts fastest at each shape; each result
  # names it in `config`).
  stage shapes
  timeout 400 $PY -m profiling bench --kernels cublas,v8-async,v9-regdb,v8-splitk --repeats 30 \
     --sizes "${SHAPE_SIZES:-1024,2048,4096,8192,4096x4096x333,333x4096x4096,127x127x8191}" \
     --json "$EV/shapes_bench.json" 2>"$EV/shapes_bench.log" | tee "$EV/shapes_bench.txt"
  record shapes "$(grep -c ' ok ' "$EV/shapes_bench.txt") ok rows"
  ;;
why)
  # Full set with source counters for the whole catalog, one ncu process per size (the "why" views: stalls,
  # hot lines, SASS); exported as raw, details and source pages.
  stage why
  F="$EV/why"; mkdir -p "$F"
  all=$($PY -c "from kernels.catalog import CATALOG; print(','.join(s.id for s in CATALOG))")
  for n in 1024 4096; do
    job /tmp/why_$n.json profile "$all" $n $n $n
    timeout 330 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --set full --import-source yes \
       -f -o /tmp/why_$n $PY -m profiling worker --job /tmp/why_$n.json > "$F/why_${n}_log.txt" 2>&1
    echo "exit=$?" >> "$F/why_${n}_log.txt"
    if [ -f /tmp/why_$n.ncu-rep ]; then
      "$NCU" --import /tmp/why_$n.ncu-rep --csv --page raw > "$F/why_${n}_raw.csv" 2>&1
      "$NCU" --import /tmp/why_$n.ncu-rep --csv --page details > "$F/why_${n}_details.csv" 2>&1
      "$NCU" --import /tmp/why_$n.ncu-rep --csv --page source --print-source cuda,sass > "$F/why_${n}_source_cuda_sass.csv" 2>&1
      "$NCU" --import /tmp/why_$n.ncu-rep --csv --page source --print-source sass > "$F/why_${n}_source_sass.csv" 2>&1
    fi
  done
  record why "$(ls "$F" | wc -l) files; launches at 1024: $(($(wc -l < "$F/why_1024_raw.csv" 2>/dev/null || echo 2) - 2))"
  ;;
verdicts)
  # Issue 20: one A/B pair timed interleaved and back-to-back at rising repeats (interval width against repeats),
  # a second back-to-back run (a committed run against another of the same code), the operations of cuBLAS at
  # shapes where it may launch more than one kernel (ncu, NVTX range), and the shape-grid sweep for the app.
  stage verdicts
  F="$EV/verdicts"; mkdir -p "$F"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_verdicts.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests_verdicts.txt" 2>&1; tail -3 "$F/gpu_tests_verdicts.txt"
  PAIR=${AB_PAIR:-v7-warptile,v8-async}; S=${AB_SIZE:-4096}
  for r in 10 30 100 300; do
    timeout 150 $PY -m profiling bench --ab "$PAIR" --sizes $S --repeats $r --max-seconds 30 --json "$F/ab_${S}_r$r.json" > "$F/ab_${S}_r$r.txt" 2>&1
    timeout 150 $PY -m profiling bench --kernels "$PAIR" --sizes $S --repeats $r --max-seconds 30 --json "$F/seq_${S}_r$r.json" > "$F/seq_${S}_r$r.txt" 2>&1
  done
  timeout 150 $PY -m profiling bench --kernels "$PAIR" --sizes $S --repeats 100 --max-seconds 30 --json "$F/again_seq_${S}_r100.json" > "$F/again_seq_${S}_r100.txt" 2>&1
  $PY scripts/ab_table.py "$F" > "$F/ab_table.md" 2>&1; cat "$F/ab_table.md"
  $PY - "$F/ops.json" <<'PY'
import json, sys
from profiling.gpu.jobs import BenchSettings, Job, Task
shapes = [(127, 127, 8191), (4096, 4096, 333), (333, 4096, 4096), (64, 64, 65536)]
tasks = [Task(k, *s) for s in shapes for k in ("cublas", "cublas-hgemm", "v9-regdb")]
json.dump(Job(op="profile", tasks=tasks, settings=BenchSettings(repeats=1, warmup=1, flush_l2=False)).to_dict(), open(sys.argv[1], "w"))
PY
  timeout 200 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --section SpeedOfLight --section LaunchStats      --metrics gpu__time_duration.sum,dram__bytes.sum -f -o /tmp/ops $PY -m profiling worker --job "$F/ops.json" > "$F/ops_log.txt" 2>&1
  echo "exit=$?" >> "$F/ops_log.txt"
  [ -f /tmp/ops.ncu-rep ] && "$NCU" --import /tmp/ops.ncu-rep --csv --page raw > "$F/ops_raw.csv" 2>&1 \
     && "$NCU" --import /tmp/ops.ncu-rep --csv --page details > "$F/ops_details.csv" 2>&1
  timeout 150 $PY -m profiling bench --kernels cublas,cublas-hgemm --sizes 127x127x8191,4096x4096x333,333x4096x4096,64x64x65536 \
     --repeats 30 --json "$F/ops_bench.json" > "$F/ops_bench.txt" 2>&1
  timeout 330 $PY -m profiling bench --kernels v5,v8-async,v9-regdb --repeats 10 --max-seconds 1 \
     --grid "${GRID:-M=1,16,64,128,512,1024,4096,8192,N=128,512,1024,2048,4096,8192,12288,16384,K=512,8192}" \
     --json "$F/sweep_grid.json" > "$F/sweep_grid.txt" 2>"$F/sweep_grid.log"
  record verdicts "$(ls "$F" | wc -l) files; grid ok rows: $(grep -c ' ok ' "$F/sweep_grid.txt")"
  ;;
verdicts_noisy)
  # The same A/B pair beside a noisy neighbour (scripts/gpu_neighbour.py: cuBLAS bursts on and off on the same GPU,
  # as another job on a shared node): where interleaving should beat back-to-back runs.
  stage verdicts_noisy
  F="$EV/verdicts_noisy"; mkdir -p "$F"
  PAIR=${AB_PAIR:-v7-warptile,v8-async}; S=${AB_SIZE:-4096}
  $PY scripts/gpu_neighbour.py 150 > "$F/neighbour.txt" 2>&1 &
  NB=$!
  sleep 3
  for r in 10 30 100 300; do
    timeout 60 $PY -m profiling bench --ab "$PAIR" --sizes $S --repeats $r --max-seconds 30 --json "$F/ab_${S}_r$r.json" > "$F/ab_${S}_r$r.txt" 2>&1
    timeout 60 $PY -m profiling bench --kernels "$PAIR" --sizes $S --repeats $r --max-seconds 30 --json "$F/seq_${S}_r$r.json" > "$F/seq_${S}_r$r.txt" 2>&1
  done
  kill $NB 2>/dev/null; wait $NB 2>/dev/null
  $PY scripts/ab_table.py "$F" > "$F/ab_table.md" 2>&1; cat "$F/ab_table.md"
  record verdicts_noisy "$(grep -c faster "$F/ab_table.md") rows with a verdict"
  ;;
why_hopper)
  # Issue 15's "why" pair: wmma-async (mma.sync) against the Hopper kernels (wgmma + TMA) at 4096, full set with
  # source counters, exported like the `why` stage; the Why page reads results/<gpu>-<date>/why/.
  stage why_hopper
  why_capture hopper_4096 "${WHY_HOPPER_KERNELS:-wmma-async,wgmma-tma,wgmma-tma-store}" 4096 4096 4096 300 cuda,sass sass
  record why_hopper "$(($(wc -l < "$EV/why/ncu_why_hopper_4096_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  ;;
why_step)
  # A new catalog step beside the one before it, full set with source counters at one shape, exported like
  # why_hopper (the Why page and `explain` read results/<gpu>-<date>/<folder>/): WHY_KERNELS (previous,new),
  # WHY_SHAPE (MxNxK), WHY_NAME (the files' tag). Run it once per pair: WHY_KERNELS=... bash gpu_check.sh why_step.
  stage why_step
  name=${WHY_NAME:-step}; IFS=x read -r wm wn wk <<< "${WHY_SHAPE:-4096x4096x4096}"
  why_capture "$name" "${WHY_KERNELS:?WHY_KERNELS=previous,new}" "$wm" "$wn" "$wk" 240 cuda,sass
  record why_step "$name: $(($(wc -l < "$EV/why/ncu_why_${name}_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  ;;
foreign)
  # Reports of a program that is not ours (PyTorch, cuBLASLt, Triton), in every layout users export.
  stage foreign
  F="$EV/foreign"; mkdir -p "$F"
  timeout 200 "$NCU" --nvtx --nvtx-include 'foreign/' --clock-control none --set full --import-source yes \
     -f -o /tmp/foreign $PY scripts/foreign_program.py > "$F/foreign_log.txt" 2>&1; echo "exit=$?" >> "$F/foreign_log.txt"
  R=/tmp/foreign.ncu-rep
  if [ -f "$R" ]; then
    "$NCU" --import "$R" --csv --page raw > "$F/raw.csv" 2>&1
    "$NCU" --import "$R" --csv --page raw --print-units auto > "$F/raw_auto_units.csv" 2>&1
    "$NCU" --import "$R" --csv --page details > "$F/details.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-units auto > "$F/details_auto_units.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-metric-name name > "$F/details_names.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-details all > "$F/details_all.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-details all --print-units auto > "$F/details_all_auto_units.csv" 2>&1
    # --print-units auto is --import's default (those exports come out byte-identical); base units are the other case.
    "$NCU" --import "$R" --csv --page raw --print-units base > "$F/raw_base_units.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-units base > "$F/details_base_units.csv" 2>&1
    "$NCU" --import "$R" --csv --page details --print-details all --print-units base > "$F/details_all_base_units.csv" 2>&1
    "$NCU" --import "$R" --page details --print-units base > "$F/details_text_base_units.txt" 2>&1
    "$NCU" --import "$R" --csv --print-summary per-kernel > "$F/summary.csv" 2>&1
    "$NCU" --import "$R" --csv --page source --print-source sass > "$F/source_sass.csv" 2>&1
    "$NCU" --import "$R" > "$F/details_text.txt" 2>&1
    "$NCU" --import "$R" --page details --print-details all > "$F/details_all_text.txt" 2>&1
    [ "$(stat -c%s "$R")" -lt 6000000 ] && cp "$R" "$F/"  # small enough to come back inside the tarball
  fi
  # The default output people paste: ncu run without -o or --csv.
  timeout 120 "$NCU" --nvtx --nvtx-include 'foreign/' --clock-control none $PY scripts/foreign_program.py > "$F/run_stdout.txt" 2>&1
  record foreign "$(ls "$F" | wc -l) files; raw rows: $(($(wc -l < "$F/raw.csv" 2>/dev/null || echo 2) - 2))"
  ;;
wgmma)
  # Issue 15's Hopper kernels (wgmma-tma; wgmma-pingpong: persistent, ping-pong consumers; wgmma-tma-store: TMA
  # epilogue): layout probes first (readable failures; the new kernel's also checks beta = 0 with C all NaN), their
  # GPU tests, a benchmark against cuBLAS HGEMM at 4096 and 8192, memcheck and racecheck of wgmma-tma-store (256^3;
  # 2048x2048x64: 128 one-slice tiles, epilogue stages never used by the main loop), and ncu quick captures of
  # wgmma-tma and wgmma-tma-store at 4096. Under 4 minutes.
  stage wgmma
  F="$EV/wgmma"; mkdir -p "$F"
  timeout 60 $PY scripts/wgmma_probe.py 128 256 64 wgmma-tma-store 2>&1 | tee "$F/probe_store.txt" | tail -30
  timeout 60 $PY scripts/wgmma_probe.py 272 400 96 wgmma-tma-store > "$F/probe_store_edges.txt" 2>&1
  timeout 150 $PY -m pytest tests/gpu/test_gpu_wgmma.py -q -m gpu -p no:cacheprovider 2>&1 | tee "$F/gpu_tests.txt" | tail -15
  timeout 120 $PY -m profiling bench --kernels wgmma-tma,wgmma-pingpong,wgmma-tma-store --sizes 4096,8192 --repeats 20 \
     --json "$F/bench.json" 2>"$F/bench.log" | tee "$F/bench.txt"
  job /tmp/san_store_256.json verify wgmma-tma-store 256 256 256
  job /tmp/san_store_2048.json verify wgmma-tma-store 2048 2048 64
  for K in store_256 store_2048; do
    timeout 60 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/san_$K.json > "$F/memcheck_$K.txt" 2>&1
    timeout 60 "$SAN" --tool racecheck --racecheck-report hazard $PY -m profiling worker --job /tmp/san_$K.json > "$F/racecheck_$K.txt" 2>&1
  done
  timeout 120 $PY -m profiling profile --kernels wgmma-tma,wgmma-tma-store --sizes 4096 --set quick -o "$F/store_4096.ncu-rep" > "$F/profile_cli.txt" 2>&1
  if [ -f "$F/store_4096.ncu-rep" ]; then
    "$NCU" --import "$F/store_4096.ncu-rep" --csv --page raw > "$F/raw_4096.csv" 2>&1
    "$NCU" --import "$F/store_4096.ncu-rep" --csv --page details > "$F/details_4096.csv" 2>&1
  fi
  record wgmma "$(grep -m1 'verdict' "$F/probe_store.txt"); edges $(grep -m1 'verdict' "$F/probe_store_edges.txt"); tests: $(tail -1 "$F/gpu_tests.txt"); $(grep -c ' ok ' "$F/bench.txt") ok bench rows; $(grep -h 'ERROR SUMMARY' "$F"/memcheck_*.txt "$F"/racecheck_*.txt | tr '\n' ';')"
  ;;
cluster)
  # Issue 14 on 2 GPUs (device kind nvidia-h200-x2): every v8 and v9 tuning configuration at 2048 and 4096, on one
  # GPU and on both through --cluster local-gpus (one Dask worker per GPU). Dask travels in /tmp/site (no network).
  stage cluster
  F="$EV/cluster"; mkdir -p "$F"
  [ -d /tmp/site ] && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
  R=${CLUSTER_REPEATS:-800}
  nvidia-smi -L > "$F/gpus.txt" 2>&1
  $PY -c "import dask, distributed; print('dask', dask.__version__, 'distributed', distributed.__version__)" > "$F/versions.txt" 2>&1
  now() { date +%s.%N; }
  # Compile every configuration once into CuPy's disk cache, so that no timed sweep pays for compilation.
  t=$(now); timeout 240 $PY -m profiling tune --kernels v8-async,v9-regdb --sizes 2048 --repeats 1 > "$F/warm.txt" 2>&1; warm=$($PY -c "print(round($(now) - $t, 2))")
  t=$(now); CUDA_VISIBLE_DEVICES=0 timeout 200 $PY -m profiling tune --kernels v8-async,v9-regdb --sizes 2048,4096 --repeats "$R" --json "$F/one_gpu0.json" > "$F/one_gpu0.txt" 2>&1
  one0=$($PY -c "print(round($(now) - $t, 2))")
  t=$(now); CUDA_VISIBLE_DEVICES=1 timeout 200 $PY -m profiling tune --kernels v8-async,v9-regdb --sizes 2048,4096 --repeats "$R" --json "$F/one_gpu1.json" > "$F/one_gpu1.txt" 2>&1
  one1=$($PY -c "print(round($(now) - $t, 2))")
  t=$(now); timeout 200 $PY -m profiling tune --kernels v8-async,v9-regdb --sizes 2048,4096 --repeats "$R" --cluster local-gpus --json "$F/two_gpus.json" > "$F/two_gpus.txt" 2>&1
  two=$($PY -c "print(round($(now) - $t, 2))")
  echo "{\"repeats\": $R, \"warm_s\": $warm, \"one_gpu0_s\": $one0, \"one_gpu1_s\": $one1, \"two_gpus_s\": $two}" > "$F/wall.json"
  $PY scripts/cluster_table.py "$F" 2>&1 | tee "$F/table.txt"
  record cluster "$(grep -m1 'wall-clock ratio' "$F/table.txt")"
  ;;
cluster1)
  # Issue 14 where no 2-GPU machine is lent: the --cluster local-gpus path on the one real GPU (one Dask worker, the
  # real worker child under it), against the same benchmark without Dask; results and per-GPU facts compared.
  stage cluster1
  F="$EV/cluster1"; mkdir -p "$F"
  [ -d /tmp/site ] && export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
  nvidia-smi -L > "$F/gpus.txt" 2>&1
  t0=$(date +%s.%N)
  timeout 240 $PY -m profiling bench --kernels v8-async,v9-regdb --sizes 2048,4096 --repeats 30 --cluster local-gpus \
     --json "$F/cluster.json" > "$F/cluster.txt" 2>&1; echo "exit=$?" >> "$F/cluster.txt"
  t1=$(date +%s.%N)
  timeout 240 $PY -m profiling bench --kernels v8-async,v9-regdb --sizes 2048,4096 --repeats 30 \
     --json "$F/local.json" > "$F/local.txt" 2>&1; echo "exit=$?" >> "$F/local.txt"
  t2=$(date +%s.%N)
  $PY -c "import json,sys; a,b,c=map(float,sys.argv[1:]); print(json.dumps({'cluster_s': round(b-a,2), 'local_s': round(c-b,2)}))" "$t0" "$t1" "$t2" > "$F/wall.json"
  tail -8 "$F/cluster.txt"; cat "$F/wall.json"
  record cluster1 "$(grep -c ' ok ' "$F/cluster.txt") ok rows on the cluster, $(grep -c ' ok ' "$F/local.txt") without"
  ;;
splitk)
  # Issue 15, small M*N with large K: v8-splitk (K over gridDim.z, C zeroed by a first launch, splits added with
  # red.global.add) correct at awkward and split shapes, benched against v9-regdb and cuBLAS, sanitized, and one
  # ncu capture of its two-launch operation (NVTX range) exported raw. About 2-3 minutes.
  stage splitk
  F="$EV/splitk"; mkdir -p "$F"
  timeout 150 $PY -m pytest tests/gpu/test_gpu_splitk.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests_splitk.txt" 2>&1; tail -3 "$F/gpu_tests_splitk.txt"
  timeout 150 $PY -m profiling bench --kernels v9-regdb,v8-splitk --sizes 1024,127x127x8191,64x64x65536,333x4096x4096,4096x4096x333 \
     --repeats 30 --json "$F/bench.json" > "$F/bench.txt" 2>"$F/bench.log"; cat "$F/bench.txt"
  job /tmp/san_splitk.json verify v8-splitk 127 127 8191
  timeout 120 "$SAN" --tool memcheck $PY -m profiling worker --job /tmp/san_splitk.json > "$F/memcheck_splitk.txt" 2>&1
  timeout 120 "$SAN" --tool racecheck --racecheck-report hazard $PY -m profiling worker --job /tmp/san_splitk.json > "$F/racecheck_splitk.txt" 2>&1
  # The project's own capture path (NVTX range gemmlens:v8-splitk:127x127x8191, -k naming both launches' functions).
  timeout 150 $PY -m profiling profile --kernels v8-splitk --sizes 127x127x8191 --set quick -o "$F/splitk.ncu-rep" > "$F/ncu_log.txt" 2>&1
  echo "exit=$?" >> "$F/ncu_log.txt"; tail -12 "$F/ncu_log.txt"
  [ -f "$F/splitk.ncu-rep" ] && "$NCU" --import "$F/splitk.ncu-rep" --csv --page raw > "$F/ncu_raw.csv" 2>&1
  record splitk "tests: $(tail -1 "$F/gpu_tests_splitk.txt"); bench ok rows: $(grep -c ' ok ' "$F/bench.txt"); $(grep -h 'ERROR SUMMARY' "$F"/*check_splitk.txt | tr '\n' ';') ncu launches: $(($(wc -l < "$F/ncu_raw.csv" 2>/dev/null || echo 2) - 2))"
  ;;
auto)
  # Issue 15's shape-aware choice: sgemm-auto (per shape, the configuration of v8-async, v9-regdb or v8-splitk predicted
  # fastest from this GPU's tuning record, or the default by shape) beside those three and cuBLAS, all in one run; its
  # GPU tests first. Run after `tune` to choose from this session's record. About 2-3 minutes.
  stage auto
  F="$EV/auto"; mkdir -p "$F" "$OUT/auto"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_auto.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests_auto.txt" 2>&1; tail -3 "$F/gpu_tests_auto.txt"
  timeout 400 $PY -m profiling bench --kernels cublas,sgemm-auto,v9-regdb,v8-async,v8-splitk --repeats 30 \
     --sizes "${AUTO_SIZES:-1024,2048,4096,8192,4096x4096x333,333x4096x4096,127x127x8191,64x64x65536}" \
     --json "$OUT/auto/auto_bench.json" > "$F/bench.txt" 2>"$F/bench.log"
  cp "$OUT/auto/auto_bench.json" "$F/" 2>/dev/null
  $PY scripts/auto_table.py "$OUT/auto/auto_bench.json" 2>&1 | tee "$OUT/auto/auto_table.txt" "$F/auto_table.txt"
  cp results/tuning/*.json "$OUT/auto/" 2>/dev/null
  record auto "tests: $(tail -1 "$F/gpu_tests_auto.txt"); bench ok rows: $(grep -c ' ok ' "$F/bench.txt")"
  ;;
sannew)
  # compute-sanitizer memcheck and racecheck on the kernels new in session 5: the v9 FFMA-order variants and warp
  # shapes (awkward 300x264x72, so edge tiles and a partial slice run) and the split-K tile configurations at a
  # split shape (127x127x8191) and an awkward one.
  stage sannew
  F="$EV/sanitizer_new"; mkdir -p "$F"
  v9new=$($PY -c "from kernels.tuning import V9_TUNING_CONFIGS as C; print(','.join(c['id'] for c in C[7:]))")
  skn=$(config_ids SPLITK_TUNING_CONFIGS)
  job /tmp/san_v9new.json verify "$v9new" 300 264 72
  job /tmp/san_sk.json verify "$skn,sgemm-auto" 127 127 8191
  job /tmp/san_sk2.json verify "$skn,sgemm-auto" 129 17 1000
  sanitize_jobs 300 "$F" sannew v9new sk sk2
  ;;
ncurep)
  # .ncu-rep fixtures for reading reports without ncu: our kernels and another program's, --set full with source,
  # each with the raw-page CSV export of the same report (the values the reader must reproduce).
  stage ncurep
  F="$EV/ncurep"; mkdir -p "$F"
  job /tmp/ours_rep.json profile cublas,v3,v4,v9-regdb,wgmma-tma-store 1024 1024 1024
  timeout 240 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --set full --import-source yes \
     -f -o "$F/ours_full_1024" $PY -m profiling worker --job /tmp/ours_rep.json > "$F/ours_log.txt" 2>&1
  echo "exit=$?" >> "$F/ours_log.txt"
  timeout 240 "$NCU" --nvtx --nvtx-include 'foreign/' --clock-control none --set full --import-source yes \
     -f -o "$F/foreign_full" python3 scripts/foreign_program.py > "$F/foreign_log.txt" 2>&1
  echo "exit=$?" >> "$F/foreign_log.txt"
  for r in ours_full_1024 foreign_full; do
    [ -f "$F/$r.ncu-rep" ] || continue
    "$NCU" --import "$F/$r.ncu-rep" --csv --page raw > "$F/${r}_raw.csv" 2>&1
    "$NCU" --import "$F/$r.ncu-rep" --csv --page details --print-details all > "$F/${r}_details_all.csv" 2>&1
    "$NCU" --import "$F/$r.ncu-rep" --csv --page source --print-source cuda,sass > "$F/${r}_source_cuda_sass.csv" 2>&1
    gzip -9 "$F/${r}_source_cuda_sass.csv" "$F/${r}_details_all.csv"
  done
  "$NCU" --version > "$F/ncu_version.txt" 2>&1
  record ncurep "$(ls -la "$F" | awk '{print $5, $9}' | grep ncu-rep | tr '\n' ';')"
  ;;
addmm)
  # The tensor-core reference doing the catalog's AddMM itself (cublas-addmm: cublasGemmEx, float32 C read and D
  # written in place) beside cuBLAS's A*B alone (cublas-hgemm) and the Hopper steps; then paired A/B intervals.
  stage addmm
  F="$EV/addmm"; mkdir -p "$F"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_kernels.py -q -m gpu -p no:cacheprovider -k "cublas or wgmma" 2>&1 | tee "$F/gpu_tests.txt" | tail -5
  timeout 200 $PY -m profiling bench --kernels cublas-addmm,cublas-hgemm,wgmma-tma-store,wgmma-persistent,wgmma-cluster \
     --sizes 4096,8192 --repeats 30 --json "$F/bench.json" 2>"$F/bench.log" | tee "$F/bench.txt"
  ab_pairs "$F" 4096,8192 cublas-addmm,wgmma-persistent cublas-addmm,wgmma-tma-store
  timeout 150 $PY -m profiling profile --kernels cublas-addmm,cublas-hgemm --sizes 4096 --set quick -o "$F/cublas_4096.ncu-rep" > "$F/profile_cli.txt" 2>&1
  [ -f "$F/cublas_4096.ncu-rep" ] && "$NCU" --import "$F/cublas_4096.ncu-rep" --csv --page raw > "$F/raw_4096.csv" 2>&1
  record addmm "tests: $(tail -1 "$F/gpu_tests.txt"); $(grep -c ' ok ' "$F/bench.txt") ok bench rows"
  ;;
bf16)
  # The BF16 AddMM: its GPU tests (cublas-addmm-bf16 at awkward sizes, wgmma-persistent-bf16 at the persistent ring's
  # shapes, the GPU rounding against NumPy's; the file alone: -k bf16 over tests/gpu would also select
  # test_gpu_kernels.py's whole-catalog fixture), then both references and both persistent kernels in one bench at
  # 4096 and 8192 (FP16 and BF16 do the same FLOPs and move the same bytes, so their times compare directly), the
  # ratios against each reference, and the paired A/B of the BF16 kernel against cuBLAS's BF16 AddMM.
  # About 3 minutes on an H100: tests ~60 s (an nvcc build, 25 shapes), bench ~60 s, A/B ~40 s.
  stage bf16
  F="$EV/bf16"; mkdir -p "$F"
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv; } > "$F/env.txt" 2>&1
  timeout 150 $PY -m pytest tests/gpu/test_gpu_bf16.py -q -m gpu -p no:cacheprovider -k bf16 2>&1 | tee "$F/gpu_tests.txt" | tail -5
  timeout 150 $PY -m profiling bench --kernels cublas-addmm-bf16,cublas-addmm,wgmma-persistent-bf16,wgmma-persistent \
     --sizes 4096,8192 --repeats 30 --json "$F/bench.json" 2>"$F/bench.log" | tee "$F/bench.txt"
  for REF in cublas-addmm-bf16 cublas-addmm; do
    [ -f "$F/bench.json" ] && $PY scripts/ratio_table.py "$F/bench.json" --reference "$REF" > "$F/ratios_vs_$REF.md" 2>&1
  done
  PAIR=cublas-addmm-bf16,wgmma-persistent-bf16
  ab_pairs "$F" 4096,8192 "$PAIR"
  { date -u; nvidia-smi --query-gpu=name,clocks.current.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv; } >> "$F/env.txt" 2>&1
  record bf16 "tests: $(tail -1 "$F/gpu_tests.txt"); $(grep -c ' ok ' "$F/bench.txt") ok bench rows of 8; A/B: $(tail -1 "$F/ab_${PAIR//,/_vs_}.txt" | cut -c1-120)"
  ;;
sanbf16)
  # memcheck and racecheck of the BF16 AddMM step at the shapes the FP16 Hopper steps were checked at: one tile ring
  # with edges (272x400x96) and several tiles per block of the persistent grid (1136x4112x528).
  stage sanbf16
  F="$EV/sanitizer_bf16"; mkdir -p "$F"
  job /tmp/san_bf1.json verify wgmma-persistent-bf16 272 400 96
  job /tmp/san_bf2.json verify wgmma-persistent-bf16 1136 4112 528
  sanitize_jobs 200 "$F" sanbf16 bf1 bf2
  ;;
clusterk)
  # v9-clusterk (v9's K split over the blocks of one thread-block cluster, summed in distributed shared memory; sm_90):
  # its GPU tests (every configuration against cuBLAS at awkward sizes, empty K ranges included; one launch with the
  # cluster size on z; the same bits on every run), then its configurations beside v9-splitk's and sgemm-auto's choice
  # and cuBLAS at the narrow, deep-K shapes it is for, the ratios with their intervals, and the project's own ncu
  # capture of the catalog entry (one launch in its NVTX range). About 3 minutes on an H100.
  stage clusterk
  F="$EV/clusterk"; mkdir -p "$F"
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv; } > "$F/env.txt" 2>&1
  timeout 300 $PY -m pytest tests/gpu/test_gpu_v9_clusterk.py -q -m gpu -p no:cacheprovider 2>&1 | tee "$F/gpu_tests.txt" | tail -5
  ck=$(config_ids V9_CLUSTERK_TUNING_CONFIGS)
  timeout 240 $PY -m profiling bench --kernels "cublas,sgemm-auto,v9-splitk,$ck" --repeats 30 \
     --sizes "${CLUSTERK_SIZES:-1024x127x4096,4096x127x4096,333x333x4096,4096x333x8191,127x127x8191,1024x1024x8191}" \
     --json "$F/bench.json" > "$F/bench.txt" 2>"$F/bench.log"; echo "exit=$?" >> "$F/bench.log"; tail -3 "$F/bench.log"
  [ -f "$F/bench.json" ] && $PY scripts/ratio_table.py "$F/bench.json" > "$F/ratios.md" 2>&1
  timeout 150 $PY -m profiling profile --kernels v9-clusterk --sizes 1024x127x4096 --set quick -o "$F/clusterk.ncu-rep" > "$F/ncu_log.txt" 2>&1
  echo "exit=$?" >> "$F/ncu_log.txt"; tail -6 "$F/ncu_log.txt"
  [ -f "$F/clusterk.ncu-rep" ] && "$NCU" --import "$F/clusterk.ncu-rep" --csv --page raw > "$F/ncu_raw.csv" 2>&1
  { date -u; nvidia-smi --query-gpu=name,clocks.current.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv; } >> "$F/env.txt" 2>&1
  record clusterk "tests: $(tail -1 "$F/gpu_tests.txt"); $(grep -c ' ok ' "$F/bench.txt") ok bench rows; ncu launches: $(($(wc -l < "$F/ncu_raw.csv" 2>/dev/null || echo 2) - 2))"
  ;;
sanclusterk)
  # memcheck and racecheck of every v9-clusterk configuration (eight) at two awkward shapes: 3 K slices over clusters of 2 to
  # 8 (empty K ranges) with edge tiles and float4 stores (200x300x40), and N odd (scalar stores) with a K range ending
  # inside a slice (129x127x1001).
  stage sanclusterk
  F="$EV/sanitizer_clusterk"; mkdir -p "$F"
  ck=$(config_ids V9_CLUSTERK_TUNING_CONFIGS)
  job /tmp/san_ck1.json verify "$ck" 200 300 40
  job /tmp/san_ck2.json verify "$ck" 129 127 1001
  sanitize_jobs 240 "$F" sanclusterk ck1 ck2
  ;;
narrow)
  # The kernels launched where N % 4 != 0 (sgemm_regdb_narrow, sgemm_regdb_splitk_narrow: B copied one column per
  # thread, split-K partial tiles added in the widest reductions each address allows): the GPU tests of every tuning
  # configuration at awkward sizes (an odd N runs the narrow twin; a test checks the result names it) and of v9-splitk,
  # and the access capture of v9-regdb at the awkward sizes (its global sectors per request against the indexing
  # model). The `sannarrow` stage runs memcheck and racecheck on them.
  stage narrow
  F="$EV/narrow"; mkdir -p "$F"
  gpu_clocks "$F/env.txt"
  timeout 420 $PY -m pytest tests/gpu/test_gpu_tuning_configs.py tests/gpu/test_gpu_v9_splitk.py -q -m gpu -p no:cacheprovider 2>&1 | tee "$F/gpu_tests.txt" | tail -5
  ACCESS_KERNELS=v9-regdb OUT="$F/access" timeout 120 bash scripts/access_capture.sh > "$F/access_log.txt" 2>&1
  record narrow "tests: $(tail -1 "$F/gpu_tests.txt"); access: $(ls "$F/access" 2>/dev/null | tr '\n' ' ')"
  ;;
sannarrow)
  # memcheck and racecheck of the narrow twins: each v9 and v9-splitk tile geometry (the FFMA order does not move a
  # copy) at an odd N, each result verified against cuBLAS.
  stage sannarrow
  F="$EV/sanitizer_narrow"; mkdir -p "$F"
  geometries=$($PY -c "
from kernels.tuning import V9_TUNING_CONFIGS, V9_SPLITK_TUNING_CONFIGS
for configs in (V9_TUNING_CONFIGS, V9_SPLITK_TUNING_CONFIGS):
    seen = {}
    for c in configs:
        seen.setdefault(tuple(v for k, v in c['params'].items() if k not in ('ORDER', 'SPLIT_DEEP_SLICES')), c['id'])
    print(','.join(seen.values()))")
  job /tmp/san_nr1.json verify "$(echo "$geometries" | sed -n 1p)" 300 263 72
  job /tmp/san_nr2.json verify "$(echo "$geometries" | sed -n 2p)" 127 129 2001
  sanitize_jobs 240 "$F" sannarrow nr1 nr2
  ;;
sanv9sk)
  # memcheck and racecheck on v9's split-K configurations and sgemm-auto: an uneven split with edge tiles
  # (300x264x2000) and a deep, narrow shape (127x127x8191).
  stage sanv9sk
  F="$EV/sanitizer_v9splitk"; mkdir -p "$F"
  cfgs=$(config_ids V9_SPLITK_TUNING_CONFIGS)
  job /tmp/san_v9sk1.json verify "$cfgs,sgemm-auto" 300 264 2000
  job /tmp/san_v9sk2.json verify "$cfgs" 127 127 8191
  sanitize_jobs 240 "$F" sanv9sk v9sk1 v9sk2
  ;;
streamk)
  # v9-splitk's stream-K configurations (one wave of blocks, each an equal run of all tiles' K slices): v9-splitk's
  # GPU tests (every configuration at awkward and deep-K shapes, launch facts), then memcheck and racecheck of the
  # stream-K ones at an uneven shape with edge tiles and N % 4 != 0 (300x263x2000) and a deep, narrow one
  # (127x127x8191). About 2-3 minutes on an H100.
  stage streamk
  v9splitk_check streamk 240 -sk sk 300x263x2000 127x127x8191 300x264x2000
  ;;
sksquare)
  # Stream-K at the square SGEMM sizes: every v9-splitk configuration swept at 2048 and 8192 and recorded (the record
  # held v9-regdb's and v8-async's measurements there, and sgemm-auto's prediction of a stream-K configuration at 8192
  # would otherwise be scaled from 4096x4096x8191), then cuBLAS, v9-regdb, sgemm-auto and the two large stream-K tiles
  # at 2048, 4096 and 8192, 30 L2-flushed launches each. Lands in $EV/sksquare/ with this GPU's new tuning record.
  # About 3 minutes on an H100.
  stage sksquare
  F="$EV/sksquare"; mkdir -p "$F"
  timeout 200 $PY -m profiling tune --kernels v9-splitk --sizes 2048,8192 --repeats 10 --record --json "$F/tune.json" \
     > "$F/tune.txt" 2>"$F/tune.log"; echo "exit=$?" >> "$F/tune.log"; gzip -f "$F/tune.json"
  cp results/tuning/*.json "$F/"
  timeout 240 $PY -m profiling bench --kernels cublas,v9-regdb,sgemm-auto,v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk,v9-splitk-128x256x16-w64x64-t8x16-s3-o3-sk \
     --sizes 2048,4096,8192 --repeats 30 --json "$F/bench.json" > "$F/bench.txt" 2>"$F/bench.log"; echo "exit=$?" >> "$F/bench.log"
  [ -f "$F/bench.json" ] && $PY scripts/ratio_table.py "$F/bench.json" > "$F/ratios.md" 2>&1; cat "$F/ratios.md" 2>/dev/null | head -30
  record sksquare "tune $(tail -1 "$F/tune.log"); bench ok rows: $(grep -c ' ok ' "$F/bench.txt")"
  ;;
padb)
  # v9-splitk's configurations that pad N where N % 4 != 0 (ids ending -pad: the first launch zeroes a copy of C and
  # copies B to rows of a multiple of 4 floats, the 16-byte kernel multiplies at N padded, the last launch copies C
  # back): v9-splitk's GPU tests (every configuration at awkward and deep-K shapes, launch facts; the padded ones
  # refused where N % 4 == 0), then memcheck and racecheck of the padded ones at an uneven shape with edge tiles
  # (300x263x2000), a deep narrow one (127x127x8191) and N = 1 (333x1x4097). About 3-4 minutes on an H100.
  stage padb
  mkdir -p "$EV/padb"
  gpu_clocks "$EV/padb/env.txt"
  v9splitk_check padb 300 -pad pb 300x263x2000 127x127x8191 333x1x4097
  ;;
padc)
  # v9-splitk's configurations that pad C alone where N % 4 != 0 (ids ending -padc: splitk_zero_c zeroes a copy of C
  # with rows of a multiple of 4 floats, the padded-C kernel reads B where it lies and adds into that copy in
  # 16-byte reductions, splitk_unpad_c copies C back): v9-splitk's GPU tests, then memcheck and racecheck of the
  # padded-C ones at the padb stage's shapes. About 3 minutes on an H200.
  stage padc
  mkdir -p "$EV/padc"
  gpu_clocks "$EV/padc/env.txt"
  v9splitk_check padc 300 -padc pc 300x263x2000 127x127x8191 333x1x4097
  ;;
serial)
  # v9-splitk's configurations with serial splits (ids with -ser: split 0 stores its partial tile, the others add
  # theirs after it, so no launch zeroes C first): v9-splitk's GPU tests, memcheck and racecheck of the serial ones
  # at shapes with uneven splits, N % 4 != 0 and N = 1, then scripts/split_launch_probe.py (the zeroing launch's cost
  # and the serial twin's whole operation at the grid's split-K misses). About 4 minutes on an H100.
  stage serial
  mkdir -p "$EV/serial"
  gpu_clocks "$EV/serial/env.txt"
  v9splitk_check serial 360 -ser se 300x263x2000 127x129x8189 333x1x4097
  timeout 120 $PY scripts/split_launch_probe.py > "$EV/serial/launch_probe.md" 2>&1; tail -8 "$EV/serial/launch_probe.md"
  ;;
padprobe)
  # Is N % 4 != 0 the limit at the narrow grid misses? The best v9-splitk configurations there and cuBLAS at each
  # miss with N % 4 != 0 and at the same shape with N rounded up to a multiple of 4 (the 16-byte B copies), 20
  # L2-flushed launches each. Lands in $EV/padprobe/. About 2 minutes on an H100.
  stage padprobe
  F="$EV/padprobe"; mkdir -p "$F"
  gpu_clocks "$F/env.txt"
  shapes=4096x127x8191,4096x128x8191,2048x127x4096,2048x128x4096,1024x127x4096,1024x128x4096,127x127x8191,127x128x8191,333x127x8191,333x128x8191,333x127x4096,333x128x4096,4096x333x333,4096x336x333,2048x333x333,2048x336x333
  timeout 400 $PY -m profiling bench --kernels cublas,v9-splitk-64x128x16-w32x64-t8x8-s3-sk,v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk,v9-splitk-64x128x16-w32x64-t8x8-s3,v9-splitk-64x64x16-w32x64-t8x8-s3-d8,v9-splitk-64x128x16-w32x64-t8x8-s4-d32,v9-splitk-64x128x16-w32x64-t8x8-s3-d8,v9-regdb-64x128x16-w32x64-t8x8-s3 \
     --sizes "$shapes" --repeats 20 --json "$F/bench.json" > "$F/bench.txt" 2>"$F/bench.log"; echo "exit=$?" >> "$F/bench.log"
  [ -f "$F/bench.json" ] && $PY scripts/ratio_table.py "$F/bench.json" > "$F/ratios.md" 2>&1
  record padprobe "bench ok rows: $(grep -c ' ok ' "$F/bench.txt")"
  ;;
hold)
  # The launch hold (profiling.gpu.hold): its GPU tests, then the same results timed as enqueued (--no-hold) and
  # behind the hold, 200 L2-flushed launches each, where earlier grids saw unsteady times: cuBLAS at small K=333
  # shapes and at 1024x127x4096, and the serial split configurations at 333x1024x4096 and 64x4096x4096 (an H100
  # grid ran one at 81 us for 17 launches, then 116-172 us). scripts/launch_spread.py tables each. About 2 minutes.
  stage hold
  F="$EV/hold"; mkdir -p "$F"
  gpu_clocks "$F/env.txt"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_hold.py tests/gpu/test_gpu_flush.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  hold_kernels=cublas,v9-splitk-64x128x16-w32x64-t8x8-s4-d8-ser,v9-splitk-64x128x16-w32x64-t8x8-s4-d8,v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser
  for mode in no-hold hold no-hold2 hold2; do
    flag=""; case $mode in no-hold*) flag=--no-hold;; esac
    timeout 150 $PY -m profiling bench --kernels cublas --sizes 64x127x333,127x127x333,333x127x333,64x333x333,1024x64x333,64x64x4096,1024x127x4096 \
       --repeats 200 $flag --json "$F/small_$mode.json" > "$F/small_$mode.txt" 2>"$F/small_$mode.log"
    timeout 150 $PY -m profiling bench --kernels "$hold_kernels" --sizes 333x1024x4096,64x4096x4096 \
       --repeats 200 $flag --json "$F/serial_$mode.json" > "$F/serial_$mode.txt" 2>"$F/serial_$mode.log"
    for f in small serial; do [ -f "$F/${f}_$mode.json" ] && $PY scripts/launch_spread.py "$F/${f}_$mode.json" > "$F/spread_${f}_$mode.md" 2>&1; done
  done
  for f in "$F"/spread_*.md; do echo "$(basename "$f"): $(awk -F'|' 'NR>2 && $9+0>1.4' "$f" | wc -l) of $(($(wc -l < "$f") - 2)) results with p90 over 1.4x p10"; done
  record hold "$(tail -1 "$F/gpu_tests.txt"); spread tables: $(ls "$F"/spread_*.md 2>/dev/null | wc -l)"
  ;;
grid)
  # The "no shape left behind" grid: sgemm-auto, v9-regdb (its catalog configuration, for context) and cuBLAS SGEMM
  # at every M, N in 64,127,333,1024,2048,4096 and K in 333,4096,8191 (108 shapes, profiling.analysis.shape_grid),
  # cuBLAS in the same run, each launch after an L2 flush, 30 timed launches kept per result (the 95 % interval of
  # each ratio). One bench per K, so a stopped run loses one K, not the grid. Lands in $OUT/grid/: bench_k<K>.json,
  # .txt and .log per K, ratios_k<K>.md (every ratio with its interval), env.txt (nvidia-smi before and after),
  # grid_summary.md (the shapes under 90 % of cuBLAS, from all three).
  # About 3 minutes on an H100: 324 results at roughly 0.4-0.5 s each (verification, 33 launches, NVML) plus a
  # worker start and the NVRTC compiles per K (the square cells, 24 results, took under 30 s with start-up);
  # at most 3 x 170 s. Needs pandas, not plotly (scripts/grid_report.py --html draws the heatmap elsewhere).
  # GRID_INTERLEAVED=1 times each shape's three together in 30 rounds (bench --interleaved) instead of one after
  # another: the same record's grid read 127x127x8191 at 93.0 % in one run and 86.7 % in the next (H200, session 30).
  # Timed so (results/h200-2026-11-30/grid_interleaved/), v9-regdb's 128x256 tile pays about 10 us a launch after
  # another kernel's code, which a kernel launched again and again never shows (scripts/round_predecessors.py).
  stage grid
  G="$OUT/grid"; mkdir -p "$G"
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv; } > "$G/env.txt" 2>&1
  for spec in $($PY scripts/grid_report.py --grids); do
    k=${spec##*K=}
    timeout 170 $PY -m profiling bench --kernels "${GRID_KERNELS:-cublas,sgemm-auto,v9-regdb}" --grid "$spec" --repeats 30 \
       ${GRID_INTERLEAVED:+--interleaved} --json "$G/bench_k$k.json" > "$G/bench_k$k.txt" 2>"$G/bench_k$k.log"
    echo "exit=$? at $(date -u +%H:%M:%S)" >> "$G/bench_k$k.log"; tail -2 "$G/bench_k$k.log"
    [ -f "$G/bench_k$k.json" ] && $PY scripts/ratio_table.py "$G/bench_k$k.json" > "$G/ratios_k$k.md" 2>&1
  done
  { date -u; nvidia-smi --query-gpu=name,clocks.current.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv; } >> "$G/env.txt" 2>&1
  $PY scripts/grid_report.py $(ls "$G"/bench_k*.json 2>/dev/null) > "$G/grid_summary.md" 2>&1; head -3 "$G/grid_summary.md"
  record grid "ok rows: $(cat "$G"/bench_k*.txt 2>/dev/null | grep -c ' ok ') of 324; $(sed -n 3p "$G/grid_summary.md" | cut -c1-160)"
  # The device tool brings back at most 8 files: the grid travels as one archive.
  tar -C "$OUT" -czf "$OUT/grid.tar.gz" grid && rm -rf "$G"
  ;;
epilogue)
  # Issue 31's HGEMM epilogue variants (kernels/src/hopper_persistent.cuh PERSISTENT_EPILOGUE: C straight into
  # registers, D from registers or through TMA-stored staging boxes, so the ring carries K slices only) against cuBLAS
  # doing the same AddMM and cuBLAS HGEMM, at EPILOGUE_SIZES (default 4096,8192), 30 L2-flushed launches each, every
  # variant checked first. About 4 minutes on an H200, most of it nvcc.
  stage epilogue
  F="$EV/epilogue"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 420 $PY scripts/wgmma_variants.py "${EPILOGUE_SIZES:-4096,8192}" "${EPILOGUE_REPEATS:-30}" > "$F/variants.txt" 2>&1; echo "exit=$?" >> "$F/variants.txt"
  cat "$F/variants.txt"
  record epilogue "$(grep -c 'e-0' "$F/variants.txt") timed rows; $(tail -1 "$F/variants.txt")"
  ;;
v9var)
  # Issue 31's narrow shapes: scripts/v9_variants.py, v9-regdb configurations (V9VAR_IDS) as built and with each
  # variant's macros (V9_B_ROWWISE: B's narrow copies a warp per K row), every build checked against cuBLAS at every
  # shape (V9VAR_SHAPES: the awkward ones first) and timed in interleaved rounds with it. About 2 minutes on an H200.
  stage v9var
  F="$EV/v9var"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  ids=${V9VAR_IDS:-v9-regdb-64x64x8-w32x32-t8x4-s3,v9-regdb-64x64x16-w32x32-t8x4-s3,v9-regdb-64x128x16-w32x64-t8x8-s3,v9-regdb-64x64x8-w64x16-t8x4-s3,v9-regdb-64x64x16-w64x16-t8x4-s3}
  shapes=${V9VAR_SHAPES:-1x1x1,129x17x1001,300x263x2000,4096x333x333,2048x333x333,1024x333x333,4096x127x333,333x333x4096}
  timeout 420 $PY scripts/v9_variants.py "$ids" "$shapes" 30 > "$F/variants.txt" 2>&1; echo "exit=$?" >> "$F/variants.txt"
  grep -E "cuBLAS|x333 |x4096 " "$F/variants.txt" | head -80
  record v9var "$(grep -c 'e-0\|e+00' "$F/variants.txt") rows; $(tail -1 "$F/variants.txt")"
  ;;
sgemm98)
  # Issue 31's SGEMM >= 98 %: the tuned tile (SGEMM98_IDS) as built and with the copy builds aimed at its
  # long-scoreboard stalls (scripts/v9_variants.py: A rows inner, a slice's copies in 2, 4 or 8 parts over the next
  # slice's first k steps), every build checked against cuBLAS at the awkward sizes first, then timed in 30
  # interleaved rounds with cuBLAS at 2048^3, 4096^3 and 8192^3. 25 s on an H200 (session 30).
  # Built on the CPU machine (NVRTC, sm_90, CuPy's options), early address writes in the main loop
  # (profiling.analysis.sass.early_address_rewrites), registers and loop instructions: as built 4, 255, 2,212;
  # A rows inner 3, 255, 2,212; 2 parts 8, 255 and 8 bytes of stack (spills outside the loop), 2,225; 4 parts 3, 224,
  # 2,274 (neither write that held 1,525 of the H200's 1,743 samples); 8 parts 6, 225, 2,339. Measured and dropped
  # (session 30, results/h200-2026-11-30/sgemm98/). Then the k loop rolled into 2-, 4- and 8-step bodies
  # (V9_K_UNROLL; registers and loop instructions 232, 334; 224, 603; 228, 1,139; the whole function 2,480, 3,016 and
  # 4,088 instructions against 6,184), each build also timed after itself (v9_variants.py's "after itself" columns):
  # measured and dropped (session 31, results/h200-2026-11-30/sgemm98_kloop/). Then, the default here, the 2- and
  # 4-step loops with the slice's last steps, the barrier's, as a tail of their own (V9_K_TAIL): measured and dropped
  # (session 32, sgemm98_ktail/: 89.0-89.7 and 85.0-86.6 % of cuBLAS at 2048-8192^3 against 94.2-97.8 % as built).
  stage sgemm98
  F="$EV/sgemm98"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  V9VAR_VARIANTS="${V9VAR_VARIANTS:-as built,k loop by 2 + tail,k loop by 4 + tail}" \
  timeout 540 $PY scripts/v9_variants.py "${SGEMM98_IDS:-v9-regdb-128x256x16-w64x64-t8x16-s3-o3}" \
     "${SGEMM98_SHAPES:-1x1x1,129x17x1001,300x263x2000,2048x2048x2048,4096x4096x4096,8192x8192x8192}" 30 \
     > "$F/variants.txt" 2>&1; echo "exit=$?" >> "$F/variants.txt"
  grep -E "cuBLAS|x2048 |x4096 |x8192 " "$F/variants.txt" | head -40
  record sgemm98 "$(grep -c 'e-0\|e+00' "$F/variants.txt") rows; $(tail -1 "$F/variants.txt")"
  ;;
padlaunch)
  # Where the time of a padded stream-K operation goes at the narrow grid shapes sgemm-auto runs one on
  # (4096x127x4096 reads 89.4-90.8 % of cuBLAS, H200 sessions 29-31): scripts/split_launch_probe.py times cuBLAS, the
  # whole operation, the launch before the multiply (C's copy zeroed, B's copy written), the multiply alone and the
  # copy back of C, each after an L2 flush, for the 256x128 split padding B and C, its twin reading B where it lies
  # (-padc), and the 64x128 split padding B and C. About a minute.
  stage padlaunch
  F="$EV/padlaunch"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  sk=v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk
  timeout 240 $PY scripts/split_launch_probe.py --repeats 40 \
     --cases "4096x127x4096:$sk-pad,4096x127x4096:$sk-padc,4096x127x4096:v9-splitk-64x128x16-w32x64-t8x8-s3-sk-pad,4096x127x8191:$sk-pad,2048x127x4096:$sk-pad,4096x128x4096:$sk" \
     > "$F/launch_probe.md" 2>&1; echo "exit=$?" >> "$F/launch_probe.md"; tail -9 "$F/launch_probe.md"
  record padlaunch "$(grep -c '^| [0-9]' "$F/launch_probe.md") rows; $(tail -1 "$F/launch_probe.md")"
  ;;
padbalone)
  # v9-splitk's stream-K configurations that pad B alone where N % 4 != 0 (ids ending -padb: splitk_zero_c_pad_b
  # zeroes C where it lies and writes B's copy with rows of a multiple of 4 floats, the padded-B kernel reads that copy
  # in 16-byte pieces and adds into C's unaligned rows, and nothing is copied back). Session 33
  # (results/h200-2026-11-30/padbalone/): correct and clean, slower than padding B and C at 4096x127x4096.
  stage padbalone
  stream_k_variant_check padbalone -padb pa
  ;;
tilecopy)
  # v9-splitk's padded stream-K configurations whose multiply copies C back itself (ids ending -pad-tcopy: the block
  # completing a tile copies it from C's padded copy into C, so no launch follows the multiply). Session 33
  # (results/h200-2026-11-30/tilecopy/): correct and clean; the 256x128 tile slower than its twin, the 64x128 one
  # ahead at four of six narrow shapes.
  stage tilecopy
  stream_k_variant_check tilecopy -pad-tcopy tc
  ;;
coopprobe)
  # What the fused stream-K kernel's cooperative launch and grid barriers cost without its work
  # (scripts/coop_probe.py: a kernel crossing the module's grid_barrier() 0-2 times, one block per SM, plain and
  # cooperative launches, 200 event-timed launches each). About 30 s.
  stage coopprobe
  F="$EV/coopprobe"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 120 $PY scripts/coop_probe.py > "$F/coop_probe.md" 2>&1; echo "exit=$?" >> "$F/coop_probe.md"; cat "$F/coop_probe.md"
  record coopprobe "$(grep -c '^| [cp]' "$F/coop_probe.md") rows; $(tail -1 "$F/coop_probe.md")"
  ;;
fused)
  # v9-splitk's stream-K configurations in one launch (ids ending -fused: C zeroed, and where N % 4 != 0 B's and C's
  # padded copies written and C copied back, by the kernel itself between barriers over its cooperatively launched
  # grid): their GPU tests, then each beside its twin of three launches (or two) and cuBLAS, 30 interleaved rounds
  # (bench --interleaved), at the narrow deep-K shapes sgemm-auto runs a padded stream-K split on and at M of 127
  # and 333, then memcheck and racecheck of the fused ones at shapes with N % 4 != 0, N = 1 and N % 4 == 0 with edge
  # tiles. About 5 minutes. Session 32 ran it on three fused tiles, 128x256 at M of 127 and 333
  # (results/h200-2026-11-30/fused/): correct and clean, slower than their twins at every shape; the 256x128 one
  # stays (kernels/tuning.py). FUSED_NARROW_SIZES, FUSED_WIDE=0 and FUSED_SAN_SHAPES make a shorter call.
  stage fused
  F="$EV/fused"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_v9_splitk.py -q -m gpu -k fused -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sk=v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk; sk64=v9-splitk-64x128x16-w32x64-t8x8-s3-sk
  timeout 200 $PY -m profiling bench --kernels cublas,$sk-pad,$sk-fused,$sk64-pad,$sk --interleaved \
     --sizes "${FUSED_NARROW_SIZES:-4096x127x4096,4096x127x8191,2048x127x4096,1024x127x8191,4096x128x4096}" --repeats 30 \
     --json "$F/bench_narrow.json" > "$F/bench_narrow.txt" 2>"$F/bench_narrow.log"; echo "exit=$?" >> "$F/bench_narrow.log"
  [ "${FUSED_WIDE:-1}" = 1 ] && timeout 120 $PY -m profiling bench --kernels cublas,$sk,$sk-fused --interleaved \
     --sizes 333x4096x4096,127x4096x4096,333x2048x8191 --repeats 30 \
     --json "$F/bench_wide.json" > "$F/bench_wide.txt" 2>"$F/bench_wide.log"; echo "exit=$?" >> "$F/bench_wide.log"
  for b in narrow wide; do [ -f "$F/bench_$b.json" ] && $PY scripts/ratio_table.py "$F/bench_$b.json" > "$F/ratios_$b.md" 2>&1; done
  cat "$F"/ratios_*.md 2>/dev/null | grep -E "fused|sk-pad|sk \|" | head -30
  sanitize_at_shapes 60 "$F" fused_sanitizer fu "$($PY -c "from kernels.tuning import V9_SPLITK_TUNING_CONFIGS as C; print(','.join(c['id'] for c in C if c['id'].endswith('-fused')))")" \
     "${FUSED_SAN_SHAPES:-300x263x2000,333x1x4097,130x252x1001}"
  record fused "$(tail -1 "$F/gpu_tests.txt"); bench ok rows: $(cat "$F"/bench_*.txt 2>/dev/null | grep -c ' ok ')"
  # The device tool brings back at most 8 files: the folder travels as one archive.
  tar -C "$EV" -czf "$OUT/fused.tar.gz" fused && rm -rf "$F"
  ;;
staged)
  # wgmma-staged (issue 31): the persistent Hopper kernels' GPU tests (wgmma-staged among them, at the ring's awkward
  # shapes), memcheck and racecheck of it at one tile ring with edges, 153 tiles with an odd tile row and N cutting a
  # B box, and 2 one-slice tiles per block (its C slots released one by one across tile boundaries), all verified;
  # then the paired A/B against cuBLAS's AddMM and against wgmma-persistent at 4096 and 8192, and ncu's full set of
  # wgmma-persistent and wgmma-staged at 4096 for the Why page (why/ncu_why_staged_4096_*). About 6 minutes on an H200.
  stage staged
  F="$EV/staged"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 200 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sanitize_at_shapes 120 "$F" staged_sanitizer st wgmma-staged 272x400x96,1136x4112x528,4096x2048x64
  ab_pairs "$F" 4096,8192 cublas-addmm,wgmma-staged wgmma-persistent,wgmma-staged
  why_capture staged_4096 wgmma-persistent,wgmma-staged 4096 4096 4096 200 cuda,sass
  record staged "tests: $(tail -1 "$F/gpu_tests.txt"); why: $(($(wc -l < "$EV/why/ncu_why_staged_4096_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  ;;
hsk)
  # wgmma-streamk (issue 31): the persistent Hopper kernels' GPU tests (wgmma-streamk among them, with shapes whose
  # last wave has tiles shared by three to four blocks), memcheck and racecheck of it at three such shapes
  # (2064x4096x528: 272 tiles of 9 slices, 8 in the tail, each shared by three blocks), all verified; paired
  # A/B against cuBLAS's AddMM and against wgmma-staged at 4096, 5120 and 8192; the staged and stream-K builds, and
  # the stream-K runs of HSK_RUNS (labels of scripts/wgmma_variants.py), with cuBLAS in interleaved rounds at
  # HSK_SIZES; ncu's full set of wgmma-staged and wgmma-streamk at 5120 for the Why page (why/ncu_why_streamk_5120_*;
  # HSK_NO_WHY=1 skips it). About 7 minutes on an H200.
  stage hsk
  F="$EV/hsk"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 240 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sanitize_at_shapes 150 "$F" hsk_sanitizer sk wgmma-streamk 1024x6144x1072,896x4864x4096,2064x4096x528
  timeout 240 $PY scripts/wgmma_variants.py "${HSK_SIZES:-4096,5120,6144,8192}" "${HSK_REPEATS:-30}" "staged (catalog),stream-K (catalog),persistent (catalog)${HSK_RUNS:+,$HSK_RUNS}" > "$F/variants.txt" 2>&1; echo "exit=$?" >> "$F/variants.txt"
  cat "$F/variants.txt"
  ab_pairs "$F" 4096,5120,8192 cublas-addmm,wgmma-streamk wgmma-staged,wgmma-streamk
  [ -n "${HSK_NO_WHY:-}" ] || why_capture streamk_5120 wgmma-staged,wgmma-streamk 5120 5120 5120 200 cuda,sass
  record hsk "tests: $(tail -1 "$F/gpu_tests.txt"); $(grep -c 'e-0' "$F/variants.txt") timed rows; why: $(($(wc -l < "$EV/why/ncu_why_streamk_5120_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  ;;
hskbf16)
  # wgmma-streamk-bf16 (issue 31): its GPU tests (the persistent kernels' shapes, the tail-splitting ones among them),
  # memcheck and racecheck at a shape whose tail is split, and the paired A/B against cuBLAS's BF16 AddMM and against
  # wgmma-persistent-bf16 at 4096, 5120 and 8192. About 3 minutes on an H200.
  stage hskbf16
  F="$EV/hskbf16"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 240 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py -q -m gpu -p no:cacheprovider -k "bf16" > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sanitize_at_shapes 150 "$F" hskbf16_sanitizer skb wgmma-streamk-bf16 2064x4096x528
  ab_pairs "$F" 4096,5120,8192 cublas-addmm-bf16,wgmma-streamk-bf16 wgmma-persistent-bf16,wgmma-streamk-bf16
  record hskbf16 "tests: $(tail -1 "$F/gpu_tests.txt")"
  ;;
epi4)
  # The strips epilogue's builds (EPILOGUE 4: wgmma-staged, wgmma-streamk, wgmma-streamk-bf16) after a change to it:
  # the persistent Hopper kernels' GPU tests, then memcheck and racecheck of each at its stage's shapes, all
  # verified. About 5 minutes on an H200.
  stage epi4
  F="$EV/epi4"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 240 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sanitize_at_shapes 150 "$F/streamk" epi4_streamk sk wgmma-streamk 1024x6144x1072,896x4864x4096,2064x4096x528
  sanitize_at_shapes 120 "$F/staged" epi4_staged st wgmma-staged 272x400x96,1136x4112x528,4096x2048x64
  sanitize_at_shapes 150 "$F/bf16" epi4_bf16 skb wgmma-streamk-bf16 2064x4096x528
  record epi4 "tests: $(tail -1 "$F/gpu_tests.txt")"
  ;;
hskc)
  # wgmma-streamk-cluster (issue 31): the persistent Hopper kernels' GPU tests (it among them) and the residency probes
  # (its finishing pieces wait for other clusters' flags with all but four SMs held), then memcheck and racecheck of it
  # at three split tails (1136x4112x528: 9 tile rows, so the last cluster's second block is outside M), all verified.
  # About 5 minutes on an H200; HSKC_AB=1 runs the A/Bs and the ncu capture instead (about 5 minutes).
  stage hskc
  F="$EV/hskc"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  if [ "${HSKC_AB:-0}" = 1 ]; then
    rested_ab_pairs "$F" cublas-addmm,wgmma-streamk-cluster:4096,8192 wgmma-streamk,wgmma-streamk-cluster:8192
    why_capture streamk_cluster_8192 wgmma-streamk,wgmma-streamk-cluster 8192 8192 8192 400 cuda,sass
    record hskc "$(ab_verdicts "$F") verdicts; why: $(($(wc -l < "$EV/why/ncu_why_streamk_cluster_8192_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  else
    timeout 300 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py tests/gpu/test_gpu_residency.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
    sanitize_at_shapes 150 "$F" hskc_sanitizer skc wgmma-streamk-cluster 1024x6144x1072,2064x4096x528,1136x4112x528
    record hskc "tests: $(tail -1 "$F/gpu_tests.txt")"
  fi
  ;;
hskcbf16)
  # wgmma-streamk-cluster-bf16 (issue 31): the persistent Hopper kernels' GPU tests (it among them), memcheck and
  # racecheck of it at two split tails, all verified, then the paired A/B (every pair after 2 s of rest) against
  # cuBLAS's BF16 AddMM at 4096 and 8192 and against wgmma-streamk-bf16 at 8192. About 7 minutes on an H200.
  stage hskcbf16
  F="$EV/hskcbf16"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 300 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  sanitize_at_shapes 150 "$F" hskcbf16_sanitizer skcb wgmma-streamk-cluster-bf16 2064x4096x528,1136x4112x528
  rested_ab_pairs "$F" cublas-addmm-bf16,wgmma-streamk-cluster-bf16:4096,8192 wgmma-streamk-bf16,wgmma-streamk-cluster-bf16:8192
  record hskcbf16 "tests: $(tail -1 "$F/gpu_tests.txt"); $(ab_verdicts "$F") verdicts"
  ;;
why8192)
  # Issue 31: where wgmma-streamk's warps wait at 8192^3, FP16, the one cell of the H200 target still short: ncu's full
  # set with source counters of cuBLAS's AddMM and wgmma-streamk, the SASS source page (why/ncu_why_streamk_8192_*).
  # About 3 minutes on an H200.
  # WHY8192_KERNELS and WHY8192_NAME capture other kernels (session 25: cuBLAS's AddMM and wgmma-streamk-cluster).
  stage why8192
  why_capture "${WHY8192_NAME:-streamk_8192}" "${WHY8192_KERNELS:-cublas-addmm,wgmma-streamk}" 8192 8192 8192 400 cuda,sass
  record why8192 "$(($(wc -l < "$EV/why/ncu_why_${WHY8192_NAME:-streamk_8192}_raw.csv" 2>/dev/null || echo 2) - 2)) launches"
  ;;
newcfg)
  # The GPU tests of the configurations whose ids match NEWCFG_K (a pytest -k expression; default session 28's
  # configurations) in test_gpu_v9_splitk.py (10 shapes, correct over timed launches) and test_gpu_tuning_configs.py
  # (awkward sizes: 1, 17, 129, M or N of 1, edge tiles, K not a multiple of the slice). Their module fixtures build
  # only the selected configurations (tests.gpu.jobs.selected_values). About 20 s a configuration.
  stage newcfg
  F="$EV/newcfg"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 400 $PY -m pytest tests/gpu/test_gpu_v9_splitk.py tests/gpu/test_gpu_tuning_configs.py -q -m gpu -p no:cacheprovider \
     -k "${NEWCFG_K:-zf or fill or d32-ser}" > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  record newcfg "$(tail -1 "$F/gpu_tests.txt")"
  ;;
residency)
  # Issue 31: the kernels whose blocks wait for other blocks of their launch (wgmma-streamk, -bf16, -cluster, serial
  # split-K) with all but four SMs held by another kernel's blocks (tests/gpu/test_gpu_residency.py,
  # profiling/gpu/residency.py): each must finish, verified, before the holders are let go. About 2 minutes.
  stage residency
  F="$EV/residency"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 300 $PY -m pytest tests/gpu/test_gpu_residency.py -q -m gpu -p no:cacheprovider > "$F/gpu_tests.txt" 2>&1; tail -3 "$F/gpu_tests.txt"
  for case in wgmma-streamk:1024x6144x1072 wgmma-streamk-bf16:2064x4096x528 wgmma-streamk-cluster:1024x6144x1072 v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser:127x127x8191 v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser:333x4096x333 v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf:333x127x4096 v9-splitk-64x64x16-w32x64-t8x8-s3-d32-zf:4096x64x4096; do
    timeout 60 $PY -m profiling.gpu.residency --kernel "${case%%:*}" --shape "${case#*:}" --free-sms 4 >> "$F/probes.jsonl" 2>> "$F/probes.err"
  done
  cat "$F/probes.jsonl"
  record residency "tests: $(tail -1 "$F/gpu_tests.txt")"
  ;;
issue31)
  # Issue 31's speed targets on this GPU in one call, every pair after 2 s of rest (none power-capped): the last Hopper
  # steps against cuBLAS doing the same AddMM (FP16, and BF16 for the BF16 step) at 4096 and 8192, then v9-regdb (this
  # GPU's tuned configuration at each size) against cuBLAS SGEMM at 2048, 4096 and 8192. On an H100 this stage is the
  # issue's other column. About 8 minutes on an H200: 80-90 s for each SGEMM size (session 36: 240 s were too few for
  # the three, results/h200-2026-11-30/issue31/).
  stage issue31
  F="$EV/issue31"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  REST_AB_SECONDS=240 rested_ab_pairs "$F" cublas-addmm,wgmma-streamk-cluster:4096,8192 \
     cublas-addmm-bf16,wgmma-streamk-cluster-bf16:4096,8192
  REST_AB_SECONDS=400 rested_ab_pairs "$F" cublas,v9-regdb:2048,4096,8192
  gpu_clocks "$F/env_after.txt"
  record issue31 "$(ab_verdicts "$F") verdicts"
  ;;
hopper_ab)
  # Issue 31's Hopper target in one call: paired, interleaved A/B (95 % interval of the time ratio) of each Hopper
  # AddMM step against cuBLAS doing the same AddMM (FP16, and BF16 for the BF16 step) at 4096 and 8192, clocks and
  # power before and after. About 4 minutes on an H200.
  stage hopper_ab
  F="$EV/hopper_ab"; mkdir -p "$F"
  { date -u; nvidia-smi --query-gpu=name,driver_version,clocks.current.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv; } > "$F/env.txt" 2>&1
  ab_pairs "$F" 4096,8192 cublas-addmm,wgmma-persistent cublas-addmm,wgmma-tma-store cublas-addmm,wgmma-cluster cublas-addmm-bf16,wgmma-persistent-bf16 cublas-addmm,wgmma-staged cublas-addmm,wgmma-streamk-cluster
  { date -u; nvidia-smi --query-gpu=name,clocks.current.sm,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv; } >> "$F/env.txt" 2>&1
  record hopper_ab "$(ab_verdicts "$F") verdicts"
  ;;
sanids)
  # memcheck and racecheck of the configurations SAN_IDS (comma-separated ids) at SAN_SHAPES (MxNxK, comma-separated;
  # default 300x263x2000: edge tiles, N % 4 != 0, uneven K splits), each result verified against cuBLAS. For new
  # configurations, in the call that first measures them. About 40 s per configuration and shape on an H200.
  stage sanids
  sanitize_at_shapes 200 "$EV/sanitizer_ids" sanids ids "${SAN_IDS:?SAN_IDS=id,id}" "${SAN_SHAPES:-300x263x2000}"
  ;;
san64)
  # memcheck and racecheck of v9-regdb's 64x64 four-warp configurations (session 17, cuBLAS's tile at 4096x333x333):
  # edge tiles and a partial slice (300x264x72), an odd N on the narrow twin with K not a multiple of either slice
  # (129x17x1001), and M = N = K = 1, each result verified against cuBLAS. About 3 minutes on an H200.
  stage san64
  cfgs=$($PY -c "from kernels.tuning import V9_TUNING_CONFIGS as C; print(','.join(c['id'] for c in C if c['id'].startswith('v9-regdb-64x64')))")
  sanitize_at_shapes 240 "$EV/sanitizer_64x64" san64 r64 "$cfgs" 300x264x72,129x17x1001,1x1x1
  ;;
sanac)
  # memcheck and racecheck of every configuration whose narrow kernel copies A coalesced (v9_body.cuh A_COALESCED:
  # kernels.tuning.a_coalesced_ids, v9-regdb's and v9-splitk's narrow twins of up to 64 accumulators a thread) at
  # edge tiles with a partial slice (300x263x72), an odd N with K not a multiple of either slice (129x17x1001) and
  # M = N = K = 1, each result verified against cuBLAS. About 10 minutes on an H200 for 19 configurations a job (21
  # since session 27; about 20 s each per tool and shape): run it alone in a call.
  stage sanac
  cfgs=$($PY -c "from kernels.tuning import a_coalesced_ids; print(','.join(a_coalesced_ids()))")
  sanitize_at_shapes 300 "$EV/sanitizer_ac" sanac ac "$cfgs" 300x263x72,129x17x1001,1x1x1
  ;;
sweeppred)
  # Sweep, at the grid shapes where this GPU's tuning record holds only a prediction that would outbid its
  # measurements (scripts/grid_report.py --predicted-only: sgemm-auto runs only configurations measured at a swept
  # shape), the kernels whose configurations those are (SWEEPPRED_KERNELS, default v8-async,v8-splitk: the H100's
  # 17 such shapes in session 17), 10 L2-flushed launches each, into the record. Run it as `sweeppred grid`.
  # Lands in $OUT/sweeppred.tar.gz (the sweep and the new record). About 1.5 minutes for 20 shapes on an H200.
  stage sweeppred
  T="$OUT/sweeppred"; mkdir -p "$T"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  shapes=$($PY scripts/grid_report.py --predicted-only "$gpu"); echo "$shapes" > "$T/shapes.txt"
  if [ -n "$shapes" ]; then
    timeout 300 $PY -m profiling tune --kernels "${SWEEPPRED_KERNELS:-v8-async,v8-splitk}" --sizes "$shapes" --repeats 10 --record \
       --json "$T/tune_pred.json" > "$T/tune_pred.txt" 2>"$T/tune_pred.log"; echo "exit=$?" >> "$T/tune_pred.log"
  fi
  cp results/tuning/*.json "$T/"
  record sweeppred "$(tail -1 "$T/tune_pred.log" 2>/dev/null || echo nothing to sweep); $(echo "$shapes" | tr ',' '\n' | grep -c x) shapes; left: $($PY scripts/grid_report.py --predicted-only "$gpu" | tr ',' '\n' | grep -c x)"
  tar -C "$OUT" -czf "$OUT/sweeppred.tar.gz" sweeppred && rm -rf "$T"
  ;;
closecalls)
  # Measure again the configurations sgemm-auto chooses between on a difference its sweep's 10 launches cannot resolve
  # (scripts/grid_report.py --close-calls: within CLOSECALLS_MARGIN %, default kernels.auto.CLOSE_CALL_MARGIN, of the
  # best the record measured there), at the grid shapes under CLOSECALLS_NEAR % of cuBLAS (default 95) in the bench
  # documents of CLOSECALLS_FROM (a committed grid folder of this GPU), into this GPU's tuning record: each shape's
  # configurations and cuBLAS timed together in 30 interleaved rounds (tune --interleaved), since one after the other
  # they drift apart by more than the margin (session 29, H200, 127x127x8191: 30 launches one configuration after
  # another read the padded-C 128x64 split at 86.7 % of cuBLAS, five grids at 90.9-94.5 %). Run it as
  # `closecalls grid`. Lands in $OUT/closecalls.tar.gz (the list, each shape's sweep, the new record). About 10 s a
  # configuration, most of it NVRTC.
  stage closecalls
  T="$OUT/closecalls"; mkdir -p "$T"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  $PY scripts/grid_report.py "${CLOSECALLS_FROM:?CLOSECALLS_FROM=<grid folder>}"/bench_k*.json --close-calls "$gpu" \
     --near "${CLOSECALLS_NEAR:-95}" ${CLOSECALLS_MARGIN:+--margin "$CLOSECALLS_MARGIN"} > "$T/close_calls.txt" 2> "$T/close_calls.log"
  sweep_in_rounds "$T/close_calls.txt" "$T"
  cp results/tuning/*.json "$T/"
  record closecalls "$(grep -c 'exit=0' "$T/log.txt" 2>/dev/null) of $(wc -l < "$T/close_calls.txt") shapes measured again"
  tar -C "$OUT" -czf "$OUT/closecalls.tar.gz" closecalls && rm -rf "$T"
  ;;
outbid)
  # Sweep, at every shape this GPU's tuning record swept where configurations it never measured there are predicted
  # above its measurements (scripts/grid_report.py --outbid: the grid's shapes and any other, such as the 1024³ cube,
  # where on the H200 sgemm-auto read 72.7 % of cuBLAS until session 37 swept v9-splitk there), those configurations
  # and sgemm-auto's choice there, timed together with cuBLAS in 30 interleaved rounds (tune --interleaved), into the
  # record. Lands in $OUT/outbid.tar.gz (the list, each shape's sweep, the new record). About 10 s a configuration.
  stage outbid
  T="$OUT/outbid"; mkdir -p "$T"
  gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)
  $PY scripts/grid_report.py --outbid "$gpu" > "$T/outbid.txt" 2> "$T/outbid.log"
  sweep_in_rounds "$T/outbid.txt" "$T"
  cp results/tuning/*.json "$T/"
  record outbid "$(grep -c 'exit=0' "$T/log.txt" 2>/dev/null) of $(wc -l < "$T/outbid.txt") shapes swept; left: $($PY scripts/grid_report.py --outbid "$gpu" | wc -l)"
  tar -C "$OUT" -czf "$OUT/outbid.tar.gz" outbid && rm -rf "$T"
  ;;
tunegrid)
  # Sweep the auto bases at the shapes where sgemm-auto missed 90 % of cuBLAS in a committed grid (GRID_FROM, bench
  # documents), record them in this GPU's tuning record (which keeps every other shape), so sgemm-auto's prediction
  # at those shapes reads each configuration's own measurement there; then run the grid stage again. v9-regdb's 21
  # configurations only where M and N are both at least 1024. Lands in $OUT/tunegrid.tar.gz (the sweeps, the new
  # record). Run it as `tunegrid grid`. About 2.5 minutes of sweeps on an H100 before v9-clusterk's seven
  # configurations joined the small shapes' sweep (its timeout rose from 260 to 420 s; with the grid stage that can
  # pass the device's 10 minutes a command: run `tunegrid` and `grid` as two calls, or sweep fewer bases with
  # TUNEGRID_KERNELS, e.g. only those whose code changed: the record keeps the others' measurements; TUNEGRID_LARGE=0
  # skips the v9-regdb sweep at the large shapes; TUNEGRID_SHAPES=all sweeps every grid shape instead of the misses, so
  # that a base's new measurements do not stand, scaled, for shapes they were not taken at; TUNEGRID_SHAPES=narrow
  # every grid shape with N % 4 != 0; TUNEGRID_SHAPES=MxNxK,... those shapes).
  stage tunegrid
  T="$OUT/tunegrid"; mkdir -p "$T"
  small=""; large=""
  # The misses need a grid to read (GRID_FROM); TUNEGRID_SHAPES=all or narrow without one sweeps no large shapes.
  if [ -n "${GRID_FROM:-}" ] || [ "${TUNEGRID_SHAPES:-misses}" = misses ]; then
    small=$($PY scripts/grid_report.py ${GRID_FROM:-} --misses); large=$($PY scripts/grid_report.py ${GRID_FROM:-} --misses --min-side 1024)
  fi
  if [ "${TUNEGRID_SHAPES:-misses}" = all ]; then  # every grid shape, for bases whose code changed everywhere it splits
    small=$($PY -c "from profiling.analysis.shape_grid import GRID_K, GRID_MN; print(','.join(f'{m}x{n}x{k}' for k in GRID_K for m in GRID_MN for n in GRID_MN))")
  elif [ "${TUNEGRID_SHAPES:-misses}" = narrow ]; then  # every grid shape with N % 4 != 0 (where B is padded)
    small=$($PY -c "from profiling.analysis.shape_grid import GRID_K, GRID_MN; print(','.join(f'{m}x{n}x{k}' for k in GRID_K for m in GRID_MN for n in GRID_MN if n % 4))")
  elif [[ "${TUNEGRID_SHAPES:-misses}" == *x* ]]; then  # the shapes given, MxNxK comma-separated
    small="$TUNEGRID_SHAPES"
  fi
  echo "$small" > "$T/shapes_small.txt"; echo "$large" > "$T/shapes_large.txt"
  # TUNEGRID_INTERLEAVED=1 times each shape's configurations together in rounds (tune --interleaved), every launch
  # after another configuration's code. One after another, v9's large unrolled kernels read as fast as v8-splitk at
  # 64x64x4096; in rounds they took 84 % more time, fetching their code after other kernels' costing about 10 us
  # (results/h200-2026-11-30/autochoice/, pdl_tiny/). Not yet run in this stage on a GPU (tunerounds uses the flag).
  timeout 420 $PY -m profiling tune --kernels "${TUNEGRID_KERNELS:-v8-async,v8-splitk,v9-splitk}" --sizes "$small" --repeats 10 --record \
     $([ "${TUNEGRID_INTERLEAVED:-0}" = 1 ] && echo --interleaved) \
     --json "$T/tune_small.json" > "$T/tune_small.txt" 2>"$T/tune_small.log"; echo "exit=$?" >> "$T/tune_small.log"
  if [ -n "$large" ] && [ "${TUNEGRID_LARGE:-1}" = 1 ]; then
    timeout 100 $PY -m profiling tune --kernels v9-regdb --sizes "$large" --repeats 10 --record \
       --json "$T/tune_large.json" > "$T/tune_large.txt" 2>"$T/tune_large.log"; echo "exit=$?" >> "$T/tune_large.log"
  else
    echo "large shapes: none swept" > "$T/tune_large.log"  # not a failed sweep: the summary used to read exit=1
  fi
  cp results/tuning/*.json "$T/"
  record tunegrid "$(tail -1 "$T/tune_small.log") $(tail -1 "$T/tune_large.log" 2>/dev/null); swept $(echo "$small" | tr ',' '\n' | grep -c x) + $(echo "$large" | tr ',' '\n' | grep -c x) shapes"
  tar -C "$OUT" -czf "$OUT/tunegrid.tar.gz" tunegrid && rm -rf "$T"
  ;;
icache)
  # Does the tuned tile pay for fetching its code again after another kernel's? scripts/icache_probe.py times rounds
  # of cuBLAS, the tile right after it and the tile again, each after an L2 flush (session 30: about 10 us a launch
  # at 2048x2048x333, results/h200-2026-11-30/grid_interleaved/), for each build of ICACHE_VARIANTS (the k loop
  # rolled into 2-, 4- or 8-step bodies: V9_K_UNROLL); then ncu, its own cache flush off and every pass replaying the
  # whole program so that each launch keeps its predecessor, of the build as it is and with the 4-step loop: the
  # instruction-fetch stalls after cuBLAS and after itself.
  stage icache
  F="$EV/icache"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  ID="${ICACHE_ID:-v9-regdb-128x256x16-w64x64-t8x16-s3-o3}"
  for shape in ${ICACHE_SHAPES:-2048x2048x333 2048x2048x2048}; do
    V9VAR_VARIANTS="${ICACHE_VARIANTS:-as built,k loop by 2,k loop by 4,k loop by 8}" timeout 240 \
       $PY scripts/icache_probe.py "$ID" "$shape" 30 > "$F/probe_$shape.txt" 2>&1; echo "exit=$?" >> "$F/probe_$shape.txt"
    cat "$F/probe_$shape.txt"
  done
  stalls=gpu__time_duration.sum,smsp__inst_executed.sum,smsp__average_warp_latency_per_inst_issued.ratio
  for r in no_instruction branch_resolving dispatch_stall long_scoreboard barrier short_scoreboard; do
    stalls="$stalls,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  for label in "as built" "k loop by 4"; do
    V9VAR_VARIANTS="$label" timeout 200 "$NCU" --cache-control none --clock-control none --replay-mode application \
       -k regex:regdb --metrics "$stalls" --csv --page raw $PY scripts/icache_probe.py "$ID" 2048x2048x333 4 \
       > "$F/ncu_${label// /_}.csv" 2> "$F/ncu_${label// /_}.log"; echo "exit=$?" >> "$F/ncu_${label// /_}.log"
  done
  record icache "$(grep -h 'x333 ' "$F"/probe_*.txt | awk '{printf "%s %s/%s; ", $1" "$2" "$3" "$4, $7, $8}' | cut -c1-200)"
  ;;
tmaprobe)
  # Issue 31's SGEMM >= 98 %: the tuned tile with its copies done by TMA (scripts/sgemm_tma_probe.cu, a measurement):
  # checked against cuBLAS at awkward shapes, then timed with cuBLAS and v9-regdb's tuned tiles in 30 interleaved
  # rounds and after itself; memcheck and racecheck of the checks; ncu's stall reasons of all at 2048^3.
  stage tmaprobe
  F="$EV/tmaprobe"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  timeout 300 $PY scripts/sgemm_tma_probe.py "${TMAPROBE_SHAPES:-2048x2048x2048,4096x4096x4096,8192x8192x8192}" 30 \
     > "$F/probe.txt" 2>&1; echo "exit=$?" >> "$F/probe.txt"
  cat "$F/probe.txt"; gpu_clocks "$F/env_after.txt"
  for tool in memcheck racecheck; do
    TMAPROBE_TIMED=0 timeout 120 "$SAN" --tool $tool $PY scripts/sgemm_tma_probe.py 256x256x64 1 > "$F/$tool.txt" 2>&1
    echo "exit=$?" >> "$F/$tool.txt"; tail -3 "$F/$tool.txt"
  done
  stalls=gpu__time_duration.sum,smsp__inst_executed.sum,sm__cycles_active.avg,launch__registers_per_thread
  for r in no_instruction dispatch_stall long_scoreboard mio_throttle short_scoreboard barrier wait math_pipe_throttle not_selected selected; do
    stalls="$stalls,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio"
  done
  TMAPROBE_CHECK=0 timeout 200 "$NCU" -k 'regex:tma_simt|regdb|gemm' --metrics "$stalls" --csv --page raw \
     $PY scripts/sgemm_tma_probe.py 2048x2048x2048 1 > "$F/ncu_stalls.csv" 2> "$F/ncu.log"; echo "exit=$?" >> "$F/ncu.log"
  record tmaprobe "$(grep -E '^(cuBLAS|v9-regdb|tma|mixed)' "$F/probe.txt" | awk '{printf "%s %s %s; ", $1, $2, $5}' | cut -c1-200)"
  ;;
pdl)
  # Programmatic dependent launch (scripts/pdl_probe.py): each of PDL_CASES' split-K operations (SHAPE:CONFIGURATION,
  # comma-separated) as built, built with GEMMLENS_PDL=1 and launched plainly, and with its launches after the first
  # programmatic, beside cuBLAS in 30 rounds, each verified before and after 20 operations back to back; then a
  # memcheck of the first case's operations.
  stage pdl
  F="$EV/pdl"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  cases="${PDL_CASES:-4096x127x4096:v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad}"
  timeout "${PDL_SECONDS:-300}" $PY scripts/pdl_probe.py --repeats "${PDL_REPEATS:-30}" --cases "$cases" > "$F/probe.md" 2>&1
  echo "exit=$?" >> "$F/probe.md"; cat "$F/probe.md"
  # cuda-bindings looks up every driver entry point it knows when it starts, and the sanitizer counts each one this
  # driver lacks as an API error (34 cuGetProcAddress errors on driver 580): only the kernels' errors are counted.
  timeout 200 "$SAN" --tool memcheck --report-api-errors no $PY scripts/pdl_probe.py --repeats 3 --cases "${cases%%,*}" > "$F/memcheck.txt" 2>&1
  echo "exit=$?" >> "$F/memcheck.txt"; tail -3 "$F/memcheck.txt"
  record pdl "$(grep -c 'programmatic launches |' "$F/probe.md") cases, $(grep -c 'ok (' "$F/probe.md") checks ok; $(grep -h 'ERROR SUMMARY' "$F/memcheck.txt")"
  ;;
skhybrid)
  # Issue 31's SGEMM >= 98 %: v9-splitk's stream-K tiles as built and with V9_SK_HYBRID=1 (whole waves of tiles one a
  # block, stream-K over the last partial wave's; kernels/src/v9_splitk.cu), each operation verified, beside cuBLAS and
  # v9-regdb's tuned tiles in 30 rounds (scripts/pdl_probe.py --builds hybrid); memcheck and racecheck of the hybrid
  # where it has both kinds of segment.
  stage skhybrid
  F="$EV/skhybrid"; mkdir -p "$F"; gpu_clocks "$F/env.txt"
  sk="${SKH_IDS:-v9-splitk-128x256x16-w64x64-t8x16-s3-o3-sk v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk}"
  # 3000x2002x333 first: 192 tiles of 128x256, so 132 whole and 60 shared, through the N % 4 != 0 kernel.
  cases="3000x2002x333:${sk%% *}"
  for n in ${SKH_SIZES:-2048 4096 8192}; do for id in $sk; do cases="$cases,${n}x${n}x${n}:$id"; done; done
  timeout 420 $PY scripts/pdl_probe.py --builds hybrid --repeats 30 --cases "$cases" --json \
     --beside "${SKH_BESIDE:-v9-regdb-128x256x16-w64x64-t8x16-s3-o3,v9-regdb-128x256x16-w64x64-t8x16-s4-o3}" \
     > "$F/probe.md" 2>&1; echo "exit=$?" >> "$F/probe.md"; grep -v '^{' "$F/probe.md"; gpu_clocks "$F/env_after.txt"
  for tool in memcheck racecheck; do
    timeout 150 "$SAN" --tool $tool --report-api-errors no $PY scripts/pdl_probe.py --builds hybrid --repeats 2 \
       --cases "2048x4096x64:${sk%% *}" > "$F/$tool.txt" 2>&1; echo "exit=$?" >> "$F/$tool.txt"; tail -3 "$F/$tool.txt"
  done
  record skhybrid "$(grep -c 'ok (' "$F/probe.md") checks ok; $(grep -h 'SUMMARY' "$F"/memcheck.txt "$F"/racecheck.txt | tr '\n' ' ')"
  ;;
catalog)
  # Every catalog kernel at CATALOG_SIZES (4096,1024 by default), one bench process per size, so a size that runs out of
  # time loses only itself: 4096³ takes about 90 s on an H200, 1024³ about 60 s. Into $EV/catalog_<size>/.
  stage catalog
  for n in $(echo "${CATALOG_SIZES:-4096,1024}" | tr ',' ' '); do
    C="$EV/catalog_$n"; mkdir -p "$C"; gpu_clocks "$C/env.txt"
    timeout "${CATALOG_SECONDS:-200}" $PY -m profiling bench --kernels all --sizes "$n" --repeats 20 --max-seconds 2 \
       --json "$C/bench.json" > "$C/bench.txt" 2> "$C/bench.log"; echo "exit=$?" >> "$C/bench.log"
    STATUS[catalog]="${STATUS[catalog]:-}$n: $(grep -c ' ok ' "$C/bench.txt") ok ($(tail -1 "$C/bench.log")); "
  done
  ;;
sanauto)
  # memcheck and racecheck of SANAUTO_KERNELS (sgemm-auto: this GPU's record's choice) at SANAUTO_SHAPES, every result
  # verified against cuBLAS, into $EV/sanauto/: after a record changes a shape's choice.
  stage sanauto
  sanitize_at_shapes 120 "$EV/sanauto" sanauto sa "${SANAUTO_KERNELS:-sgemm-auto}" "${SANAUTO_SHAPES:-1024x1024x1024}"
  ;;
tunerounds)
  # Sweep TUNEROUNDS_KERNELS (v9-regdb by default) at TUNEROUNDS_SHAPES with every shape's configurations and cuBLAS
  # timed together in 30 rounds (tune --interleaved), into this GPU's tuning record: each launch then follows another
  # kernel's code, as in a model and in the grid timed in rounds, where the 128x256 tile the record chose at the large
  # K = 333 shapes from launches one after another pays about 10 us more (results/h200-2026-11-30/grid_interleaved/).
  # Lands in $OUT/tunerounds.tar.gz (the sweep, the new record).
  stage tunerounds
  T="$OUT/tunerounds"; mkdir -p "$T"
  shapes="${TUNEROUNDS_SHAPES:-1024x1024x333,1024x2048x333,2048x1024x333,1024x4096x333,4096x1024x333,2048x2048x333,2048x4096x333,4096x2048x333,4096x4096x333}"
  timeout "${TUNEROUNDS_SECONDS:-400}" $PY -m profiling tune --kernels "${TUNEROUNDS_KERNELS:-v9-regdb}" --sizes "$shapes" --repeats 30 \
     --interleaved --record --json "$T/tune.json" > "$T/tune.txt" 2> "$T/tune.log"; echo "exit=$?" >> "$T/tune.log"
  cp results/tuning/*.json "$T/"
  record tunerounds "$(tail -1 "$T/tune.log"); $(grep -c ' ok ' "$T/tune.txt") ok rows at $(echo "$shapes" | tr ',' '\n' | grep -c x) shapes"
  tar -C "$OUT" -czf "$OUT/tunerounds.tar.gz" tunerounds && rm -rf "$T"
  ;;
esac; done

tar -C "$OUT" -czf "$OUT/evidence.tar.gz" evidence && rm -rf "$EV"
echo; echo "=== summary"
for s in $STAGES; do printf '%-10s %s\n' "$s" "${STATUS[$s]:-not run}"; done
ls -la "$OUT"
