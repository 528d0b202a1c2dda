"""Job descriptions for the GPU worker: parsing and validating sizes and kernel lists before any GPU work."""

from __future__ import annotations

import math
import re
from dataclasses import asdict, dataclass, field

from kernels.catalog import CATALOG, reference_for
from kernels.registry import get_kernel
from kernels.spec import KernelSpec
from profiling.errors import InvalidInput
from profiling.shape import Shape, dimension, is_shape_text, parse_shape

_INTEGER = re.compile(r"^\s*[+-]?\d+\s*$")


def parse_sizes(text: str) -> list[Shape]:
    """Sizes from a comma list like "1024,4096x1000x333": each N gives N x N x N, each MxNxK that shape."""
    parts = [p.strip() for p in text.split(",") if p.strip()]
    if not parts:
        raise InvalidInput("no sizes given; pass e.g. --sizes 1024,4096")
    shapes = []
    for part in parts:
        if _INTEGER.match(part):
            n = dimension(part, "size")
            shapes.append(Shape(n, n, n))
        elif is_shape_text(part):
            shapes.append(parse_shape(part))
        else:
            raise InvalidInput(f"size '{part}' is not N or MxNxK (whole numbers, e.g. 4096 or 4096x1000x333)")
    return shapes


def sweep_sizes(start: int, stop: int, factor: int = 2) -> list[Shape]:
    """Square shapes start, start*factor, ... up to stop (inclusive, at most 64); InvalidInput for a bad range."""
    if start < 1 or stop < start or factor < 2:
        raise InvalidInput(f"a sweep needs 1 <= start <= stop and a factor >= 2 (got {start}..{stop} x{factor})")
    shapes, n = [], start
    while n <= stop and len(shapes) < 64:
        shapes.append(Shape(*(dimension(str(n), "size"),) * 3))
        n *= factor
    return shapes


MAX_GRID_SHAPES = 1024
_GRID_SPLIT = re.compile(r"([MNKmnk])\s*=")


def parse_grid(text: str) -> list[Shape]:
    """Every shape of a grid such as "M=1,16,128,N=1024,4096,K=4096" (each axis a comma list; all three needed),
    M fastest-changing last: ordered by K, then N, then M, as the sweep charts read them."""
    axes: dict[str, list[int]] = {}
    pieces = _GRID_SPLIT.split(text.strip())
    if len(pieces) < 3 or pieces[0].strip():
        raise InvalidInput(f"--grid {text!r} is not of the form M=1,16,128,N=1024,4096,K=4096")
    for axis, values_text in zip(pieces[1::2], pieces[2::2], strict=True):
        axis = axis.upper()
        if axis in axes:
            raise InvalidInput(f"--grid names {axis} twice")
        values = [p.strip() for p in values_text.split(",") if p.strip()]
        if not values:
            raise InvalidInput(f"--grid: {axis}= has no values")
        axes[axis] = list(dict.fromkeys(dimension(v, f"grid {axis}") for v in values))
    missing = [a for a in "MNK" if a not in axes]
    if missing:
        raise InvalidInput(f"--grid needs M=, N= and K=; missing {', '.join(missing)}")
    count = len(axes["M"]) * len(axes["N"]) * len(axes["K"])
    if count > MAX_GRID_SHAPES:
        raise InvalidInput(f"--grid has {count} shapes; at most {MAX_GRID_SHAPES} per sweep")
    return [Shape(m, n, k) for k in axes["K"] for n in axes["N"] for m in axes["M"]]


def parse_kernels(text: str) -> list[KernelSpec]:
    """Catalog entries from a comma list of ids ("v1,v3,v5"); "all" selects the whole catalog."""
    ids = [p.strip() for p in text.split(",") if p.strip()]
    if not ids:
        raise InvalidInput("no kernels given; pass e.g. --kernels v1,v3,v5")
    if ids == ["all"]:
        return list(CATALOG)
    return [get_kernel(i) for i in dict.fromkeys(ids)]


def element_bytes(spec: KernelSpec) -> tuple[int, int]:
    """Bytes per element of the inputs and of the output for a kernel's operation."""
    op = spec.operation_spec
    return op.input_bytes, op.output_bytes


def device_bytes_needed(spec: KernelSpec, shape: Shape) -> int:
    """GPU memory one run needs: A, B, the output, the reference output (and C for AddMM), the padded copies of B
    (where it pads B) and C (where it pads C) of a split-K kernel that pads N (KernelSpec.padded_n), and the
    module's own arrays (KernelSpec.module_global_bytes)."""
    op = spec.operation_spec
    m, n, k = shape.m, shape.n, shape.k
    padded = op.input_bytes * ((k if spec.pads_b else 0) + (m if spec.pads_c else 0)) * (spec.padded_n(n) or 0)
    buffers = op.input_bytes * (m * k + k * n) + op.output_bytes * op.device_buffers * m * n + padded
    return buffers + spec.module_global_bytes


