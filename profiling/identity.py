"""Which launch is this? The one answer every view reads.

The worker wraps each profiled operation in an NVTX push/pop range named `gemmlens:<id>:<m>x<n>x<k>` (the
contract between profiling.gpu.runner, which writes it, and every reader of an ncu report). From that range, or
for a run we made from the kernel's function name, block and grid, a launch gets one `LaunchIdentity`: which
catalog kernel it is, at which size, whether it is ours, its operation and whether it did tensor-core work.

The tensor-core rule lives here and nowhere else: a catalog kernel is tensor-core work when its operation is
(kernels.operations); another program's kernel when its tensor-pipe counters say so.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from typing import Any

from kernels.catalog import CATALOG
from kernels.operations import OperationSpec
from kernels.registry import operation_of
from kernels.spec import SPLIT_K_HELPER_ENTRIES
from profiling.shape import Shape

NVTX_PREFIX = "gemmlens"
"""The first field of the worker's NVTX range names; ncu's --nvtx-include filter matches on it."""
# Sizes are bounded: int() of a 5,000-digit string raises, and no GEMM dimension needs more than 10 digits.
_NVTX_RANGE = re.compile(NVTX_PREFIX + r":([A-Za-z0-9_.+-]+):(\d{1,10})x(\d{1,10})x(\d{1,10})(?!\d)")

TENSOR_PIPE_BUSY_MIN_PCT = 1.0
"""A launch of another program with no size to weigh its FLOPs against is tensor-core work when its tensor pipe
was busy at least this share of the time (FP32 kernels issue a few tensor-pipe instructions, never near 1 %)."""
TENSOR_PIPE_IDLE_PCT = 0.1
"""A launch of a tensor-core operation whose tensor pipe was busy less than this share of the time (or that issued
no tensor-pipe instruction) is a helper part of it, such as cuBLAS's split-K reduction, not tensor-core work."""
TENSOR_FP32_SHARE = 0.5
"""A launch with a known size whose FP32 FLOPs fall below this share of its 2MNK did its multiply elsewhere: on
the tensor cores when it issued tensor-pipe instructions (ncu's FP32 count then sees only the epilogue)."""


def nvtx_range_name(kernel_id: str, shape: Shape) -> str:
    """The NVTX range the worker pushes around one operation: 'gemmlens:v3:4096x4096x4096'."""
    return f"{NVTX_PREFIX}:{kernel_id}:{shape.label}"


def parse_nvtx(text: str | None) -> tuple[str, Shape] | None:
    """(catalog id, shape) of the worker's range inside ncu's NVTX column (which may list several ranges and
    domains around it), else None."""
    if not text:
        return None
    return _parse_nvtx(text)


@functools.lru_cache(maxsize=4096)
def _parse_nvtx(text: str) -> tuple[str, Shape] | None:
    """parse_nvtx, remembered: a report's launches repeat a few ranges (a 30,000-launch page spent 5 % of its
    reading here)."""
    match = _NVTX_RANGE.search(text)
    if match is None:
        return None
    return match.group(1), Shape(int(match.group(2)), int(match.group(3)), int(match.group(4)))


# ncu's raw and details pages print each push/pop range as "<domain>:<name>:PL_Type:PL_Value:CLR_Type:Color:Msg_Type:
# Msg" in quotes, after the thread id; the name itself may hold ":" (gemmlens:v4:1024x1024x1024).
_QUOTED = re.compile(r'"([^"]*)"')
_RANGE_TAIL = 6


def nvtx_label(text: str | None) -> str:
    """The NVTX range(s) around a launch as their names, outermost first and joined by " / ", the same for every
    input: ncu's CSV column ('849  "<default domain>:foreign:none:none:none:none:none:none"'), its text output
    ("foreign") and a `.ncu-rep` ("foreign") all give "foreign"; "" when there is none."""
    if not text:
        return ""
    quoted = _QUOTED.findall(text)
    if not quoted:
        return text.strip()
    names = []
    for item in quoted:
        domain, _, rest = item.partition(":")
        parts = rest.split(":")
        name = ":".join(parts[:-_RANGE_TAIL]) if len(parts) > _RANGE_TAIL else rest
        names.append(name or domain)
    return " / ".join(n for n in names if n)


def uses_tensor_cores(
    operation: OperationSpec | None,
    shape: Shape | None,
    tensor_instructions: float | None,
    tensor_pipe_pct: float | None,
    fp32_flops: float | None,
) -> bool:
    """Whether a launch did its multiply on the tensor cores: the operation's answer for our kernels (but not for a
    part of the operation whose own counters show an idle tensor pipe); for another program's, tensor-pipe
    instructions issued and FP32 FLOPs far short of the GEMM when its size is known, else the tensor pipe busy at
    least TENSOR_PIPE_BUSY_MIN_PCT."""
    if operation is not None:
        idle = tensor_instructions == 0 or (tensor_pipe_pct is not None and tensor_pipe_pct < TENSOR_PIPE_IDLE_PCT)
        return operation.is_tensor_core and not idle
    if shape is not None:
        return bool(tensor_instructions) and (fp32_flops or 0.0) < TENSOR_FP32_SHARE * shape.flops
    return tensor_pipe_pct is not None and tensor_pipe_pct >= TENSOR_PIPE_BUSY_MIN_PCT


