"""What the launches around a split-K multiply cost (GPU): at the shape grid's split-K misses, cuBLAS, each
configuration's whole operation, its multiply launch alone and the launches before it (C's zeroing, or where N is
padded the zeroing and B's copy) and after it (the copy back of a padded C) alone, each timed launch after an L2 flush,
and beside it the same tile with serial splits (no zeroing launch), whole, where the configuration has such a twin.
Prints one row per shape and configuration.

    python scripts/split_launch_probe.py [--repeats 40] [--cases 4096x127x4096:v9-splitk-...,...]

The multiply launched alone adds into whatever C holds, so its result is not checked: only its time is used.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.registry import get_kernel  # noqa: E402
from kernels.spec import SERIAL_SUFFIX  # noqa: E402
from profiling.gpu.compile import compile_kernel  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402
from profiling.gpu.runner import Problem  # noqa: E402
from profiling.gpu.timing import time_launches  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402

# (shape, a configuration with a zeroing launch whose serial twin inserts SERIAL_SUFFIX after its depth)
CASES = [
    ("333x127x4096", "v9-splitk-64x64x16-w32x64-t8x8-s3-d8"),
    ("333x127x8191", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-padc"),
    ("127x127x8191", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-padc"),
    ("127x127x8191", "v9-splitk-64x64x16-w32x64-t8x8-s3-d8"),
    ("4096x333x333", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8"),
    ("333x4096x333", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8"),
]
SM_COUNT = 132
CC = "9.0"


def serial_twin(config_id: str) -> str | None:
    """The configuration of the same tile and depth with serial splits, where the configuration names a depth."""
    return config_id.replace("-d8", "-d8" + SERIAL_SUFFIX, 1) if "-d8" in config_id else None


def median_us(launch: Any, flush: Any, repeats: int) -> float:
    return statistics.median(time_launches(cupy, launch, 5, repeats, 5.0, flush)) * 1000.0


def probe(size: str, config_id: str, flush: Any, repeats: int) -> dict[str, float]:
    shape = parse_shape(size)
    n = shape.n
    problem = Problem("sgemm", shape, 1)
    times = {"cublas": median_us(problem.launcher(None, get_kernel("cublas")), flush, repeats)}
    twin = serial_twin(config_id)
    for name in (config_id, twin) if twin else (config_id,):
        spec = get_kernel(name).launched_at(n)
        compiled = compile_kernel(spec)
        # The operation as the runner launches it on sm_90 (programmatic launches after the first).
        programmatic = spec.programmatic_launches(CC)
        times[name] = median_us(problem.launcher(compiled, spec, SM_COUNT, programmatic), flush, repeats)
        if name == config_id:
            before, after = problem.split_k_launches(compiled, spec, SM_COUNT)
            times["multiply"] = median_us(problem.kernel_launch(compiled, spec, SM_COUNT), flush, repeats)
            for part, launch in (("before", before), ("after", after)):
                if launch is not None:
                    times[part] = median_us(launch, flush, repeats)
    return times


def cell(times: dict[str, float], key: str | None) -> str:
    return f"{times[key]:.2f}" if key in times else "-"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=40)
    parser.add_argument("--cases", default="", help="SHAPE:CONFIGURATION pairs, comma-separated (default: CASES)")
    args = parser.parse_args()
    flush = cupy.empty(256 << 20, dtype=cupy.uint8)
    print("device:", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    print(
        "| shape | configuration | cuBLAS (us) | operation | launch before alone | multiply alone | launch after alone "
        "| serial twin's operation |"
    )
    print("|---|---|---|---|---|---|---|---|")
    cases = [tuple(c.split(":", 1)) for c in args.cases.split(",")] if args.cases else CASES
    for size, config_id in cases:
        t = probe(size, config_id, flush, args.repeats)
        print(
            f"| {size} | {config_id} | {t['cublas']:.2f} | {t[config_id]:.2f} | {cell(t, 'before')} "
            f"| {t['multiply']:.2f} | {cell(t, 'after')} | {cell(t, serial_twin(config_id))} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
