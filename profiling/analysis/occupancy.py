"""Theoretical occupancy, computed the way NVIDIA's occupancy calculator (`cuda_occupancy.h`) does.

Per-CC data comes from the CUDA C++ Programming Guide, "Compute Capabilities" appendix (Tables 30-32 of
the CUDA 13 guide: resident blocks/warps/threads per SM, shared memory per SM and per block, the list of
shared-memory capacities), and the CUDA 11/12 guides for 7.0/7.2, which CUDA 13 dropped. The algorithm
follows `cuda_occupancy.h` (CUDA 12): registers are allocated per warp in 256-register units and the SM's
register file is split over 4 sub-partitions, so the warps that fit are rounded down to a multiple of 4;
shared memory is allocated in 128-byte units (256 on 7.x) plus 1 KB the driver reserves per block on
CC >= 8.0; the SM's shared-memory size is the requested carveout, or the smallest carveout that holds one
block when the requested one is too small.

The per-resource block limits are the quantities ncu reports as `launch__occupancy_limit_warps`,
`_registers`, `_shared_mem` and `_blocks` (uncapped: a limit may exceed the SM's block limit). To compare
with ncu, pass ncu's `launch__shared_mem_config_size` as the carveout: the driver picks the carveout at
launch time, and on Turing, for instance, it picks 32 KB for a kernel that needs little shared memory.
"""

from __future__ import annotations

import bisect
import math
import numbers
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from profiling import metric_names as MN
from profiling.errors import InvalidInput

if TYPE_CHECKING:
    import pandas as pd

KB = 1024
WARP_SIZE = 32
RESOURCES = ("warps", "registers", "shared_mem", "blocks")
NCU_LIMIT_METRICS = {
    "warps": MN.LIMIT_WARPS,
    "registers": MN.LIMIT_REGISTERS,
    "shared_mem": MN.LIMIT_SHARED,
    "blocks": MN.LIMIT_BLOCKS,
}

_CARVEOUTS_VOLTA = tuple(k * KB for k in (0, 8, 16, 32, 64, 96))
_CARVEOUTS_TURING = (32 * KB, 64 * KB)
_CARVEOUTS_GA100 = tuple(k * KB for k in (0, 8, 16, 32, 64, 100, 132, 164))
_CARVEOUTS_100K = tuple(k * KB for k in (0, 8, 16, 32, 64, 100))
_CARVEOUTS_228K = tuple(k * KB for k in (0, 8, 16, 32, 64, 100, 132, 164, 196, 228))


@dataclass(frozen=True)
class ArchLimits:
    """Per-SM resources of one compute capability, as the occupancy calculator sees them."""

    cc: str
    max_warps_per_sm: int
    max_blocks_per_sm: int
    carveouts: tuple[int, ...]
    shared_mem_per_block_optin: int
    shared_mem_unit: int = 128
    reserved_shared_per_block: int = KB
    max_threads_per_block: int = 1024
    registers_per_sm: int = 64 * KB
    max_registers_per_block: int = 64 * KB
    max_registers_per_thread: int = 255
    register_unit: int = 256
    # Register file sub-partitions: warps are rounded to this many (cuda_occupancy.h, numSubPartitions).
    warp_allocation_granularity: int = 4

    @property
    def shared_mem_per_sm(self) -> int:
        return self.carveouts[-1]

    @property
    def max_threads_per_sm(self) -> int:
        return self.max_warps_per_sm * WARP_SIZE


def _volta(cc: str) -> ArchLimits:
    return ArchLimits(cc, 64, 32, _CARVEOUTS_VOLTA, 96 * KB, shared_mem_unit=256, reserved_shared_per_block=0)


