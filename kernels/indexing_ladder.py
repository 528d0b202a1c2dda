"""Indexing models of the FP32 ladder (v1 .. v5) and the TILE_WIDTH lecture kernels.

Instruction forms are those NVRTC emits for sm_90 (checked against the H100 source-page capture): the naive
kernels load A and B with scalar LDG; in v2 and the TILE_WIDTH kernels a thread's row of the A tile is read
with LDS.128 (four k at a time) and the B column with scalar LDS; in v3 .. v5 every operand read of the inner
loop is an LDS.128 (two per 8-float row segment), global loads stay scalar (guarded), and v5 writes its
B slice with one STS.128 per thread.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kernels.indexing_base import Access, KernelModel, global_access, read_constants, shared_access, template_arguments
from kernels.lanes import Lanes
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

IDX2C = "#define IDX2C(i, j, ld) ((size_t)(i) * (ld) + (j))"


class NaiveModel(KernelModel):
    """v1 and v1-coalesced: one thread per element of C; `rows_on_x` says whether threadIdx.x walks rows."""

    rows_on_x = True

    @property
    def bk(self) -> int:
        return 1

    def _row_col(self, block: tuple[int, int], tx: Lanes | np.ndarray, ty: Lanes | np.ndarray) -> tuple:
        bx, by = block
        bdx, bdy = self.spec.block
        if self.rows_on_x:
            return bx * bdx + tx, by * bdy + ty
        return by * bdy + ty, bx * bdx + tx

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        tid = np.arange(self.spec.threads_per_block)
        x, y = self._row_col(block, tid % self.spec.block[0], tid // self.spec.block[0])
        return x[:, None], y[:, None]

    def _warp(self, shape: Shape, block: tuple[int, int], warp: int):
        t = self.warp_threads(warp)
        x, y = self._row_col(block, t.tx, t.ty)
        return x, y, (x < shape.m) & (y < shape.n)

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        x, y, live = self._warp(shape, block, warp)
        if not live.any():  # every thread of the warp has returned
            return []
        return [
            global_access("A: a[x][i]", "LDG.E", "ld", "A", x, step, shape.k, 4, 4, live),
            global_access("B: b[i][y]", "LDG.E", "ld", "B", step, y, shape.n, 4, 4, live),
        ]

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        x, y, live = self._warp(shape, block, warp)
        if not live.any():
            return []
        return [global_access("C: c[x][y] = sum", "STG.E", "st", "C", x, y, shape.n, 4, 4, live)]


class V1Model(NaiveModel):
    source_statements = (
        IDX2C,
        "const int x = blockIdx.x * blockDim.x + threadIdx.x;",
        "const int y = blockIdx.y * blockDim.y + threadIdx.y;",
        "if (x >= m || y >= n) return;",
        "sum += a[IDX2C(x, i, k)] * b[IDX2C(i, y, n)];",
        "c[IDX2C(x, y, n)] = sum;",
    )


class V1CoalescedModel(NaiveModel):
    rows_on_x = False
    source_statements = (
        IDX2C,
        "const int y = blockIdx.x * blockDim.x + threadIdx.x;",
        "const int x = blockIdx.y * blockDim.y + threadIdx.y;",
        "if (x >= m || y >= n) return;",
        "sum += a[IDX2C(x, i, k)] * b[IDX2C(i, y, n)];",
        "c[IDX2C(x, y, n)] = sum;",
    )


class SharedTileModel(KernelModel):
    """v2 and sgemm_tiled<T>: T x T tiles of A and B in shared memory, one thread per element of C.

    v2 (`rows_on_x`) indexes aTile[tx][ty] with threadIdx.x on rows; the lecture kernel sharedA[ty][tx] with
    threadIdx.x on columns. Either way a thread reads its row of the A tile with T/4 LDS.128 and its column
    of the B tile with T scalar LDS.
    """

    rows_on_x = False

    @property
    def tile(self) -> int:
        return self.spec.tile_m

    @property
    def bk(self) -> int:
        return self.tile

    def _row_col(self, block: tuple[int, int], tx: Lanes | np.ndarray, ty: Lanes | np.ndarray) -> tuple:
        bx, by = block
        t = self.tile
        return (bx * t + tx, by * t + ty) if self.rows_on_x else (by * t + ty, bx * t + tx)

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        tid = np.arange(self.spec.threads_per_block)
        x, y = self._row_col(block, tid % self.tile, tid // self.tile)
        return x[:, None], y[:, None]

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        t = self.warp_threads(warp)
        tx, ty, T = t.tx, t.ty, self.tile
        row, col = self._row_col(block, tx, ty)
        k0 = step * T
        b_base = T * T * 4  # the B tile follows the A tile
        if self.rows_on_x:  # v2: aTile[tx][ty] <- a[x][i + ty], bTile[tx][ty] <- b[i + tx][y]
            a_r, a_c, b_r, b_c = row, k0 + ty, k0 + tx, col
            s_r, s_c = tx, ty
            a_read_row, b_read_col = tx, ty
            names = ("aTile", "bTile")
        else:  # sharedA[ty][tx] <- a[row][t + tx], sharedB[ty][tx] <- b[t + ty][col]
            a_r, a_c, b_r, b_c = row, k0 + tx, k0 + ty, col
            s_r, s_c = ty, tx
            a_read_row, b_read_col = ty, tx
            names = ("sharedA", "sharedB")
        out = [
            global_access(
                f"A -> {names[0]}", "LDG.E", "ld", "A", a_r, a_c, shape.k, 4, 4, (a_r < shape.m) & (a_c < shape.k)
            ),
            global_access(
                f"B -> {names[1]}", "LDG.E", "ld", "B", b_r, b_c, shape.n, 4, 4, (b_r < shape.k) & (b_c < shape.n)
            ),
            shared_access(
                f"{names[0]}[{'tx][ty' if self.rows_on_x else 'ty][tx'}] =",
                "STS",
                "st",
                names[0],
                s_r,
                s_c,
                (s_r * T + s_c) * 4,
                4,
            ),
            shared_access(
                f"{names[1]}[{'tx][ty' if self.rows_on_x else 'ty][tx'}] =",
                "STS",
                "st",
                names[1],
                s_r,
                s_c,
                b_base + (s_r * T + s_c) * 4,
                4,
            ),
        ]
        for q in range(T // 4):
            out.append(
                shared_access(
                    f"{names[0]} row, k {4 * q}..{4 * q + 3}",
                    "LDS.128",
                    "ld",
                    names[0],
                    a_read_row,
                    4 * q,
                    (a_read_row * T + 4 * q) * 4,
                    16,
                )
            )
        for i in range(T):
            out.append(
                shared_access(
                    f"{names[1]}[{i}][col]", "LDS", "ld", names[1], i, b_read_col, b_base + (i * T + b_read_col) * 4, 4
                )
            )
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        t = self.warp_threads(warp)
        row, col = self._row_col(block, t.tx, t.ty)
        live = (row < shape.m) & (col < shape.n)
        if not live.any():  # the store sits in a branch that a warp with no thread inside C skips
            return []
        return [global_access("C = sum", "STG.E", "st", "C", row, col, shape.n, 4, 4, live)]


class V2Model(SharedTileModel):
    rows_on_x = True
    source_statements = (
        IDX2C,
        "const int x = blockIdx.x * TILE + tx;",
        "const int y = blockIdx.y * TILE + ty;",
        "aTile[tx][ty] = (x < m && i + ty < k) ? a[IDX2C(x, i + ty, k)] : 0.0f;",
        "bTile[tx][ty] = (i + tx < k && y < n) ? b[IDX2C(i + tx, y, n)] : 0.0f;",
        "sum += aTile[tx][ii] * bTile[ii][ty];",
        "if (x < m && y < n) c[IDX2C(x, y, n)] = sum;",
    )

    def constants(self) -> dict[str, int]:
        return {"TILE": self.tile}

    def source_constants(self) -> dict[str, int]:
        return read_constants(self.spec.read_source(), {"TILE": r"#define TILE (\d+)"})


class TiledModel(SharedTileModel):
    source_statements = (
        IDX2C,
        "const int row = blockIdx.y * TILE_WIDTH + ty;",
        "const int col = blockIdx.x * TILE_WIDTH + tx;",
        "sharedA[ty][tx] = (row < m && t + tx < k) ? a[IDX2C(row, t + tx, k)] : 0.0f;",
        "sharedB[ty][tx] = (t + ty < k && col < n) ? b[IDX2C(t + ty, col, n)] : 0.0f;",
        "sum += sharedA[ty][i] * sharedB[i][tx];",
        "if (row < m && col < n) c[IDX2C(row, col, n)] = sum;",
    )

    def constants(self) -> dict[str, int]:
        return {"TILE_WIDTH": self.tile}

    def source_constants(self) -> dict[str, int]:
        return template_arguments(self.spec.read_source(), "sgemm_tiled", self.spec.entry or "")


class RegBlockModel(KernelModel):
    """v3 (aTile[BM][BK]), v4 (aTile[BK][BM], transposed) and v5 (v4 with two buffers): 128x128 block tiles,
    16x16 threads with tid = threadIdx.x * 16 + threadIdx.y, an 8x8 block of C per thread."""

    transposed = False
    buffers = 1

    @property
    def stages(self) -> int:
        return self.buffers

    def source_constants(self) -> dict[str, int]:
        return read_constants(
            self.spec.read_source(), {n: rf"#define {n} (\d+)" for n in ("BM", "BN", "BK", "TM", "TN")}
        )

    def constants(self) -> dict[str, int]:
        return {n: self.spec.params[n] for n in ("BM", "BN", "BK", "TM", "TN")}

    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        import numpy as np  # the block's matrix view (pages, tests): the access command never asks for it

        p = self.spec.params
        tid = np.arange(self.spec.threads_per_block)
        tx, ty = tid % self.spec.block[0], tid // self.spec.block[0]
        row0, col0 = self.block_origin(shape, block)
        rows = (row0 + tx * p["TM"])[:, None, None] + np.arange(p["TM"])[None, :, None]
        cols = (col0 + ty * p["TN"])[:, None, None] + np.arange(p["TN"])[None, None, :]
        rows, cols = np.broadcast_arrays(rows, cols)
        return rows.reshape(len(tid), -1), cols.reshape(len(tid), -1)

    def _a_tile_bytes(self) -> int:
        p = self.spec.params
        return self.buffers * p["BM"] * p["BK"] * 4

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        p = self.spec.params
        BM, BN, BK, TM, TN = p["BM"], p["BN"], p["BK"], p["TM"], p["TN"]
        t = self.warp_threads(warp)
        tid = t.tx * 16 + t.ty
        a_row, a_col = tid // 2, 4 * (tid % 2)
        b_row, b_col = tid // 32, 4 * (tid % 32)
        block_row, block_col = self.block_origin(shape, block)
        i = step * BK
        buf = step % self.buffers
        b_base = self._a_tile_bytes()
        out: list[Access] = []
        for j in range(4):
            r, c = block_row + a_row, i + a_col + j
            out.append(
                global_access(
                    f"A: a[r][i + a_col + {j}]", "LDG.E", "ld", "A", r, c, shape.k, 4, 4, (r < shape.m) & (c < shape.k)
                )
            )
        for j in range(4):
            r, c = i + b_row, block_col + b_col + j
            out.append(
                global_access(
                    f"B: b[i + b_row][c + {j}]", "LDG.E", "ld", "B", r, c, shape.n, 4, 4, (r < shape.k) & (c < shape.n)
                )
            )
        for j in range(4):
            if self.transposed:
                addr = (buf * BK * BM + (a_col + j) * BM + a_row) * 4
                out.append(
                    shared_access(f"aTile[a_col + {j}][a_row] =", "STS", "st", "aTile", a_col + j, a_row, addr, 4)
                )
            else:
                addr = (a_row * BK + a_col + j) * 4
                out.append(
                    shared_access(f"aTile[a_row][a_col + {j}] =", "STS", "st", "aTile", a_row, a_col + j, addr, 4)
                )
        b_addr = b_base + (buf * BK * BN + b_row * BN + b_col) * 4
        if self.buffers == 2:  # v5 stores b_next[0..3] with one STS.128
            out.append(shared_access("bTile[b_row][b_col..+3] =", "STS.128", "st", "bTile", b_row, b_col, b_addr, 16))
        else:
            for j in range(4):
                out.append(
                    shared_access(
                        f"bTile[b_row][b_col + {j}] =", "STS", "st", "bTile", b_row, b_col + j, b_addr + 4 * j, 4
                    )
                )
        for kk in range(BK):
            for h in range(TM // 4):
                if self.transposed:
                    col = t.tx * TM + 4 * h
                    addr = (buf * BK * BM + kk * BM + col) * 4
                    out.append(
                        shared_access(f"aTile[{kk}][tx*8 + {4 * h}..]", "LDS.128", "ld", "aTile", kk, col, addr, 16)
                    )
            for h in range(TN // 4):
                col = t.ty * TN + 4 * h
                addr = b_base + (buf * BK * BN + kk * BN + col) * 4
                out.append(shared_access(f"bTile[{kk}][ty*8 + {4 * h}..]", "LDS.128", "ld", "bTile", kk, col, addr, 16))
        if not self.transposed:  # v3: a thread's 8-float row of aTile is read as two LDS.128 per row
            for xx in range(TM):
                for h in range(BK // 4):
                    row = t.tx * TM + xx
                    out.append(
                        shared_access(
                            f"aTile[tx*8 + {xx}][{4 * h}..]",
                            "LDS.128",
                            "ld",
                            "aTile",
                            row,
                            4 * h,
                            (row * BK + 4 * h) * 4,
                            16,
                        )
                    )
        return out

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        p = self.spec.params
        t = self.warp_threads(warp)
        row0, col0 = self.block_origin(shape, block)
        x, y = row0 + t.tx * p["TM"], col0 + t.ty * p["TN"]
        out = []
        for xx in range(p["TM"]):
            for yy in range(p["TN"]):
                r, c = x + xx, y + yy
                out.append(
                    global_access(
                        f"C: c[x + {xx}][y + {yy}]",
                        "STG.E",
                        "st",
                        "C",
                        r,
                        c,
                        shape.n,
                        4,
                        4,
                        (r < shape.m) & (c < shape.n),
                    )
                )
        return out


_REGBLOCK_COMMON = (
    IDX2C,
    "const int tid = threadIdx.x * 16 + threadIdx.y;",
    "const int a_row = tid / 2, a_col = 4 * (tid % 2);",
    "const int b_row = tid / 32, b_col = 4 * (tid % 32);",
    "const int block_row = BM * blockIdx.x;",
    "const int block_col = BN * blockIdx.y;",
    "const int r = block_row + a_row, col = i + a_col + j;",
    "const int r = i + b_row, col = block_col + b_col + j;",
    "const int x = block_row + threadIdx.x * TM;",
    "const int y = block_col + threadIdx.y * TN;",
    "if (x + xx < m && y + yy < n) c[IDX2C(x + xx, y + yy, n)] = sum[xx][yy];",
)


class V3Model(RegBlockModel):
    source_statements = _REGBLOCK_COMMON + (
        "__shared__ float aTile[BM][BK];",
        "aTile[a_row][a_col + j] = (r < m && col < k) ? a[IDX2C(r, col, k)] : 0.0f;",
        "bTile[b_row][b_col + j] = (r < k && col < n) ? b[IDX2C(r, col, n)] : 0.0f;",
        "sum[xx][yy] += aTile[threadIdx.x * TM + xx][kk] * bTile[kk][threadIdx.y * TN + yy];",
    )


class V4Model(RegBlockModel):
    transposed = True
    source_statements = _REGBLOCK_COMMON + (
        "__shared__ __align__(16) float aTile[BK][BM];",
        "aTile[a_col + j][a_row] = (r < m && col < k) ? a[IDX2C(r, col, k)] : 0.0f;",
        "bTile[b_row][b_col + j] = (r < k && col < n) ? b[IDX2C(r, col, n)] : 0.0f;",
        "sum[xx][yy] += aTile[kk][threadIdx.x * TM + xx] * bTile[kk][threadIdx.y * TN + yy];",
    )


class V5Model(RegBlockModel):
    transposed = True
    buffers = 2
    source_statements = _REGBLOCK_COMMON + (
        "__shared__ __align__(16) float aTile[2][BK][BM];",
        "a_next[j] = (r < m && col < k) ? a[IDX2C(r, col, k)] : 0.0f;",
        "b_next[j] = (r < k && col < n) ? b[IDX2C(r, col, n)] : 0.0f;",
        "aTile[buf][a_col + j][a_row] = a_next[j];",
        "bTile[buf][b_row][b_col + j] = b_next[j];",
        "aTile[buffer_index][kk][threadIdx.x * TM + xx] * bTile[buffer_index][kk][threadIdx.y * TN + yy];",
    )
