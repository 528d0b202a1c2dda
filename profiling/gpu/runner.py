"""GPU side of the worker: compile catalog kernels with CuPy, verify them against cuBLAS and time them.

Only the worker child process imports this module; it creates a CUDA context and may die with it.
"""

from __future__ import annotations

import os

# cuBLAS must compute true FP32 (CUBLAS_COMPUTE_32F); CuPy reads this once, at import.
os.environ["CUPY_TF32"] = "0"

import functools
import platform
import statistics
import subprocess
import threading
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import cupy
import numpy as np

from kernels.catalog import KernelSpec
from kernels.registry import get_kernel
from kernels.tuning import tunable_bases, tuned_config_id
from profiling.analysis.device_model import fp32_lanes_per_sm
from profiling.errors import InvalidInput
from profiling.gpu.jobs import BenchSettings, check_fits, tolerance_for
from profiling.gpu.timing import summarize, time_launches
from profiling.gpu.verify import Check, check_output
from profiling.runs.records import BenchResult, TimeSummary
from profiling.shape import Shape

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

# NVML clocks-event reason bits (nvml.h); GpuIdle and the settings bits are not slowdowns.
CLOCK_EVENT_REASONS = {
    0x1: "GpuIdle",
    0x2: "ApplicationsClocksSetting",
    0x4: "SwPowerCap",
    0x8: "HwSlowdown",
    0x10: "SyncBoost",
    0x20: "SwThermalSlowdown",
    0x40: "HwThermalSlowdown",
    0x80: "HwPowerBrakeSlowdown",
    0x100: "DisplayClockSetting",
}
CAPPING_REASONS = {"SwPowerCap", "HwSlowdown", "SwThermalSlowdown", "HwThermalSlowdown", "HwPowerBrakeSlowdown"}


def is_sticky(error: BaseException) -> bool:
    """True when a CUDA error leaves the context unusable, so the worker must be restarted."""
    text = f"{type(error).__name__}: {error}"
    return any(name in text for name in STICKY_CUDA_ERRORS)


class Nvml:
    """NVML handle for the CUDA device in use; every call degrades to None where NVML is missing."""

    def __init__(self) -> None:
        self.handle = None
        try:
            import pynvml

            pynvml.nvmlInit()
            bus_id = cupy.cuda.Device().pci_bus_id
            self.handle = pynvml.nvmlDeviceGetHandleByPciBusId(bus_id)
            self.nvml = pynvml
        except Exception:  # noqa: BLE001 - NVML is optional; timings still work without it
            self.handle = None

    def _call(self, name: str, *args: Any) -> Any:
        if self.handle is None:
            return None
        fn = getattr(self.nvml, name, None)
        if fn is None:
            return None
        try:
            return fn(self.handle, *args)
        except Exception:  # noqa: BLE001
            return None

    def sample(self) -> dict[str, Any]:
        if self.handle is None:
            return {}
        n = self.nvml
        reasons = self._call("nvmlDeviceGetCurrentClocksEventReasons")
        if reasons is None:
            reasons = self._call("nvmlDeviceGetCurrentClocksThrottleReasons")
        power = self._call("nvmlDeviceGetPowerUsage")
        return {
            "sm_clock_mhz": self._call("nvmlDeviceGetClockInfo", n.NVML_CLOCK_SM),
            "mem_clock_mhz": self._call("nvmlDeviceGetClockInfo", n.NVML_CLOCK_MEM),
            "power_w": power / 1000.0 if power is not None else None,
            "temperature_c": self._call("nvmlDeviceGetTemperature", n.NVML_TEMPERATURE_GPU),
            "reasons": [name for bit, name in CLOCK_EVENT_REASONS.items() if reasons and reasons & bit],
        }

    def static_info(self) -> dict[str, Any]:
        if self.handle is None:
            return {}
        n = self.nvml
        driver = None
        try:
            driver = n.nvmlSystemGetDriverVersion()
            driver = driver.decode() if isinstance(driver, bytes) else driver
        except Exception:  # noqa: BLE001
            pass
        limit = self._call("nvmlDeviceGetEnforcedPowerLimit")
        return {
            "driver": driver,
            "max_sm_clock_mhz": self._call("nvmlDeviceGetMaxClockInfo", n.NVML_CLOCK_SM),
            "max_mem_clock_mhz": self._call("nvmlDeviceGetMaxClockInfo", n.NVML_CLOCK_MEM),
            "power_limit_w": limit / 1000.0 if limit is not None else None,
        }


