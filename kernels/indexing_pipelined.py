"""Indexing models of the cp.async kernels v8-async (sgemm_async) and v9-regdb (sgemm_regdb), for any of their
template configurations (kernels/tuning.py).

A K slice goes global -> shared through cp.async: A transposed with 4-byte copies (LDGSTS.E, one per element),
B with 16-byte copies (LDGSTS.E.BYPASS.128) when N % 4 == 0, four 4-byte copies otherwise (v9: the kernel launched
where N % 4 != 0, sgemm_regdb_narrow, gives each thread one column instead, consecutive threads on consecutive
columns, where a pass covers whole block rows); a copy whose
src-size is 0 reads nothing (an inactive lane here) and zero-fills its shared destination. Slices rotate
through STAGES buffers; the loads of slice t+STAGES-1 are issued in iteration t, and the prologue issues
slices 0..STAGES-2. v9 issues its copies for every iteration (dead slices past the end become all-zero-size
copies) and loads each k step's fragments one step ahead (plus one stale load after the last step).
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from kernels.indexing_base import (
    Access,
    KernelModel,
    global_access,
    read_constants,
    shared_access,
    template_arguments,
)
from kernels.indexing_vectorized import A_PAD, WarpTiling
from kernels.lanes import Lanes
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

GROUP_M = 8  # block-rows per group of the grouped block order (v8::GROUP_M, v9::GROUP_M, mma_async::GROUP_M)


def grouped_origin(grid: tuple[int, int], block: tuple[int, int], tile_m: int, tile_n: int) -> tuple[int, int]:
    """(bm, bn) of the tile a block computes under the grouped order: consecutive block ids cover GROUP_M
    block-rows before moving one block-column right."""
    grid_n, grid_m = grid
    pid = block[1] * grid_n + block[0]
    group_size = GROUP_M * grid_n
    first_m = (pid // group_size) * GROUP_M
    rows_in_group = min(grid_m - first_m, GROUP_M)
    return (first_m + (pid % group_size) % rows_in_group) * tile_m, ((pid % group_size) // rows_in_group) * tile_n


class AsyncModel(KernelModel):
    """sgemm_async (v8): copies of slice t+STAGES-1 only while it exists, fragments read in the k step that uses them."""

    template = "sgemm_async"
    lookahead = False  # v9: fragments of step k+1 loaded during step k; copies issued for dead slices too

    def __init__(self, spec):
        super().__init__(spec)
        p = spec.params
        self.a_ld = p["BM"] + A_PAD
        self.a_stage = p["BK"] * self.a_ld
        self.stage_floats = self.a_stage + p["BK"] * p["BN"]
        self.kq = p["BK"] // 4
        self.a_units, self.a_rows_per_pass = p["BM"] * self.kq // p["THREADS"], p["THREADS"] // self.kq
        self.b_vecs = p["BN"] // 4
        self.b_units, self.b_rows_per_pass = p["BK"] * self.b_vecs // p["THREADS"], p["THREADS"] // self.b_vecs
        self.tiling = WarpTiling(p)

    def constants(self) -> dict[str, int]:
        names = set(template_arguments(self.spec.read_source(), self.template, self.spec.entry or ""))
        return {n: v for n, v in self.spec.params.items() if n in names} | {"APAD": A_PAD, "GROUP_M": GROUP_M}

    def source_constants(self) -> dict[str, int]:
        source = self.spec.read_source()
        pats = {"APAD": r"constexpr int APAD = (\d+);", "GROUP_M": r"constexpr int GROUP_M = (\d+);"}
        return template_arguments(source, self.template, self.spec.entry or "") | read_constants(source, pats)

    def block_origin(self, shape: Shape, block: tuple[int, int]) -> tuple[int, int]:
        return grouped_origin(self.grid(shape), block, self.spec.tile_m, self.spec.tile_n)

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        row0, col0 = self.block_origin(shape, block)
        return self.tiling.thread_elements(self.spec.threads_per_block, row0, col0)

    def step_key(self, shape: Shape, step: int) -> tuple:
        s = self.stages
        return (step == 0, step % s, self.slice_class(shape, step), self.slice_class(shape, step + s - 1))

    def load_slice(self, shape: Shape, block: tuple[int, int], warp: int, s: int) -> list[Access]:
        """The cp.async copies of K slice `s` into stage s % STAGES (each as its global read and its shared write)."""
        p = self.spec.params
        t = self.warp_threads(warp)
        tid = t.tid
        bm, bn = self.block_origin(shape, block)
        k0, live = s * p["BK"], s * p["BK"] < shape.k
        stage_bytes = (s % self.stages) * self.stage_floats * 4
        a_row0, a_k = tid // self.kq, (tid % self.kq) * 4
        b_row0, b_col = tid // self.b_vecs, (tid % self.b_vecs) * 4
        gb_col = bn + b_col
        out: list[Access] = []
        # Where N % 4 != 0 a configuration with a narrow twin (KernelSpec.narrow_entry) runs that instead.
        one_column = bool(self.spec.narrow_entry) and shape.n % 4 != 0 and p["THREADS"] % p["BN"] == 0
        for j in range(self.a_units):
            row = a_row0 + j * self.a_rows_per_pass
            grow = bm + row
            for e in range(4):
                k = k0 + a_k + e
                ok = live & (grow < shape.m) & (k < shape.k)
                dst = stage_bytes + ((a_k + e) * self.a_ld + row) * 4
                out += _copy(
                    f"A[bm + row {j}][k0 + a_k + {e}]",
                    "LDGSTS.E",
                    "A",
                    grow,
                    k,
                    shape.k,
                    ok,
                    "As",
                    a_k + e,
                    row,
                    dst,
                    4,
                )
        if one_column:
            return out + self._one_column_b(shape, tid, k0, live, bn, stage_bytes)
        for j in range(self.b_units):
            row = b_row0 + j * self.b_rows_per_pass
            k = k0 + row
            dst = stage_bytes + (self.a_stage + row * p["BN"] + b_col) * 4
            if shape.n % 4 == 0:
                ok = live & (k < shape.k) & (gb_col < shape.n)
                out += _copy(
                    f"B[k0 + row {j}][bn + b_col..+3]",
                    "LDGSTS.E.BYPASS.128",
                    "B",
                    k,
                    gb_col,
                    shape.n,
                    ok,
                    "Bs",
                    row,
                    b_col,
                    dst,
                    16,
                )
            else:
                for e in range(4):
                    ok = live & (k < shape.k) & (gb_col + e < shape.n)
                    out += _copy(
                        f"B[k0 + row {j}][bn + b_col + {e}]",
                        "LDGSTS.E",
                        "B",
                        k,
                        gb_col + e,
                        shape.n,
                        ok,
                        "Bs",
                        row,
                        b_col + e,
                        dst + 4 * e,
                        4,
                    )
        return out

    def _one_column_b(
        self, shape: Shape, tid: np.ndarray, k0: int, live: bool, bn: int, stage_bytes: int
    ) -> list[Access]:
        """The narrow kernel's B copies of one slice: four times the units, each a 4-byte copy of one column."""
        p = self.spec.params
        b_row0, b_col = tid // p["BN"], tid % p["BN"]
        gb_col = bn + b_col
        rows_per_pass = p["THREADS"] // p["BN"]
        out: list[Access] = []
        for j in range(4 * self.b_units):
            row = b_row0 + j * rows_per_pass
            k = k0 + row
            ok = live & (k < shape.k) & (gb_col < shape.n)
            dst = stage_bytes + (self.a_stage + row * p["BN"] + b_col) * 4
            out += _copy(
                f"B[k0 + row {j}][bn + b_col]", "LDGSTS.E", "B", k, gb_col, shape.n, ok, "Bs", row, b_col, dst, 4
            )
        return out

    def fragments(self, warp: int, s: int, k: int) -> list[Access]:
        """The LDS.128 of k step `k` of slice `s` (stage s % STAGES)."""
        tm0, tn0 = self.tiling.origin(warp, self.warp_threads(warp).lane)
        a_base = (s % self.stages) * self.stage_floats * 4
        b_base = a_base + self.a_stage * 4
        return self.tiling.fragment_loads(
            tm0, tn0, a_base, b_base, self.a_ld, self.spec.params["BN"], k, f"stage {s % self.stages}, "
        )

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        S, T, BK = self.stages, self.steps(shape), self.spec.params["BK"]
        out: list[Access] = []
        if step == 0:  # prologue: slices 0 .. STAGES-2
            for s in range(S - 1):
                if self.lookahead or s < T:
                    out += self.load_slice(shape, block, warp, s)
            if self.lookahead:
                out += self.fragments(warp, 0, 0)
        nxt = step + S - 1
        if self.lookahead or nxt < T:
            out += self.load_slice(shape, block, warp, nxt)
        for k in range(BK):
            if not self.lookahead:
                out += self.fragments(warp, step, k)
            elif k + 1 < BK:
                out += self.fragments(warp, step, k + 1)
            else:  # k = 0 of the next slice (stale shared memory after the last slice: loaded, never used)
                out += self.fragments(warp, step + 1, 0)
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        bm, bn = self.block_origin(shape, block)
        tm0, tn0 = self.tiling.origin(warp, self.warp_threads(warp).lane)
        return self.tiling.epilogue(shape, bm, bn, tm0, tn0)