def check_fits(spec: KernelSpec, shape: Shape, free_bytes: int, reserved_bytes: int = 0) -> None:
    """Raise InvalidInput if the run's buffers do not fit in free GPU memory with 10 % headroom."""
    need = device_bytes_needed(spec, shape) + reserved_bytes
    budget = int(free_bytes * 0.9) - 256 * 2**20
    if need > budget:
        raise InvalidInput(
            f"{spec.id} at {shape.label} needs {need / 2**30:.2f} GiB of GPU memory but only "
            f"{max(budget, 0) / 2**30:.2f} GiB is free after headroom; choose a smaller size"
        )


def tolerance_for(spec: KernelSpec, shape: Shape) -> float:
    """Relative-error bound ||C - ref|| / ||ref|| for a correct kernel (its operation's rule, kernels.catalog)."""
    return spec.operation_spec.tolerance(shape.k)


REPEATS = (1, 10_000)
"""The timed launches a benchmark may ask for per kernel and size (the CLI's --repeats checks the same)."""
WARMUP = (0, 1000)
REST_SECONDS = (0.0, 60.0)
"""The idle seconds an A/B may rest before each pair (BenchSettings.rest_s; the CLI's --rest checks the same)."""
"""The untimed launches before them (--warmup)."""


@dataclass
class BenchSettings:
    """How runs are timed."""

    repeats: int = 30
    warmup: int = 3
    max_seconds_per_run: float = 4.0
    flush_l2: bool = True
    # Timed launches are enqueued behind a hold kernel, so the host's enqueueing is never inside a timing
    # (profiling.gpu.hold). False times as before 2026-11-28, for comparison.
    hold_launches: bool = True
    # An A/B's pairs each start after this many idle seconds (0: back to back), with one untimed launch of each
    # kernel first (timing.rested_rounds): long launches (1.5 ms at 8192^3 FP16 on an H200) reach the power cap
    # after 9-16 back to back, and capped pairs give another ratio than full-clock ones (0.96 against 1.006).
    rest_s: float = 0.0

    def validate(self) -> None:
        if not REPEATS[0] <= self.repeats <= REPEATS[1]:
            raise InvalidInput(f"--repeats must be between {REPEATS[0]} and {REPEATS[1]}, got {self.repeats}")
        if not WARMUP[0] <= self.warmup <= WARMUP[1]:
            raise InvalidInput(f"--warmup must be between {WARMUP[0]} and {WARMUP[1]}, got {self.warmup}")
        if not (math.isfinite(self.max_seconds_per_run) and self.max_seconds_per_run > 0):
            raise InvalidInput(f"--max-seconds must be a positive number of seconds, got {self.max_seconds_per_run:g}")
        if not (math.isfinite(self.rest_s) and REST_SECONDS[0] <= self.rest_s <= REST_SECONDS[1]):
            raise InvalidInput(
                f"--rest must be between {REST_SECONDS[0]:g} and {REST_SECONDS[1]:g} seconds, got {self.rest_s:g}"
            )


@dataclass
class Task:
    """One kernel at one shape."""

    kernel: str
    m: int
    n: int
    k: int

    @property
    def shape(self) -> Shape:
        return Shape(self.m, self.n, self.k)


@dataclass
class Job:
    """What the worker child process is asked to do.

    op: "bench" (verify and time), "rounds" (verify, then time each shape's kernels together in rounds that run
    each once), "verify" (verify only), "profile" (verify, warm up, then one launch
    inside an NVTX range for Nsight Compute), "device_info", or a self-test ("selftest_fault",
    "selftest_hang") used to prove failures are contained.
    """

    op: str
    tasks: list[Task] = field(default_factory=list)
    settings: BenchSettings = field(default_factory=BenchSettings)

    def to_dict(self) -> dict:
        return {"op": self.op, "tasks": [asdict(t) for t in self.tasks], "settings": asdict(self.settings)}

    @classmethod
    def from_dict(cls, data: dict) -> Job:
        return cls(
            op=data["op"],
            tasks=[Task(**t) for t in data.get("tasks", [])],
            settings=BenchSettings(**data.get("settings", {})),
        )


def build_tasks(kernels: list[KernelSpec], shapes: list[Shape], with_reference: bool = True) -> list[Task]:
    """Tasks ordered by shape, each shape's library reference first so % of reference is same-run.

    Kernels whose size constraint a shape breaks are kept: the worker reports them as refused.
    """
    tasks: list[Task] = []
    for shape in shapes:
        ordered: list[KernelSpec] = []
        if with_reference:
            for spec in kernels:
                ref = reference_for(spec)
                if ref is not None and ref not in ordered and ref not in kernels:
                    ordered.append(ref)
        ordered.extend(kernels)
        ordered.sort(key=lambda s: not s.is_reference)
        tasks.extend(Task(spec.id, shape.m, shape.n, shape.k) for spec in ordered)
    return tasks