@dataclass(frozen=True)
class LaunchIdentity:
    """What a launch is, decided once when its report is read.

    `kernel_id`: the catalog (or tuning) id, None for another program's kernel. `shape`: M, N and K from the
    worker's NVTX range; `grid_mn`: M and N worked out from the grid of a launch matched by name (no K there).
    `ours`: a kernel of our catalog (the worker's range, or matched by name in a run we made). `operation`: its
    operation, None when not ours. `tensor_core`: the one tensor-core rule (uses_tensor_cores).
    """

    kernel_id: str | None = None
    shape: Shape | None = None
    ours: bool = False
    operation: OperationSpec | None = None
    tensor_core: bool = False
    grid_mn: tuple[int, int] | None = None

    @property
    def size(self) -> str:
        """'4096x4096x4096' from the NVTX range, '4096x4096' from the grid, else ''."""
        if self.shape is not None:
            return self.shape.label
        if self.grid_mn is not None:
            return f"{self.grid_mn[0]}x{self.grid_mn[1]}"
        return ""

    @property
    def m(self) -> int | None:
        """M, from the range or the grid."""
        if self.shape is not None:
            return self.shape.m
        return self.grid_mn[0] if self.grid_mn is not None else None

    @property
    def gemm_flops(self) -> float | None:
        """2MNK when the size is known, else None."""
        return float(self.shape.flops) if self.shape is not None else None

    def label(self, function: str, launch_id: str) -> str:
        """'v3 4096x4096x4096' for our kernels ('v3 4096x4096' without a range), a split-K helper launch with its
        function after it ('v9-splitk 1024x1024x8191 splitk_zero_c': not the GEMM), else '<function> #<id>'."""
        if self.kernel_id is not None:
            helper = function if self.is_split_k_helper(function) else ""
            return f"{self.kernel_id} {self.size} {helper}".strip()
        return f"{function} #{launch_id}"

    def is_split_k_helper(self, function: str) -> bool:
        """Whether a launch of `function` under this identity is one of split-K's helpers in our operation's range
        (zeroing C, padding B, copying C back), not the GEMM: told by name, since sgemm-auto's range holds the
        entry of whichever configuration it chose, not its own catalog entry."""
        return self.ours and function in SPLIT_K_HELPER_ENTRIES

    def to_dict(self) -> dict[str, Any]:
        return {
            "kernel_id": self.kernel_id,
            "size": self.size or None,
            "ours": self.ours,
            "operation": self.operation.name if self.operation is not None else None,
            "tensor_core": self.tensor_core,
        }


def match_by_launch(
    function: str, block: tuple[int, ...] | None, grid: tuple[int, ...] | None
) -> tuple[str, int, int] | None:
    """(catalog id, m, n) of the catalog kernel with this function name and block (templates share a name,
    sgemm_tiled<8/16/32>, so the block breaks the tie), M and N worked out from the grid and the tile."""
    for spec in CATALOG:
        if function not in spec.functions:
            continue
        if block and tuple(block[:2]) != tuple(spec.block):
            continue
        g = grid or (0, 0)
        if spec.grid_order == "rows_x":
            return spec.id, g[0] * spec.tile_m, g[1] * spec.tile_n
        return spec.id, g[1] * spec.tile_m, g[0] * spec.tile_n
    return None


def identify(
    *,
    function: str,
    nvtx: str | None,
    block: tuple[int, ...] | None,
    grid: tuple[int, ...] | None,
    from_our_run: bool | None,
    tensor_instructions: float | None = None,
    tensor_pipe_pct: float | None = None,
    fp32_flops: float | None = None,
    known: dict[tuple[Any, ...], Any] | None = None,
) -> LaunchIdentity:
    """The identity of one launch.

    The worker's NVTX range says it outright, in any report. Without one, only a launch from a run we made
    (`from_our_run` not False, and no other NVTX range around it) is matched by function name, block and grid:
    another program's `sgemm_tiled` is not ours. `known` keeps, for the launches of one report, what was worked out
    from the name, range, block and grid, and one LaunchIdentity per answer (it is frozen): a report launches a
    few kernels thousands of times.
    """
    key = (function, nvtx, block, grid, from_our_run)
    entry = known.get(key) if known is not None else None
    if entry is None:
        entry = (_named(function, nvtx, block, grid, from_our_run), {})
        if known is not None and len(known) < 10_000:
            known[key] = entry
    (kernel_id, shape, grid_mn, operation), made = entry
    tensor = uses_tensor_cores(operation, shape, tensor_instructions, tensor_pipe_pct, fp32_flops)
    found = made.get(tensor)
    if found is None:
        found = made[tensor] = LaunchIdentity(kernel_id, shape, kernel_id is not None, operation, tensor, grid_mn)
    return found


def _named(
    function: str,
    nvtx: str | None,
    block: tuple[int, ...] | None,
    grid: tuple[int, ...] | None,
    from_our_run: bool | None,
) -> tuple[str | None, Shape | None, tuple[int, int] | None, OperationSpec | None]:
    """(catalog id, shape, M and N from the grid, operation) of a launch, as identify works them out."""
    kernel_id: str | None = None
    shape: Shape | None = None
    grid_mn: tuple[int, int] | None = None
    named = parse_nvtx(nvtx)
    if named is not None:
        kernel_id, shape = named
    elif not (from_our_run is False or (from_our_run is None and nvtx)):
        hit = match_by_launch(function, block, grid)
        if hit is not None:
            kernel_id, grid_mn = hit[0], (hit[1], hit[2])
    operation = operation_of(kernel_id) if kernel_id is not None else None
    return kernel_id, shape, grid_mn, operation
