"""Empirical roofline ceilings measured on the live GPU (DRAM, L2, shared memory, FP32 FMA).

Runs inside the worker child, which is the only process that imports CuPy.
"""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

CUDA_SOURCE = Path(__file__).resolve().parent / "cuda" / "ceilings.cu"


def _median_ms(run, repeats: int = 7) -> float:
    from profiling.gpu.fp32_cupy import (
        cupy,  # lazy: only the worker child loads CuPy (the parent imports this module but never touches CUDA)
    )

    run()  # warm-up: module load and first-touch costs stay out of the numbers
    cupy.cuda.Device().synchronize()
    times = []
    for _ in range(repeats):
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        start.record()
        run()
        end.record()
        end.synchronize()
        times.append(cupy.cuda.get_elapsed_time(start, end))
    return statistics.median(times)


def measure_ceilings(device: dict[str, Any]) -> dict[str, Any]:
    """Measure FP32 FMA FLOP/s, DRAM read and copy, L2-resident read and shared-memory read bytes/s."""
    # lazy: only the worker child loads CuPy and the NumPy scalars its kernels take (see _median_ms)
    import numpy as np

    from profiling.gpu.fp32_cupy import cupy

    module = cupy.RawModule(code=CUDA_SOURCE.read_text(), options=("-std=c++17",))
    sms = int(device["sm_count"])
    out = cupy.zeros(sms * 64 * 1024, dtype=cupy.float32)
    results: dict[str, Any] = {}

    fma = module.get_function("ceiling_fma")
    blocks, threads, iters = sms * 8, 256, 4096
    ms = _median_ms(lambda: fma((blocks,), (threads,), (out, np.int32(iters), np.float32(0.999), np.float32(0.001))))
    flops = blocks * threads * iters * 16 * 8 * 2
    results["fp32_flops"] = {"value": flops / (ms / 1e3), "how": f"{blocks}x{threads} threads, 8 FMA chains"}

    read = module.get_function("ceiling_read")
    dram_bytes = max(8 * int(device["l2_bytes"]), 2 << 30)
    big = cupy.empty(dram_bytes // 4, dtype=cupy.float32)
    big.fill(1.0)
    count = big.size // 4
    ms = _median_ms(lambda: read((sms * 16,), (512,), (big, np.int64(count), np.int32(1), out)))
    results["dram_read_bytes_per_s"] = {"value": count * 16 / (ms / 1e3), "how": f"read of {dram_bytes >> 20} MiB"}
    dst = cupy.empty_like(big)
    ms = _median_ms(lambda: cupy.copyto(dst, big))
    results["dram_copy_bytes_per_s"] = {
        "value": 2 * big.nbytes / (ms / 1e3),
        "how": f"device-to-device copy of {big.nbytes >> 20} MiB, bytes read + written",
    }
    big = dst = None  # free the DRAM buffers before the L2 test
    cupy.get_default_memory_pool().free_all_blocks()

    l2_bytes = int(device["l2_bytes"]) // 4
    small = cupy.ones(l2_bytes // 4, dtype=cupy.float32)
    count, passes = small.size // 4, 50
    ms = _median_ms(lambda: read((sms * 16,), (512,), (small, np.int64(count), np.int32(passes), out)))
    results["l2_read_bytes_per_s"] = {
        "value": count * 16 * passes / (ms / 1e3),
        "how": f"{passes} passes over {l2_bytes >> 20} MiB (a quarter of the L2)",
    }

    shared = module.get_function("ceiling_shared")
    blocks, threads, iters = sms * 8, 256, 4096
    ms = _median_ms(lambda: shared((blocks,), (threads,), (np.int32(iters), out)))
    results["shared_read_bytes_per_s"] = {
        "value": blocks * threads * iters * 4 * 16 / (ms / 1e3),
        "how": "16-byte conflict-free shared loads, 4 per thread per iteration",
    }
    return results
