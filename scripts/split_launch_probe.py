"""What the launches around a split-K multiply cost (GPU): at the shape grid's split-K misses, each configuration's
whole operation, its multiply launch alone, and its zeroing launch alone, L2 flushed before each timed launch, and
beside it the same tile with serial splits (no zeroing launch), whole. Prints one row per shape and configuration.

    python scripts/split_launch_probe.py [--repeats 40]

The multiply launched alone adds into whatever C holds, so its result is not checked: only its time is used.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from kernels.registry import get_kernel  # noqa: E402
from kernels.spec import SERIAL_SUFFIX  # noqa: E402
from profiling.gpu.compile import compile_kernel  # noqa: E402
from profiling.gpu.fp32_cupy import cupy  # noqa: E402
from profiling.gpu.runner import ZERO_THREADS, Problem, zero_blocks  # noqa: E402
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


def serial_twin(config_id: str) -> str:
    """The configuration of the same tile and depth with serial splits."""
    return config_id.replace("-d8", "-d8" + SERIAL_SUFFIX, 1)


def median_us(launch: Any, flush: Any, repeats: int) -> float:
    return statistics.median(time_launches(cupy, launch, 5, repeats, 5.0, flush)) * 1000.0


def parts_us(problem: Problem, spec: Any, compiled: Any, flush: Any, repeats: int) -> dict[str, float]:
    """The multiply launch alone and the zeroing launch alone of a split-K operation with a zeroing launch."""
    m, n, k = problem.shape.m, problem.shape.n, problem.shape.k
    padded_n = spec.padded_n(n)
    target = problem.padded_copies(padded_n, spec.pads_b)[1] if padded_n else problem.out
    args = (problem.a, problem.b, target, np.int32(m), np.int32(n), np.int32(k))
    grid = spec.launch_grid(m, n, k, SM_COUNT)
    zero = compiled.helpers["splitk_zero_c"]

    def multiply() -> None:
        compiled.function(grid, spec.block, args, shared_mem=spec.dynamic_smem_bytes)

    def zeroing() -> None:
        zero((zero_blocks(target.size, SM_COUNT),), (ZERO_THREADS,), (target, np.int64(target.size)))

    return {"multiply": median_us(multiply, flush, repeats), "zero": median_us(zeroing, flush, repeats)}


def probe(size: str, config_id: str, flush: Any, repeats: int) -> dict[str, float]:
    shape = parse_shape(size)
    n = shape.n
    problem = Problem("sgemm", shape, 1)
    times = {}
    for name in (config_id, serial_twin(config_id)):
        spec = get_kernel(name).launched_at(n)
        compiled = compile_kernel(spec)
        times[name] = median_us(problem.launcher(compiled, spec, SM_COUNT), flush, repeats)
        if not spec.serial:
            times.update(parts_us(problem, spec, compiled, flush, repeats))
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=40)
    args = parser.parse_args()
    flush = cupy.empty(256 << 20, dtype=cupy.uint8)
    print("device:", cupy.cuda.runtime.getDeviceProperties(0)["name"].decode())
    print("| shape | configuration | operation (us) | multiply alone | zeroing alone | serial twin's operation |")
    print("|---|---|---|---|---|---|")
    for size, config_id in CASES:
        t = probe(size, config_id, flush, args.repeats)
        print(
            f"| {size} | {config_id} | {t[config_id]:.2f} | {t['multiply']:.2f} | {t['zero']:.2f} "
            f"| {t[serial_twin(config_id)]:.2f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