ARCHITECTURES: dict[str, ArchLimits] = {
    "7.0": _volta("7.0"),
    "7.2": _volta("7.2"),
    "7.5": ArchLimits("7.5", 32, 16, _CARVEOUTS_TURING, 64 * KB, shared_mem_unit=256, reserved_shared_per_block=0),
    "8.0": ArchLimits("8.0", 64, 32, _CARVEOUTS_GA100, 163 * KB),
    "8.6": ArchLimits("8.6", 48, 16, _CARVEOUTS_100K, 99 * KB),
    "8.7": ArchLimits("8.7", 48, 16, _CARVEOUTS_GA100, 163 * KB),
    "8.9": ArchLimits("8.9", 48, 24, _CARVEOUTS_100K, 99 * KB),
    "9.0": ArchLimits("9.0", 64, 32, _CARVEOUTS_228K, 227 * KB),
    "10.0": ArchLimits("10.0", 64, 32, _CARVEOUTS_228K, 227 * KB),
    # The CUDA 13 guide groups 10.3 with 10.0 ("10.x") in its shared-memory table.
    "10.3": ArchLimits("10.3", 64, 32, _CARVEOUTS_228K, 227 * KB),
    "11.0": ArchLimits("11.0", 64, 32, _CARVEOUTS_228K, 227 * KB),
    "12.0": ArchLimits("12.0", 48, 24, _CARVEOUTS_100K, 99 * KB),
}


def arch_limits(cc: str) -> ArchLimits:
    """The per-SM limits of compute capability `cc` ("9.0"); InvalidInput for one not in the table."""
    key = str(cc).strip()
    if key not in ARCHITECTURES:
        try:
            key = f"{float(key):.1f}"
        except ValueError:
            pass
    if key not in ARCHITECTURES:
        raise InvalidInput(
            f"unknown compute capability {cc!r}; the occupancy calculator knows {', '.join(ARCHITECTURES)}"
        )
    return ARCHITECTURES[key]


