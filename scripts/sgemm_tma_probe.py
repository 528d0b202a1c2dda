"""Issue 31's SGEMM >= 98 %: whether v9-regdb's tuned tile gets closer to cuBLAS with its copies done by TMA instead
of the threads (scripts/sgemm_tma_probe.cu, a measurement, not a catalog kernel). One device run: the probe's
builds (3 and 4 stages) compiled with nvcc for sm_90a, checked against cuBLAS at awkward shapes, then event-timed
with cuBLAS and v9-regdb's tuned configurations in interleaved rounds (each launch after an L2 flush, medians), and
each again back to back ("after itself": its own code still in the SMs' instruction caches).

Usage: [TMAPROBE_CHECK=0] [TMAPROBE_TIMED=0] python scripts/sgemm_tma_probe.py SHAPES [ROUNDS]   (MxNxK
comma-separated, N and K multiples of 4; TMAPROBE_CHECK=0 skips the checks, for ncu; TMAPROBE_TIMED=0 runs only the
checks, for the sanitizers)
"""

from __future__ import annotations

import math
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from v9_variants import build, launcher, print_rows, timed_rows  # noqa: E402

from kernels.compile_info import parse_ptxas_report  # noqa: E402
from kernels.tuning import config_by_id, spec_for  # noqa: E402
from profiling.gpu.tensor_map import TileMap, encode  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402

SOURCE = Path(__file__).with_suffix(".cu")
KERNEL_SOURCES = Path(__file__).resolve().parents[1] / "kernels" / "src"  # cp_async.cuh
BM, BN, BK = 128, 256, 16
THREADS = 256
STAGE_BYTES = (BM * BK + BK * BN) * 4
# The mixed builds' A stage: BK k-major rows of BM + 4 floats, rounded up to 128 bytes (B's box lands after it).
MIXED_STAGE_BYTES = -(-BK * (BM + 4) * 4 // 128) * 128 + BK * BN * 4
# label: (entry, stages, A by TMA)
ENTRIES = {
    "tma s3": ("sgemm_tma_simt_s3", 3, True),
    "tma s4": ("sgemm_tma_simt_s4", 4, True),
    "mixed s3": ("sgemm_mixed_s3", 3, False),
    "mixed s4": ("sgemm_mixed_s4", 4, False),
}
V9_IDS = ("v9-regdb-128x256x16-w64x64-t8x16-s3-o3", "v9-regdb-128x256x16-w64x64-t8x16-s4-o3")
CHECK_SHAPES = ((1, 4, 4), (129, 20, 1004), (300, 264, 2000), (128, 256, 16), (257, 516, 36))
TOLERANCE = 1e-5


def compile_probe(out: Path) -> str:
    """nvcc the probe into `out` (sm_90a cubin); ptxas's report (`-Xptxas -v`) of every entry."""
    done = subprocess.run(
        [
            "nvcc",
            "-arch=sm_90a",
            "-cubin",
            "-std=c++17",
            "-lineinfo",
            "--ftz=true",
            "-Xptxas",
            "-v",
            f"-I{KERNEL_SOURCES}",
            "-o",
            str(out),
            str(SOURCE),
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stderr


def probe_launcher(cp, fn, stages: int, a_by_tma: bool, a, b, c):
    """A call that launches the probe build `fn` on A and B into C, tensor maps encoded once."""
    m, k = a.shape
    n = b.shape[1]
    map_b = encode(TileMap(k, n, BK, BN, dtype="float32", swizzle_bytes=0), b.data.ptr)
    if a_by_tma:
        first = encode(TileMap(m, k, BM, BK, dtype="float32", swizzle_bytes=64), a.data.ptr)
        smem = stages * STAGE_BYTES + 8 * stages + 1024
    else:
        first = a
        smem = stages * MIXED_STAGE_BYTES + 8 * stages + 1024
    fn.max_dynamic_shared_size_bytes = smem
    grid = (math.ceil(m / BM) * math.ceil(n / BN),)
    args = (first, map_b, c, np.int32(m), np.int32(n), np.int32(k))

    def launch():
        fn(grid, (THREADS,), args, shared_mem=smem)

    return launch


def main() -> int:
    import cupy as cp

    shapes = [(s.m, s.n, s.k) for s in map(parse_shape, sys.argv[1].split(","))]
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    with tempfile.TemporaryDirectory() as tmp:
        cubin = Path(tmp) / "probe.cubin"
        for r in parse_ptxas_report(compile_probe(cubin)):
            print(f"{r.name}: {r.registers} registers, {r.spills} bytes spilled")
        module = cp.RawModule(path=str(cubin))
        probes = {label: (module.get_function(entry), stages, tma) for label, (entry, stages, tma) in ENTRIES.items()}

    failures = 0
    for m, n, k in CHECK_SHAPES if os.environ.get("TMAPROBE_CHECK", "1") != "0" else ():
        rng = cp.random.default_rng(m + n + k)
        a = rng.uniform(-1, 1, (m, k), dtype=cp.float32)
        b = rng.uniform(-1, 1, (k, n), dtype=cp.float32)
        ref = cp.matmul(a, b)
        for label, (fn, stages, tma) in probes.items():
            c = cp.full((m, n), cp.nan, dtype=cp.float32)
            probe_launcher(cp, fn, stages, tma, a, b, c)()
            cp.cuda.Device().synchronize()
            err = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
            ok = err < TOLERANCE
            failures += not ok
            print(f"check {label:8s} {m}x{n}x{k}: rel err {err:.2e} {'ok' if ok else 'WRONG'}")
    if failures:
        print(f"{failures} checks failed: no timings")
        return 1
    if os.environ.get("TMAPROBE_TIMED", "1") == "0":
        return 0

    v9_specs = {cid: spec_for(config_by_id(cid)) for cid in V9_IDS}
    v9 = {cid: (spec, build(cp, spec, [])) for cid, spec in v9_specs.items()}
    flush = cp.empty(2 * cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"], dtype=cp.uint8)
    rows = []
    for m, n, k in shapes:
        rng = cp.random.default_rng(m * n + k)
        a = rng.uniform(-1, 1, (m, k), dtype=cp.float32)
        b = rng.uniform(-1, 1, (k, n), dtype=cp.float32)
        ref = cp.empty((m, n), dtype=cp.float32)
        launches = {"cuBLAS": lambda a=a, b=b, ref=ref: cp.matmul(a, b, out=ref)}
        launches["cuBLAS"]()
        errors = {"cuBLAS": 0.0}
        for cid, (spec, kernels) in v9.items():
            c = cp.empty((m, n), dtype=cp.float32)
            launches[cid] = launcher(spec, kernels, a, b, c)
            launches[cid]()
            cp.cuda.Device().synchronize()
            errors[cid] = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
        for label, (fn, stages, tma) in probes.items():
            c = cp.empty((m, n), dtype=cp.float32)
            launches[label] = probe_launcher(cp, fn, stages, tma, a, b, c)
            launches[label]()
            cp.cuda.Device().synchronize()
            errors[label] = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
        rows.extend(timed_rows(cp, launches, (m, n, k), errors, rounds, flush, 90.0))
    print_rows(rows, 44)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
