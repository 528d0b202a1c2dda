"""Indexing models of v6-vectorized and v7-warptile, and the warp-tiling arithmetic v7, v8 and v9 share.

Both kernels fetch a K slice with one LDG.128 of A and of B per thread where the row is 16-byte aligned and in
bounds (guarded scalar LDG elsewhere), write A transposed with four scalar STS and B with one STS.128, and
read every operand with LDS.128. v6 gives each thread a contiguous 8x8 block of C; v7 splits the block tile
into 64x32 warp tiles whose lanes own 2x2 fragments of 4x4, 32 rows and 16 columns apart.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernels.indexing_base import Access, KernelModel, global_access, read_constants, shared_access
from kernels.lanes import Lanes
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

A_PAD = 4  # floats of padding per row of the transposed A tile (v6..v9: APAD)


class WarpTiling:
    """Block -> warp -> thread tiling of v7/v8/v9: warp tiles WM x WN, lanes an (WM/TM) x (WN/TN) grid,
    each lane (TM/4) x (TN/4) fragments of 4x4, FRAG_STRIDE_M rows and FRAG_STRIDE_N columns apart."""

    def __init__(self, p: dict[str, int]):
        self.wm, self.wn, self.tm, self.tn = p["WM"], p["WN"], p["TM"], p["TN"]
        self.warps_n = p["BN"] // self.wn
        self.lanes_m, self.lanes_n = self.wm // self.tm, self.wn // self.tn
        self.frag_m, self.frag_n = self.tm // 4, self.tn // 4
        self.stride_m, self.stride_n = self.lanes_m * 4, self.lanes_n * 4

    def origin(self, warp: Lanes | np.ndarray | int, lane: Lanes | np.ndarray) -> tuple:
        """(tm0, tn0): the first row and column of each lane's first fragment, within the block tile."""
        tm0 = (warp // self.warps_n) * self.wm + (lane // self.lanes_n) * 4
        tn0 = (warp % self.warps_n) * self.wn + (lane % self.lanes_n) * 4
        return tm0, tn0

    def thread_elements(self, threads: int, row0: int, col0: int) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        tid = np.arange(threads)
        tm0, tn0 = self.origin(tid // 32, tid % 32)
        r = (np.arange(self.frag_m)[:, None] * self.stride_m + np.arange(4)[None, :]).ravel()
        c = (np.arange(self.frag_n)[:, None] * self.stride_n + np.arange(4)[None, :]).ravel()
        rows = (row0 + tm0)[:, None, None] + r[None, :, None]
        cols = (col0 + tn0)[:, None, None] + c[None, None, :]
        rows, cols = np.broadcast_arrays(rows, cols)
        return rows.reshape(threads, -1), cols.reshape(threads, -1)

    def fragment_loads(
        self, tm0: Lanes, tn0: Lanes, a_base: int, b_base: int, a_ld: int, b_ld: int, k: int, tag: str = ""
    ) -> list[Access]:
        """The LDS.128 of one k step: FRAG_M float4 of the transposed A tile, FRAG_N of the B tile (bases in
        bytes, leading dimensions in floats)."""
        out = []
        for f in range(self.frag_m):
            col = tm0 + f * self.stride_m
            out.append(
                shared_access(
                    f"As[{tag}k={k}][tm0 + {f * self.stride_m}]",
                    "LDS.128",
                    "ld",
                    "As",
                    k,
                    col,
                    a_base + (k * a_ld + col) * 4,
                    16,
                )
            )
        for f in range(self.frag_n):
            col = tn0 + f * self.stride_n
            out.append(
                shared_access(
                    f"Bs[{tag}k={k}][tn0 + {f * self.stride_n}]",
                    "LDS.128",
                    "ld",
                    "Bs",
                    k,
                    col,
                    b_base + (k * b_ld + col) * 4,
                    16,
                )
            )
        return out

    def epilogue(self, shape: Shape, row0: int, col0: int, tm0: Lanes, tn0: Lanes) -> list[Access]:
        """C stores: a float4 per fragment row where N % 4 == 0 and in bounds, guarded scalar stores otherwise."""
        out = []
        for i in range(self.tm):
            row = row0 + tm0 + (i // 4) * self.stride_m + i % 4
            for g in range(self.frag_n):
                col = col0 + tn0 + g * self.stride_n
                out += c_stores(shape, row, col, f"C row tm0 + {(i // 4) * self.stride_m + i % 4}, frag {g}")
        return out


def c_stores(shape: Shape, row: Lanes, col: Lanes, label: str) -> list[Access]:
    """One 4-float group of C: STG.128 in the vector branch, four guarded STG.E in the scalar one.

    With N % 4 == 0 a lane reaches the scalar branch only when col >= N, where none of its guarded stores can
    fire: the compiler drops them. Otherwise every lane of a row inside C takes it (the capture agrees)."""
    in_row = row < shape.m
    vec = in_row & (shape.n % 4 == 0) & (col < shape.n)
    out = []
    if vec.any():
        out.append(global_access(f"{label}: float4", "STG.E.128", "st", "C", row, col, shape.n, 4, 16, vec))
    if shape.n % 4 and in_row.any():
        for j in range(4):
            out.append(
                global_access(
                    f"{label}: [{j}]", "STG.E", "st", "C", row, col + j, shape.n, 4, 4, in_row & (col + j < shape.n)
                )
            )
    return out


def guarded_float4_loads(
    label: str,
    array: str,
    row: Lanes,
    col: Lanes,
    ld: int,
    vec: Lanes,
    elem_ok: list[Lanes],
    aligned: bool,
) -> list[Access]:
    """LDG.128 for the lanes of the vector branch, four guarded LDG.E for the lanes of the scalar branch.

    `aligned` is the branch's uniform part (K % 4 == 0 for A, N % 4 == 0 for B): when it holds, a lane in the
    scalar branch is out of bounds for all four elements, so the compiler drops those loads."""
    out = []
    if vec.any():
        out.append(global_access(f"{label}: float4", "LDG.E.128", "ld", array, row, col, ld, 4, 16, vec))
    if not aligned and (~vec).any():
        for e in range(4):
            out.append(
                global_access(f"{label}: [{e}]", "LDG.E", "ld", array, row, col + e, ld, 4, 4, ~vec & elem_ok[e])
            )
    return out


class VectorizedModel(KernelModel):
    """v6-vectorized (contiguous 8x8 thread tiles) and, with `warp_tiled`, v7-warptile."""

    warp_tiled = False
    prefix = "V6"

    def constants(self) -> dict[str, int]:
        names = ("BM", "BN", "BK", "TM", "TN", "THREADS") + (("WM", "WN") if self.warp_tiled else ())
        return {n: self.spec.params[n] for n in names} | {"APAD": A_PAD}

    def source_constants(self) -> dict[str, int]:
        names = ("BM", "BN", "BK", "TM", "TN", "THREADS", "APAD") + (("WM", "WN") if self.warp_tiled else ())
        pats = {n: rf"constexpr int {self.prefix}_{n} = (\d+);" for n in names}
        return read_constants(self.spec.read_source(), pats)

    @property
    def _a_ld(self) -> int:
        return self.spec.params["BM"] + A_PAD

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        p = self.spec.params
        row0, col0 = self.block_origin(shape, block)
        threads = self.spec.threads_per_block
        if self.warp_tiled:
            return WarpTiling(p).thread_elements(threads, row0, col0)
        tid = np.arange(threads)
        ty, tx = tid >> 4, tid & 15
        rows = (row0 + ty * p["TM"])[:, None, None] + np.arange(p["TM"])[None, :, None]
        cols = (col0 + tx * p["TN"])[:, None, None] + np.arange(p["TN"])[None, None, :]
        rows, cols = np.broadcast_arrays(rows, cols)
        return rows.reshape(threads, -1), cols.reshape(threads, -1)

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        p = self.spec.params
        BN, BK = p["BN"], p["BK"]
        t = self.warp_threads(warp)
        tid = t.tid
        bm, bn = self.block_origin(shape, block)
        a_row, a_col = tid >> 1, (tid & 1) * 4
        b_row, b_col = tid >> 5, (tid & 31) * 4
        k0 = step * BK
        buf = step % 2
        # fetch(k0): one float4 of A (row bm + a_row, k ka..ka+3) and of B (K row kb, columns gb_col..+3)
        ga_row, ka = bm + a_row, k0 + a_col
        a_row_in = ga_row < shape.m
        a_vec = a_row_in & (shape.k % 4 == 0) & (ka < shape.k)
        out = guarded_float4_loads(
            "A slice",
            "A",
            ga_row,
            ka,
            shape.k,
            a_vec,
            [a_row_in & (ka + e < shape.k) for e in range(4)],
            shape.k % 4 == 0,
        )
        kb, gb_col = k0 + b_row, bn + b_col
        kb_in = kb < shape.k
        b_vec = kb_in & (shape.n % 4 == 0) & (gb_col < shape.n)
        out += guarded_float4_loads(
            "B slice",
            "B",
            kb,
            gb_col,
            shape.n,
            b_vec,
            [kb_in & (gb_col + e < shape.n) for e in range(4)],
            shape.n % 4 == 0,
        )
        # stash(buf): A transposed with four scalar stores, B with one float4 store
        a_base, b_base = buf * BK * self._a_ld * 4, 2 * BK * self._a_ld * 4 + buf * BK * BN * 4
        for e in range(4):
            out.append(
                shared_access(
                    f"As[{buf}][a_col + {e}][a_row] =",
                    "STS",
                    "st",
                    "As",
                    a_col + e,
                    a_row,
                    a_base + ((a_col + e) * self._a_ld + a_row) * 4,
                    4,
                )
            )
        out.append(
            shared_access(
                f"Bs[{buf}][b_row][b_col..+3] =",
                "STS.128",
                "st",
                "Bs",
                b_row,
                b_col,
                b_base + (b_row * BN + b_col) * 4,
                16,
            )
        )
        # the k loop over buffer `buf`
        if self.warp_tiled:
            tiling = WarpTiling(p)
            tm0, tn0 = tiling.origin(warp, t.lane)
            for k in range(BK):
                out += tiling.fragment_loads(tm0, tn0, a_base, b_base, self._a_ld, BN, k, f"{buf}][")
            return out
        ty, tx = tid >> 4, tid & 15
        for k in range(BK):
            for h in (0, 4):
                col = ty * p["TM"] + h
                out.append(
                    shared_access(
                        f"As[{buf}][{k}][ty*8 + {h}]",
                        "LDS.128",
                        "ld",
                        "As",
                        k,
                        col,
                        a_base + (k * self._a_ld + col) * 4,
                        16,
                    )
                )
            for h in (0, 4):
                col = tx * p["TN"] + h
                out.append(
                    shared_access(
                        f"Bs[{buf}][{k}][tx*8 + {h}]", "LDS.128", "ld", "Bs", k, col, b_base + (k * BN + col) * 4, 16
                    )
                )
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        p = self.spec.params
        t = self.warp_threads(warp)
        bm, bn = self.block_origin(shape, block)
        if self.warp_tiled:
            tiling = WarpTiling(p)
            tm0, tn0 = tiling.origin(warp, t.lane)
            return tiling.epilogue(shape, bm, bn, tm0, tn0)
        ty, tx = t.tid >> 4, t.tid & 15
        out = []
        for i in range(p["TM"]):
            for h in range(p["TN"] // 4):
                out += c_stores(shape, bm + ty * p["TM"] + i, bn + tx * p["TN"] + h * 4, f"C row ty*8 + {i}, h {h}")
        return out


_LOADERS = (
    "if (a_row_in && a_vec_ok && ka < K) {",
    "if (kb_in && b_vec_ok && gb_col < N) {",
    "As[buf][a_col + 0][a_row] = a_stage.x;",
    "As[buf][a_col + 3][a_row] = a_stage.w;",
    "*reinterpret_cast<float4*>(&Bs[buf][b_row][b_col]) = b_stage;",
)


class V6Model(VectorizedModel):
    source_statements = _LOADERS + (
        "__shared__ __align__(16) float As[2][V6_BK][V6_BM + V6_APAD];",
        "const int bm = blockIdx.y * V6_BM;",
        "const int bn = blockIdx.x * V6_BN;",
        "const int a_row = tid >> 1;",
        "const int a_col = (tid & 1) * 4;",
        "const int b_row = tid >> 5;",
        "const int b_col = (tid & 31) * 4;",
        "const int ty = tid >> 4;",
        "const int tx = tid & 15;",
        "const int ka = k0 + a_col;",
        "const int kb = k0 + b_row;",
        "const float4 a_lo = *reinterpret_cast<const float4*>(&As[cur][k][ty * V6_TM]);",
        "const float4 a_hi = *reinterpret_cast<const float4*>(&As[cur][k][ty * V6_TM + 4]);",
        "const float4 b_lo = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * V6_TN]);",
        "const float4 b_hi = *reinterpret_cast<const float4*>(&Bs[cur][k][tx * V6_TN + 4]);",
        "const int row = bm + ty * V6_TM + i;",
        "const int col = bn + tx * V6_TN + h * 4;",
    )


class V7Model(VectorizedModel):
    warp_tiled = True
    prefix = "V7"
    source_statements = _LOADERS + (
        "__shared__ __align__(16) float As[2][V7_BK][V7_BM + V7_APAD];",
        "const int bm = blockIdx.y * V7_BM;",
        "const int bn = blockIdx.x * V7_BN;",
        "const int a_row = tid >> 1;",
        "const int a_col = (tid & 1) * 4;",
        "const int b_row = tid >> 5;",
        "const int b_col = (tid & 31) * 4;",
        "const int wm0 = (warp / V7_WARPS_N) * V7_WM;",
        "const int wn0 = (warp % V7_WARPS_N) * V7_WN;",
        "const int tm0 = wm0 + (lane / V7_LANES_N) * 4;",
        "const int tn0 = wn0 + (lane % V7_LANES_N) * 4;",
        "const float4 v = *reinterpret_cast<const float4*>(&As[cur][k][tm0 + f * V7_FRAG_STRIDE_M]);",
        "const float4 v = *reinterpret_cast<const float4*>(&Bs[cur][k][tn0 + f * V7_FRAG_STRIDE_N]);",
        "const int row = bm + tm0 + (i / 4) * V7_FRAG_STRIDE_M + (i % 4);",
        "const int col = bn + tn0 + g * V7_FRAG_STRIDE_N;",
    )
