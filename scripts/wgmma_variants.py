"""Build, check and time compile-time variants of the persistent Hopper AddMM kernels (kernels/src/
hopper_persistent.cuh's PERSISTENT_* macros) against cuBLAS doing the same AddMM (float C and D, cublasGemmEx), cuBLAS
HGEMM (half D, no C) and wgmma-tma-store in one device run: the measure-and-choose step before a variant becomes the
catalog's build. Each variant is checked against float32 arithmetic on the same half inputs (relative error) before
it is timed; every launch is event-timed after an L2 flush, in rounds that run every variant and cuBLAS once
(profiling.gpu.timing.time_rounds), medians of REPEATS rounds.
Usage: python scripts/wgmma_variants.py [SIZES] [REPEATS] [LABELS]   (default 4096,8192, 20 and every variant;
LABELS: a comma-separated subset of the variants' labels). VARIANTS_CHECK_SCALARS=1 also checks each build at alpha 0,
beta 0 and beta / alpha past float's range. VARIANTS_REST_S=2 rests that many seconds before each
round and warms each kernel once in it (profiling.gpu.timing.rested_rounds), so that no round runs power-capped.
"""

from __future__ import annotations

import os
import statistics
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.compile_info import compile_cubin  # noqa: E402
from kernels.registry import get_kernel  # noqa: E402
from profiling.gpu.hold import LaunchHold  # noqa: E402
from profiling.gpu.tensor_map import encode, operand_maps, output_map  # noqa: E402
from profiling.gpu.timing import rested_rounds, time_rounds  # noqa: E402

