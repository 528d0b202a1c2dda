"""What a cooperative launch and the fused stream-K kernel's grid barriers cost alone (GPU): a kernel that does
nothing but cross `grid_barrier()` (kernels/src/v9_splitk.cu, the barrier `sgemm_regdb_streamk_fused` crosses twice)
0, 1 or 2 times, over one block of 256 threads per SM, launched plainly and cooperatively as the runner launches the
fused kernel (Problem.fused_launch). Session 32 measured the fused kernel slower than the three launches it replaces
(results/h200-2026-11-30/fused/) and only suspected why; this times the launch and the barriers without the work.
The GPU is first kept busy for a second with matrix products, so that its clocks have risen (empty kernels alone
leave an H200 near its idle clock), and the variants take turns, one event-timed launch each per round.
Prints one row per variant: medians and 10th percentiles of the rounds, in microseconds, and the SM clock after.

    python scripts/coop_probe.py [--repeats 200]
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.compile_info import LAUNCH_OPTIONS, cuda_include_dirs  # noqa: E402
from kernels.sources import inline_local_includes  # noqa: E402
from profiling.gpu.device import Nvml  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402

SOURCE = Path(__file__).resolve().parent.parent / "kernels" / "src" / "v9_splitk.cu"
THREADS = 256
# Appended to the module, so that it crosses the module's own barrier and counters.
PROBE = r"""
extern "C" __global__ void probe_grid_barriers(int barriers)
{
    for (int i = 0; i < barriers; ++i) grid_barrier();
}
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=200)
    args = parser.parse_args()
    options = (*LAUNCH_OPTIONS, *(f"-I{d}" for d in cuda_include_dirs()))
    module = cupy.RawModule(code=inline_local_includes(SOURCE) + PROBE, options=options, backend="nvrtc")
    function = module.get_function("probe_grid_barriers")
    props = cupy.cuda.runtime.getDeviceProperties(0)
    grid = (props["multiProcessorCount"],)
    print("device:", props["name"].decode(), f"grid: {grid[0]} blocks of {THREADS} threads")
    variants = ((False, 0), (True, 0), (True, 1), (True, 2))
    warm = cupy.ones((4096, 4096), dtype=cupy.float32)
    start, end = cupy.cuda.Event(), cupy.cuda.Event()
    start.record()
    while True:
        cupy.matmul(warm, warm)
        end.record()
        end.synchronize()
        if cupy.cuda.get_elapsed_time(start, end) > 1000.0:
            break
    times: dict[tuple[bool, int], list[float]] = {v: [] for v in variants}
    for _ in range(args.repeats):
        for cooperative, barriers in variants:
            start.record()
            function.kernel(grid, (THREADS,), (cupy.int32(barriers),), enable_cooperative_groups=cooperative)
            end.record()
            end.synchronize()
            times[(cooperative, barriers)].append(cupy.cuda.get_elapsed_time(start, end) * 1000.0)
    print("| launch | grid barriers | median (us) | 10th percentile (us) |")
    print("|---|---|---|---|")
    for (cooperative, barriers), samples in times.items():
        samples.sort()
        kind = "cooperative" if cooperative else "plain"
        print(f"| {kind} | {barriers} | {statistics.median(samples):.2f} | {samples[len(samples) // 10]:.2f} |")
    print("SM clock after (MHz):", Nvml().sample().get("sm_clock_mhz"))


if __name__ == "__main__":
    main()
