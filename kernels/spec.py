"""KernelSpec: what one catalog entry says about a kernel, with the rules derived from it (launch grid, size and
GPU refusals, source text). kernels.catalog holds the entries and re-exports these names."""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Literal

from kernels.operations import OPERATIONS, Operation, OperationSpec
from kernels.sources import inline_local_includes

# The split-count rule: each split at least MIN_SLICES_PER_SPLIT BK-deep K slices, DEEP_SLICES_PER_SPLIT where that
# still fills the GPU (a configuration may set params["SPLIT_DEEP_SLICES"]).
from kernels.splitk_policy import DEEP_SLICES_PER_SPLIT, split_count_for, stream_k_blocks
from profiling.shape import Shape

SRC_DIR = Path(__file__).resolve().parent / "src"
# SMs of an H100 SXM: the persistent grid where no device is at hand (the runner passes the GPU's own count).
DEFAULT_SM_COUNT = 132
# sgemm_regdb_streamk numbers the launch's tiles x K slices in a 32-bit int (kernels/src/v9_splitk.cu).
STREAM_K_MAX_SLICES = 2**31
# The kernel a split-K operation launches first, to zero C (defined in the split-K kernel's own source).
SPLIT_K_ZERO_ENTRY = "splitk_zero_c"
# Where a configuration pads N (KernelSpec.pads_n) and N % 4 != 0, the operation's first launch zeroes a copy of C and
# writes a copy of B, both with rows of N rounded up to a multiple of 4 floats, and its last copies C back
# (kernels/src/v9_splitk.cu).
SPLIT_K_PAD_ENTRY = "splitk_zero_c_pad_b"
SPLIT_K_UNPAD_ENTRY = "splitk_unpad_c"
# Every kernel a split-K operation launches beside the GEMM itself (KernelSpec.helper_entries picks a configuration's).
SPLIT_K_HELPER_ENTRIES = (SPLIT_K_ZERO_ENTRY, SPLIT_K_PAD_ENTRY, SPLIT_K_UNPAD_ENTRY)
# The split-K sources built with GEMMLENS_PDL on (kernels/src/pdl.cuh): each kernel of their operations waits for the
# launch before it in its own code, so the launches after an operation's first are programmatic dependent launches on
# GPUs of PROGRAMMATIC_MIN_CC or newer (KernelSpec.programmatic_launches, profiling.gpu.pdl). On an H200 that took
# 0.2-8.8 % off the operations' time (results/h200-2026-11-30/pdl/).
PROGRAMMATIC_SOURCES = ("v9_splitk.cu",)
PROGRAMMATIC_MIN_CC = "9.0"

# The id suffixes of configurations that pad N where N % 4 != 0 (KernelSpec.pads_n): copies of B and C, of C alone
# (KernelSpec.pads_b false), with SPLIT_K_ZERO_ENTRY zeroing C's copy, or of B alone (KernelSpec.pads_c false), with
# SPLIT_K_PAD_ENTRY zeroing C itself and no copy back.
PADDED_N_SUFFIX = "-pad"
PADDED_C_SUFFIX = "-padc"
PADDED_B_SUFFIX = "-padb"
# ... and of padded stream-K configurations whose multiply copies each completed tile of C's copy back itself
# (KernelSpec.tile_copy), after PADDED_N_SUFFIX.
TILE_COPY_SUFFIX = "-tcopy"
# The id part of configurations with serial splits (KernelSpec.serial): split 0 stores, the others add after it.
SERIAL_SUFFIX = "-ser"
# ... and of those whose split 0 zeroes its tile of C first, after which every split adds (params["ZERO_FIRST"]).
ZERO_FIRST_SUFFIX = "-zf"
# The id suffix of stream-K configurations run in one launch (KernelSpec.fused): C zeroed, and where N % 4 != 0 B's and
# C's copies written and C copied back, by the kernel itself between barriers over its grid.
FUSED_SUFFIX = "-fused"
# The tiles a serial split-K launch may have: its per-tile arrival counts (kernels/src/v9_splitk.cu).
SERIAL_MAX_TILES = 16384

GridOrder = Literal["rows_x", "cols_x"]
OperandArgs = Literal["pointers", "tensor_maps", "tensor_maps_cd"]
LibraryCall = Literal["matmul", "addmm"]