def _copy(
    label: str,
    sass: str,
    array: str,
    row: Lanes | int,
    col: Lanes | int,
    ld: int,
    ok: Lanes | bool,
    shared_array: str,
    s_row: Lanes | int,
    s_col: Lanes | int,
    dst: Lanes,
    width: int,
    elem: int = 4,
) -> list[Access]:
    """A cp.async as its two halves: the global read (lanes with src-size 0 read nothing) and the shared write
    (every lane writes: data or zeros)."""
    read = global_access(label, sass, "ld", array, row, col, ld, elem, width, ok)
    write = shared_access(f"{label} -> {shared_array}", sass, "ldgsts", shared_array, s_row, s_col, dst, width, elem)
    return [read, replace(write, source=read)]


_GROUPED = (
    "const int pid = blockIdx.y * grid_n + blockIdx.x;",
    "const int first_m = (pid / group_size) * v8::GROUP_M;",
    "const int bm = (first_m + (pid % group_size) % rows_in_group) * BM;",
    "const int bn = ((pid % group_size) / rows_in_group) * BN;",
)


class V8Model(AsyncModel):
    # v8's body lives in v8_body.cuh (shared with v8-splitk), inside namespace v8: its names carry no prefix there.
    source_statements = tuple(s.replace("v8::", "") for s in _GROUPED) + (
        "const int a_row0 = tid / KQ;",
        "const int a_k = (tid % KQ) * 4;",
        "const int b_row0 = tid / B_VECS_PER_ROW;",
        "const int b_col = (tid % B_VECS_PER_ROW) * 4;",
        "const int row = a_row0 + j * A_ROWS_PER_PASS;",
        "const bool ok = row_in && k < K;",
        "copy4(as + (unsigned)((a_k + e) * A_LD + row) * 4u, ok ? src + k : A, ok);",
        "const int row = b_row0 + j * B_ROWS_PER_PASS;",
        "const unsigned dst = bs + (unsigned)(row * BN + b_col) * 4u;",
        "const bool ok = k_in && gb_col < N;",
        "if (next < k_tiles) load_tile(write_stage, k_first + next * BK);",
        "const int tm0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;",
        "const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;",
        "const float4 v = *reinterpret_cast<const float4*>(As + k * A_LD + tm0 + f * FRAG_STRIDE_M);",
        "const float4 v = *reinterpret_cast<const float4*>(Bs + k * BN + tn0 + f * FRAG_STRIDE_N);",
        "const int row = bm + tm0 + (i / 4) * FRAG_STRIDE_M + (i % 4);",
        "const int col = bn + tn0 + g * FRAG_STRIDE_N;",
    )