class NvmlSampler:
    """Samples clocks, power, temperature and clock-event reasons in a thread while runs are timed."""

    def __init__(self, nvml: Nvml, period_s: float = 0.02) -> None:
        self.nvml = nvml
        self.period_s = period_s
        self.samples: list[dict[str, Any]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self._stop.is_set():
            self.samples.append(self.nvml.sample())
            self._stop.wait(self.period_s)

    def __enter__(self) -> NvmlSampler:
        if self.nvml.handle is not None:
            self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join()
        self.samples.append(self.nvml.sample())

    def summary(self) -> dict[str, Any]:
        rows = [s for s in self.samples if s]
        if not rows:
            return {}
        clocks = [s["sm_clock_mhz"] for s in rows if s.get("sm_clock_mhz") is not None]
        powers = [s["power_w"] for s in rows if s.get("power_w") is not None]
        temps = [s["temperature_c"] for s in rows if s.get("temperature_c") is not None]
        reasons = sorted({r for s in rows for r in s.get("reasons", []) if r != "GpuIdle"})
        return {
            "samples": len(rows),
            "sm_clock_mhz": {"min": min(clocks), "median": statistics.median(clocks), "max": max(clocks)}
            if clocks
            else None,
            "power_w_max": max(powers) if powers else None,
            "temperature_c_max": max(temps) if temps else None,
            "clock_event_reasons": reasons,
            "capped": bool(set(reasons) & CAPPING_REASONS),
        }


def device_info(nvml: Nvml | None = None) -> dict[str, Any]:
    """The GPU in use: name, compute capability, SMs, clocks, memory, driver and CUDA versions."""
    nvml = nvml or Nvml()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    major, minor = int(props["major"]), int(props["minor"])
    static = nvml.static_info()
    clock_mhz = static.get("max_sm_clock_mhz") or (props.get("clockRate", 0) / 1000 or None)
    try:
        lanes = fp32_lanes_per_sm(f"{major}.{minor}")
    except InvalidInput:  # a chip newer than the table: every CC since 8.6 has 128 FP32 lanes per SM
        lanes = 128
    sms = int(props["multiProcessorCount"])
    info = {
        "name": name,
        "cc": f"{major}.{minor}",
        "sm_count": sms,
        "max_sm_clock_mhz": clock_mhz,
        "max_mem_clock_mhz": static.get("max_mem_clock_mhz"),
        "memory_bus_width_bits": props.get("memoryBusWidth"),
        "total_memory_bytes": int(props["totalGlobalMem"]),
        "l2_bytes": int(props["l2CacheSize"]),
        "shared_mem_per_block_optin": int(props.get("sharedMemPerBlockOptin", 0)),
        "shared_mem_per_sm": int(props.get("sharedMemPerMultiprocessor", 0)),
        "registers_per_sm": int(props.get("regsPerMultiprocessor", 0)),
        "max_threads_per_sm": int(props.get("maxThreadsPerMultiProcessor", 0)),
        "fp32_lanes_per_sm": lanes,
        "fp32_peak_tflops": sms * lanes * 2 * clock_mhz * 1e6 / 1e12 if clock_mhz else None,
        "power_limit_w": static.get("power_limit_w"),
        "driver": static.get("driver"),
        "cuda_runtime": cupy.cuda.runtime.runtimeGetVersion(),
        "cuda_driver": cupy.cuda.runtime.driverGetVersion(),
        "cupy": cupy.__version__,
        "python": platform.python_version(),
        "pci_bus_id": dev.pci_bus_id,
    }
    return info


@dataclass
class CompiledKernel:
    """A compiled catalog kernel and the compiler's facts about it."""

    spec: KernelSpec
    function: Any
    info: dict[str, Any]


_COMPILED: dict[tuple, CompiledKernel] = {}


def _cuda_include_dirs() -> list[str]:
    dirs = []
    for root in (os.environ.get("CUDA_HOME"), os.environ.get("CUDA_PATH"), "/usr/local/cuda"):
        if root and os.path.isdir(os.path.join(root, "include")):
            dirs.append(os.path.join(root, "include"))
    return list(dict.fromkeys(dirs))


def compile_kernel(spec: KernelSpec) -> CompiledKernel:
    """Compile a catalog kernel (cached per process) and read its registers, shared and local memory."""
    key = (spec.source, spec.entry, spec.backend)
    if key in _COMPILED:
        return replace(_COMPILED[key], spec=spec)
    arch = f"sm_{cupy.cuda.Device().compute_capability}"
    options: list[str] = ["-std=c++17", "-lineinfo"]
    if spec.backend == "nvrtc":
        options += [f"-I{d}" for d in _cuda_include_dirs()]
    module = cupy.RawModule(
        code=spec.read_source(), options=tuple(options), name_expressions=[spec.entry], backend=spec.backend
    )
    function = module.get_function(spec.entry)
    if spec.dynamic_smem_bytes > 48 * 1024:
        function.max_dynamic_shared_size_bytes = spec.dynamic_smem_bytes
    attrs = function.attributes
    info = {
        "arch": arch,
        "backend": spec.backend,
        "options": options,
        "registers": int(attrs["num_regs"]),
        "shared_static_bytes": int(attrs["shared_size_bytes"]),
        "local_bytes": int(attrs["local_size_bytes"]),
        "max_threads_per_block": int(attrs["max_threads_per_block"]),
        "dynamic_smem_bytes": spec.dynamic_smem_bytes,
        "log": _ptxas_log(spec, arch),
    }
    compiled = CompiledKernel(spec, function, info)
    _COMPILED[key] = compiled
    return compiled


@functools.cache
def _nvcc_report(source: str, arch: str) -> tuple[list, str]:
    from kernels.compile_info import nvcc_resources

    return nvcc_resources(Path(source), arch, timeout_s=120)


def _ptxas_log(spec: KernelSpec, arch: str) -> str:
    """nvcc's -Xptxas -v report for this kernel where nvcc is installed (NVRTC prints none), else ""."""
    from kernels.compile_info import entry_matches

    try:
        resources, log = _nvcc_report(str(spec.source_path), arch)
    except (RuntimeError, OSError, subprocess.TimeoutExpired):
        return ""
    mine = [r.name for r in resources if entry_matches(r.name, spec.entry)]
    lines = log.splitlines()
    # Keep the lines of this kernel's block: from its "Compiling entry function" to its "Used N registers".
    keep, inside = [], False
    for line in lines:
        if "Compiling entry function" in line:
            inside = any(f"'{name}'" in line for name in mine)
        if inside:
            keep.append(line.strip())
            if "Used " in line and "registers" in line:
                inside = False
    return "\n".join(keep)


def max_active_blocks(compiled: CompiledKernel) -> int:
    """Blocks per SM the driver's occupancy calculator allows for this kernel's launch."""
    return int(
        cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            compiled.function.kernel.ptr, compiled.spec.threads_per_block, compiled.spec.dynamic_smem_bytes
        )
    )