NO_EPILOGUE = "-DPERSISTENT_NO_EPILOGUE=1"  # the main loop alone: D is not written, so it is timed unchecked
# (label, catalog id, macros): the catalog builds first, then the variants measured before choosing them.
DIRECT = "-DPERSISTENT_EPILOGUE=1"  # C loaded into registers, D stored from them: the ring holds K slices only
STAGED = "-DPERSISTENT_EPILOGUE=2"  # C loaded into registers, D through two staging boxes per consumer by TMA
RING_STAGED = "-DPERSISTENT_EPILOGUE=3"  # C through the ring, D through the staging boxes: C's slots return sooner
STRIPS = "-DPERSISTENT_EPILOGUE=4"  # as 3, each C slot the same column strips of both consumers, released one by one
NO_STORE = "-DPERSISTENT_NO_STORE=1"  # the ring epilogue without D's stores (timed unchecked)
# C added to the accumulators inside the main loop; the epilogue stores D only. Its C slots take ring positions between
# slices, so the next slice is waited for in turn (the stream-K build waits early, which EPILOGUE 6 refuses).
C_IN_LOOP = ["-DPERSISTENT_EPILOGUE=6", "-DPERSISTENT_EARLY_WAIT=0"]
# cuBLAS's tile at 5120^3 and 8192^3 on the H200: 128 x 320 (results/h200-2026-11-29/names/); 4-chunk C batches, so
# the 160 accumulators and the batch fit the consumers' 224 registers.
WIDE = ["-DPERSISTENT_BN=320", "-DPERSISTENT_C_BATCH=4"]
# The strips builds' switches on the path between slices (kernels/src/hopper_strips.cuh), for the cluster's file.
FAST = ["-DPERSISTENT_PINNED_BARS=1", "-DPERSISTENT_FAST_DESC=1", "-DPERSISTENT_EARLY_WAIT=1"]
BETA0 = "beta=0"  # not a macro: launched with beta = 0, so no C is read (timed unchecked)
VARIANTS = [
    ("store (catalog)", "wgmma-tma-store", []),
    ("persistent (catalog)", "wgmma-persistent", []),
    ("cluster (catalog)", "wgmma-cluster", []),
    ("ring C, staged D", "wgmma-persistent", [RING_STAGED]),
    ("cluster ring C, staged D", "wgmma-cluster", [RING_STAGED]),
    ("strips, staged D", "wgmma-persistent", [STRIPS]),
    ("cluster strips, staged D", "wgmma-cluster", [STRIPS]),
    ("strips, staged D, wait 1", "wgmma-persistent", [STRIPS, "-DPERSISTENT_WAIT=1"]),
    ("persistent main loop", "wgmma-persistent", [NO_EPILOGUE]),
    ("staged (catalog)", "wgmma-staged", []),
    ("C direct staged D batch 4", "wgmma-persistent", [STAGED, "-DPERSISTENT_C_BATCH=4"]),
    ("128x320 3 stages staged D", "wgmma-persistent", [STAGED, *WIDE, "-DPERSISTENT_STAGES=3"]),
    ("128x320 4 stages direct D", "wgmma-persistent", [DIRECT, *WIDE, "-DPERSISTENT_STAGES=4"]),
    ("stream-K (catalog)", "wgmma-streamk", []),
    ("stream-K runs of 1/2 tile", "wgmma-streamk", ["-DPERSISTENT_SK_MIN_RUN=2"]),
    ("stream-K runs of 1/3 tile", "wgmma-streamk", ["-DPERSISTENT_SK_MIN_RUN=3"]),
    ("stream-K groups of 8 rows", "wgmma-streamk", ["-DPERSISTENT_GROUP_M=8"]),
    ("stream-K groups of 32 rows", "wgmma-streamk", ["-DPERSISTENT_GROUP_M=32"]),
    ("stream-K runs of 1/8 tile", "wgmma-streamk", ["-DPERSISTENT_SK_MIN_RUN=8"]),
    ("stream-K runs of 1/16 tile", "wgmma-streamk", ["-DPERSISTENT_SK_MIN_RUN=16"]),
    ("stream-K 40/232 regs", "wgmma-streamk", ["-DPERSISTENT_SK_REGS=1"]),
    ("stream-K split at 20 % idle", "wgmma-streamk", ["-DPERSISTENT_SK_IDLE_PCT=20"]),
    ("stream-K split at 10 % idle", "wgmma-streamk", ["-DPERSISTENT_SK_IDLE_PCT=10"]),
    ("stream-K C and D evict-first", "wgmma-streamk", ["-DPERSISTENT_L2_HINTS=1"]),
    ("stream-K C D evict-first A B evict-last", "wgmma-streamk", ["-DPERSISTENT_L2_HINTS=2"]),
    ("stream-K main loop", "wgmma-streamk", [NO_EPILOGUE]),
    ("cluster main loop", "wgmma-cluster", [NO_EPILOGUE]),
    ("stream-K main loop 3 stages", "wgmma-streamk", [NO_EPILOGUE, "-DPERSISTENT_STAGES=3", "-DPERSISTENT_EPILOGUE=4"]),
    # C through an area of its own, the K ring on 3 stages: at full clock 1 % slower at 8192^3, 3.5 % slower at
    # 4096^3 (results/h200-2026-11-29/epi5_full/, epi5/); not kept.
    ("stream-K C area 3 stages", "wgmma-streamk", ["-DPERSISTENT_EPILOGUE=5", "-DPERSISTENT_STAGES=3"]),
    ("stream-K without D stores", "wgmma-streamk", [NO_STORE]),
    # C added to the accumulators between the tile's last slices, the epilogue only storing D (PERSISTENT_EPILOGUE 6):
    # C slots PERSISTENT_C_GAP slices apart, the last PERSISTENT_C_LAST slices before the tile's end.
    ("stream-K C in loop", "wgmma-streamk", C_IN_LOOP),
    # The ring's barrier addresses recomputed at every slice, as before session 24: 0.1 % slower at 8192^3, 0.4-0.5 %
    # at 4096^3 (results/h200-2026-11-29/pinned/).
    ("stream-K barriers recomputed", "wgmma-streamk", ["-DPERSISTENT_PINNED_BARS=0"]),
    ("staged barriers recomputed", "wgmma-staged", ["-DPERSISTENT_PINNED_BARS=0"]),
    # Each wgmma descriptor by one add, and the next slice's data waited for while this slice's wgmmas run: the
    # strips builds since session 24 (0.7 % faster together at 8192^3, results/h200-2026-11-29/fastdesc/; the early
    # wait alone within the spread, early/). These labels build them without.
    (
        "stream-K descriptors masked, waited late",
        "wgmma-streamk",
        ["-DPERSISTENT_FAST_DESC=0", "-DPERSISTENT_EARLY_WAIT=0"],
    ),
    ("stream-K descriptors masked", "wgmma-streamk", ["-DPERSISTENT_FAST_DESC=0"]),
    ("stream-K next slice waited late", "wgmma-streamk", ["-DPERSISTENT_EARLY_WAIT=0"]),
    (
        "staged descriptors masked, waited late",
        "wgmma-staged",
        ["-DPERSISTENT_FAST_DESC=0", "-DPERSISTENT_EARLY_WAIT=0"],
    ),
    ("stream-K spin 64 cycles a slice", "wgmma-streamk", ["-DPERSISTENT_SLICE_SPIN=64"]),
    ("stream-K spin 256 cycles a slice", "wgmma-streamk", ["-DPERSISTENT_SLICE_SPIN=256"]),
    ("stream-K C in loop gap 1 last 1", "wgmma-streamk", [*C_IN_LOOP, "-DPERSISTENT_C_GAP=1", "-DPERSISTENT_C_LAST=1"]),
    ("stream-K C in loop gap 4 last 4", "wgmma-streamk", [*C_IN_LOOP, "-DPERSISTENT_C_GAP=4", "-DPERSISTENT_C_LAST=4"]),
    ("stream-K C in loop gap 8 last 8", "wgmma-streamk", [*C_IN_LOOP, "-DPERSISTENT_C_GAP=8", "-DPERSISTENT_C_LAST=8"]),
    ("stream-K C loads first", "wgmma-streamk", ["-DPERSISTENT_C_LOADS_FIRST=1"]),
    ("staged C loads first", "wgmma-staged", ["-DPERSISTENT_C_LOADS_FIRST=1"]),
    ("stream-K two barriers a box", "wgmma-streamk", ["-DPERSISTENT_ONE_BARRIER=0"]),
    ("stream-K beta 0", "wgmma-streamk", [BETA0]),
    ("stream-K odd blocks 24 us late", "wgmma-streamk", ["-DPERSISTENT_STAGGER_NS=24000"]),
    ("stream-K odd blocks 48 us late", "wgmma-streamk", ["-DPERSISTENT_STAGGER_NS=48000"]),
    ("stream-K one slice in flight", "wgmma-streamk", ["-DPERSISTENT_WAIT=1"]),
    ("stream-K C prefetched 4 slices ahead", "wgmma-streamk", ["-DPERSISTENT_C_PREFETCH=4"]),
    ("stream-K C prefetched 32 slices ahead", "wgmma-streamk", ["-DPERSISTENT_C_PREFETCH=32"]),
    # The two-block cluster (B multicast: a third fewer bytes out of L2) with the strips builds' switches, without and
    # with stream-K over the tail: at 8192^3 the kernels run at the power limit (why8192/: wgmma-streamk in 4.1 %
    # fewer cycles than cuBLAS's AddMM, at a 5.1 % lower SM clock), and cuBLAS's kernel moves 30 % fewer L2 sectors.
    ("cluster strips fast", "wgmma-cluster", [STRIPS, *FAST]),
    (
        "cluster stream-K",
        "wgmma-cluster",
        [STRIPS, *FAST, "-DPERSISTENT_STREAMK=1", "-DPERSISTENT_SK_PRODUCER_REGS=64"],
    ),
    # The same build as the catalog's step since session 25 (the same SASS).
    ("stream-K cluster (catalog)", "wgmma-streamk-cluster", []),
]
UNCHECKED = (NO_EPILOGUE, NO_STORE, BETA0)
REST_S = float(os.environ.get("VARIANTS_REST_S", "0"))
# VARIANTS_CHECK_SCALARS=1: each checked build also at these (alpha, beta), its errors printed before the table.
CHECK_SCALARS = os.environ.get("VARIANTS_CHECK_SCALARS") == "1"
SCALAR_CASES = [(0.0, 2.0), (2.0, 0.0), (1e-30, 1e10)]


