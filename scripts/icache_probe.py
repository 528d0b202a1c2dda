"""Whether a v9 configuration's launch is slower right after another kernel's code than right after its own: rounds of
cuBLAS SGEMM, the configuration (after cuBLAS: "after cuBLAS") and the configuration again ("after itself"), each
launch after an L2 flush (a memset, whose code is small), event-timed; prints the medians. The flush clears the L2,
not what each SM keeps, such as the last kernel's instructions, so the two differ by what refetching the code costs.
Run under `ncu --cache-control none --replay-mode application -k regex:regdb` the captured launches alternate after
cuBLAS, after itself (ncu's own cache flush would make every launch start cold), for the instruction-fetch stalls
(smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio).

Usage: [V9VAR_VARIANTS=LABELS] python scripts/icache_probe.py CONFIG_ID MxNxK [ROUNDS]   (LABELS: builds of
scripts/v9_variants.py, "as built" by default; each is probed in turn)
"""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from v9_variants import EXTRA_CONFIGS, VARIANTS, build, launcher  # noqa: E402

from kernels.tuning import config_by_id, spec_for  # noqa: E402
from profiling.gpu.timing import flush_byte  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402


def main() -> int:
    import cupy as cp

    cid = sys.argv[1]
    shape = parse_shape(sys.argv[2])
    m, n, k = shape.m, shape.n, shape.k
    rounds = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    labels = os.environ.get("V9VAR_VARIANTS", "as built").split(",")
    spec = spec_for(config_by_id(cid) or EXTRA_CONFIGS[cid])
    flush = cp.empty(2 * cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"], dtype=cp.uint8)
    stream = cp.cuda.get_current_stream()
    rng = cp.random.default_rng(1)
    a = rng.uniform(-1, 1, (m, k), dtype=cp.float32)
    b = rng.uniform(-1, 1, (k, n), dtype=cp.float32)
    ref = cp.matmul(a, b)
    c = cp.empty((m, n), dtype=cp.float32)
    print(
        f"{'build':24s} {'shape':>16s} {'after cuBLAS ms':>16s} {'after itself ms':>16s} {'cost us':>8s} {'rel err':>9s}"
    )
    for label in labels:
        launch = launcher(spec, build(cp, spec, dict(VARIANTS)[label]), a, b, c)
        launch()
        cp.cuda.Device().synchronize()
        err = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
        cold, warm = [], []
        index = 0
        for _ in range(rounds):
            events = []
            for what in ("cuBLAS", "after cuBLAS", "after itself"):
                cp.cuda.runtime.memsetAsync(flush.data.ptr, flush_byte(index), flush.nbytes, stream.ptr)
                index += 1
                start, end = cp.cuda.Event(), cp.cuda.Event()
                start.record()
                if what == "cuBLAS":
                    cp.matmul(a, b, out=ref)
                else:
                    launch()
                end.record()
                events.append((start, end))
            end.synchronize()
            cold.append(cp.cuda.get_elapsed_time(*events[1]))
            warm.append(cp.cuda.get_elapsed_time(*events[2]))
        cold_ms, warm_ms = statistics.median(cold), statistics.median(warm)
        print(
            f"{label:24s} {f'{m}x{n}x{k}':>16s} {cold_ms:16.4f} {warm_ms:16.4f} {1000 * (cold_ms - warm_ms):8.1f} "
            f"{err:9.2e}"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
