"""Predicted memory-access costs of a kernel's indexing model (kernels/indexing): 32-byte sectors per global
request, shared-memory wavefronts and bank conflicts per instruction, for one warp or summed over a launch.

Global memory: a request is one warp-wide instruction with at least one active lane; its cost is the number
of distinct 32-byte sectors its active lanes' bytes fall in (128-byte lines are reported for the picture).

Shared memory: 32 banks of 4 bytes; a wavefront serves each bank at most one distinct 4-byte word (lanes
reading the same word share it). A warp's request is split into phases of 128 bytes of lane data: the
whole warp for 32-bit accesses, half-warps for 64-bit, quarter-warps for 128-bit (and one 8x8 matrix, 8
row addresses, per phase of ldmatrix); a phase takes as many wavefronts as the most distinct words any
bank must serve. Loads wider than 32 bits whose lanes come in pairs with equal addresses (lane n with n^1,
or n with n^2, for every active lane) take half as many phases: the L1 returns 128 bytes per cycle, one
register of every lane, and such pairs let it pack two lanes' registers in one return (NVIDIA's answer in
https://forums.developer.nvidia.com/t/unexpected-shared-memory-bank-conflict/77228/2; ldmatrix phases:
https://forums.developer.nvidia.com/t/understanding-the-behaivor-of-ldmatrix-in-terms-of-shared-memory-access/278716).
These rules reproduce, instruction by instruction, the wavefronts of every shared load and store in the H100
source-page capture of the catalog (tests/test_access_analysis.py).

The shared-memory write of a cp.async (LDGSTS) is costed here as a store to the same addresses would be (its
bank view). Nsight Compute counts those writes apart (smsp__sass_l1tex_data_pipe_lsu_wavefronts_mem_shared_op_ldgsts)
and they do not follow the destination banks: v8's 4-byte A copies cost 9 wavefronts per instruction at
1024^3 and 3 at 1000^3 where their banks give 2, and two of wmma-async's A copies with the same address
pattern cost 8 and 4. No published rule explains them, so they are not predicted (access_check.py).
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from kernels.indexing_base import LANES, Access, KernelModel
from profiling.errors import InvalidInput
from profiling.shape import Shape

if TYPE_CHECKING:
    import numpy as np

SECTOR_BYTES = 32
LINE_BYTES = 128
BANKS = 32
BANK_BYTES = 4
CATEGORIES = ("global_ld", "global_st", "shared_ld", "shared_st", "ldgsts")


@dataclass(frozen=True)
class GlobalCost:
    """One global instruction of one warp: requests (1, or 0 when no lane is active), sectors and lines."""

    requests: int
    sectors: int
    lines: int
    bytes: int


@dataclass(frozen=True)
class SharedCost:
    """One shared-memory instruction of one warp.

    `ideal` is the wavefronts it would take without bank conflicts (its phases with an active lane);
    `degree` the n-way of its worst bank: the most distinct 4-byte words one bank serves in one phase.
    """

    wavefronts: int
    ideal: int
    degree: int
    phase_lanes: int
    paired: bool

    @property
    def conflicts(self) -> int:
        return self.wavefronts - self.ideal


def lane_bytes(acc: Access) -> np.ndarray:
    """[lanes, width] byte addresses each lane touches (an ndarray, for the pictures and tests)."""
    import numpy as np

    return np.asarray(acc.addr)[:, None] + np.arange(acc.width, dtype=np.int64)[None, :]


def lane_words(acc: Access, lane: int) -> list[int]:
    """The 4-byte words (byte address // 4) lane `lane` touches, one per 4 bytes of its width."""
    addr = acc.addr.values[lane]
    return [(addr + offset) // BANK_BYTES for offset in range(0, acc.width, BANK_BYTES)]


def global_cost(acc: Access) -> GlobalCost:
    """Requests, distinct 32-byte sectors and 128-byte lines of a global access (active lanes only)."""
    starts = [a for a, on in zip(acc.addr.values, acc.active.values, strict=True) if on]
    if not starts:
        return GlobalCost(0, 0, 0, 0)
    last = acc.width - 1
    sectors = {a // SECTOR_BYTES for a in starts} | {(a + last) // SECTOR_BYTES for a in starts}
    lines = {s * SECTOR_BYTES // LINE_BYTES for s in sectors}
    return GlobalCost(1, len(sectors), len(lines), len(starts) * acc.width)


def is_paired(acc: Access) -> bool:
    """Every active lane n has the address of lane n^1, or every active lane that of lane n^2."""
    active, addr = acc.active.values, acc.addr.values
    lanes = acc.active.nonzero_lanes()
    if not lanes:
        return False
    return any(all(active[n ^ d] and addr[n ^ d] == addr[n] for n in lanes) for d in (1, 2))


def phase_lanes(acc: Access) -> tuple[int, bool]:
    """Lanes served per phase, and whether the load's lane pairs halved the phases."""
    if acc.sass.startswith("LDSM"):  # one 8x8 matrix (8 row addresses of 16 bytes) per phase
        return 8, False
    lanes = max(1, LINE_BYTES // max(acc.width, BANK_BYTES))
    if acc.op == "ld" and acc.width > BANK_BYTES and is_paired(acc):
        return lanes * 2, True
    return lanes, False


def shared_cost(acc: Access) -> SharedCost:
    """Wavefronts, ideal wavefronts and worst n-way bank conflict of a shared-memory access."""
    per_phase, paired = phase_lanes(acc)
    lanes = acc.active.nonzero_lanes()
    if not lanes:
        return SharedCost(0, 0, 0, per_phase, paired)
    # distinct (phase, word) pairs, then how many distinct words each (phase, bank) serves
    addr, offsets = acc.addr.values, range(0, acc.width, BANK_BYTES)
    phase_words = {(n // per_phase, (addr[n] + o) // BANK_BYTES) for n in lanes for o in offsets}
    per_bank = Counter((p, w % BANKS) for p, w in phase_words)
    depth: dict[int, int] = {}  # per phase with an active lane: its busiest bank's distinct words
    for (p, _), count in per_bank.items():
        depth[p] = max(depth.get(p, 0), count)
    return SharedCost(sum(depth.values()), len(depth), max(depth.values()), per_phase, paired)


@dataclass(frozen=True)
class BankSchedule:
    """Which wavefront serves each 4-byte word a shared access touches, one entry per (active lane, word).

    Within a phase, the distinct words of one bank are served one per wavefront in address order; the phases
    follow one another, so `wavefront` counts from 0 across the whole instruction. `per_bank` is, per bank,
    the most distinct words it serves in any one phase (its n-way).
    """

    lane: np.ndarray
    word: np.ndarray
    bank: np.ndarray
    phase: np.ndarray
    wavefront: np.ndarray
    per_bank: np.ndarray


def bank_schedule(acc: Access) -> BankSchedule:
    """The wavefront of every (lane, word) of a shared access, by the rules shared_cost counts with."""
    import numpy as np  # the bank picture's arrays (pages, tests)

    per_phase, _ = phase_lanes(acc)
    lanes = np.flatnonzero(acc.active)
    words_per_lane = max(1, acc.width // BANK_BYTES)
    words = (lane_bytes(acc)[lanes, ::BANK_BYTES] // BANK_BYTES).ravel()
    lane = np.repeat(lanes, words_per_lane)
    phase = lane // per_phase
    bank = words % BANKS
    rank = np.zeros(len(words), dtype=np.int64)
    per_bank = np.zeros(BANKS, dtype=np.int64)
    depth: dict[int, int] = {}
    for p in np.unique(phase):
        for b in np.unique(bank[phase == p]):
            here = (phase == p) & (bank == b)
            distinct, which = np.unique(words[here], return_inverse=True)
            rank[here] = which
            per_bank[b] = max(per_bank[b], len(distinct))
            depth[int(p)] = max(depth.get(int(p), 0), len(distinct))
    offsets = dict(zip(sorted(depth), np.cumsum([0] + [depth[p] for p in sorted(depth)])[:-1], strict=True))
    first = np.array([offsets[int(p)] for p in phase], dtype=np.int64)
    return BankSchedule(lane, words, bank, phase, first + rank, per_bank)


def bank_words(acc: Access) -> list[list[tuple[int, int]]]:
    """Per lane, the (bank, word) pairs it touches: what a picture of the 32 banks draws."""
    return [[(w % BANKS, w) for w in lane_words(acc, lane)] if on else [] for lane, on in enumerate(acc.active)]


@dataclass
class Totals:
    """Sums over a launch for one counter family: warp-level instructions, global requests and sectors,
    shared wavefronts and the wavefronts they would take without conflicts."""

    instructions: float = 0
    requests: float = 0
    sectors: float = 0
    wavefronts: float = 0
    ideal: float = 0

    def add(self, weight: float, cost: GlobalCost | SharedCost) -> None:
        self.instructions += weight
        if isinstance(cost, GlobalCost):
            self.requests += weight * cost.requests
            self.sectors += weight * cost.sectors
        else:
            self.wavefronts += weight * cost.wavefronts
            self.ideal += weight * cost.ideal


def access_cost(acc: Access) -> GlobalCost | SharedCost:
    return global_cost(acc) if acc.space == "global" else shared_cost(acc)


@dataclass
class LaunchPrediction:
    """Predicted counter totals of one launch, by counter family and by SASS instruction form."""

    kernel: str
    shape: Shape
    totals: dict[str, Totals] = field(default_factory=lambda: {c: Totals() for c in CATEGORIES})
    by_sass: dict[tuple[str, str], Totals] = field(default_factory=lambda: defaultdict(Totals))

    def add(self, acc: Access, weight: float, cost: GlobalCost | SharedCost | None = None) -> None:
        if cost is None:
            cost = access_cost(acc)
        self.totals[acc.category].add(weight, cost)
        self.by_sass[(acc.category, acc.sass)].add(weight, cost)

    def ratios(self) -> dict[str, float | None]:
        """The per-request and per-instruction figures ncu's counters give (None where there is nothing)."""
        t = self.totals
        return {
            "global_ld_sectors_per_request": _div(t["global_ld"].sectors, t["global_ld"].requests),
            "global_st_sectors_per_request": _div(t["global_st"].sectors, t["global_st"].requests),
            "shared_ld_wavefronts_per_instruction": _div(t["shared_ld"].wavefronts, t["shared_ld"].instructions),
            "shared_st_wavefronts_per_instruction": _div(t["shared_st"].wavefronts, t["shared_st"].instructions),
            "shared_ld_conflicts_per_instruction": _div(
                t["shared_ld"].wavefronts - t["shared_ld"].ideal, t["shared_ld"].instructions
            ),
            "shared_st_conflicts_per_instruction": _div(
                t["shared_st"].wavefronts - t["shared_st"].ideal, t["shared_st"].instructions
            ),
        }


def _div(num: float, den: float) -> float | None:
    return num / den if den else None


def _classes(items: list, key) -> list[tuple[object, int]]:
    """(representative, count) for each distinct key, in first-seen order."""
    reps: dict[object, list] = {}
    for item in items:
        entry = reps.setdefault(key(item), [item, 0])
        entry[1] += 1
    return [(rep, count) for rep, count in reps.values()]


MAX_BLOCKS = 16384 * 16384 // (8 * 8)
"""The most blocks a launch the model follows may have: the Indexing page's largest C (16384 x 16384) in the
smallest tiles (8 x 8). Each block is looked at to class it, so the work grows with the grid."""
MAX_STEPS = 16384
"""The most K-loop iterations: the page's largest K (16384) at one element per step (v1)."""


def work_problem(model: KernelModel, shape: Shape) -> str | None:
    """Why the model will not follow `shape` (too many blocks or K steps to look at), or None when it will."""
    gx, gy = model.grid(shape)
    steps = model.steps(shape)
    what = f"{model.spec.id} at {shape.label}"
    if gx * gy > MAX_BLOCKS:
        return (
            f"{what} launches {gx * gy:,} blocks; the access model looks at each and follows at most {MAX_BLOCKS:,} "
            "(C of 16384 x 16384 in 8 x 8 tiles): pick smaller M and N"
        )
    if steps > MAX_STEPS:
        return (
            f"{what} runs {steps:,} K-loop iterations; the access model follows at most {MAX_STEPS:,}: pick a smaller K"
        )
    return None


def predict_launch(model: KernelModel, shape: Shape, exhaustive: bool = False) -> LaunchPrediction:
    """Every memory instruction of the launch, weighted by how often it runs.

    Blocks and K steps with equal keys (KernelModel.block_key / step_key) cost the same, so one of each is
    evaluated and counted as many times as it occurs; `exhaustive` evaluates every block and step (tests).
    InvalidInput (work_problem) for a launch too big to follow, before any work.
    """
    problem = work_problem(model, shape)
    if problem:
        raise InvalidInput(problem)
    prediction = LaunchPrediction(model.spec.id, shape)
    shared_costs: dict[tuple, SharedCost] = {}  # the same shared addresses recur in every block and step

    def add(acc: Access, weight: int) -> None:
        cost = None
        if acc.space == "shared":
            key = (acc.sass, acc.op, acc.width, acc.addr.values, acc.active.values)
            cost = shared_costs.get(key) or shared_costs.setdefault(key, shared_cost(acc))
        prediction.add(acc, weight, cost)

    blocks = model.blocks(shape)
    steps = list(range(model.steps(shape)))
    if exhaustive:
        block_classes, step_classes = [(b, 1) for b in blocks], [(s, 1) for s in steps]
    else:
        block_classes = _classes(blocks, lambda b: model.block_key(shape, b))
        step_classes = _classes(steps, lambda s: model.step_key(shape, s))
    for block, block_count in block_classes:
        for warp in range(model.warps_per_block):
            for step, step_count in step_classes:
                for acc in model.step_accesses(shape, block, warp, step):
                    add(acc, block_count * step_count)
            for acc in model.epilogue_accesses(shape, block, warp):
                add(acc, block_count)
    return prediction


# --- one warp, lane by lane: what the command line prints and the pictures draw ---


def access_record(acc: Access) -> dict:
    """One instruction of one warp as plain data: its costs and, per lane, coordinates, address, sectors or banks."""
    record = {
        "label": acc.label,
        "sass": acc.sass,
        "space": acc.space,
        "op": acc.op,
        "category": acc.category,
        "array": acc.array,
        "bytes_per_lane": acc.width,
        "elements_per_lane": acc.width // acc.elem,
        "active_lanes": int(acc.active.sum()),
    }
    if acc.space == "global":
        cost = global_cost(acc)
        record |= {"requests": cost.requests, "sectors": cost.sectors, "lines": cost.lines, "bytes": cost.bytes}
    else:
        cost = shared_cost(acc)
        record |= {
            "wavefronts": cost.wavefronts,
            "ideal_wavefronts": cost.ideal,
            "conflict_degree": cost.degree,
            "lanes_per_phase": cost.phase_lanes,
            "paired": cost.paired,
        }
        if acc.op == "ldgsts":
            record["note"] = "bank view of a cp.async write: ncu counts these apart, and not by their banks"
    banks = bank_words(acc) if acc.space == "shared" else None
    record["lanes"] = [
        {
            "lane": lane,
            "active": bool(acc.active[lane]),
            "row": int(acc.row[lane]),
            "col": int(acc.col[lane]),
            "address": int(acc.addr[lane]),
        }
        | (
            {
                "sectors": sorted(
                    {int(acc.addr[lane]) // SECTOR_BYTES, (int(acc.addr[lane]) + acc.width - 1) // SECTOR_BYTES}
                )
            }
            if acc.space == "global"
            else {"banks": sorted({b for b, _ in banks[lane]})}
        )
        for lane in range(LANES)
    ]
    return record


def warp_view(model: KernelModel, shape: Shape, block: tuple[int, int], warp: int, step: int) -> dict:
    """Everything warp `warp` of `block` does in K step `step`, and in the epilogue, lane by lane."""
    row0, col0 = model.block_origin(shape, block)
    threads = model.warp_threads(warp)
    return {
        "kernel": model.spec.id,
        "shape": {"m": shape.m, "n": shape.n, "k": shape.k},
        "grid": list(model.grid(shape)),
        "block": list(block),
        "tile": {"row0": row0, "col0": col0, "rows": model.spec.tile_m, "cols": model.spec.tile_n},
        "warp": warp,
        "threads": {"tid": threads.tid.tolist(), "x": threads.tx.tolist(), "y": threads.ty.tolist()},
        "step": step,
        "steps": model.steps(shape),
        "k_range": [step * model.bk, min((step + 1) * model.bk, shape.k)],
        "instructions": [access_record(a) for a in model.step_accesses(shape, block, warp, step)],
        "epilogue": [access_record(a) for a in model.epilogue_accesses(shape, block, warp)],
    }


def tile_map(model: KernelModel, shape: Shape, block: tuple[int, int]) -> dict:
    """The matrix view of one block: its C tile, the C elements each of its threads computes (inside C), and
    the A rows and B columns it reads along K."""
    row0, col0 = model.block_origin(shape, block)
    rows, cols = model.thread_elements(shape, block)
    inside = (rows < shape.m) & (cols < shape.n)
    return {
        "kernel": model.spec.id,
        "block": list(block),
        "tile": {"row0": row0, "col0": col0, "rows": model.spec.tile_m, "cols": model.spec.tile_n},
        "a_rows": [row0, min(row0 + model.spec.tile_m, shape.m)],
        "b_cols": [col0, min(col0 + model.spec.tile_n, shape.n)],
        "threads": [
            {"tid": t, "rows": rows[t][inside[t]].tolist(), "cols": cols[t][inside[t]].tolist()}
            for t in range(rows.shape[0])
        ],
    }
