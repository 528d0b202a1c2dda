"""Build, check and time compile-time variants of v9-regdb's configurations (V9_* and CP_ASYNC_* macros of its sources)
against cuBLAS SGEMM in one device run: the measure-and-choose step before a variant becomes the build. Each
configuration is built as it is and with each variant's macros (NVRTC, as the catalog builds it), checked against
cuBLAS at every shape before it is timed, then every launch is event-timed after an L2 flush in rounds that run every
build and cuBLAS once (profiling.gpu.timing.time_rounds), medians of REPEATS rounds; then each one REPEATS times
back to back (time_launches), where every launch but the first follows its own code in the SMs' instruction caches
(the "after itself" columns; in rounds each follows another's). Where N % 4 != 0
the configuration's narrow twin runs, as in the catalog.
Usage: [V9VAR_VARIANTS=LABELS] [V9VAR_CUBINS=DIR] python scripts/v9_variants.py CONFIG_IDS SHAPES [REPEATS]   (ids, of
kernels/tuning.py or EXTRA_CONFIGS, and MxNxK shapes comma-separated; LABELS: the VARIANTS to build, all by default;
DIR: scripts/nvrtc_cubins.py's output, each of its NVRTC versions' cubins timed as a build of its own)
"""

from __future__ import annotations

import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


from kernels.compile_info import LAUNCH_OPTIONS, cuda_include_dirs, entry_matches, parse_ptxas_report  # noqa: E402
from kernels.tuning import _v9_config, config_by_id, spec_for  # noqa: E402
from profiling.gpu.timing import time_launches, time_rounds  # noqa: E402
from profiling.shape import parse_shape  # noqa: E402

# (label, macros): the build as it is first. V9VAR_VARIANTS (labels, comma-separated) keeps only those. NVCC among the
# macros builds with nvcc (the toolkit's, -O3 and CuPy's -ftz=true) instead of NVRTC.
NVCC = "@nvcc"
VARIANTS = [
    ("as built", []),
    ("B row-wise", ["-DV9_B_ROWWISE=1"]),
    ("L2 prefetch 128B", ['-DCP_ASYNC_L2_PREFETCH=".L2::128B"']),
    ("L2 prefetch 256B", ['-DCP_ASYNC_L2_PREFETCH=".L2::256B"']),
    ("full K slices", ["-DV9_ASSUME_FULL_K=1"]),
    ("A coalesced", ["-DV9_A_COALESCED=1"]),
    ("A rows inner", ["-DV9_A_ROWS_INNER=1"]),
    ("copies in 2 parts", ["-DV9_SPREAD_COPIES=2"]),
    ("copies in 4 parts", ["-DV9_SPREAD_COPIES=4"]),
    ("copies in 8 parts", ["-DV9_SPREAD_COPIES=8"]),
    ("k loop by 2", ["-DV9_K_UNROLL=2"]),
    ("k loop by 4", ["-DV9_K_UNROLL=4"]),
    ("k loop by 8", ["-DV9_K_UNROLL=8"]),
    ("k loop by 2 + tail", ["-DV9_K_UNROLL=2", "-DV9_K_TAIL=1"]),
    ("k loop by 4 + tail", ["-DV9_K_UNROLL=4", "-DV9_K_TAIL=1"]),
    # ptxas's register-usage knob (BETA, default 5): the same source with the FFMAs' registers, and so their banks,
    # allocated again. Level 10 compiles the tuned tile to 6,176 instructions, level 0 to 6,464 (6,184 as built).
    ("ptxas register level 10", ["-Xptxas=--register-usage-level=10"]),
    ("ptxas register level 0", ["-Xptxas=--register-usage-level=0"]),
    # The same source compiled by nvcc into a cubin instead of by CuPy's NVRTC: nvcc schedules the FFMAs and allocates
    # their registers differently (on the CPU machine nvcc 13.0.88 builds the tuned tile to 6,200 instructions with
    # 3,008 of its 4,096 FFMAs summing in place, NVRTC 12.6-13.0.88 to 6,184 and 3,343, NVRTC 13.2 as nvcc does).
    # Measured, dropped (H200, NVRTC 13.0 against nvcc 13.0.88, results/h200-2026-12-01/sgemm98_nvcc/): the tuned tile
    # 4.8-5.4 points slower at 2048-8192^3, the 256x128 tile 0.3-0.5.
    ("nvcc cubin", [NVCC]),
]
if os.environ.get("V9VAR_VARIANTS"):
    VARIANTS = [v for v in VARIANTS if v[0] in os.environ["V9VAR_VARIANTS"].split(",")]

