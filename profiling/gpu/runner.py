"""GPU side of the worker: compile catalog kernels with CuPy, verify them against cuBLAS and time them.

Only the worker child process imports this module; it creates a CUDA context and may die with it.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from dataclasses import replace
from typing import Any

import numpy as np

from kernels.auto import auto_choice
from kernels.operations import OPERATIONS
from kernels.registry import get_kernel
from kernels.spec import DEFAULT_SM_COUNT, SPLIT_K_PAD_ENTRY, SPLIT_K_UNPAD_ENTRY, SPLIT_K_ZERO_ENTRY, KernelSpec
from kernels.tuning import tunable_bases, tuned_choice
from profiling.gpu.bfloat16 import bfloat16_bits_to_float32, to_bfloat16_bits
from profiling.gpu.compile import CompiledKernel, compile_kernel, max_active_blocks
from profiling.gpu.device import Nvml, NvmlSampler, device_info
from profiling.gpu.fp32_cupy import cupy
from profiling.gpu.hold import LaunchHold
from profiling.gpu.jobs import BenchSettings, check_fits, tolerance_for
from profiling.gpu.timing import Hold, rested_rounds, summarize, time_interleaved, time_launches, time_rounds
from profiling.gpu.verify import Check, check_output
from profiling.identity import nvtx_range_name
from profiling.runs.records import BenchResult, TimeSummary
from profiling.shape import Shape, tflops

# One launch (or the operation's launches) on the worker's stream.
Launch = Callable[[], None]

STICKY_CUDA_ERRORS = (
    "cudaErrorIllegalAddress",
    "cudaErrorLaunchFailure",
    "cudaErrorMisalignedAddress",
    "cudaErrorIllegalInstruction",
    "cudaErrorAssert",
    "cudaErrorHardwareStackError",
    "cudaErrorInvalidPc",
    "cudaErrorLaunchTimeout",
    "CUDA_ERROR_ILLEGAL_ADDRESS",
    "CUDA_ERROR_LAUNCH_FAILED",
    "CUDA_ERROR_MISALIGNED_ADDRESS",
    "CUDA_ERROR_ILLEGAL_INSTRUCTION",
)


def is_sticky(error: BaseException) -> bool:
    """True when a CUDA error leaves the context unusable, so the worker must be restarted."""
    text = f"{type(error).__name__}: {error}"
    return any(name in text for name in STICKY_CUDA_ERRORS)


def to_input(xp: Any, dtype: str, x: Any) -> Any:
    """float32 values `x` as an operation's input type (kernels.operations InputDtype): float32 as is, float16 by
    astype, bfloat16 as the uint16 bits of its round-to-nearest-even value (no CuPy dtype for it)."""
    if dtype == "bfloat16":
        return to_bfloat16_bits(xp, x)
    return x.astype(xp.float16) if dtype == "float16" else x


def as_float32(xp: Any, dtype: str, x: Any) -> Any:
    """An input of type `dtype` (as to_input holds it) as the float32 values it stands for, exactly."""
    return bfloat16_bits_to_float32(xp, x) if dtype == "bfloat16" else x.astype(xp.float32)


class Problem:
    """Inputs, poisoned output and reference for one shape and operation, reused across kernels."""

    def __init__(self, operation: str, shape: Shape, seed: int) -> None:
        rng = cupy.random.default_rng(seed)
        m, n, k = shape.m, shape.n, shape.k
        dtype = OPERATIONS[operation].input_dtype
        a = to_input(cupy, dtype, rng.uniform(-1.0, 1.0, (m, k), dtype=cupy.float32))
        b = to_input(cupy, dtype, rng.uniform(-1.0, 1.0, (k, n), dtype=cupy.float32))
        c = None if operation == "sgemm" else rng.uniform(-1.0, 1.0, (m, n), dtype=cupy.float32)
        self._set_inputs(cupy, operation, shape, a, b, c)
        cupy.cuda.Device().synchronize()

    @classmethod
    def from_arrays(cls, xp: Any, operation: str, shape: Shape, a: Any, b: Any, c: Any = None) -> Problem:
        """A problem on given inputs in array module `xp` (numpy in the CPU tests of the verification)."""
        problem = cls.__new__(cls)
        problem._set_inputs(xp, operation, shape, a, b, c)
        return problem

    def _set_inputs(self, xp: Any, operation: str, shape: Shape, a: Any, b: Any, c: Any) -> None:
        self.xp, self.operation, self.shape = xp, operation, shape
        self.a, self.b, self.c = a, b, c
        self.out = xp.empty((shape.m, shape.n), dtype=xp.float32)
        self.half_out: Any = None  # cuBLAS HGEMM's float16 output, allocated when the reference first runs
        self.tensor_maps: dict[str, tuple[Any, ...]] = {}  # TMA maps of A and B (C, D) per kernel id, built once
        # B's and C's padded copies (padded_copies), made when first used.
        self._padded_b: Any = None
        self._padded_c: Any = None
        self._padded_n = 0
        if operation == "sgemm":
            self.ref = xp.matmul(a, b)
        else:
            self.alpha, self.beta = np.float32(1.5), np.float32(-0.5)
            # float32 product of the same half (or bfloat16) inputs: the precision the tensor cores accumulate in.
            dtype = OPERATIONS[operation].input_dtype
            self.ref = self.alpha * xp.matmul(as_float32(xp, dtype, a), as_float32(xp, dtype, b))
            self.ref += self.beta * c

    def launcher(
        self,
        compiled: CompiledKernel | None,
        spec: KernelSpec,
        sm_count: int | None = None,
        programmatic: bool = False,
    ) -> Callable[[], None]:
        """A zero-argument callable that runs the kernel (or the cuBLAS reference) once; `sm_count` sizes the grid
        of a persistent kernel (one block per SM). `programmatic`: whether a split-K operation's launches after its
        first are programmatic dependent launches (profiling.gpu.pdl): the spec's KernelSpec.programmatic_launches
        on this GPU, as the runner passes it; never for kernels that do not wait for the launch before them."""
        m, n, k = self.shape.m, self.shape.n, self.shape.k
        if compiled is None:
            if self.operation == "sgemm":
                return lambda: cupy.matmul(self.a, self.b, out=self.out)
            if spec.library_call == "addmm":
                from profiling.gpu.cublas_addmm import addmm_in_place

                dtype = OPERATIONS[self.operation].input_dtype
                return addmm_in_place(self.a, self.b, self.out, float(self.alpha), float(self.beta), dtype)
            if self.half_out is None:
                self.half_out = cupy.empty((m, n), dtype=cupy.float16)
            half_out = self.half_out
            return lambda: cupy.matmul(self.a, self.b, out=half_out)
        if spec.fused:
            return self.fused_launch(compiled.function, spec, spec.launch_grid(m, n, k, sm_count))
        if not spec.split_k:
            return self.kernel_launch(compiled, spec, sm_count)
        # The splits add into C: the operation is the zeroing launch and the kernel, timed as one (serial splits:
        # the kernel alone, split 0 storing what the others add to, or zeroing its tile before they add).
        before, after = self.split_k_launches(compiled, spec, sm_count, programmatic)
        # The operation's first launch is never programmatic: it follows whatever ran before it, and serial splits,
        # which come first, do not wait.
        multiply = self.kernel_launch(compiled, spec, sm_count, programmatic and before is not None)
        return split_k_operation(before, multiply, after)

    def kernel_launch(
        self, compiled: CompiledKernel, spec: KernelSpec, sm_count: int | None, programmatic: bool = False
    ) -> Launch:
        """The catalog kernel's own launch, without the launches a split-K operation makes around it (a fused one
        excepted: `fused_launch`); a programmatic dependent launch where `programmatic`."""
        m, n, k = self.shape.m, self.shape.n, self.shape.k
        grid = spec.launch_grid(m, n, k, sm_count)
        block = spec.block
        padded_n = spec.padded_n(n)
        if padded_n:
            b_padded, c_padded = self.padded_copies(padded_n, spec.pads_b, spec.pads_c)
            if spec.tile_copy:
                # The multiply copies C back itself: the fused kernel's arguments.
                args = self.copies_args(b_padded, c_padded)
            elif b_padded is None or c_padded is None:
                # One operand alone is padded: the kernel reads B, or adds into C, where it lies, and works out the
                # copy's row length from N.
                b, c = (self.b, c_padded) if b_padded is None else (b_padded, self.out)
                args = (self.a, b, c, np.int32(m), np.int32(n), np.int32(k))
            else:
                args = (self.a, b_padded, c_padded, np.int32(m), np.int32(padded_n), np.int32(k))
        elif self.operation == "sgemm":
            args = (self.a, self.b, self.out, np.int32(m), np.int32(n), np.int32(k))
        elif spec.operand_args == "tensor_maps_cd":
            args = (*self.operand_maps(spec), np.int32(m), np.int32(n), np.int32(k), self.alpha, self.beta)
        else:
            a, b = self.operand_maps(spec) if spec.uses_tensor_maps else (self.a, self.b)
            args = (a, b, self.c, self.out, np.int32(m), np.int32(n), np.int32(k), self.alpha, self.beta)
        return kernel_call(compiled.function, grid, block, args, spec.dynamic_smem_bytes, programmatic)

    def fused_launch(self, fn: Any, spec: KernelSpec, grid: tuple[int, int, int]) -> Launch:
        """The one launch of a fused stream-K operation (KernelSpec.fused): its arguments end in B's and C's padded
        copies where N % 4 != 0 (else B and C themselves, unused), and it is launched cooperatively, so that the
        barriers over its grid find every block resident (a grid that cannot be is refused by the driver)."""
        n = self.shape.n
        padded_n = spec.padded_n(n)
        b_padded, c_padded = self.padded_copies(padded_n, spec.pads_b, spec.pads_c) if padded_n else (self.b, self.out)
        args = self.copies_args(b_padded, c_padded)
        block, smem = spec.block, spec.dynamic_smem_bytes
        # Through the loaded function (cupy.cuda.Function): a RawKernel's own call passes the cooperative flag it was
        # compiled with, and compiling the module for cooperative groups would change the kernels' machine code.
        kernel = fn.kernel
        return lambda: kernel(grid, block, args, shared_mem=smem, enable_cooperative_groups=True)

    def copies_args(self, b_copy: Any, c_copy: Any) -> tuple[Any, ...]:
        """The arguments of a kernel that works on B's and C's padded copies itself (the fused and tile-copy stream-K
        kernels): A, B, C and M, N, K as they are, then the copies."""
        m, n, k = self.shape.m, self.shape.n, self.shape.k
        return (self.a, self.b, self.out, np.int32(m), np.int32(n), np.int32(k), b_copy, c_copy)

    def split_k_launches(
        self, compiled: CompiledKernel, spec: KernelSpec, sm_count: int | None, programmatic: bool = False
    ) -> tuple[Launch | None, Launch | None]:
        """The launches before and after a split-K multiply: C's zeroing (none for serial splits) and nothing after,
        or where N is padded (KernelSpec.padded_n) padding_launches' (the copy back a programmatic dependent launch
        where `programmatic`)."""
        n = self.shape.n
        entries = spec.operation_entries(n)
        first = None if spec.serial else compiled.helpers[entries[0]]
        padded_n = spec.padded_n(n)
        if not padded_n:
            return (None if first is None else zeroing_launch(first, self.out, sm_count)), None
        b_padded, c_padded = self.padded_copies(padded_n, spec.pads_b, spec.pads_c)
        copies = (self.b, b_padded, self.out, c_padded)
        last = compiled.helpers[entries[-1]] if spec.launches_copy_back else None
        return padding_launches(first, last, copies, sm_count, programmatic)

    def padded_copies(self, padded_n: int, pads_b: bool, pads_c: bool) -> tuple[Any | None, Any | None]:
        """The buffers for B's (where `pads_b`, else None) and C's (where `pads_c`, else None) copies with rows of
        `padded_n` floats (KernelSpec.padded_n), allocated once per problem; the operation writes them on every run,
        so their cost is in its time."""
        xp, shape = self.xp, self.shape
        if self._padded_n != padded_n:
            self._padded_b = self._padded_c = None
            self._padded_n = padded_n
        if pads_c and self._padded_c is None:
            self._padded_c = xp.empty((shape.m, padded_n), dtype=xp.float32)
        if pads_b and self._padded_b is None:
            self._padded_b = xp.empty((shape.k, padded_n), dtype=xp.float32)
        return (self._padded_b if pads_b else None), (self._padded_c if pads_c else None)

    def operand_maps(self, spec: KernelSpec) -> tuple[Any, ...]:
        """A's and B's TMA tensor maps for a kernel that reads them through the Tensor Memory Accelerator (and C's
        and D's for operand_args "tensor_maps_cd"), encoded once per problem and kernel (the inputs and the
        output never move while the problem lives)."""
        if spec.id not in self.tensor_maps:
            from profiling.gpu.tensor_map import encode, operand_maps, output_map

            m, n, k = self.shape.m, self.shape.n, self.shape.k
            map_a, map_b = operand_maps(spec, m, n, k)
            maps = (encode(map_a, self.a.data.ptr), encode(map_b, self.b.data.ptr))
            if spec.operand_args == "tensor_maps_cd":
                map_cd = output_map(spec, m, n)
                maps += (encode(map_cd, self.c.data.ptr), encode(map_cd, self.out.data.ptr))
            self.tensor_maps[spec.id] = maps
        return self.tensor_maps[spec.id]

    def poison(self, spec: KernelSpec | None = None) -> None:
        """Fill the outputs with NaN, so that every element a kernel leaves unwritten is counted as wrong; for
        `spec` a library AddMM, which works in place, the output starts as C instead (NaN would be its input)."""
        if spec is not None and spec.library_call == "addmm":
            self.out[...] = self.c
        else:
            self.out.fill(self.xp.nan)
        if self.half_out is not None:
            self.half_out.fill(self.xp.nan)

    def output_and_reference(self, reference_run: bool, half_output: bool = True) -> tuple[Any, Any]:
        """The output the last run wrote and the array it must match; `half_output`: a library HGEMM run wrote
        the float16 product alone (cupy.matmul), not the AddMM."""
        xp = self.xp
        if not reference_run or (self.operation != "sgemm" and not half_output):
            return self.out, self.ref
        if self.operation == "sgemm":
            # cuBLAS SGEMM is checked against float64 arithmetic on the same inputs.
            return self.out, xp.matmul(self.a.astype(xp.float64), self.b.astype(xp.float64))
        # cuBLAS HGEMM writes half: it is checked against float32 arithmetic on the same half inputs.
        return self.half_out, xp.matmul(self.a.astype(xp.float32), self.b.astype(xp.float32))

    def check(self, reference_run: bool, tolerance: float, half_output: bool = True) -> Check:
        """Relative error, NaN count and verdict of the last run's output (the same code for every kernel)."""
        out, ref = self.output_and_reference(reference_run, half_output)
        return check_output(self.xp, out, ref, tolerance)