def _round_up(x: int, unit: int) -> int:
    return -(-x // unit) * unit


def _align_carveout(arch: ArchLimits, nbytes: int) -> int:
    """The smallest supported carveout >= nbytes (clipped to the largest)."""
    index = bisect.bisect_left(arch.carveouts, nbytes)
    return arch.carveouts[min(index, len(arch.carveouts) - 1)]


def _requested_carveout(arch: ArchLimits, carveout: int | None) -> int:
    if carveout is None:
        return arch.shared_mem_per_sm
    carveout = _whole(carveout, "the carveout")
    if carveout < 0 or carveout > arch.shared_mem_per_sm:
        raise InvalidInput(
            f"carveout {carveout} B is outside 0..{arch.shared_mem_per_sm} B for CC {arch.cc} "
            f"(supported: {', '.join(str(c // KB) for c in arch.carveouts)} KB)"
        )
    # Like the driver, a preference between two supported sizes rounds up to the next one.
    return _align_carveout(arch, carveout)


def _block_limits(arch: ArchLimits, threads: int, registers: int, shared_mem: int, carveout: int) -> dict[str, int]:
    """Blocks per SM each resource allows (0: one block does not fit), with the carveout used and warps per block.

    Plain integer arithmetic, one launch at a time: `gemmlens occupancy` answers without importing numpy, and the
    sweeps (a few thousand points) call it per point.
    """
    warps = -(-threads // WARP_SIZE)
    limit_warps = arch.max_warps_per_sm // warps if threads <= arch.max_threads_per_block else 0

    regs_per_warp = _round_up(registers * WARP_SIZE, arch.register_unit)
    # The hardware checks the per-block register limit as if warps were spread over all sub-partitions.
    regs_fit = (
        regs_per_warp * _round_up(warps, arch.warp_allocation_granularity) <= arch.max_registers_per_block
        and registers <= arch.max_registers_per_thread
    )
    granularity = arch.warp_allocation_granularity
    warps_per_sm_by_regs = (arch.registers_per_sm // granularity) // max(regs_per_warp, 1) * granularity
    limit_regs = warps_per_sm_by_regs // warps if regs_fit else 0

    allocated = _round_up(shared_mem + arch.reserved_shared_per_block, arch.shared_mem_unit)
    sm_shared = carveout if carveout >= allocated else _align_carveout(arch, allocated)
    if shared_mem > arch.shared_mem_per_block_optin:
        limit_smem = 0
    else:
        limit_smem = sm_shared // allocated if allocated > 0 else arch.max_blocks_per_sm
    return {
        "warps": limit_warps,
        "registers": limit_regs,
        "shared_mem": limit_smem,
        "blocks": arch.max_blocks_per_sm,
        "carveout_used": sm_shared,
        "warps_per_block": warps,
    }


@dataclass(frozen=True)
class OccupancyResult:
    """Theoretical occupancy of one launch configuration on one compute capability."""

    cc: str
    threads_per_block: int
    registers_per_thread: int
    shared_mem_per_block: int
    occupancy_pct: float
    active_blocks_per_sm: int
    active_warps_per_sm: int
    max_warps_per_sm: int
    warps_per_block: int
    blocks_allowed_by: dict[str, int]
    limiters: list[str]
    carveout_used: int
    shared_mem_allocated_per_block: int
    registers_allocated_per_block: int
    unbounded: tuple[str, ...] = field(default=())

    def describe(self) -> str:
        """The binding limit(s) in words, e.g. "registers: 128 per thread allow 2 blocks of 256 threads"."""
        return "; ".join(self.describe_each())

    def describe_each(self) -> list[str]:
        """describe's words, one binding limit each."""
        return [self._describe_one(name) for name in self.limiters]

    def _describe_one(self, name: str) -> str:
        n = self.blocks_allowed_by[name]
        blocks = f"{n} block{'s' if n != 1 else ''} of {self.threads_per_block} threads"
        if name == "registers":
            return f"registers: {self.registers_per_thread} per thread allow {blocks}"
        if name == "warps":
            return f"warps: {self.warps_per_block} warps per block allow {blocks} in {self.max_warps_per_sm} warp slots"
        if name == "shared_mem":
            return (
                f"shared_mem: {self.shared_mem_allocated_per_block} B per block (with reserve and rounding) "
                f"allow {blocks} in a {self.carveout_used // KB} KB carveout"
            )
        return f"blocks: the SM holds at most {blocks}"

    def ncu_limits(self) -> dict[str, int]:
        """The block limits keyed by ncu's metric names (launch__occupancy_limit_*)."""
        return {NCU_LIMIT_METRICS[name]: self.blocks_allowed_by[name] for name in RESOURCES}

    def to_dict(self) -> dict:
        return {
            "cc": self.cc,
            "threads_per_block": self.threads_per_block,
            "registers_per_thread": self.registers_per_thread,
            "shared_mem_per_block": self.shared_mem_per_block,
            "occupancy_pct": self.occupancy_pct,
            "active_blocks_per_sm": self.active_blocks_per_sm,
            "active_warps_per_sm": self.active_warps_per_sm,
            "max_warps_per_sm": self.max_warps_per_sm,
            "blocks_allowed_by": dict(self.blocks_allowed_by),
            "limiters": list(self.limiters),
            "carveout_used": self.carveout_used,
            "shared_mem_allocated_per_block": self.shared_mem_allocated_per_block,
            "registers_allocated_per_block": self.registers_allocated_per_block,
            "limiter": self.describe(),
        }


def _whole(value: object, what: str) -> int:
    """`value` as an int when it is a whole number (an int, or a float such as ncu's 256.0); InvalidInput otherwise."""
    # numbers.Integral/Real: numpy's integer and float scalars register with them, so no numpy import is needed.
    whole = isinstance(value, numbers.Integral) and not isinstance(value, bool)
    if isinstance(value, numbers.Real) and not whole and not isinstance(value, bool):
        whole = math.isfinite(value) and float(value).is_integer()
    if not whole:
        raise InvalidInput(f"{what} must be a whole number, got {value!r}")
    return int(value)  # type: ignore[call-overload]


def _check_inputs(arch: ArchLimits, threads: object, registers: object, shared_mem: object) -> tuple[int, int, int]:
    """The launch as ints, checked against the architecture's limits."""
    threads = _whole(threads, "threads per block")
    registers = _whole(registers, "registers per thread")
    shared_mem = _whole(shared_mem, "shared memory per block")
    if threads < 1 or threads > arch.max_threads_per_block:
        raise InvalidInput(f"threads per block must be 1..{arch.max_threads_per_block} (got {threads})")
    if registers < 1 or registers > arch.max_registers_per_thread:
        raise InvalidInput(f"registers per thread must be 1..{arch.max_registers_per_thread} (got {registers})")
    if shared_mem < 0 or shared_mem > arch.shared_mem_per_block_optin:
        raise InvalidInput(
            f"shared memory per block must be 0..{arch.shared_mem_per_block_optin} B on CC {arch.cc} "
            f"(the opt-in maximum; got {shared_mem})"
        )
    return threads, registers, shared_mem


def theoretical_occupancy(
    cc: str,
    threads_per_block: int,
    registers_per_thread: int,
    shared_mem_per_block: int,
    carveout: int | None = None,
) -> OccupancyResult:
    """Theoretical occupancy of a launch; `shared_mem_per_block` excludes the driver's 1 KB reserve.

    `carveout` is the shared-memory configuration in bytes (None: the largest). Raises InvalidInput for
    unknown CCs and for configurations where not even one block fits.
    """
    arch = arch_limits(cc)
    threads_per_block, registers_per_thread, shared_mem_per_block = _check_inputs(
        arch, threads_per_block, registers_per_thread, shared_mem_per_block
    )
    requested = _requested_carveout(arch, carveout)
    limits = _block_limits(arch, threads_per_block, registers_per_thread, shared_mem_per_block, requested)
    allowed = {name: limits[name] for name in RESOURCES}
    warps = limits["warps_per_block"]
    regs_per_warp = _round_up(registers_per_thread * WARP_SIZE, arch.register_unit)
    if allowed["registers"] == 0:
        raise InvalidInput(
            f"{registers_per_thread} registers per thread x {threads_per_block} threads need "
            f"{regs_per_warp * _round_up(warps, arch.warp_allocation_granularity)} registers per block "
            f"(allocated per warp in units of {arch.register_unit}); CC {arch.cc} allows "
            f"{arch.max_registers_per_block}: use fewer threads or registers"
        )
    unbounded = ()
    allocated = _round_up(shared_mem_per_block + arch.reserved_shared_per_block, arch.shared_mem_unit)
    if allocated == 0:
        unbounded = ("shared_mem",)
    active = min(allowed.values())
    limiters = [name for name in RESOURCES if allowed[name] == active and name not in unbounded]
    return OccupancyResult(
        cc=arch.cc,
        threads_per_block=threads_per_block,
        registers_per_thread=registers_per_thread,
        shared_mem_per_block=shared_mem_per_block,
        occupancy_pct=100.0 * active * warps / arch.max_warps_per_sm,
        active_blocks_per_sm=active,
        active_warps_per_sm=active * warps,
        max_warps_per_sm=arch.max_warps_per_sm,
        warps_per_block=warps,
        blocks_allowed_by=allowed,
        limiters=limiters,
        carveout_used=limits["carveout_used"],
        shared_mem_allocated_per_block=allocated,
        registers_allocated_per_block=regs_per_warp * warps,
        unbounded=unbounded,
    )


def occupancy_from_ncu(metrics: dict[str, float], cc: str) -> OccupancyResult:
    """Recompute occupancy from one ncu launch's `launch__*` metrics (for comparing with ncu's own limits).

    Uses launch__block_size, launch__registers_per_thread, launch__shared_mem_per_block_static and
    _dynamic (ncu lists the driver's reserve separately) and launch__shared_mem_config_size as carveout.
    """
    try:
        threads = int(metrics[MN.BLOCK_SIZE])
        registers = int(metrics[MN.REGISTERS])
    except KeyError as exc:
        raise InvalidInput(f"ncu metrics lack {exc.args[0]}; profile with the LaunchStats section") from None
    shared = int(metrics.get(MN.SMEM_STATIC, 0)) + int(metrics.get(MN.SMEM_DYNAMIC, 0))
    carveout = metrics.get(MN.SMEM_CONFIG_SIZE)
    return theoretical_occupancy(cc, threads, registers, shared, None if carveout is None else int(carveout))


def _sweep_frame(
    arch: ArchLimits, column: str, values: range, threads, registers, shared_mem, carveout: int
) -> pd.DataFrame:
    """One curve: `column` takes each of `values`; threads, registers and shared_mem are each a fixed int or the
    same `values` (the swept input)."""
    import pandas as pd

    rows = []
    for value in values:
        t, r, s = (value if x is values else x for x in (threads, registers, shared_mem))
        limits = _block_limits(arch, t, r, s, carveout)
        active = min(limits[name] for name in RESOURCES)
        active_warps = active * limits["warps_per_block"]
        rows.append(
            (value, active, active_warps, 100.0 * active_warps / arch.max_warps_per_sm, *(limits[n] for n in RESOURCES))
        )
    columns = [column, "active_blocks_per_sm", "active_warps_per_sm", "occupancy_pct"]
    return pd.DataFrame.from_records(rows, columns=columns + [f"limit_{name}" for name in RESOURCES])


def sweep_threads(
    cc: str, registers_per_thread: int, shared_mem_per_block: int, carveout: int | None = None
) -> pd.DataFrame:
    """Occupancy for every block size that is a multiple of 32, up to the per-block maximum."""
    arch = arch_limits(cc)
    threads = range(WARP_SIZE, arch.max_threads_per_block + 1, WARP_SIZE)
    return _sweep_frame(
        arch,
        "threads_per_block",
        threads,
        threads,
        registers_per_thread,
        shared_mem_per_block,
        _requested_carveout(arch, carveout),
    )


def sweep_registers(
    cc: str, threads_per_block: int, shared_mem_per_block: int, carveout: int | None = None
) -> pd.DataFrame:
    """Occupancy for every register count 1..255 (0 where one block no longer fits)."""
    arch = arch_limits(cc)
    registers = range(1, arch.max_registers_per_thread + 1)
    return _sweep_frame(
        arch,
        "registers_per_thread",
        registers,
        threads_per_block,
        registers,
        shared_mem_per_block,
        _requested_carveout(arch, carveout),
    )


def sweep_shared_mem(
    cc: str, threads_per_block: int, registers_per_thread: int, carveout: int | None = None
) -> pd.DataFrame:
    """Occupancy for every shared-memory size per block in allocation units, 0 up to the opt-in maximum."""
    arch = arch_limits(cc)
    shared = range(0, arch.shared_mem_per_block_optin + 1, arch.shared_mem_unit)
    return _sweep_frame(
        arch,
        "shared_mem_per_block",
        shared,
        threads_per_block,
        registers_per_thread,
        shared,
        _requested_carveout(arch, carveout),
    )


def sweep_all(
    cc: str,
    threads_per_block: int,
    registers_per_thread: int,
    shared_mem_per_block: int,
    carveout: int | None = None,
) -> dict[str, pd.DataFrame]:
    """The three sweeps around one kernel's configuration, keyed "threads", "registers", "shared_mem"."""
    return {
        "threads": sweep_threads(cc, registers_per_thread, shared_mem_per_block, carveout),
        "registers": sweep_registers(cc, threads_per_block, shared_mem_per_block, carveout),
        "shared_mem": sweep_shared_mem(cc, threads_per_block, registers_per_thread, carveout),
    }


def supported_ccs() -> list[str]:
    """Compute capabilities the calculator knows, oldest first."""
    return sorted(ARCHITECTURES, key=lambda c: tuple(int(p) for p in c.split(".")))


__all__ = [
    "ARCHITECTURES",
    "ArchLimits",
    "NCU_LIMIT_METRICS",
    "OccupancyResult",
    "arch_limits",
    "occupancy_from_ncu",
    "supported_ccs",
    "sweep_all",
    "sweep_registers",
    "sweep_shared_mem",
    "sweep_threads",
    "theoretical_occupancy",
]
