"""The GPU as the worker sees it: device facts from CuPy and NVML, and NVML sampling of clocks, power and
clock-event reasons around every timing."""

from __future__ import annotations

import platform
import statistics
import threading
from typing import Any

from profiling.device_model import fp32_lanes_per_sm
from profiling.errors import InvalidInput
from profiling.gpu.fp32_cupy import cupy

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


def compute_capability(props: dict[str, Any]) -> str:
    """A GPU's compute capability from CUDA's device properties, as the "major.minor" text that the catalog's rules
    (`KernelSpec.device_problem`, `programmatic_launches`) and `device_info`'s "cc" read."""
    return f"{int(props['major'])}.{int(props['minor'])}"


def nvrtc_version() -> str | None:
    """The version ("13.0") of the NVRTC CuPy builds the catalog's kernels with; None where CuPy finds none."""
    try:
        return ".".join(str(part) for part in cupy.cuda.nvrtc.getVersion())
    except Exception:  # CuPy raises its own errors, or OSError, where the library is missing
        return None


def device_info(nvml: Nvml | None = None) -> dict[str, Any]:
    """The GPU in use: name, compute capability, SMs, clocks, memory, driver and CUDA versions."""
    nvml = nvml or Nvml()
    dev = cupy.cuda.Device()
    props = cupy.cuda.runtime.getDeviceProperties(dev.id)
    name = props["name"].decode() if isinstance(props["name"], bytes) else str(props["name"])
    cc = compute_capability(props)
    static = nvml.static_info()
    clock_mhz = static.get("max_sm_clock_mhz") or (props.get("clockRate", 0) / 1000 or None)
    try:
        lanes = fp32_lanes_per_sm(cc)
    except InvalidInput:  # a chip newer than the table: every CC since 8.6 has 128 FP32 lanes per SM
        lanes = 128
    sms = int(props["multiProcessorCount"])
    info = {
        "name": name,
        "cc": cc,
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
        "nvrtc": nvrtc_version(),
        "python": platform.python_version(),
        "pci_bus_id": dev.pci_bus_id,
    }
    return info