def macros_of(label: str) -> list[str]:
    """The macros of the variant named `label`."""
    return next(v[2] for v in VARIANTS if v[0] == label)


def variant_spec(kernel_id: str, macros: list[str]):
    """The catalog entry with the slice depth, A's swizzle and the shared memory its macros change."""
    spec = get_kernel(kernel_id)
    values = dict(m.removeprefix("-D").split("=") for m in macros if m.startswith("-D"))
    # Only the slice depth, the ring, the tile's width and the epilogue change the shared memory; the other macros
    # keep the entry's.
    if not {
        "PERSISTENT_BK",
        "PERSISTENT_STAGES",
        "PERSISTENT_EPILOGUE",
        "PERSISTENT_BN",
        "PERSISTENT_C_AREA_SLOTS",
    } & set(values):
        return spec
    bk = int(values.get("PERSISTENT_BK", spec.params["BK"]))
    stages = int(values.get("PERSISTENT_STAGES", spec.params["STAGES"]))
    bn = int(values.get("PERSISTENT_BN", spec.params["BN"]))
    p = spec.params
    params = {**p, "BK": bk, "STAGES": stages, "A_SWIZZLE_BYTES": 2 * bk, "BN": bn}
    # EPILOGUE 2-6's staging: two OUT boxes of floats for each of the two consumers.
    box_bytes = p["OUT_BOX_ROWS"] * p["OUT_BOX_COLS"] * 4
    staging = 4 * box_bytes if values.get("PERSISTENT_EPILOGUE") in ("2", "3", "4", "5", "6") else 0
    # EPILOGUE 5's C area: PERSISTENT_C_AREA_SLOTS strips of a box for each of the two consumers, and 1024 bytes for
    # its barriers.
    slots = int(values.get("PERSISTENT_C_AREA_SLOTS", 3))
    c_area = slots * 2 * box_bytes + 1024 if values.get("PERSISTENT_EPILOGUE") == "5" else 0
    smem = stages * (p["BM"] + bn) * bk * 2 + staging + c_area + 1024
    return replace(spec, params=params, dynamic_smem_bytes=smem, tile_n=bn)