# Tiles measured here before they join kernels/tuning.py: cuBLAS's warp shape at 4096x333x333 (its 64x64x8 kernel's
# "warpsize1x4x1": four warps side by side, each 64 rows by 16 columns).
# And the tuned 128x256x16 tile and its 256x128 transpose with cuBLAS's FFMA order (ORDER 5, read from its sm80 256x128x8 kernel's SASS).
EXTRA_CONFIGS = {
    c["id"]: c
    for c in (
        _v9_config(64, 64, 8, 64, 16, 8, 4, 3, 128, 4),
        _v9_config(64, 64, 16, 64, 16, 8, 4, 3, 128, 4),
        _v9_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=5),
        _v9_config(128, 256, 16, 64, 64, 8, 16, 4, 256, 1, order=5),
        _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=5),
        # The 64x64 tile of four 32x32 warps in FFMA orders 2-4 (ORDER 1 is kernels/tuning.py's, which says what
        # each measured).
        *(_v9_config(64, 64, 16, 32, 32, 8, 4, 3, 128, 4, order=order) for order in (2, 3, 4)),
    )
}


def build(cp, spec, macros: list[str]):
    """The configuration's kernel and narrow twin, built with `macros`."""
    entries = [spec.entry, *([spec.narrow_entry] if spec.narrow_entry else [])]
    if NVCC in macros:
        functions = nvcc_build(cp, spec, [m for m in macros if m != NVCC], entries)
    else:
        options = (*LAUNCH_OPTIONS, *[f"-I{d}" for d in cuda_include_dirs()], *macros)
        module = cp.RawModule(code=spec.read_source(), options=options, name_expressions=entries, backend="nvrtc")
        functions = {entry: module.get_function(entry) for entry in entries}
    return allow_dynamic_shared(spec, functions)


def allow_dynamic_shared(spec, functions: dict) -> dict:
    """`functions`, each allowed the configuration's dynamic shared memory where it is over the 48 KB default."""
    for fn in functions.values():
        if spec.dynamic_smem_bytes > 48 * 1024:
            fn.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    return functions


def timed_rows(cp, launches: dict, shape: tuple, errors: dict, repeats: int, flush, rounds_s: float = 60.0) -> list:
    """Each of `launches` timed with the others in `repeats` interleaved rounds (at most `rounds_s` seconds), then
    `repeats` times back to back: (label, shape, median ms in rounds, median ms after itself, relative error) each."""
    timed = time_rounds(cp, list(launches.values()), 1, repeats, rounds_s, flush)
    rows = []
    for times, (label, launch) in zip(timed, launches.items(), strict=True):
        alone = statistics.median(time_launches(cp, launch, 1, repeats, 60.0, flush))
        rows.append((label, shape, statistics.median(times), alone, errors[label]))
    return rows


def print_rows(rows: list, width: int) -> None:
    """The table of timed_rows' rows (a build that failed its check: NaN times), each against cuBLAS's row at its
    shape, in rounds and after itself."""
    print(
        f"{'build':{width}s} {'shape':>16s} {'median ms':>10s} {'TFLOP/s':>8s} {'% cuBLAS':>9s} "
        f"{'after itself ms':>15s} {'% cuBLAS':>9s} {'rel err':>9s}"
    )
    for label, (m, n, k), ms, alone, err in rows:
        base, base_alone = next(r[2:4] for r in rows if r[0] == "cuBLAS" and r[1] == (m, n, k))
        tflops = 2 * m * n * k / ms / 1e9 if ms == ms else math.nan
        print(
            f"{label:{width}s} {f'{m}x{n}x{k}':>16s} {ms:10.4f} {tflops:8.1f} {100 * base / ms:9.1f} "
            f"{alone:15.4f} {100 * base_alone / alone:9.1f} {err:9.2e}"
        )


