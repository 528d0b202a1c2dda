"""Build, check and time compile-time variants of the persistent Hopper AddMM kernels (kernels/src/
hopper_persistent.cuh's PERSISTENT_* macros) against cuBLAS HGEMM and wgmma-tma-store in one device run: the
measure-and-choose step before a variant becomes the catalog's build. Each variant is checked against float32
arithmetic on the same half inputs (relative error) before it is timed; every launch is event-timed after an L2
flush, medians of REPEATS, cuBLAS in the same process.
Usage: python scripts/wgmma_variants.py [SIZES] [REPEATS]   (default 4096,8192 and 20)
"""

from __future__ import annotations

import statistics
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.compile_info import compile_cubin  # noqa: E402
from kernels.registry import get_kernel  # noqa: E402
from profiling.gpu.tensor_map import encode, operand_maps, output_map  # noqa: E402
from profiling.gpu.timing import time_launches  # noqa: E402

NO_EPILOGUE = "-DPERSISTENT_NO_EPILOGUE=1"  # the main loop alone: D is not written, so it is timed unchecked
BK32 = ["-DPERSISTENT_BK=32", "-DPERSISTENT_STAGES=9", "-DPERSISTENT_C_RELEASE=1", "-DPERSISTENT_WAIT=1"]
# (label, catalog id, macros): the catalog builds first, then the variants measured before choosing them.
VARIANTS = [
    ("store (catalog)", "wgmma-tma-store", []),
    ("persistent (catalog)", "wgmma-persistent", []),
    ("cluster (catalog)", "wgmma-cluster", []),
    ("persistent wait 1", "wgmma-persistent", ["-DPERSISTENT_WAIT=1"]),
    ("persistent 9x32", "wgmma-persistent", BK32),
    ("persistent main loop", "wgmma-persistent", [NO_EPILOGUE]),
    ("cluster main loop", "wgmma-cluster", [NO_EPILOGUE]),
]


def variant_spec(kernel_id: str, macros: list[str]):
    """The catalog entry with the slice depth, A's swizzle and the shared memory its macros change."""
    spec = get_kernel(kernel_id)
    values = dict(m.removeprefix("-D").split("=") for m in macros)
    if not any(k.startswith("PERSISTENT_") for k in values):
        return spec
    bk = int(values.get("PERSISTENT_BK", spec.params["BK"]))
    stages = int(values.get("PERSISTENT_STAGES", spec.params["STAGES"]))
    p = spec.params
    params = {**p, "BK": bk, "STAGES": stages, "A_SWIZZLE_BYTES": 2 * bk}
    return replace(spec, params=params, dynamic_smem_bytes=stages * (p["BM"] + p["BN"]) * bk * 2 + 1024)


def build(cp, spec, macros: list[str], tag: int):
    cubin = Path(f"/tmp/wgmma_variant_{tag}.cubin")
    compile_cubin(spec.read_source(), spec.arch, cubin, ["-std=c++17", "-lineinfo", *macros])
    fn = cp.RawModule(path=str(cubin)).get_function(spec.entry)
    fn.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    return fn


def main() -> int:
    import cupy as cp

    sizes = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "4096,8192").split(",")]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    sms = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]
    flush = cp.empty(2 * cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"], dtype=cp.uint8)
    builds = {}
    for tag, (label, kid, macros) in enumerate(VARIANTS):
        spec = variant_spec(kid, macros)
        try:
            builds[label] = (spec, build(cp, spec, macros, tag))
        except Exception as exc:  # noqa: BLE001 - report and go on with the others
            print(f"{label}: build failed: {str(exc)[-300:]}")
    rows = []
    for n in sizes:
        rng = cp.random.default_rng(n)
        a = rng.uniform(-1, 1, (n, n), dtype=cp.float32).astype(cp.float16)
        b = rng.uniform(-1, 1, (n, n), dtype=cp.float32).astype(cp.float16)
        c = rng.uniform(-1, 1, (n, n), dtype=cp.float32)
        d = cp.empty((n, n), dtype=cp.float32)
        ref = 1.5 * cp.matmul(a.astype(cp.float32), b.astype(cp.float32)) - 0.5 * c
        half_out = cp.empty((n, n), dtype=cp.float16)
        t = time_launches(cp, lambda a=a, b=b, h=half_out: cp.matmul(a, b, out=h), 3, repeats, 20.0, flush)
        base = statistics.median(t)
        rows.append(("cuBLAS HGEMM", n, base, 0.0))
        for label, (spec, fn) in builds.items():
            map_a, map_b = operand_maps(spec, n, n, n)
            cd = output_map(spec, n, n)
            args = (
                encode(map_a, a.data.ptr),
                encode(map_b, b.data.ptr),
                encode(cd, c.data.ptr),
                encode(cd, d.data.ptr),
                np.int32(n),
                np.int32(n),
                np.int32(n),
                np.float32(1.5),
                np.float32(-0.5),
            )
            grid = spec.grid(n, n, sms)

            def launch(fn=fn, grid=grid, spec=spec, args=args):
                fn(grid, spec.block, args, shared_mem=spec.dynamic_smem_bytes)

            d.fill(cp.nan)
            launch()
            cp.cuda.Device().synchronize()
            err = float(cp.linalg.norm(d - ref) / cp.linalg.norm(ref))
            if not err < 1e-3 and NO_EPILOGUE not in dict((v[0], v[2]) for v in VARIANTS).get(label, []):
                rows.append((label, n, float("nan"), err))
                continue
            rows.append((label, n, statistics.median(time_launches(cp, launch, 3, repeats, 20.0, flush)), err))
    print(f"{'variant':24s} {'size':>5s} {'median ms':>10s} {'TFLOP/s':>8s} {'% cuBLAS':>9s} {'rel err':>9s}")
    for label, n, ms, err in rows:
        base = next(r[2] for r in rows if r[0] == "cuBLAS HGEMM" and r[1] == n)
        tflops = 2 * n**3 / ms / 1e9 if ms == ms else float("nan")
        print(f"{label:24s} {n:5d} {ms:10.4f} {tflops:8.1f} {100 * base / ms:9.1f} {err:9.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