def compile_variant(spec, macros: list[str], tag: int) -> Path:
    """nvcc of one variant into its own cubin (run several at once: each is a separate nvcc process)."""
    cubin = Path(f"/tmp/wgmma_variant_{tag}.cubin")
    compile_cubin(spec.read_source(), spec.arch, cubin, ["-std=c++17", "-lineinfo", *[m for m in macros if m != BETA0]])
    return cubin


def load(cp, spec, cubin: Path):
    fn = cp.RawModule(path=str(cubin)).get_function(spec.entry)
    fn.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    return fn


def check_scalars(cp, fn, grid, spec, args, ab, c, d) -> str:
    """Relative errors of one build at the other (alpha, beta) cases, `ab` being A * B in float32: alpha 0 (C only),
    beta 0 with C all NaN (C not read), and beta / alpha past float's range (a build that divides by alpha must not)."""
    out = []
    for alpha, beta in SCALAR_CASES:
        source = cp.full_like(c, cp.nan) if beta == 0 else c
        ref = alpha * ab + beta * c if beta != 0 else alpha * ab
        case = (
            *args[:2],
            encode(output_map(spec, *c.shape), source.data.ptr),
            *args[3:7],
            np.float32(alpha),
            np.float32(beta),
            *args[9:],
        )
        d.fill(cp.nan)
        fn(grid, spec.block, case, shared_mem=spec.dynamic_smem_bytes)
        cp.cuda.Device().synchronize()
        out.append(f"alpha {alpha:g} beta {beta:g}: {float(cp.linalg.norm(d - ref) / cp.linalg.norm(ref)):.2e}")
    return "; ".join(out)


