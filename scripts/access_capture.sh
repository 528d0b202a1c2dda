#!/usr/bin/env bash
# The capture behind the indexing models' edge cases (issue 17): every modelled kernel at awkward sizes, where
# partial tiles, guarded scalar paths and dead cp.async slices run. Hardware counters of global sectors and
# shared wavefronts, plus the SourceCounters section (per-instruction counters and the source page).
# Usage (device tool): bash scripts/access_capture.sh   (files land in $OUT, default /tmp/access; the bundled copy is results/h100-2026-11-22/access/)
# ACCESS_KERNELS=v9-regdb,...: only these of the modelled kernels (default: all of them).
set -u
export PYTHONUNBUFFERED=1 CUPY_TF32=0 CUPY_CACHE_DIR="${CUPY_CACHE_DIR:-/tmp/cupy-cache}"
PY=${PY:-python3}
NCU=$(command -v ncu || ls -d /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | tail -1)
OUT=${OUT:-/tmp/access}
mkdir -p "$OUT"
METRICS=$(echo l1tex__t_{sectors,requests}_pipe_lsu_mem_global_op_{ld,st}.sum \
  l1tex__data_pipe_lsu_wavefronts_mem_shared_op_{ld,st}.sum l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_{ld,st}.sum \
  smsp__sass_inst_executed_op_shared_{ld,st}.sum smsp__sass_inst_executed_op_global_{ld,st}.sum \
  smsp__inst_executed_op_ldsm.sum smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts.sum \
  sm__sass_l1tex_t_requests_pipe_lsu_mem_global_op_ldgsts.sum | tr ' ' ,)
$PY - <<'PY'
import json
from kernels.indexing import MODELS
from kernels.registry import get_kernel
from profiling.gpu.jobs import BenchSettings, Job, Task
tasks = []
import os
only = [k for k in os.environ.get("ACCESS_KERNELS", "").split(",") if k]
for kid in only or MODELS:
    half = get_kernel(kid).dtype == "float16"
    for m, n, k in [(1008, 1008, 1008)] if half else [(1000, 1000, 1000), (997, 1003, 999)]:
        tasks.append(Task(kid, m, n, k))
job = Job(op="profile", tasks=tasks, settings=BenchSettings(repeats=1, warmup=1, flush_l2=False))
json.dump(job.to_dict(), open("/tmp/access_job.json", "w"))
PY
timeout 560 "$NCU" --nvtx --nvtx-include 'regex:gemmlens:.*/' --clock-control none --section SourceCounters \
  --metrics "$METRICS" --import-source yes -f -o /tmp/access "$PY" -m profiling worker --job /tmp/access_job.json \
  > "$OUT/access_awkward_log.txt" 2>&1
echo "exit=$?" >> "$OUT/access_awkward_log.txt"
if [ -f /tmp/access.ncu-rep ]; then
  "$NCU" --import /tmp/access.ncu-rep --csv --page raw > "$OUT/ncu_access_awkward_raw.csv" 2>&1
  "$NCU" --import /tmp/access.ncu-rep --csv --page source --print-source sass | gzip -9 > "$OUT/source_access_awkward_sass.csv.gz"
fi
tail -3 "$OUT/access_awkward_log.txt"; ls -la "$OUT"