ZERO_THREADS = 256
ZERO_BLOCKS_PER_SM = 8


def zero_blocks(count: int, sm_count: int | None) -> int:
    """Blocks of the split-K zeroing launch for `count` floats: one float4 per thread, at most 8 blocks per SM
    (the kernel's grid-stride loop does the rest)."""
    per_sm = (sm_count or DEFAULT_SM_COUNT) * ZERO_BLOCKS_PER_SM
    return max(1, min(-(-count // (4 * ZERO_THREADS)), per_sm))


def unpad_blocks(count: int, sm_count: int | None) -> int:
    """Blocks of the copy back of a padded C for `count` floats: one float per thread, so that no thread's load
    waits on another of its own, up to 32 blocks per SM (the kernel's grid-stride loop does the rest)."""
    per_sm = (sm_count or DEFAULT_SM_COUNT) * ZERO_BLOCKS_PER_SM * 4
    return max(1, min(-(-count // ZERO_THREADS), per_sm))


def zeroing_launch(zero: Any, out: Any, sm_count: int | None) -> Launch:
    """The launch of the split-K zeroing kernel `zero` on all of `out`."""
    grid, count = (zero_blocks(out.size, sm_count),), np.int64(out.size)
    return lambda: zero(grid, (ZERO_THREADS,), (out, count))


def kernel_call(
    fn: Any, grid: tuple[int, ...], block: tuple[int, ...], args: tuple[Any, ...], smem: int, programmatic: bool
) -> Launch:
    """One launch of the CuPy kernel `fn`: a plain one, or a programmatic dependent launch (profiling.gpu.pdl)."""
    if programmatic:
        from profiling.gpu.pdl import programmatic_launch

        return programmatic_launch(fn, grid, block, args, smem)
    return lambda: fn(grid, block, args, shared_mem=smem)


def padding_launches(
    first: Any | None,
    last: Any | None,
    copies: tuple[Any, Any, Any, Any],
    sm_count: int | None,
    programmatic: bool = False,
) -> tuple[Launch | None, Launch | None]:
    """The two launches around a padded split-K multiply (KernelSpec.padded_n), `copies` being (B, its padded copy or
    None, C, its padded copy or None): the first zeroes C's copy, or C where it has none, and writes B's copy
    (SPLIT_K_PAD_ENTRY; SPLIT_K_ZERO_ENTRY where B is not copied; None where `first` is None: serial splits store into
    the copy), the last copies C's first N columns into C (SPLIT_K_UNPAD_ENTRY; None where `last` is: C has no copy)."""
    b, b_padded, out, c_padded = copies
    (k, n), m = b.shape, out.shape[0]
    target = out if c_padded is None else c_padded
    pad: Launch | None = None
    if first is not None and b_padded is not None:
        pad_grid = (zero_blocks(target.size + b_padded.size, sm_count),)
        pad_args = (target, np.int64(target.size), b, b_padded, np.int32(k), np.int32(n))
        pad = lambda: first(pad_grid, (ZERO_THREADS,), pad_args)  # noqa: E731
    elif first is not None:
        pad = zeroing_launch(first, target, sm_count)
    if last is None:
        return pad, None
    unpad_grid = (unpad_blocks(out.size, sm_count),)
    unpad_args = (c_padded, out, np.int32(m), np.int32(n))
    return pad, kernel_call(last, unpad_grid, (ZERO_THREADS,), unpad_args, 0, programmatic)


def split_k_operation(before: Launch | None, multiply: Launch, after: Launch | None) -> Launch:
    """One split-K GEMM as a zero-argument callable: `before` (the zeroing or padding launch, where there is one),
    `multiply`, which adds every split's partial product into C, then `after` (the copy back of a padded C, where
    there is one). All go on the same stream, so CUDA events around the call and the worker's NVTX range cover the
    whole operation."""
    if before is None and after is None:
        return multiply

    def run() -> None:
        if before is not None:
            before()
        multiply()
        if after is not None:
            after()

    return run


def _time_launches(launch: Callable[[], None], settings: BenchSettings, flush: Any, hold: Hold | None) -> list[float]:
    """Event-timed single launches, each after an L2 flush when `flush` is a buffer, behind `hold` when given;
    returns milliseconds."""
    return time_launches(cupy, launch, settings.warmup, settings.repeats, settings.max_seconds_per_run, flush, hold)


class Session:
    """State shared by the tasks of one worker run: device facts, NVML, problems and the L2 flush buffer."""

    def __init__(self) -> None:
        self.nvml = Nvml()
        self.device = device_info(self.nvml)
        self.problems: dict[tuple[str, Shape], Problem] = {}
        self.flush = None
        self._hold: LaunchHold | None = None
        self.seed = int.from_bytes(os.urandom(4), "little")

    def flush_buffer(self) -> Any:
        if self.flush is None:
            # Twice the L2 so that no tile of A, B or C survives from the previous launch.
            self.flush = cupy.empty(max(2 * self.device["l2_bytes"], 1 << 20), dtype=cupy.uint8)
        return self.flush

    def hold(self, settings: BenchSettings) -> LaunchHold | None:
        """The session's launch hold where the settings ask for one (built on first use), else None."""
        if not settings.hold_launches:
            return None
        if self._hold is None:
            self._hold = LaunchHold(cupy)
        return self._hold

    def problem(self, spec: KernelSpec, shape: Shape) -> Problem:
        key = (spec.operation, shape)
        if key not in self.problems:
            # One problem per shape at a time: free the previous shape's buffers first.
            for old in [k for k in self.problems if k[1] != shape]:
                del self.problems[old]
            cupy.get_default_memory_pool().free_all_blocks()
            free, _total = cupy.cuda.runtime.memGetInfo()
            check_fits(spec, shape, free, reserved_bytes=0 if self.flush is not None else 2 * self.device["l2_bytes"])
            self.seed += 1
            self.problems[key] = Problem(spec.operation, shape, self.seed)
        return self.problems[key]


def _spec_and_result(session: Session, kernel_id: str, shape: Shape) -> tuple[KernelSpec, BenchResult]:
    """The catalog entry to run (the configuration tuned for this GPU, where there is one) and its result record,
    already "refused" when the shape breaks the kernel's size rule."""
    spec = get_kernel(kernel_id)
    config_text = None
    if spec.chooses_at_launch:
        # sgemm-auto: the configuration of any tunable SGEMM predicted fastest here, or the default by shape.
        device = session.device
        choice = auto_choice(device["name"], shape.m, shape.n, shape.k, device.get("sm_count"), device.get("nvrtc"))
        spec = replace(get_kernel(choice.config_id), id=kernel_id, title=spec.title)
        config_text = choice.label
    elif kernel_id in tunable_bases():
        tuned = tuned_choice(session.device["name"], kernel_id, shape.m, shape.n, shape.k, session.device.get("nvrtc"))
        if tuned:
            # The catalog's templated kernel runs the configuration the tuning sweep found fastest on this GPU.
            tuned_id, note = tuned
            spec = replace(get_kernel(tuned_id), id=kernel_id, title=spec.title)
            config_text = f"{tuned_id} ({note})" if note else tuned_id
    # Where N % 4 != 0 a v9 kernel of its own copies B (KernelSpec.narrow_entry): the result names what ran.
    spec = spec.launched_at(shape.n)
    tolerance = tolerance_for(spec, shape)
    result = BenchResult(
        kernel=spec.id,
        shape=shape,
        title=spec.title,
        operation=spec.operation,
        tolerance=tolerance,
        config=config_text or spec.entry,
    )
    problem_text = spec.size_problem(shape.m, shape.n, shape.k) or spec.device_problem(session.device["cc"])
    if problem_text:
        result.status, result.error = "refused", problem_text
    return spec, result


def launch_facts(spec: KernelSpec, shape: Shape, sm_count: int | None, cc: str = "") -> dict[str, Any]:
    """The launch geometry a result records: grid (x, y, z), block, dynamic shared memory, and for a split-K
    kernel its split count (a stream-K one: its blocks and the K slices each runs) and its launches in order, those
    that are programmatic dependent launches on a GPU of compute capability `cc` marked; a cluster split-K kernel's
    split count and cluster shape (one launch: its splits reduce inside each cluster)."""
    grid = spec.launch_grid(shape.m, shape.n, shape.k, sm_count)
    facts: dict[str, Any] = {
        "grid": list(grid),
        "block": list(spec.block),
        "dynamic_smem_bytes": spec.dynamic_smem_bytes,
    }
    if spec.stream_k:
        slices = spec.tile_slices(shape.m, shape.n, shape.k)
        facts["stream_k"] = {"blocks": grid[0], "slices_per_block": math.ceil(slices / grid[0])}
    elif spec.split_k:
        facts["split_k"] = grid[2]
    if spec.split_k:
        m, n, k = shape.m, shape.n, shape.k
        padded_n = spec.padded_n(n)
        # The zeroing launch's floats: C's or its padded copy's; the padding launch's: B's padded copy's and C's
        # copy's, or C's where C has none; the unpadding launch's: C's.
        c_floats = m * (padded_n if padded_n and spec.pads_c else n)
        floats = {
            SPLIT_K_ZERO_ENTRY: c_floats,
            SPLIT_K_PAD_ENTRY: c_floats + k * (padded_n or 0),
            SPLIT_K_UNPAD_ENTRY: m * n,
        }
        kernel = spec.launched_at(n).entry
        facts["launches"] = [
            {"kernel": name, "grid": list(grid), "block": [*spec.block, 1]}
            if name == kernel
            else {
                "kernel": name,
                "grid": [(unpad_blocks if name == SPLIT_K_UNPAD_ENTRY else zero_blocks)(floats[name], sm_count), 1, 1],
                "block": [ZERO_THREADS, 1, 1],
            }
            for name in spec.operation_entries(n)
        ]
        if spec.programmatic_launches(cc):
            for launch in facts["launches"][1:]:
                launch["programmatic"] = True
        if padded_n:
            facts["padded_n"] = padded_n
        if spec.fused:
            # One launch, launched cooperatively, which writes and reads the padded copies itself.
            facts["fused"] = True
    if spec.cluster_split_k:
        facts["split_k"] = grid[2]
        facts["cluster"] = [1, 1, grid[2]]
    return facts


def _verified_launch(
    session: Session, spec: KernelSpec, result: BenchResult, shape: Shape, plain: bool = False
) -> tuple[Problem, Callable[[], None]]:
    """Compile, run once on a poisoned output and check against the reference; fills the result's compiler,
    launch and verification facts. Raises for a sticky CUDA error (the caller restarts the worker). An operation's
    launches after its first are programmatic where the spec's are on this GPU, unless `plain`."""
    cc = "" if plain else session.device.get("cc", "")
    compiled = None if spec.is_reference else compile_kernel(spec)
    if compiled is not None:
        result.compile_info = compiled.info
        result.launch = launch_facts(spec, shape, session.device.get("sm_count"), cc)
        result.launch["max_active_blocks_per_sm"] = max_active_blocks(compiled)
    problem = session.problem(spec, shape)
    launch = problem.launcher(compiled, spec, session.device.get("sm_count"), spec.programmatic_launches(cc))
    problem.poison(spec)
    launch()
    cupy.cuda.Device().synchronize()
    check = problem.check(spec.is_reference, result.tolerance or 0.0, half_output=spec.library_call == "matmul")
    result.rel_error = check.rel_error
    if not check.ok:
        result.status, result.error = check.status, check.error
    return problem, launch


def _record_times(session: Session, spec: KernelSpec, result: BenchResult, times: list[float], nvml: dict) -> None:
    timing = TimeSummary(**summarize(times))
    result.time_ms, result.nvml = timing, nvml
    result.times_ms = list(times)
    rate = tflops(result.shape.flops, timing.median / 1000.0)
    result.tflops = rate
    peak = session.device.get("fp32_peak_tflops")
    if peak and rate is not None and spec.operation == "sgemm":
        result.pct_peak = 100.0 * rate / peak


def run_task(session: Session, kernel_id: str, shape: Shape, settings: BenchSettings, op: str) -> dict[str, Any]:
    """Verify (and for op "bench" time) one kernel at one shape; returns the BenchResult's dict form.

    Raises only for CUDA errors that leave the context unusable (the caller restarts the worker).
    """
    spec, result = _spec_and_result(session, kernel_id, shape)
    if result.status == "refused":
        return result.to_dict()
    tolerance = result.tolerance or 0.0
    try:
        # ncu profiles each kernel alone, so a programmatic launch gains nothing under it: the operations it captures
        # are launched plainly (ncu on programmatic launches has not been run on a GPU here).
        problem, launch = _verified_launch(session, spec, result, shape, op == "profile")
        if op == "bench":
            with NvmlSampler(session.nvml) as sampler:
                flush = session.flush_buffer() if settings.flush_l2 else None
                times = _time_launches(launch, settings, flush, session.hold(settings))
            _record_times(session, spec, result, times, sampler.summary())
            # A race shows as an output that changes between launches: check the last timed launch too.
            if result.status == "ok" and not spec.is_reference:
                after = problem.check(False, tolerance)
                result.rel_error_after_timing = after.rel_error
                if not after.ok:
                    result.status = "wrong"
                    result.error = f"output changed between launches (error {after.rel_error:.3g}): a race?"
        elif op == "profile":
            for _ in range(settings.warmup):
                launch()
            cupy.cuda.Device().synchronize()
            cupy.cuda.nvtx.RangePush(nvtx_range_name(spec.id, shape))
            launch()
            cupy.cuda.Device().synchronize()
            cupy.cuda.nvtx.RangePop()
    except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result with its message
        if is_sticky(exc):
            raise
        result.status, result.error = "failed", _describe(exc)
    return result.to_dict()


def run_ab(session: Session, kernel_a: str, kernel_b: str, shape: Shape, settings: BenchSettings) -> list[dict]:
    """Verify two kernels of one operation at one shape, then time them interleaved (timing.time_interleaved);
    returns both results, each with its per-launch times and `ab` naming its partner and the pairing.

    A partner that is refused, wrong or fails leaves the other verified but untimed: an A/B needs both.
    """
    prepared = [_spec_and_result(session, kernel_a, shape), _spec_and_result(session, kernel_b, shape)]
    (spec_a, result_a), (spec_b, result_b) = prepared
    if spec_a.operation != spec_b.operation:
        for (_, result), other in zip(prepared, (spec_b, spec_a), strict=True):
            result.status = "refused"
            result.error = f"an A/B needs two kernels of one operation; {other.id} computes {other.operation}"
        return [result_a.to_dict(), result_b.to_dict()]
    launches = []
    try:
        for spec, result in prepared:
            if result.status == "ok":
                launches.append(_verified_launch(session, spec, result, shape)[1])
        bad = [r for _, r in prepared if r.status != "ok"]
        if bad:
            for _, result in prepared:
                if result.status == "ok":
                    result.error = f"not timed: its A/B partner {bad[0].kernel} is {bad[0].status}"
            return [result_a.to_dict(), result_b.to_dict()]
        flush = session.flush_buffer() if settings.flush_l2 else None
        with NvmlSampler(session.nvml) as sampler:
            if settings.rest_s > 0:
                times_a, times_b = rested_rounds(
                    cupy, launches, settings.repeats, settings.rest_s, flush, session.hold(settings)
                )
            else:
                times_a, times_b = time_interleaved(
                    cupy,
                    launches[0],
                    launches[1],
                    settings.warmup,
                    settings.repeats,
                    settings.max_seconds_per_run,
                    flush,
                    session.hold(settings),
                )
        nvml = sampler.summary()
        order = "alternating, each after an L2 flush" if flush is not None else "alternating"
        if settings.rest_s > 0:
            order += f", each pair after {settings.rest_s:g} s of rest and an untimed launch of both"
        for (spec, result), times, partner in ((prepared[0], times_a, kernel_b), (prepared[1], times_b, kernel_a)):
            _record_times(session, spec, result, times, nvml)
            result.other["ab"] = {"partner": partner, "paired": True, "order": order}
    except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result with its message
        if is_sticky(exc):
            raise
        for _, result in prepared:
            if result.status == "ok":
                result.status, result.error = "failed", _describe(exc)
    return [result_a.to_dict(), result_b.to_dict()]


def run_rounds(session: Session, kernels: list[str], shape: Shape, settings: BenchSettings) -> list[dict]:
    """Verify kernels of one operation at one shape, then time those verified together in rounds that run each once,
    each launch after an L2 flush (timing.time_rounds), so clock drift and heat hit all alike and their medians
    compare; returns every result, each timed one with its per-launch times and `rounds` naming those timed with it.

    One that is refused, wrong, fails, or computes another operation than the first is reported and left out of the
    rounds. After the rounds each is verified again on a poisoned output (rel_error_after_timing): a split-K count
    that did not reset shows there.
    """
    prepared = [_spec_and_result(session, kernel_id, shape) for kernel_id in kernels]
    operation = prepared[0][0].operation
    timed: list[tuple[KernelSpec, BenchResult, Problem, Callable[[], None]]] = []
    for spec, result in prepared:
        if result.status != "ok":
            continue
        if spec.operation != operation:
            result.status = "refused"
            first = prepared[0][1].kernel
            result.error = f"timed in rounds with {first}, which computes {operation}; this computes {spec.operation}"
            continue
        try:
            problem, launch = _verified_launch(session, spec, result, shape)
        except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result with its message
            if is_sticky(exc):
                raise
            result.status, result.error = "failed", _describe(exc)
            continue
        if result.status == "ok":
            timed.append((spec, result, problem, launch))
    if not timed:
        return [result.to_dict() for _, result in prepared]
    try:
        flush = session.flush_buffer() if settings.flush_l2 else None
        with NvmlSampler(session.nvml) as sampler:
            times = time_rounds(
                cupy,
                [launch for *_, launch in timed],
                settings.warmup,
                settings.repeats,
                settings.max_seconds_per_run * len(timed),
                flush,
                session.hold(settings),
            )
        nvml = sampler.summary()
        names = [result.kernel for _, result, _, _ in timed]
        order = "in rounds that run each once, each launch after an L2 flush" if flush is not None else "in rounds"
        for (spec, result, problem, launch), kernel_times in zip(timed, times, strict=True):
            _record_times(session, spec, result, kernel_times, nvml)
            result.other["rounds"] = {"kernels": names, "order": order}
            if spec.is_reference:
                continue
            problem.poison(spec)
            launch()
            cupy.cuda.Device().synchronize()
            after = problem.check(False, result.tolerance or 0.0)
            result.rel_error_after_timing = after.rel_error
            if not after.ok:
                result.status = "wrong"
                result.error = f"wrong after the timed rounds (error {after.rel_error:.3g}): state left by a launch?"
    except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result with its message
        if is_sticky(exc):
            raise
        for _, result, _, _ in timed:
            if result.status == "ok":
                result.status, result.error = "failed", _describe(exc)
    return [result.to_dict() for _, result in prepared]


def _describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    first = text[0] if text else ""
    name = type(exc).__name__
    if "out of memory" in first.lower() or isinstance(exc, cupy.cuda.memory.OutOfMemoryError):
        return f"out of GPU memory ({first}); choose a smaller size"
    if name == "InvalidInput":
        return first
    if "CompileException" in name:
        return "compilation failed: " + " ".join(text[:6])[:600]
    return f"{name}: {first}"[:600]


FAULT_SOURCE = r"""
extern "C" __global__ void gemmlens_fault(float* p) { p[(1ull << 40) + threadIdx.x] = 1.0f; }
extern "C" __global__ void gemmlens_hang(int* flag) { while (atomicAdd(flag, 0) == 0) { } }
"""


def selftest(kind: str) -> None:
    """Launch a kernel that faults (illegal address) or never ends, to prove the worker contains it."""
    module = cupy.RawModule(code=FAULT_SOURCE)
    if kind == "fault":
        buf = cupy.zeros(32, dtype=cupy.float32)
        module.get_function("gemmlens_fault")((1,), (32,), (buf,))
    else:
        flag = cupy.zeros(1, dtype=cupy.int32)
        module.get_function("gemmlens_hang")((1,), (1,), (flag,))
    cupy.cuda.Device().synchronize()