def main() -> int:
    import cupy as cp

    from profiling.gpu.cublas_addmm import addmm_in_place

    sizes = [int(s) for s in (sys.argv[1] if len(sys.argv) > 1 else "4096,8192").split(",")]
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 20
    chosen = sys.argv[3].split(",") if len(sys.argv) > 3 else [v[0] for v in VARIANTS]
    unknown = sorted(set(chosen) - {v[0] for v in VARIANTS})
    if unknown:
        print(f"unknown variant labels {unknown}; the labels are: {', '.join(v[0] for v in VARIANTS)}")
        return 2
    variants = [v for v in VARIANTS if v[0] in chosen]
    sms = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]
    flush = cp.empty(2 * cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"], dtype=cp.uint8)
    builds = {}
    specs = {label: variant_spec(kid, macros) for label, kid, macros in variants}
    with ThreadPoolExecutor(max_workers=8) as pool:
        cubins = {
            label: pool.submit(compile_variant, specs[label], macros, tag)
            for tag, (label, _, macros) in enumerate(variants)
        }
        for label, future in cubins.items():
            try:
                builds[label] = (specs[label], load(cp, specs[label], future.result()))
            except Exception as exc:  # noqa: BLE001 - report and go on with the others
                print(f"{label}: build failed: {str(exc)[-300:]}")
    rows = []
    for n in sizes:
        rng = cp.random.default_rng(n)
        a = rng.uniform(-1, 1, (n, n), dtype=cp.float32).astype(cp.float16)
        b = rng.uniform(-1, 1, (n, n), dtype=cp.float32).astype(cp.float16)
        c = rng.uniform(-1, 1, (n, n), dtype=cp.float32)
        d = cp.empty((n, n), dtype=cp.float32)
        ab = cp.matmul(a.astype(cp.float32), b.astype(cp.float32))
        ref = 1.5 * ab - 0.5 * c
        half_out = cp.empty((n, n), dtype=cp.float16)
        in_place = c.copy()
        launches = {
            "cuBLAS HGEMM": lambda a=a, b=b, h=half_out: cp.matmul(a, b, out=h),
            "cuBLAS AddMM": addmm_in_place(a, b, in_place, 1.5, -0.5),
        }
        errors = {"cuBLAS HGEMM": 0.0, "cuBLAS AddMM": 0.0}
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
                np.float32(0.0 if BETA0 in macros_of(label) else -0.5),
            )
            if DIRECT in macros_of(label) or STAGED in macros_of(label):  # the entry takes C's and D's pointers too
                args = (*args, c.data.ptr, d.data.ptr)
            grid = spec.grid(n, n, sms)

            def launch(fn=fn, grid=grid, spec=spec, args=args):
                fn(grid, spec.block, args, shared_mem=spec.dynamic_smem_bytes)

            d.fill(cp.nan)
            launch()
            cp.cuda.Device().synchronize()
            err = float(cp.linalg.norm(d - ref) / cp.linalg.norm(ref))
            errors[label] = err
            if CHECK_SCALARS and not any(m in macros_of(label) for m in UNCHECKED):
                print(f"{label} {n}: {check_scalars(cp, fn, grid, spec, args, ab, c, d)}")
            if err < 1e-3 or any(m in macros_of(label) for m in UNCHECKED):
                launches[label] = launch
            else:
                rows.append((label, n, float("nan"), err))
        if REST_S:
            timed = rested_rounds(cp, list(launches.values()), repeats, REST_S, flush, LaunchHold(cp))
        else:
            timed = time_rounds(cp, list(launches.values()), 1, repeats, 60.0, flush)
        for times, label in zip(timed, launches, strict=True):
            rows.append((label, n, statistics.median(times), errors[label]))
    print(
        f"{'variant':24s} {'size':>5s} {'median ms':>10s} {'TFLOP/s':>8s} {'% HGEMM':>8s} {'% AddMM':>8s} {'rel err':>9s}"
    )
    for label, n, ms, err in rows:
        hgemm = next(r[2] for r in rows if r[0] == "cuBLAS HGEMM" and r[1] == n)
        addmm = next(r[2] for r in rows if r[0] == "cuBLAS AddMM" and r[1] == n)
        tflops = 2 * n**3 / ms / 1e9 if ms == ms else float("nan")
        print(f"{label:24s} {n:5d} {ms:10.4f} {tflops:8.1f} {100 * hgemm / ms:8.1f} {100 * addmm / ms:8.1f} {err:9.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
