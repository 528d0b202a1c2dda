"""What every indexing model shares: the Access record (one warp-wide memory instruction, lane by lane) and
the KernelModel interface the analysis walks (blocks, warps, K steps, epilogue).

A model transcribes its kernel's index arithmetic from the `.cu` source at the level of the SASS instructions
the compiler emits (which loads became LDS.128, which stores stayed scalar, which guarded paths it drops): the
H100 source pages of the catalog at 1024^3 and at awkward sizes (results/h100-2026-11-22/source_why_1024_sass.csv.gz,
results/h100-2026-11-22/access/) pin that level down instruction form by instruction form, and
tests/test_indexing_models.py holds the models to the statements and constants of their sources.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal

from kernels.lanes import Lanes
from kernels.spec import KernelSpec
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

LANES = 32
SECTOR_BYTES = 32

Space = Literal["global", "shared"]
# "ldgsts" is the shared-memory write of a cp.async (LDGSTS); its global read is a separate "ld" Access.
Op = Literal["ld", "st", "ldgsts"]


@dataclass(frozen=True, eq=False)
class Access:
    """One memory instruction as one warp executes it: per lane, the element it starts at and its byte address.

    `row`/`col` index `array` (A, B, C, D in global memory, or the kernel's shared array, e.g. aTile[row][col]);
    a lane covers `width` bytes from `addr` (`width // elem` consecutive elements). Global addresses are byte
    offsets from the matrix's first element; shared ones from the block's shared memory. Inactive lanes
    (guards, predicates, src-size 0 copies) touch nothing. The shared write of a cp.async ("ldgsts") keeps
    its global read in `source`.
    """

    label: str
    sass: str
    space: Space
    op: Op
    width: int
    elem: int
    array: str
    row: Lanes
    col: Lanes
    addr: Lanes
    active: Lanes
    source: Access | None = None

    @property
    def category(self) -> str:
        """The ncu counter family this instruction lands in: global_ld, global_st, shared_ld, shared_st, ldgsts."""
        return "ldgsts" if self.op == "ldgsts" else f"{self.space}_{self.op}"


def global_access(
    label: str,
    sass: str,
    op: Op,
    array: str,
    row: Lanes | int,
    col: Lanes | int,
    ld: int,
    elem: int,
    width: int,
    active: Lanes | bool,
) -> Access:
    """A row-major global access: element (row, col) of a matrix with leading dimension `ld` (i * ld + j)."""
    row, col = _lanes(row), _lanes(col)
    return Access(label, sass, "global", op, width, elem, array, row, col, (row * ld + col) * elem, _mask(active))


def shared_access(
    label: str,
    sass: str,
    op: Op,
    array: str,
    row: Lanes | int,
    col: Lanes | int,
    addr: Lanes | int,
    width: int,
    elem: int = 4,
    active: Lanes | bool = True,
) -> Access:
    """A shared-memory access whose byte address the caller computed (padding, stages and swizzles included)."""
    return Access(label, sass, "shared", op, width, elem, array, _lanes(row), _lanes(col), _lanes(addr), _mask(active))


def _lanes(values: Lanes | int) -> Lanes:
    """Per-lane ints: a scalar is every lane's value (any sequence of 32, e.g. an ndarray, is taken lane by lane)."""
    if isinstance(values, Lanes) and type(values.values[0]) is not bool:
        return values
    if hasattr(values, "__len__"):
        return Lanes(int(v) for v in values)
    return Lanes.full(LANES, int(values))


def _mask(active: Lanes | bool) -> Lanes:
    """Per-lane bools, as _lanes."""
    if isinstance(active, Lanes) and type(active.values[0]) is bool:
        return active
    if hasattr(active, "__len__"):
        return Lanes(bool(v) for v in active)
    return Lanes.full(LANES, bool(active))


@dataclass(frozen=True)
class WarpThreads:
    """The 32 threads of one warp: linear thread id, threadIdx.x and threadIdx.y per lane."""

    warp: int
    tid: Lanes
    tx: Lanes
    ty: Lanes

    @property
    def lane(self) -> Lanes:
        return self.tid - self.warp * LANES


class KernelModel:
    """The indexing of one kernel: subclasses fill in the index arithmetic of their `.cu` file.

    `bk` is the K depth of one step of the main loop (one K slice; 1 for the naive kernels), `stages` the
    number of shared-memory buffers the slices rotate through. `source_statements` are statements copied
    from the source that the model transcribes; a test checks they are still there, so an edit of the
    indexing in the `.cu` file fails until the model follows.
    """

    source_statements: tuple[str, ...] = ()
    elem_a = 4
    elem_b = 4
    elem_c = 4

    def __init__(self, spec: KernelSpec):
        self.spec = spec

    # --- constants, and their tie to the source ---
    @property
    def bk(self) -> int:
        return self.spec.params.get("BK", 1)

    @property
    def stages(self) -> int:
        return self.spec.params.get("STAGES", 1)

    def constants(self) -> dict[str, int]:
        """The tile constants this model uses (BM, BN, BK, ...), as the catalog entry gives them."""
        return dict(self.spec.params)

    def source_constants(self) -> dict[str, int]:
        """The same constants read from the `.cu` source (defines, constexprs or template arguments)."""
        return {}

    def missing_statements(self, source: str | None = None) -> list[str]:
        """The transcribed statements no longer found in the source (whitespace aside): the model has drifted."""
        text = normalized(self.spec.read_source() if source is None else source)
        return [s for s in self.source_statements if normalized(s) not in text]

    # --- launch geometry ---
    @property
    def warps_per_block(self) -> int:
        return self.spec.threads_per_block // LANES

    def grid(self, shape: Shape) -> tuple[int, int]:
        return self.spec.grid(shape.m, shape.n)

    def blocks(self, shape: Shape) -> list[tuple[int, int]]:
        gx, gy = self.grid(shape)
        return [(bx, by) for by in range(gy) for bx in range(gx)]

    def block_origin(self, shape: Shape, block: tuple[int, int]) -> tuple[int, int]:
        """(first row, first column) of the C tile that block (blockIdx.x, blockIdx.y) computes."""
        bx, by = block
        if self.spec.grid_order == "rows_x":
            return bx * self.spec.tile_m, by * self.spec.tile_n
        return by * self.spec.tile_m, bx * self.spec.tile_n

    def warp_threads(self, warp: int) -> WarpThreads:
        tid = Lanes(range(warp * LANES, (warp + 1) * LANES))
        bdx = self.spec.block[0]
        return WarpThreads(warp, tid, tid % bdx, tid // bdx)

    def steps(self, shape: Shape) -> int:
        """Iterations of the kernel's main K loop."""
        return math.ceil(shape.k / self.bk)

    # --- what a model describes ---
    def thread_elements(self, shape: Shape, block: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
        """(rows, cols), each [threads_per_block, elements]: the C elements each thread of the block computes
        (also those outside C, which the kernel computes but does not store)."""
        raise NotImplementedError

    def step_accesses(self, shape: Shape, block: tuple[int, int], warp: int, step: int) -> list[Access]:
        """The memory instructions warp `warp` of `block` executes in iteration `step` of the K loop, in order
        (step 0 also carries what the prologue does before the loop)."""
        raise NotImplementedError

    def epilogue_accesses(self, shape: Shape, block: tuple[int, int], warp: int) -> list[Access]:
        """The memory instructions after the K loop (the C / D stores)."""
        raise NotImplementedError

    # --- equivalence classes for the whole-launch sums ---
    def slice_class(self, shape: Shape, s: int) -> tuple:
        """What decides the cost of the accesses to K slice `s`: its K extent, and where its A and B addresses
        fall within a 32-byte sector (moving a warp's addresses by a multiple of 32 bytes changes no sector or
        bank count). Slices past the end are 'dead'."""
        k0 = s * self.bk
        if s < 0 or k0 >= shape.k:
            return ("dead",)
        extent = min(self.bk, shape.k - k0)
        return (extent, (k0 * self.elem_a) % SECTOR_BYTES, (k0 * shape.n * self.elem_b) % SECTOR_BYTES)

    def step_key(self, shape: Shape, step: int) -> tuple:
        """Steps with equal keys execute the same instructions with the same costs (see slice_class)."""
        return (step == 0, step % self.stages, self.slice_class(shape, step))

    def block_key(self, shape: Shape, block: tuple[int, int]) -> tuple:
        """Blocks with equal keys cost the same: same tile extent and the same sector offsets of A, B and C."""
        row0, col0 = self.block_origin(shape, block)
        return (
            min(self.spec.tile_m, shape.m - row0),
            min(self.spec.tile_n, shape.n - col0),
            (row0 * shape.k * self.elem_a) % SECTOR_BYTES,
            (col0 * self.elem_b) % SECTOR_BYTES,
            ((row0 * shape.n + col0) * self.elem_c) % SECTOR_BYTES,
        )


def read_constants(source: str, patterns: dict[str, str]) -> dict[str, int]:
    """Integer constants from source text: {name: regex with one group}; missing ones are left out."""
    out = {}
    for name, pattern in patterns.items():
        found = re.search(pattern, source)
        if found:
            out[name] = int(found.group(1))
    return out


def template_arguments(source: str, template_name: str, entry: str) -> dict[str, int]:
    """The entry's template arguments by parameter name, as the source's `template <int A, int B, ...>` list
    of `template_name` names them (e.g. sgemm_async<128,128,...> -> {"BM": 128, "BN": 128, ...})."""
    found = re.search(r"template\s*<([^>]*)>\s*__global__[^(]*?\b" + re.escape(template_name) + r"\s*\(", source)
    if not found or "<" not in entry:
        return {}
    names = [p.split()[-1] for p in found.group(1).split(",")]
    values = [int(v) for v in entry.split("<", 1)[1].rstrip(">").split(",")]
    return dict(zip(names, values, strict=True))


def normalized(text: str) -> str:
    """Source text without whitespace, for comparing a model's transcribed statements with the file."""
    return re.sub(r"\s+", "", text)