class Problem:
    """Inputs, poisoned output and reference for one shape and operation, reused across kernels."""

    def __init__(self, operation: str, shape: Shape, seed: int) -> None:
        rng = cupy.random.default_rng(seed)
        m, n, k = shape.m, shape.n, shape.k
        if operation == "sgemm":
            a = rng.uniform(-1.0, 1.0, (m, k), dtype=cupy.float32)
            b = rng.uniform(-1.0, 1.0, (k, n), dtype=cupy.float32)
            c = None
        else:
            a = rng.uniform(-1.0, 1.0, (m, k), dtype=cupy.float32).astype(cupy.float16)
            b = rng.uniform(-1.0, 1.0, (k, n), dtype=cupy.float32).astype(cupy.float16)
            c = rng.uniform(-1.0, 1.0, (m, n), dtype=cupy.float32)
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
        if operation == "sgemm":
            self.ref = xp.matmul(a, b)
        else:
            self.alpha, self.beta = np.float32(1.5), np.float32(-0.5)
            # float32 product of the same half inputs: the precision the tensor cores accumulate in.
            self.ref = self.alpha * xp.matmul(a.astype(xp.float32), b.astype(xp.float32))
            self.ref += self.beta * c

    def launcher(self, compiled: CompiledKernel | None, spec: KernelSpec) -> Callable[[], None]:
        """A zero-argument callable that runs the kernel (or the cuBLAS reference) once."""
        m, n, k = self.shape.m, self.shape.n, self.shape.k
        if compiled is None:
            if self.operation == "sgemm":
                return lambda: cupy.matmul(self.a, self.b, out=self.out)
            if self.half_out is None:
                self.half_out = cupy.empty((m, n), dtype=cupy.float16)
            half_out = self.half_out
            return lambda: cupy.matmul(self.a, self.b, out=half_out)
        grid = spec.grid(m, n)
        block = spec.block
        if self.operation == "sgemm":
            args = (self.a, self.b, self.out, np.int32(m), np.int32(n), np.int32(k))
        else:
            args = (self.a, self.b, self.c, self.out, np.int32(m), np.int32(n), np.int32(k), self.alpha, self.beta)
        fn, smem = compiled.function, spec.dynamic_smem_bytes
        return lambda: fn(grid, block, args, shared_mem=smem)

    def poison(self) -> None:
        """Fill the outputs with NaN, so that every element a kernel leaves unwritten is counted as wrong."""
        self.out.fill(self.xp.nan)
        if self.half_out is not None:
            self.half_out.fill(self.xp.nan)

    def output_and_reference(self, reference_run: bool) -> tuple[Any, Any]:
        """The output the last run wrote and the array it must match."""
        xp = self.xp
        if not reference_run:
            return self.out, self.ref
        if self.operation == "sgemm":
            # cuBLAS SGEMM is checked against float64 arithmetic on the same inputs.
            return self.out, xp.matmul(self.a.astype(xp.float64), self.b.astype(xp.float64))
        # cuBLAS HGEMM writes half: it is checked against float32 arithmetic on the same half inputs.
        return self.half_out, xp.matmul(self.a.astype(xp.float32), self.b.astype(xp.float32))

    def check(self, reference_run: bool, tolerance: float) -> Check:
        """Relative error, NaN count and verdict of the last run's output (the same code for every kernel)."""
        out, ref = self.output_and_reference(reference_run)
        return check_output(self.xp, out, ref, tolerance)