@dataclass(frozen=True)
class KernelSpec:
    """One catalog entry.

    `tile_m` x `tile_n` is the part of C one thread block computes; `grid_order` says which grid axis
    walks the rows of C ("rows_x": blockIdx.x walks rows, as the design document's kernels do).
    `entry` is the kernel's name expression (a template instantiation or an extern "C" name);
    Library entries (`is_reference`) have no source; `library_call` says what they run: "matmul" is cupy.matmul
    (for float16 inputs it writes a float16 product and reads no C), "addmm" the whole HGEMM AddMM in one
    cublasGemmEx call (profiling/gpu/cublas_addmm.py).
    `arch` ("sm_90a") names the one target an architecture-specific kernel is built for, ahead of time with nvcc;
    it never runs on another GPU (`device_problem`). `operand_args` "tensor_maps" passes A and B as TMA tensor
    maps (profiling/gpu/tensor_map.py) instead of pointers; "tensor_maps_cd" passes C and D as tensor maps too
    (kernel arguments: map_a, map_b, map_c, map_d, M, N, K, alpha, beta). A `persistent` kernel is launched with one
    block per SM (at most one per tile), each block looping over the tiles itself; with `cluster` > 1 its blocks run
    in thread-block clusters of that many (the source's __cluster_dims__), which take `cluster` vertically adjacent
    tiles together, so the grid is a multiple of `cluster`. A `split_k` kernel splits K over
    gridDim.z blocks per tile (`split_count`), each adding its partial product into C, which a first launch
    (SPLIT_K_ZERO_ENTRY) zeroes: one operation of two launches. A `cluster_split_k` kernel splits K over exactly
    params["SPLITS"] blocks per tile on gridDim.z that form one thread-block cluster (the source's
    __cluster_dims__(1, 1, SPLITS)) and sum their partial tiles in distributed shared memory: one launch, nothing
    zeroed first. `min_cc` ("9.0") is the oldest compute capability a portable kernel runs on, and `min_cc_needs`
    says what it needs from it (thread-block clusters). `narrow_entry` names the kernel launched instead of `entry` where
    N % 4 != 0 (`launched_at`). An entry that `chooses_at_launch` (sgemm-auto) is
    resolved by the runner, per GPU and shape, to another kernel's tuning configuration (kernels.auto); its own
    source and entry are only what it runs where nothing else is known (a large square shape).
    """

    id: str
    title: str
    adds: str
    operation: Operation
    source: str | None
    entry: str | None
    block: tuple[int, int] = (1, 1)
    tile_m: int = 1
    tile_n: int = 1
    grid_order: GridOrder = "cols_x"
    dtype: str = "float32"
    params: dict[str, int] = field(default_factory=dict)
    multiple_of: int = 1
    dynamic_smem_bytes: int = 0
    backend: Literal["nvrtc", "nvcc"] = "nvrtc"
    design_doc: str = ""
    previous: str | None = None
    is_reference: bool = False
    library_call: LibraryCall = "matmul"
    group: str = "ladder"
    arch: str | None = None
    operand_args: OperandArgs = "pointers"
    persistent: bool = False
    cluster: int = 1
    split_k: bool = False
    cluster_split_k: bool = False
    min_cc: str | None = None
    min_cc_needs: str = ""
    chooses_at_launch: bool = False
    narrow_entry: str | None = None
    # Bytes of the module's own `__device__` arrays (wgmma-streamk's partial sums and flags), held on the GPU once
    # the module is loaded; ptxas reports them as "bytes gmem" (a test checks the two agree).
    module_global_bytes: int = 0

    def launched_at(self, n: int) -> KernelSpec:
        """The entry that runs when C has n columns: `narrow_entry`, where one is named and n % 4 != 0 (B's rows are
        then not 16-byte aligned and a kernel of its own copies them), else this one."""
        return replace(self, entry=self.narrow_entry) if self.narrow_entry and n % 4 else self

    @property
    def pads_n(self) -> bool:
        """Whether, where N % 4 != 0, this split-K configuration works on copies of its operands with rows of N
        rounded up to a multiple of 4 floats: of B and C (params["PAD_N"]: its 16-byte kernel at the rounded N, C
        copied back at the end), of C alone (params["PAD_C"]: its narrow_entry copies B one column per thread and adds
        into C's copy, copied back) or of B alone (params["PAD_B"]: its narrow_entry copies B's copy in 16-byte pieces
        and adds into C where it lies)."""
        return self.split_k and any(self.params.get(p) for p in ("PAD_N", "PAD_C", "PAD_B"))

    @property
    def pads_b(self) -> bool:
        """Whether a configuration that pads N copies B (params["PAD_N"] or ["PAD_B"], or a fused one: `fused`)."""
        return (self.pads_n and bool(self.params.get("PAD_N") or self.params.get("PAD_B"))) or self.fused

    @property
    def pads_c(self) -> bool:
        """Whether a configuration that pads N adds into a copy of C, copied back at the end (params["PAD_N"] or
        ["PAD_C"], or a fused one), not into C where it lies."""
        return (self.pads_n and not self.params.get("PAD_B")) or self.fused

    @property
    def padded_suffix(self) -> str:
        """The id suffix of a configuration that pads N (PADDED_N_SUFFIX for B and C, PADDED_C_SUFFIX for C alone,
        PADDED_B_SUFFIX for B alone), else ""."""
        if not self.pads_n:
            return ""
        if not self.pads_c:
            return PADDED_B_SUFFIX
        if self.tile_copy:
            return PADDED_N_SUFFIX + TILE_COPY_SUFFIX
        return PADDED_N_SUFFIX if self.pads_b else PADDED_C_SUFFIX

    @property
    def tile_copy(self) -> bool:
        """Whether this padded stream-K configuration's multiply copies C's copy back itself (params["TILE_COPY"]):
        the block that completes a tile copies it into C, so no launch follows the multiply. Its arguments are the
        fused kernel's, ending in B's and C's copies."""
        return self.stream_k and self.pads_n and bool(self.params.get("TILE_COPY"))

    @property
    def launches_copy_back(self) -> bool:
        """Whether the operation ends in a launch copying C's padded copy back into C (SPLIT_K_UNPAD_ENTRY)."""
        return self.pads_c and not self.fused and not self.tile_copy

    def programmatic_launches(self, cc: str) -> bool:
        """Whether, on a GPU of compute capability `cc` ("9.0"), this split-K operation's launches after its first are
        programmatic dependent launches: its source waits for the launch before (PROGRAMMATIC_SOURCES) and the GPU
        has griddepcontrol (PROGRAMMATIC_MIN_CC). A fused operation is one cooperative launch."""
        return (
            self.split_k
            and not self.fused
            and self.source in PROGRAMMATIC_SOURCES
            and _cc_tuple(cc) >= _cc_tuple(PROGRAMMATIC_MIN_CC)
        )

    def padded_n(self, n: int) -> int | None:
        """The row length of the padded copies at n columns (n rounded up to a multiple of 4) where the
        configuration pads N (`pads_n`, or a fused one, which writes the copies itself) and n % 4 != 0, else None."""
        return -(-n // 4) * 4 if (self.pads_n or self.fused) and n % 4 else None

    @property
    def serial(self) -> bool:
        """Whether this split-K configuration's splits are serial (params["SERIAL"]): split 0 of each tile stores its
        partial tile and the others add theirs once it is there, so C is not zeroed by a launch first."""
        return self.split_k and bool(self.params.get("SERIAL"))

    @property
    def helper_entries(self) -> tuple[str, ...]:
        """The kernels of its own module a split-K operation may launch beside its entry: the zeroing of C, and where
        it pads N the padding launch of B and the copy back (which of them run at a shape: operation_entries)."""
        if not self.split_k or self.fused:
            return ()
        unpad = (SPLIT_K_UNPAD_ENTRY,) if self.launches_copy_back else ()
        if self.serial:
            return unpad
        if self.pads_n:
            return (SPLIT_K_ZERO_ENTRY, *((SPLIT_K_PAD_ENTRY,) if self.pads_b else ()), *unpad)
        return (SPLIT_K_ZERO_ENTRY,)

    def operation_entries(self, n: int) -> tuple[str, ...]:
        """The kernels the operation at n columns launches, in order: for a split-K kernel the zeroing launch first
        (which also pads B where it pads B; none where its splits are serial), the kernel that runs at n
        (launched_at), and where it pads C's rows a launch that copies C back (launches_copy_back)."""
        if not self.split_k or self.fused:
            return (self.entry,) if self.entry else ()
        entry = self.launched_at(n).entry or ""
        if self.serial:
            return (entry, SPLIT_K_UNPAD_ENTRY) if self.padded_n(n) else (entry,)
        if self.padded_n(n):
            first = SPLIT_K_PAD_ENTRY if self.pads_b else SPLIT_K_ZERO_ENTRY
            return (first, entry, SPLIT_K_UNPAD_ENTRY) if self.launches_copy_back else (first, entry)
        return (SPLIT_K_ZERO_ENTRY, entry)

    @property
    def functions(self) -> tuple[str, ...]:
        """The function names ncu prints for this kernel's launches, without template arguments: its entry's and
        its N % 4 != 0 twin's ('sgemm_tiled<16>' -> 'sgemm_tiled')."""
        return tuple(dict.fromkeys(e.split("<", 1)[0].strip() for e in (self.entry, self.narrow_entry) if e))

    @property
    def uses_tensor_maps(self) -> bool:
        """Whether TMA tensor maps, not pointers, carry the operands (A and B at least)."""
        return self.operand_args != "pointers"

    @property
    def threads_per_block(self) -> int:
        return self.block[0] * self.block[1]

    @property
    def operation_spec(self) -> OperationSpec:
        """This kernel's operation: reference, element sizes, tolerance, compute ceiling, FLOP count."""
        return OPERATIONS[self.operation]

    @property
    def is_tensor_core(self) -> bool:
        return self.operation_spec.is_tensor_core

    @property
    def source_path(self) -> Path | None:
        return SRC_DIR / self.source if self.source else None

    def grid(self, m: int, n: int, sm_count: int | None = None) -> tuple[int, int]:
        """Launch grid (x, y) covering an m x n output; for a persistent kernel (x, 1) with x the GPU's SM count
        (`sm_count`, DEFAULT_SM_COUNT when not given) or the number of tiles, whichever is smaller; with clusters,
        x counts whole clusters of `cluster` blocks, each taking `cluster` vertically adjacent tiles."""
        rows, cols = math.ceil(m / self.tile_m), math.ceil(n / self.tile_n)
        if self.persistent:
            units = math.ceil(rows / self.cluster) * cols
            return (self.cluster * max(1, min(units, (sm_count or DEFAULT_SM_COUNT) // self.cluster)), 1)
        return (rows, cols) if self.grid_order == "rows_x" else (cols, rows)

    def split_count(self, m: int, n: int, k: int, sm_count: int | None = None) -> int:
        """K splits (gridDim.z) of a split-K kernel at m x n x k; 1 for every other kernel.

        kernels.splitk_policy.split_count_for over this launch's tiles and BK-deep K slices, with MIN_BLOCKS blocks
        per SM, on `sm_count` SMs (DEFAULT_SM_COUNT when not given); params["SPLIT_DEEP_SLICES"], where a
        configuration sets it, replaces the preferred depth of a split (DEEP_SLICES_PER_SPLIT), and
        params["SPLIT_FILL"] splits for one block per SM instead. A cluster split-K kernel's count is its cluster
        size, params["SPLITS"], at every shape (a template parameter of its source)."""
        if self.cluster_split_k:
            return self.params["SPLITS"]
        if not self.split_k or self.stream_k:
            return 1
        gx, gy = self.grid(m, n)
        return split_count_for(
            tiles=gx * gy,
            slices=math.ceil(k / self.params.get("BK", 1)),
            sm_count=sm_count or DEFAULT_SM_COUNT,
            blocks_per_sm=max(1, self.params.get("MIN_BLOCKS", 1)),
            deep_slices=self.params.get("SPLIT_DEEP_SLICES", DEEP_SLICES_PER_SPLIT),
            one_block_per_sm=bool(self.params.get("SPLIT_FILL")),
        )

    @property
    def stream_k(self) -> bool:
        """Whether this split-K configuration is a stream-K one (params["STREAM_K"]): one wave of blocks that share
        every tile's K slices equally (kernels.splitk_policy.stream_k_blocks), not a fixed split per tile."""
        return self.split_k and bool(self.params.get("STREAM_K"))

    @property
    def fused(self) -> bool:
        """Whether this stream-K configuration is one launch (params["FUSED"]): it zeroes C itself, and where N % 4 != 0
        writes B's and C's copies padded to a multiple of 4 columns and copies C back, between barriers over its
        grid, which is launched cooperatively so that every block is resident. Its arguments end in the two copies."""
        return self.stream_k and bool(self.params.get("FUSED"))

    def tile_slices(self, m: int, n: int, k: int) -> int:
        """The K slices of all output tiles at m x n x k (tiles x ceil(k / BK)): what a stream-K launch shares out."""
        gx, gy = self.grid(m, n)
        return gx * gy * math.ceil(k / self.params["BK"])

    def launch_grid(self, m: int, n: int, k: int, sm_count: int | None = None) -> tuple[int, int, int]:
        """The full launch grid (x, y, z): `grid` plus the K splits on z (1 for all but split-K kernels); a stream-K
        launch is (blocks, 1, 1)."""
        if self.stream_k:
            blocks = stream_k_blocks(
                slices=self.tile_slices(m, n, k),
                sm_count=sm_count or DEFAULT_SM_COUNT,
                blocks_per_sm=max(1, self.params.get("MIN_BLOCKS", 1)),
            )
            return (blocks, 1, 1)
        return (*self.grid(m, n, sm_count), self.split_count(m, n, k, sm_count))

    def size_problem(self, m: int, n: int, k: int) -> str | None:
        """Why this kernel cannot run m x n x k, or None when it can."""
        if self.stream_k:
            slices = self.tile_slices(m, n, k)
            if slices >= STREAM_K_MAX_SLICES:
                return (
                    f"{self.id} counts its tiles' K slices in 32 bits, and {Shape(m, n, k).label} has {slices:,} of "
                    f"them (the limit is {STREAM_K_MAX_SLICES - 1:,}); pick a v9-regdb or split-K configuration"
                )
        if self.serial and (tiles := math.prod(self.grid(m, n))) > SERIAL_MAX_TILES:
            return (
                f"{self.id} counts the splits of at most {SERIAL_MAX_TILES:,} tiles, and {Shape(m, n, k).label} has "
                f"{tiles:,}; run {self.id.replace(ZERO_FIRST_SUFFIX if self.params.get('ZERO_FIRST') else SERIAL_SUFFIX, '', 1)}, "
                "which zeroes C first"
            )
        if self.tile_copy and (tiles := math.prod(self.grid(m, -(-n // 4) * 4))) > SERIAL_MAX_TILES:
            return (
                f"{self.id} counts the slices added to at most {SERIAL_MAX_TILES:,} tiles, and {Shape(m, n, k).label} "
                f"has {tiles:,}; run {self.id.removesuffix(TILE_COPY_SUFFIX)}, which copies C back in a launch of its own"
            )
        if self.pads_n and n % 4 == 0:
            unpadded = self.id.removesuffix(self.padded_suffix)
            return (
                f"{self.id} differs from {unpadded} only where N % 4 != 0 (it then pads N to a multiple of 4); "
                f"at N = {n} run {unpadded}"
            )
        if self.multiple_of > 1 and any(d % self.multiple_of for d in (m, n, k)):
            fitting = Shape(self._round_up(m), self._round_up(n), self._round_up(k))
            return (
                f"{self.id} needs M, N and K to be multiples of {self.multiple_of} "
                f"(got {Shape(m, n, k).label}); pick sizes such as {fitting.label}"
            )
        return None

    def device_problem(self, cc: str) -> str | None:
        """Why this kernel cannot run on a GPU of compute capability `cc` ("9.0"), or None when it can: a kernel
        built for one architecture-specific target (sm_90a) runs on that compute capability only, one with a
        `min_cc` on that one or newer."""
        if self.min_cc is not None and _cc_tuple(cc) < _cc_tuple(self.min_cc):
            return (
                f"{self.id} needs compute capability {self.min_cc} or newer ({self.min_cc_needs}); "
                f"this GPU is compute capability {cc}: pick another kernel"
            )
        if self.arch is None:
            return None
        digits = self.arch.removeprefix("sm_").rstrip("a")
        needed = f"{digits[:-1]}.{digits[-1]}"  # "sm_90a" -> "9.0"
        if cc.strip() == needed:
            return None
        return (
            f"{self.id} is built for {self.arch} (wgmma and TMA exist on compute capability {needed} only); "
            f"this GPU is compute capability {cc}: pick another kernel"
        )

    def _round_up(self, d: int) -> int:
        return math.ceil(d / self.multiple_of) * self.multiple_of

    def read_source(self) -> str:
        """The CUDA source text that is compiled, our own headers inlined (kernels.sources); "" for library kernels."""
        return inline_local_includes(self.source_path) if self.source_path else ""

    def to_dict(self) -> dict:
        data = asdict(self)
        data["threads_per_block"] = self.threads_per_block
        return data


def _cc_tuple(cc: str) -> tuple[int, ...]:
    """A compute capability ("9.0", "10.0") as numbers that compare in order; text that is not one compares lowest."""
    try:
        return tuple(int(part) for part in cc.strip().split("."))
    except ValueError:
        return (0,)