def nvcc_build(cp, spec, macros: list[str], entries: list[str]) -> dict:
    """`entries` of the configuration's source compiled by nvcc into a cubin for this GPU, found among the explicit
    instantiations by their mangled names; prints ptxas's registers and spills of each."""
    cc = cp.cuda.Device().compute_capability
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = Path(tmp) / "v9.cu", Path(tmp) / "v9.cubin"
        source.write_text(spec.read_source())
        done = subprocess.run(
            ["nvcc", f"-arch=sm_{cc}", "-cubin", "-O3", "--ftz=true", "-Xptxas", "-v", *LAUNCH_OPTIONS, *macros]
            + ["-o", str(cubin), str(source)],
            capture_output=True,
            text=True,
            check=True,
        )
        module = cp.RawModule(path=str(cubin))
        functions = {}
        for entry in entries:
            (found,) = [r for r in parse_ptxas_report(done.stderr) if entry_matches(r.name, entry)]
            print(f"nvcc {entry}: {found.registers} registers, {found.spills} bytes spilled")
            functions[entry] = module.get_function(found.name)
    return functions


def launcher(spec, kernels, a, b, c):
    """A call that launches the build `kernels` (what build returns) on A and B into C as the catalog runs it: the
    narrow twin where N % 4 != 0."""
    m, k = a.shape
    n = b.shape[1]
    fn = kernels[spec.entry if n % 4 == 0 or not spec.narrow_entry else spec.narrow_entry]
    grid = spec.grid(m, n)
    args = (a, b, c, np.int32(m), np.int32(n), np.int32(k))

    def launch():
        fn(grid, spec.block, args, shared_mem=spec.dynamic_smem_bytes)

    return launch


def main() -> int:
    import cupy as cp

    ids = sys.argv[1].split(",")
    shapes = [(s.m, s.n, s.k) for s in map(parse_shape, sys.argv[2].split(","))]
    repeats = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    print(f"NVRTC {'.'.join(map(str, cp.cuda.nvrtc.getVersion()))}")
    flush = cp.empty(2 * cp.cuda.runtime.getDeviceProperties(0)["l2CacheSize"], dtype=cp.uint8)
    specs = {cid: spec_for(config_by_id(cid) or EXTRA_CONFIGS[cid]) for cid in ids}
    builds = {(cid, label): build(cp, specs[cid], macros) for cid in ids for label, macros in VARIANTS}
    for folder in sorted(Path(os.environ.get("V9VAR_CUBINS") or "/nonexistent").glob("*/")):
        for cid in ids:
            lowered = json.loads((folder / f"{cid}.json").read_text())
            try:
                module = cp.RawModule(path=str(folder / f"{cid}.cubin"))
                functions = {entry: module.get_function(name) for entry, name in lowered.items()}
            except cp.cuda.driver.CUDADriverError as error:  # a newer compiler's cubin this driver does not load
                print(f"NVRTC {folder.name} {cid}: not loaded: {error}")
                continue
            builds[(cid, f"NVRTC {folder.name}")] = allow_dynamic_shared(specs[cid], functions)
    rows = []
    for m, n, k in shapes:
        rng = cp.random.default_rng(m * n + k)
        a = rng.uniform(-1, 1, (m, k), dtype=cp.float32)
        b = rng.uniform(-1, 1, (k, n), dtype=cp.float32)
        ref = cp.empty((m, n), dtype=cp.float32)
        launches = {"cuBLAS": lambda a=a, b=b, ref=ref: cp.matmul(a, b, out=ref)}
        launches["cuBLAS"]()
        errors = {"cuBLAS": 0.0}
        outputs = {}
        for (cid, label), kernels in builds.items():
            c = cp.full((m, n), cp.nan, dtype=cp.float32)
            outputs[(cid, label)] = c
            launch = launcher(specs[cid], kernels, a, b, c)
            launch()
            cp.cuda.Device().synchronize()
            err = float(cp.linalg.norm(c - ref) / cp.linalg.norm(ref))
            errors[f"{cid} {label}"] = err
            if err < 1e-4:
                launches[f"{cid} {label}"] = launch
            else:
                rows.append((f"{cid} {label}", (m, n, k), math.nan, math.nan, err))
        rows.extend(timed_rows(cp, launches, (m, n, k), errors, repeats, flush))
    print_rows(rows, 52)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
