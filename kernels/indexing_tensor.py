"""Indexing models of the tensor-core kernels: wmma-addmm (hgemm_wmma.cu) and wmma-async (hgemm_mma_async.cu).

A and B are half (2 bytes), C and D float. The models cover every memory instruction: the 16-byte copies of
A and B into shared memory, the ldmatrix reads that feed the tensor cores (LDSM.16.M88.4 for A, .MT88.4 for
the transposed B; each of the 4 8x8 matrices is 8 rows of 16 bytes whose addresses lanes 8i..8i+7 supply:
lanes 0-15 rows 0-15 of the 16x16 fragment at its first 8 columns, lanes 16-31 the same rows 8 columns on),
and the epilogue. wmma-addmm's wmma.load/store lower to the same ldmatrix pattern and to 4 STS.64 per
accumulator fragment (the m16n8 accumulator layout, twice: lane l holds rows l/4 and l/4 + 8, columns
2 (l % 4) + {0, 1} and those + 8); the fragment layout is the compiler's, the bank counts only depend on each
instruction covering 8 rows of 32 bytes, which holds for any layout with that shape.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernels.indexing_base import LANES, Access, KernelModel, global_access, read_constants, shared_access
from kernels.indexing_pipelined import GROUP_M, _copy, grouped_origin
from kernels.lanes import Lanes
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

HALF = 2
LANE = Lanes(range(LANES))


class WmmaModel(KernelModel):
    """hgemm_wmma_addmm<1>: 128x128 blocks of 8 warps (4 x 2 warp tiles of 32x64), K in chunks of 64 halves
    staged with LDG.128 + STS.128 into rows skewed by 16 halves, the result staged through shared memory."""

    elem_a = elem_b = HALF
    beta_nonzero = True  # the catalog's runs use beta = -0.5, so the epilogue reads C

    source_statements = (
        "const int warp_m = (warpId / BLOCK_ROW_WARPS) * WARP_COL_TILES * FRAG;",
        "const int warp_n = (warpId % BLOCK_ROW_WARPS) * WARP_ROW_TILES * FRAG;",
        "const int a_r0 = tid / A_VECS;",
        "const int a_c = (tid % A_VECS) * COPY_HALVES;",
        "const int b_r0 = tid / B_VECS;",
        "const int b_c = (tid % B_VECS) * COPY_HALVES;",
        "const int r = a_r0 + j * A_ROW_STEP;",
        "if (a_k_in && bm + r < M) v = *reinterpret_cast<const uint4*>(a_src + (size_t)j * A_ROW_STEP * K);",
        "*reinterpret_cast<uint4*>(As + r * L::A_LD + a_c) = v;",
        "const int r = b_r0 + j * B_ROW_STEP;",
        "if (b_col_in && k0 + r < K) v = *reinterpret_cast<const uint4*>(b_src + (size_t)j * B_ROW_STEP * N);",
        "*reinterpret_cast<uint4*>(Bs + r * L::B_LD + b_c) = v;",
        "load_a(a[i], as_addr + 2u * ((warp_m + i * FRAG) * L::A_LD + k_step * FRAG), L::A_LD);",
        "load_b(b, bs_addr + 2u * (k_step * FRAG * L::B_LD + warp_n + j * FRAG), L::B_LD);",
        "store_acc(cs_addr + 4u * ((warp_m + i * FRAG) * C_STRIDE + warp_n + j * FRAG), acc[i][j], C_STRIDE);",
        "const int r = warpId * FRAG + i;",
        "const int col = bn + laneId * 4;",
        "float4 v = *reinterpret_cast<const float4*>(Cs + r * C_STRIDE + laneId * 4);",
        "*reinterpret_cast<float4*>(D + (size_t)row * N + col) = v;",
    )

    def __init__(self, spec):
        super().__init__(spec)
        p = spec.params
        self.frag = p["FRAG_M"]
        self.a_ld, self.b_ld = p["BK"] + p["SKEW_HALF"], p["BN"] + p["SKEW_HALF"]
        self.b_base = p["BM"] * self.a_ld * HALF  # Bs follows As in the one dynamic buffer
        self.warps_n = p["BN"] // p["WARP_N"]

    def constants(self) -> dict[str, int]:
        names = ("BM", "BN", "BK", "CHUNK_K", "WARPS", "WARP_M", "WARP_N", "FRAG_M", "SKEW_HALF", "THREADS")
        return {n: self.spec.params[n] for n in names}

    def source_constants(self) -> dict[str, int]:
        names = ("WARPS_PER_BLOCK", "BLOCK_ROW_WARPS", "BLOCK_COL_WARPS", "WARP_ROW_TILES", "WARP_COL_TILES")
        c = read_constants(
            self.spec.read_source(), {n: rf"constexpr int {n} = (\d+);" for n in names + ("FRAG", "SKEW_HALF")}
        )
        limit_64k = int((self.spec.entry or "<1>").split("<")[1].rstrip(">"))
        chunk_k = 4 if limit_64k else 8
        return {
            "BM": c["FRAG"] * c["WARP_COL_TILES"] * c["BLOCK_COL_WARPS"],
            "BN": c["FRAG"] * c["WARP_ROW_TILES"] * c["BLOCK_ROW_WARPS"],
            "BK": chunk_k * c["FRAG"],
            "CHUNK_K": chunk_k,
            "WARPS": c["WARPS_PER_BLOCK"],
            "WARP_M": c["FRAG"] * c["WARP_COL_TILES"],
            "WARP_N": c["FRAG"] * c["WARP_ROW_TILES"],
            "FRAG_M": c["FRAG"],
            "SKEW_HALF": c["SKEW_HALF"],
            "THREADS": 32 * c["WARPS_PER_BLOCK"],
        }

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        row0, col0 = self.block_origin(shape, block)
        tid = np.arange(self.spec.threads_per_block)
        rows = (row0 + (tid // LANES) * self.frag)[:, None, None] + np.arange(self.frag)[None, :, None]
        cols = (col0 + (tid % LANES) * 4)[:, None, None] + np.arange(4)[None, None, :]
        rows, cols = np.broadcast_arrays(rows, cols)
        return rows.reshape(len(tid), -1), cols.reshape(len(tid), -1)

    def _warp_origin(self, warp: int) -> tuple[int, int]:
        p = self.spec.params
        return (warp // self.warps_n) * p["WARP_M"], (warp % self.warps_n) * p["WARP_N"]

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        p = self.spec.params
        BK, BN, THREADS = p["BK"], p["BN"], p["THREADS"]
        tid = self.warp_threads(warp).tid
        bm, bn = self.block_origin(shape, block)
        k0 = step * BK
        a_vecs, b_vecs = BK // 8, BN // 8
        a_r0, a_c = tid // a_vecs, (tid % a_vecs) * 8
        b_r0, b_c = tid // b_vecs, (tid % b_vecs) * 8
        out: list[Access] = []
        for j in range(p["BM"] * a_vecs // THREADS):
            r = a_r0 + j * (THREADS // a_vecs)
            ok = (k0 + a_c < shape.k) & (bm + r < shape.m)
            out.append(
                global_access(
                    f"A[bm + r{j}][k0 + a_c..+7]", "LDG.E.128", "ld", "A", bm + r, k0 + a_c, shape.k, HALF, 16, ok
                )
            )
            out.append(
                shared_access(
                    f"As[r{j}][a_c..+7] =", "STS.128", "st", "As", r, a_c, (r * self.a_ld + a_c) * HALF, 16, HALF
                )
            )
        for j in range(BK * b_vecs // THREADS):
            r = b_r0 + j * (THREADS // b_vecs)
            ok = (bn + b_c < shape.n) & (k0 + r < shape.k)
            out.append(
                global_access(
                    f"B[k0 + r{j}][bn + b_c..+7]", "LDG.E.128", "ld", "B", k0 + r, bn + b_c, shape.n, HALF, 16, ok
                )
            )
            out.append(
                shared_access(
                    f"Bs[r{j}][b_c..+7] =",
                    "STS.128",
                    "st",
                    "Bs",
                    r,
                    b_c,
                    self.b_base + (r * self.b_ld + b_c) * HALF,
                    16,
                    HALF,
                )
            )
        warp_m, warp_n = self._warp_origin(warp)
        row_in_frag, col_in_frag = LANE % 16, (LANE // 16) * 8
        for k_step in range(p["CHUNK_K"]):
            for i in range(p["WARP_M"] // self.frag):
                row, col = warp_m + i * self.frag + row_in_frag, k_step * self.frag + col_in_frag
                out.append(
                    shared_access(
                        f"load_a As[warp_m + {i * self.frag}][{k_step * self.frag}]",
                        "LDSM.16.M88.4",
                        "ld",
                        "As",
                        row,
                        col,
                        (row * self.a_ld + col) * HALF,
                        16,
                        HALF,
                    )
                )
            for j in range(p["WARP_N"] // self.frag):
                row, col = k_step * self.frag + row_in_frag, warp_n + j * self.frag + col_in_frag
                out.append(
                    shared_access(
                        f"load_b Bs[{k_step * self.frag}][warp_n + {j * self.frag}]",
                        "LDSM.16.MT88.4",
                        "ld",
                        "Bs",
                        row,
                        col,
                        self.b_base + (row * self.b_ld + col) * HALF,
                        16,
                        HALF,
                    )
                )
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        p = self.spec.params
        bm, bn = self.block_origin(shape, block)
        warp_m, warp_n = self._warp_origin(warp)
        c_stride = p["BN"]
        out: list[Access] = []
        for i in range(p["WARP_M"] // self.frag):
            for j in range(p["WARP_N"] // self.frag):
                for half_row in (0, 8):
                    for half_col in (0, 8):
                        row = warp_m + i * self.frag + LANE // 4 + half_row
                        col = warp_n + j * self.frag + 2 * (LANE % 4) + half_col
                        out.append(
                            shared_access(
                                f"store_acc Cs frag ({i},{j}) +({half_row},{half_col})",
                                "STS.64",
                                "st",
                                "Cs",
                                row,
                                col,
                                (row * c_stride + col) * 4,
                                8,
                            )
                        )
        for i in range(self.frag):
            r = warp * self.frag + i
            row, col = bm + r, bn + LANE * 4
            ok = (row < shape.m) & (col < shape.n)
            if not ok.any():  # `continue` for every lane: the warp skips the row
                continue
            out.append(
                shared_access(
                    f"Cs[warp*16 + {i}][lane*4..+3]",
                    "LDS.128",
                    "ld",
                    "Cs",
                    r,
                    LANE * 4,
                    (r * c_stride + LANE * 4) * 4,
                    16,
                    4,
                    ok,
                )
            )
            if self.beta_nonzero:
                out.append(global_access(f"C[row {i}][col..+3]", "LDG.E.128", "ld", "C", row, col, shape.n, 4, 16, ok))
            out.append(global_access(f"D[row {i}][col..+3]", "STG.E.128", "st", "D", row, col, shape.n, 4, 16, ok))
        return out


class MmaAsyncModel(KernelModel):
    """hgemm_mma_async<BM, BN, STAGES>: 4-stage cp.async pipeline of 32-deep K slices into XOR-swizzled shared
    memory, ldmatrix.x4 (A) and .x4.trans (B) into mma.sync.m16n8k16, alpha/beta applied from registers."""

    elem_a = elem_b = HALF
    beta_nonzero = True

    source_statements = (
        "const int pid = blockIdx.y * grid_n + blockIdx.x;",
        "const int bm = (first_m + (pid % group_size) % rows_in_group) * BM;",
        "const int bn = ((pid % group_size) / rows_in_group) * BN;",
        "__device__ __forceinline__ unsigned a_offset(int r, int c) { return (unsigned)(r * BK + ((c ^ ((r >> 1) & 3)) << 3)) * 2u; }",
        "__device__ __forceinline__ unsigned b_offset(int r, int c) { return (unsigned)(r * BN + ((c ^ (r & 7)) << 3)) * 2u; }",
        "const int a_r0 = tid / A_VECS;",
        "const int a_c = tid % A_VECS;",
        "const int b_r0 = tid / B_VECS;",
        "const int b_c = tid % B_VECS;",
        "const bool a_k_in = k0 + a_c * 8 < K;",
        "const bool ok = a_k_in && bm + r < M;",
        "const bool ok = b_col_in && k0 + r < K;",
        "if (next < k_tiles) load_slice(write_stage, next * BK);",
        "const int ld_row = lane & 15;",
        "const int ld_hi = lane >> 4;",
        "ldmatrix_x4(af[mi], as + a_offset(wm0 + mi * 16 + ld_row, kk * 2 + ld_hi));",
        "ldmatrix_x4_trans(r, bs + b_offset<BN>(kk * 16 + ld_row, (wn0 + p * 16) / 8 + ld_hi));",
        "const int row = bm + wm0 + mi * 16 + (lane >> 2) + half * 8;",
        "const int col = bn + wn0 + ni * 8 + (lane & 3) * 2;",
    )

    def __init__(self, spec):
        super().__init__(spec)
        p = spec.params
        self.a_stage_bytes = p["BM"] * p["BK"] * HALF
        self.stage_bytes = self.a_stage_bytes + p["BK"] * p["BN"] * HALF
        self.warps_n = p["BN"] // p["WN"]

    def constants(self) -> dict[str, int]:
        names = ("BM", "BN", "BK", "WM", "WN", "STAGES", "THREADS")
        return {n: self.spec.params[n] for n in names} | {"GROUP_M": GROUP_M}

    def source_constants(self) -> dict[str, int]:
        source = self.spec.read_source()
        c = read_constants(source, {n: rf"constexpr int {n} = (\d+);" for n in ("BK", "WM", "WN", "GROUP_M")})
        bm, bn, stages = (int(v) for v in (self.spec.entry or "").split("<")[1].rstrip(">").split(","))
        return c | {"BM": bm, "BN": bn, "STAGES": stages, "THREADS": (bm // c["WM"]) * (bn // c["WN"]) * 32}

    def block_origin(self, shape: Shape, block: tuple[int, int]) -> tuple[int, int]:
        return grouped_origin(self.grid(shape), block, self.spec.tile_m, self.spec.tile_n)

    def _warp_origin(self, warp: int) -> tuple[int, int]:
        p = self.spec.params
        return (warp // self.warps_n) * p["WM"], (warp % self.warps_n) * p["WN"]

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        p = self.spec.params
        row0, col0 = self.block_origin(shape, block)
        rows, cols = [], []
        lane = np.arange(LANES, dtype=np.int64)
        for warp in range(self.warps_per_block):
            wm0, wn0 = self._warp_origin(warp)
            r = wm0 + np.arange(p["WM"] // 16)[:, None] * 16 + np.array([0, 8])[None, :]  # mi, half
            c = wn0 + np.arange(p["WN"] // 8)[:, None] * 8 + np.array([0, 1])[None, :]  # ni, column pair
            lane_r, lane_c = lane[:, None] // 4, (lane[:, None] % 4) * 2
            rr = (row0 + r.ravel()[None, :] + lane_r)[:, :, None]
            cc = (col0 + c.ravel()[None, :] + lane_c)[:, None, :]
            rr, cc = np.broadcast_arrays(rr, cc)
            rows.append(rr.reshape(LANES, -1))
            cols.append(cc.reshape(LANES, -1))
        return np.concatenate(rows), np.concatenate(cols)

    def step_key(self, shape: Shape, step: int) -> tuple:
        s = self.stages
        return (step == 0, step % s, self.slice_class(shape, step), self.slice_class(shape, step + s - 1))

    def load_slice(self, shape: Shape, block: tuple[int, int], warp: int, s: int) -> list[Access]:
        p = self.spec.params
        BK, BN, THREADS = p["BK"], p["BN"], p["THREADS"]
        tid = self.warp_threads(warp).tid
        bm, bn = self.block_origin(shape, block)
        k0, stage = s * BK, (s % self.stages) * self.stage_bytes
        a_vecs, b_vecs = BK // 8, BN // 8
        a_r0, a_c = tid // a_vecs, tid % a_vecs
        b_r0, b_c = tid // b_vecs, tid % b_vecs
        out: list[Access] = []
        for j in range(p["BM"] * a_vecs // THREADS):
            r = a_r0 + j * (THREADS // a_vecs)
            ok = (k0 + a_c * 8 < shape.k) & (bm + r < shape.m)
            dst = stage + (r * BK + ((a_c ^ ((r >> 1) & 3)) << 3)) * HALF
            out += _copy(
                f"A[bm + r{j}][k0 + 8 a_c..+7]",
                "LDGSTS.E.BYPASS.128",
                "A",
                bm + r,
                k0 + a_c * 8,
                shape.k,
                ok,
                "As",
                r,
                a_c * 8,
                dst,
                16,
                HALF,
            )
        for j in range(BK * b_vecs // THREADS):
            r = b_r0 + j * (THREADS // b_vecs)
            ok = (bn + b_c * 8 < shape.n) & (k0 + r < shape.k)
            dst = stage + self.a_stage_bytes + (r * BN + ((b_c ^ (r & 7)) << 3)) * HALF
            out += _copy(
                f"B[k0 + r{j}][bn + 8 b_c..+7]",
                "LDGSTS.E.BYPASS.128",
                "B",
                k0 + r,
                bn + b_c * 8,
                shape.n,
                ok,
                "Bs",
                r,
                b_c * 8,
                dst,
                16,
                HALF,
            )
        return out

    def fragments(self, warp: int, s: int, kk: int) -> list[Access]:
        p = self.spec.params
        BK, BN = p["BK"], p["BN"]
        as_ = (s % self.stages) * self.stage_bytes
        bs = as_ + self.a_stage_bytes
        wm0, wn0 = self._warp_origin(warp)
        ld_row, ld_hi = LANE & 15, LANE >> 4
        out = []
        for mi in range(p["WM"] // 16):
            r, c = wm0 + mi * 16 + ld_row, kk * 2 + ld_hi
            out.append(
                shared_access(
                    f"ldmatrix.x4 A rows wm0 + {mi * 16}.., k {kk * 16}..",
                    "LDSM.16.M88.4",
                    "ld",
                    "As",
                    r,
                    c * 8,
                    as_ + (r * BK + ((c ^ ((r >> 1) & 3)) << 3)) * HALF,
                    16,
                    HALF,
                )
            )
        for q in range(p["WN"] // 16):
            r, c = kk * 16 + ld_row, (wn0 + q * 16) // 8 + ld_hi
            out.append(
                shared_access(
                    f"ldmatrix.x4.trans B k {kk * 16}.., cols wn0 + {q * 16}..",
                    "LDSM.16.MT88.4",
                    "ld",
                    "Bs",
                    r,
                    c * 8,
                    bs + (r * BN + ((c ^ (r & 7)) << 3)) * HALF,
                    16,
                    HALF,
                )
            )
        return out

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        S, T = self.stages, self.steps(shape)
        out: list[Access] = []
        if step == 0:
            for s in range(min(S - 1, T)):
                out += self.load_slice(shape, block, warp, s)
        if step + S - 1 < T:
            out += self.load_slice(shape, block, warp, step + S - 1)
        for kk in range(self.spec.params["BK"] // 16):
            out += self.fragments(warp, step, kk)
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        p = self.spec.params
        bm, bn = self.block_origin(shape, block)
        wm0, wn0 = self._warp_origin(warp)
        out: list[Access] = []
        for mi in range(p["WM"] // 16):
            for half in (0, 8):
                row = bm + wm0 + mi * 16 + LANE // 4 + half
                for ni in range(p["WN"] // 8):
                    col = bn + wn0 + ni * 8 + (LANE % 4) * 2
                    ok = (row < shape.m) & (col < shape.n)
                    if not (row < shape.m).any():  # the row's `continue` is a branch; the column's a predicate
                        continue
                    tag = f"rows mi {mi} +{half}, cols ni {ni}"
                    if self.beta_nonzero:
                        out.append(global_access(f"C {tag}", "LDG.E.64", "ld", "C", row, col, shape.n, 4, 8, ok))
                    out.append(global_access(f"D {tag}", "STG.E.64", "st", "D", row, col, shape.n, 4, 8, ok))
        return out