def _time_launches(launch: Callable[[], None], settings: BenchSettings, flush: Any) -> list[float]:
    """Event-timed single launches, each after an L2 flush when `flush` is a buffer; returns milliseconds."""
    return time_launches(cupy, launch, settings.warmup, settings.repeats, settings.max_seconds_per_run, flush)


class Session:
    """State shared by the tasks of one worker run: device facts, NVML, problems and the L2 flush buffer."""

    def __init__(self) -> None:
        self.nvml = Nvml()
        self.device = device_info(self.nvml)
        self.problems: dict[tuple[str, Shape], Problem] = {}
        self.flush = None
        self.seed = int.from_bytes(os.urandom(4), "little")

    def flush_buffer(self) -> Any:
        if self.flush is None:
            # Twice the L2 so that no tile of A, B or C survives from the previous launch.
            self.flush = cupy.empty(max(2 * self.device["l2_bytes"], 1 << 20), dtype=cupy.uint8)
        return self.flush

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


def run_task(session: Session, kernel_id: str, shape: Shape, settings: BenchSettings, op: str) -> dict[str, Any]:
    """Verify (and for op "bench" time) one kernel at one shape; returns the BenchResult's dict form.

    Raises only for CUDA errors that leave the context unusable (the caller restarts the worker).
    """
    spec = get_kernel(kernel_id)
    tuned_id = (
        tuned_config_id(session.device["name"], kernel_id, shape.m, shape.n, shape.k)
        if kernel_id in tunable_bases()
        else None
    )
    if tuned_id:
        # The catalog's templated kernel runs the configuration the tuning sweep found fastest on this GPU.
        spec = replace(get_kernel(tuned_id), id=kernel_id, title=spec.title)
    tolerance = tolerance_for(spec, shape)
    result = BenchResult(
        kernel=spec.id,
        shape=shape,
        title=spec.title,
        operation=spec.operation,
        tolerance=tolerance,
        config=tuned_id or spec.entry,
    )
    problem_text = spec.size_problem(shape.m, shape.n, shape.k)
    if problem_text:
        result.status, result.error = "refused", problem_text
        return result.to_dict()
    try:
        compiled = None if spec.is_reference else compile_kernel(spec)
        if compiled is not None:
            result.compile_info = compiled.info
            result.launch = {
                "grid": list(spec.grid(shape.m, shape.n)),
                "block": list(spec.block),
                "dynamic_smem_bytes": spec.dynamic_smem_bytes,
                "max_active_blocks_per_sm": max_active_blocks(compiled),
            }
        problem = session.problem(spec, shape)
        launch = problem.launcher(compiled, spec)
        problem.poison()
        launch()
        cupy.cuda.Device().synchronize()
        check = problem.check(spec.is_reference, tolerance)
        result.rel_error = check.rel_error
        if not check.ok:
            result.status, result.error = check.status, check.error
        if op == "bench":
            with NvmlSampler(session.nvml) as sampler:
                times = _time_launches(launch, settings, session.flush_buffer() if settings.flush_l2 else None)
            timing = TimeSummary(**summarize(times))
            result.time_ms, result.nvml = timing, sampler.summary()
            tflops = shape.flops / (timing.median / 1000.0) / 1e12
            result.tflops = tflops
            peak = session.device.get("fp32_peak_tflops")
            if peak and spec.operation == "sgemm":
                result.pct_peak = 100.0 * tflops / peak
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
            cupy.cuda.nvtx.RangePush(f"gemmlens:{spec.id}:{shape.label}")
            launch()
            cupy.cuda.Device().synchronize()
            cupy.cuda.nvtx.RangePop()
    except Exception as exc:  # noqa: BLE001 - every failure becomes a failed result with its message
        if is_sticky(exc):
            raise
        result.status, result.error = "failed", _describe(exc)
    return result.to_dict()


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