class V9Model(AsyncModel):
    template = "sgemm_regdb"
    lookahead = True
    # v9's body also runs v9-splitk's stream-K segments, whose tile is the caller's, not the block's (STREAM_K false
    # for sgemm_regdb).
    # The grouped order is v9::grouped_tile's, which the body and v9-splitk's tile copy share.
    source_statements = (
        "const int pid = STREAM_K ? segment.tile : (int)(blockIdx.y * grid_n + blockIdx.x);",
        "const int first_m = (pid / group_size) * GROUP_M;",
        "return make_int2(first_m + (pid % group_size) % rows_in_group, (pid % group_size) / rows_in_group);",
        "const int bm = tile_at.x * BM;",
        "const int bn = tile_at.y * BN;",
    ) + (
        "const int a_row0 = tid / KQ;",
        "const int a_k = (tid % KQ) * 4;",
        "const int b_row0 = B_ONE_COLUMN ? tid / BN : tid / B_VECS_PER_ROW;",
        "const int b_col = B_ONE_COLUMN ? tid % BN : (tid % B_VECS_PER_ROW) * 4;",
        "const int b_cols = min(max(N - gb_col, 0), 4);",
        "constexpr int B_PASS_ROWS = B_ONE_COLUMN ? THREADS / BN : B_ROWS_PER_PASS;",
        "const unsigned a_dst = smem_base + (unsigned)(a_k * A_LD + a_row0) * 4u;",
        "const unsigned b_dst = smem_base + (unsigned)(A_STAGE + b_row0 * BN + b_col) * 4u;",
        "const int a_left = live ? K - k0 - a_k : 0;",
        "v9::copy4(a_dst + so + (unsigned)(e * A_LD + j * A_ROWS_PER_PASS) * 4u, src + e, a_row_in[j] && e < a_left);",
        "const int b_left = live ? K - k0 - b_row0 : 0;",
        "const bool k_in = j * B_PASS_ROWS < b_left;",
        "v9::copy16(dst, src, k_in && b_cols > 0);",
        "v9::copy4(dst, src, k_in && b_cols > 0);",
        "load_tile(wr, k_begin + next * BK, next < k_tiles);",
        "const int tm0 = (warp / WARPS_N) * WM + (lane / LANES_N) * 4;",
        "const int tn0 = (warp % WARPS_N) * WN + (lane % LANES_N) * 4;",
        "const float* An = As + (k + 1) * A_LD;",
        "const float* Bn = Bs + (k + 1) * BN;",
        "An = a_frag_base + rd * STAGE_FLOATS;",
        "const int row = bm + tm0 + (i / 4) * FRAG_STRIDE_M + (i % 4);",
        "const int col = bn + tn0 + g * FRAG_STRIDE_N;",
    )
