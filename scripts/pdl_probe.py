"""What programmatic dependent launch saves a split-K operation (GPU, sm_90): each configuration's whole operation
(zeroing or padding launch, multiply, copy back) built without the waits (GEMMLENS_PDL=0, kernels/src/pdl.cuh) and
launched plainly, built as it is (with them) and launched plainly, and as it is with every launch after the first a
programmatic dependent launch (profiling.gpu.pdl, as the runner launches it on sm_90), beside cuBLAS, in rounds that
run each once after its own L2 flush (profiling.gpu.timing.time_rounds). Every build is verified against cuBLAS before
it is timed, and again after 20 operations enqueued back to back (where one operation's launches could overlap the
next's).

    python scripts/pdl_probe.py [--repeats 30] [--builds pdl|hybrid] [--beside ID,...] --cases 4096x127x4096:v9-splitk-...,...

Prints one row per shape and build: median us, % of cuBLAS and the change of time against the set's first build,
each with its paired bootstrap 95 % interval, and both checks. `--builds hybrid` compares the stream-K configurations
as built with V9_SK_HYBRID=1 (kernels/src/v9_splitk.cu: whole waves of tiles one a block, stream-K over the last
wave's), both launched as the runner launches them; `--beside` times other catalog configurations (v9-regdb's) in the
same rounds.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.registry import get_kernel  # noqa: E402
from profiling.gpu.compile import compile_kernel  # noqa: E402
from profiling.gpu.device import compute_capability  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402
from profiling.gpu.jobs import tolerance_for  # noqa: E402
from profiling.gpu.runner import Problem  # noqa: E402
from profiling.gpu.timing import time_rounds  # noqa: E402
from profiling.runs.verdict import bootstrap_ratio  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402

# (label, macros of the build, programmatic launches) per set, the baseline of the "time against" column first. "pdl":
# the build without the wait first (v9_splitk.cu builds with it by default).
BUILD_SETS = {
    "pdl": [
        ("GEMMLENS_PDL=0, plain launches", ("GEMMLENS_PDL=0",), False),
        ("as built, plain launches", (), False),
        ("as built, programmatic launches", (), True),
    ],
    "hybrid": [
        ("as built, programmatic launches", (), True),
        ("V9_SK_HYBRID=1, programmatic launches", ("V9_SK_HYBRID=1",), True),
    ],
}
BACK_TO_BACK = 20


def verified(problem: Problem, launch: Any, tolerance: float, times: int) -> str:
    """The check of `problem`'s output after `times` launches enqueued back to back, C poisoned first."""
    problem.poison()
    for _ in range(times):
        launch()
    cupy.cuda.Device().synchronize()
    check = problem.check(False, tolerance)
    return f"{check.status} ({check.rel_error:.1e})"


def probe(
    size: str, config_id: str, flush: Any, repeats: int, sm_count: int, builds: list[tuple], beside: list[str]
) -> list[tuple]:
    shape = parse_shape(size)
    spec = get_kernel(config_id).launched_at(shape.n)
    problem = Problem("sgemm", shape, 1)
    labels, launches, checks = ["cuBLAS"], [problem.launcher(None, get_kernel("cublas"))], [("-", "-")]
    runs = [(label, spec, defines, programmatic) for label, defines, programmatic in builds]
    runs += [(other, get_kernel(other).launched_at(shape.n), (), False) for other in beside]
    for label, run_spec, defines, programmatic in runs:
        launch = problem.launcher(compile_kernel(run_spec, defines), run_spec, sm_count, programmatic)
        tolerance = tolerance_for(run_spec, shape)
        first = verified(problem, launch, tolerance, 1)
        labels.append(label)
        launches.append(launch)
        checks.append((first, verified(problem, launch, tolerance, BACK_TO_BACK)))
    times = time_rounds(cupy, launches, 2, repeats, 60.0, flush)
    rows = []
    for label, ms, check in zip(labels, times, checks, strict=True):
        # % of cuBLAS is cuBLAS's time over ours: the interval of our time over cuBLAS's, inverted (none with fewer
        # rounds than an interval needs, as under the sanitizer).
        of_cublas = bootstrap_ratio(times[0], ms, paired=True)
        against_plain = bootstrap_ratio(times[1], ms, paired=True)
        rows.append(
            (
                size,
                config_id,
                label,
                statistics.median(ms) * 1000,
                "-"
                if of_cublas is None
                else f"{100 / of_cublas.ratio:.1f} [{100 / of_cublas.high:.1f}, {100 / of_cublas.low:.1f}]",
                "-" if against_plain is None else against_plain.text(),
                *check,
            )
        )
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=30)
    parser.add_argument("--cases", required=True, help="SHAPE:CONFIGURATION pairs, comma-separated")
    parser.add_argument("--builds", choices=sorted(BUILD_SETS), default="pdl", help="the set of builds to compare")
    parser.add_argument("--beside", default="", help="catalog configurations timed in the same rounds, comma-separated")
    parser.add_argument("--json", action="store_true", help="end with one line of JSON: the GPU and every row")
    args = parser.parse_args()
    props = cupy.cuda.runtime.getDeviceProperties(0)
    cc = compute_capability(props)
    if not get_kernel("v9-splitk").programmatic_launches(cc):
        raise SystemExit(f"programmatic dependent launch needs compute capability 9.0 or newer; this GPU is {cc}")
    flush = cupy.empty(2 * props["l2CacheSize"], dtype=cupy.uint8)
    warm = cupy.ones((4096, 4096), dtype=cupy.float32)
    for _ in range(40):  # a second of products, so that the rounds start at the full clock
        cupy.matmul(warm, warm)
    print("device:", props["name"].decode())
    builds = BUILD_SETS[args.builds]
    beside = [b for b in args.beside.split(",") if b]
    print(
        f"| shape | configuration | build | median (us) | % of cuBLAS [95 % interval] | time against {builds[0][0]} "
        "| check | after 20 back to back |"
    )
    print("|---|---|---|---|---|---|---|---|")
    rows = []
    for case in args.cases.split(","):
        size, config_id = case.split(":", 1)
        for row in probe(size, config_id, flush, args.repeats, props["multiProcessorCount"], builds, beside):
            rows.append(row)
            print("| " + " | ".join(f"{c:.2f}" if isinstance(c, float) else str(c) for c in row) + " |", flush=True)
    if args.json:
        keys = ("shape", "config_id", "build", "median_us", "of_cublas", "against_plain", "check", "after_back_to_back")
        print(
            json.dumps(
                {"device": props["name"].decode(), "cc": cc, "rows": [dict(zip(keys, r, strict=True)) for r in rows]}
            )
        )


if __name__ == "__main__":
    main()
