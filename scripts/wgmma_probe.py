"""One-run diagnosis of a Hopper kernel's layouts (wgmma-tma, wgmma-pingpong or wgmma-tma-store) on an sm_90 GPU (run first by
gpu_check.sh's wgmma stage).

Runs the kernel at 128x256x64 (one block tile, one K slice) on random data and on index-coded data, and prints
the max error, the first mismatching (row, col), and for index-coded inputs which element of B (with A = I) or of
A (with B = I) each output came from, so a wrong descriptor, swizzle, transpose or accumulator layout can be read
from one device run. If the catalog's build is wrong it retries with B's leading/stride byte offsets swapped and
says which variant is right (wgmma-tma only: the defines are its own). A persistent kernel gets one block per SM.
Usage: python scripts/wgmma_probe.py [M N K [KERNEL]]
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kernels.compile_info import compile_cubin  # noqa: E402
from kernels.registry import get_kernel  # noqa: E402
from profiling.gpu.tensor_map import encode, operand_maps, output_map  # noqa: E402

VARIANTS = {"catalog (B LBO 8192, SBO 1024)": [], "B LBO/SBO swapped": ["-DWGMMA_B_LBO=1024", "-DWGMMA_B_SBO=8192"]}


def build(cp, spec, defines: list[str], tag: str):
    cubin = Path(f"/tmp/wgmma_probe_{spec.id}_{tag}.cubin")
    compile_cubin(spec.read_source(), spec.arch, cubin, ["-std=c++17", "-lineinfo", *defines])
    fn = cp.RawModule(path=str(cubin)).get_function(spec.entry)
    fn.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    return fn


def run(cp, fn, spec, a, b, c, alpha: float, beta: float):
    m, k = a.shape
    n = b.shape[1]
    map_a, map_b = operand_maps(spec, m, n, k)
    ta, tb = encode(map_a, a.data.ptr), encode(map_b, b.data.ptr)
    d = cp.full((m, n), cp.nan, dtype=cp.float32)
    if spec.operand_args == "tensor_maps_cd":  # C and D by TMA too
        cd = output_map(spec, m, n)
        c, d_arg = encode(cd, c.data.ptr), encode(cd, d.data.ptr)
    else:
        d_arg = d
    args = (ta, tb, c, d_arg, np.int32(m), np.int32(n), np.int32(k), np.float32(alpha), np.float32(beta))
    sms = cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id)["multiProcessorCount"]
    fn(spec.grid(m, n, sms), spec.block, args, shared_mem=spec.dynamic_smem_bytes)
    cp.cuda.Device().synchronize()
    return d.get()


def report(name: str, got: np.ndarray, want: np.ndarray) -> bool:
    err = np.abs(got.astype(np.float64) - want)
    bad = np.argwhere(~(err <= 1e-2 * (1 + np.abs(want))))
    scale = float(np.abs(want).max()) or 1.0
    print(
        f"  {name}: max abs error {np.nanmax(err) if np.isfinite(err).any() else float('nan'):.4g} "
        f"(max |ref| {scale:.4g}), {len(bad)} of {got.size} wrong, NaN {int(np.isnan(got).sum())}"
    )
    for i, j in bad[:8]:
        print(f"    D[{i},{j}] = {got[i, j]:.6g}, expected {want[i, j]:.6g}")
    return len(bad) == 0


def index_maps(cp, fn, spec, m: int, n: int, k: int) -> None:
    """A = I: D = B, so B coded by row (k) and by column (n) shows where each output's B element came from; then
    B = I with A coded likewise. Prints the source (row, col) of a few outputs that are wrong."""
    eye_a = np.zeros((m, k), np.float16)
    eye_a[np.arange(min(m, k)), np.arange(min(m, k))] = 1
    eye_b = np.zeros((k, n), np.float16)
    eye_b[np.arange(min(k, n)), np.arange(min(k, n))] = 1
    c = cp.zeros((m, n), cp.float32)
    rows_b = np.broadcast_to(np.arange(k)[:, None], (k, n)).astype(np.float16)
    cols_b = np.broadcast_to(np.arange(n)[None, :], (k, n)).astype(np.float16)
    r = run(cp, fn, spec, cp.asarray(eye_a), cp.asarray(rows_b), c, 1.0, 0.0)
    q = run(cp, fn, spec, cp.asarray(eye_a), cp.asarray(cols_b), c, 1.0, 0.0)
    shown = 0
    print("  A = I (D[i,j] should be B[i,j]): outputs whose B source is elsewhere")
    for i in range(min(m, k)):
        for j in range(n):
            if (r[i, j], q[i, j]) != (i, j) and shown < 12:
                print(f"    D[{i},{j}] <- B[{r[i, j]:g},{q[i, j]:g}]")
                shown += 1
    rows_a = np.broadcast_to(np.arange(m)[:, None], (m, k)).astype(np.float16)
    cols_a = np.broadcast_to(np.arange(k)[None, :], (m, k)).astype(np.float16)
    r = run(cp, fn, spec, cp.asarray(rows_a), cp.asarray(eye_b), c, 1.0, 0.0)
    q = run(cp, fn, spec, cp.asarray(cols_a), cp.asarray(eye_b), c, 1.0, 0.0)
    shown = 0
    print("  B = I (D[i,j] should be A[i,j]): outputs whose A source is elsewhere")
    for i in range(m):
        for j in range(min(k, n)):
            if (r[i, j], q[i, j]) != (i, j) and shown < 12:
                print(f"    D[{i},{j}] <- A[{r[i, j]:g},{q[i, j]:g}]")
                shown += 1


def main() -> int:
    import cupy as cp

    from profiling.gpu.device import compute_capability

    m, n, k = (int(x) for x in sys.argv[1:4]) if len(sys.argv) >= 4 else (128, 256, 64)
    spec = get_kernel(sys.argv[4] if len(sys.argv) >= 5 else "wgmma-tma")
    cc = compute_capability(cp.cuda.runtime.getDeviceProperties(cp.cuda.Device().id))
    refusal = spec.device_problem(cc) or spec.size_problem(m, n, k)
    if refusal:
        print(f"wgmma probe: {refusal}")
        return 2
    rng = np.random.default_rng(7)
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    c = rng.uniform(-1, 1, (m, n)).astype(np.float32)
    want = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 0.5 * c
    right = None
    for tag, (name, defines) in enumerate(VARIANTS.items()):
        if tag and spec.id != "wgmma-tma":
            break  # the B-descriptor defines belong to wgmma-tma's source
        print(f"wgmma probe {spec.id} {m}x{n}x{k}, build: {name}")
        try:
            fn = build(cp, spec, defines, str(tag))
            got = run(cp, fn, spec, cp.asarray(a), cp.asarray(b), cp.asarray(c), 1.5, -0.5)
        except Exception as exc:  # noqa: BLE001 - a probe reports every failure and goes on
            print(f"  failed: {type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")
            return 1
        ok = report("random inputs, alpha 1.5, beta -0.5", got, want)
        if ok and tag == 0:
            # beta = 0 must not read C at all (wgmma-tma-store then copies no C): C full of NaN changes nothing.
            nan_c = cp.full((m, n), cp.nan, dtype=cp.float32)
            got0 = run(cp, fn, spec, cp.asarray(a), cp.asarray(b), nan_c, 1.5, 0.0)
            ok = report("random inputs, alpha 1.5, beta 0, C all NaN", got0, want + 0.5 * c)
        if ok:
            right = right or name
            if tag == 0:
                break
        else:
            index_maps(cp, fn, spec, m, n, k)
    print(f"wgmma probe verdict: {'correct with ' + right if right else 'WRONG in every variant'}")
    return 0 if right else 1


if __name__ == "__main__":
    raise SystemExit(main())
