#!/usr/bin/env bash
# The persistent Hopper AddMM kernels (wgmma-persistent, wgmma-cluster) on a GPU, one device call:
#   probe     layout probe of each (readable failures; beta = 0 with C all NaN), one tile and an edge shape
#   tests     tests/gpu/test_gpu_wgmma_persistent.py
#   bench     cuBLAS HGEMM, wgmma-tma-store and the new kernels at 4096 and 8192, 30 L2-flushed launches each
#   sanitize  memcheck and racecheck through the real worker at 272x400x96 and 1136x4112x528 (cluster edge tiles)
#   variants  scripts/wgmma_variants.py: the catalog builds and the variants measured before choosing them
# Usage (device tool): GEMMLENS_COMMIT=<commit> bash scripts/wgmma_round3.sh probe tests bench sanitize
# Writes under $OUT: env.txt, probe.txt, gpu_tests.txt, bench.json, bench.txt, bench.log, sanitize.txt, variants.txt.
set -u
PY=${PY:-python3}
O=${OUT:-/tmp/wgmma_round3}
mkdir -p "$O"
SAN=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
KERNELS=${KERNELS:-wgmma-persistent,wgmma-cluster}
{ date -u; nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv; } > "$O/env.txt" 2>&1
head -3 "$O/env.txt"

job() {  # job FILE OP KERNELS M N K
  $PY - "$@" <<'PY'
import json, sys
from profiling.gpu.jobs import BenchSettings, Job, Task
path, op, kernels, m, n, k = sys.argv[1:7]
tasks = [Task(kid, int(m), int(n), int(k)) for kid in kernels.split(",")]
json.dump(Job(op=op, tasks=tasks, settings=BenchSettings(repeats=1, warmup=1, flush_l2=False)).to_dict(), open(path, "w"))
PY
}

for s in "$@"; do case $s in
probe)
  echo "=== probe $(date -u +%T)"
  for k in ${KERNELS//,/ }; do
    for shape in "128 256 64" "272 400 96"; do
      timeout 60 $PY scripts/wgmma_probe.py $shape "$k" >> "$O/probe.txt" 2>&1 || echo "probe $k $shape: exit $?" >> "$O/probe.txt"
    done
  done
  grep -E "verdict|exit|failed" "$O/probe.txt"
  ;;
tests)
  echo "=== tests $(date -u +%T)"
  timeout 240 $PY -m pytest tests/gpu/test_gpu_wgmma_persistent.py tests/gpu/test_gpu_wgmma.py -q -m gpu -p no:cacheprovider > "$O/gpu_tests.txt" 2>&1
  tail -8 "$O/gpu_tests.txt"
  ;;
bench)
  echo "=== bench $(date -u +%T)"
  timeout 240 $PY -m profiling bench --kernels "wgmma-tma-store,$KERNELS" --sizes 4096,8192 --repeats 30 \
     --json "$O/bench.json" 2>"$O/bench.log" > "$O/bench.txt"
  cat "$O/bench.txt"; tail -3 "$O/bench.log"
  ;;
sanitize)
  echo "=== sanitize $(date -u +%T)"
  for shape in "272 400 96" "1136 4112 528"; do
    job /tmp/san.json verify "$KERNELS" $shape
    for tool in memcheck racecheck; do
      extra=""; [ $tool = racecheck ] && extra="--racecheck-report hazard"
      echo "--- $tool $shape" >> "$O/sanitize.txt"
      timeout 120 "$SAN" --tool $tool $extra $PY -m profiling worker --job /tmp/san.json 2>&1 | grep -vE "^GEMMLENS_DEVICE" | cut -c1-400 >> "$O/sanitize.txt"
    done
  done
  grep -E "^---|ERROR SUMMARY|RACECHECK SUMMARY|\"status\"" "$O/sanitize.txt" | cut -c1-200
  ;;
variants)
  echo "=== variants $(date -u +%T)"
  timeout 240 $PY scripts/wgmma_variants.py 4096,8192 30 > "$O/variants.txt" 2>&1
  tail -18 "$O/variants.txt"
  ;;
esac; done
