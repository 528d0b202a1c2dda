"""Cheap checks of whether a CUDA GPU is usable here, without keeping a CUDA context in the caller, and where the
CUDA command-line tools are."""

from __future__ import annotations

import ctypes.util
import functools
import subprocess
import sys
from pathlib import Path

from profiling.errors import last_line


@functools.cache
def gpu_unavailable_reason() -> str | None:
    """Return why no CUDA GPU can be used from this machine, or None when one can.

    The probe runs in a child process so the caller never creates a CUDA context of its own.
    """
    nothing = no_gpu_or_driver()
    if nothing:
        return nothing
    probe = "import cupy\nn = cupy.cuda.runtime.getDeviceCount()\nprint(n)\n"
    try:
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    except subprocess.TimeoutExpired:
        return "probing the GPU with CuPy timed out after 60 s"
    if done.returncode != 0:
        last = last_line(done.stderr, limit=200) or "unknown error"
        if "No module named 'cupy'" in last:
            return "CuPy is not installed"
        return cuda_start_failure(last, prefix="CuPy found no usable GPU")
    try:
        count = int(last_line(done.stdout))
    except ValueError:
        return "could not read the GPU count from CuPy"
    return None if count > 0 else "CUDA reports 0 devices"


def no_gpu_device_nodes(dev: Path = Path("/dev")) -> str | None:
    """On Linux, why no NVIDIA GPU can be present (no /dev/nvidia* or WSL /dev/dxg node), else None.

    Lets the app skip starting a worker child just to learn there is no GPU.
    """
    if not sys.platform.startswith("linux") or not dev.is_dir():
        return None
    if any(dev.glob("nvidia[0-9]*")) or (dev / "nvidiactl").exists() or (dev / "dxg").exists():
        return None
    return f"no NVIDIA device nodes ({dev}/nvidia*) on this machine"


def no_gpu_or_driver(dev: Path = Path("/dev")) -> str | None:
    """On Linux, "no NVIDIA GPU or driver was found ..." when there is neither an NVIDIA device node nor the driver's
    libcuda; None otherwise (then CUDA's own error says what is wrong, e.g. a driver older than the runtime).

    Without both, CUDA reports "driver version is insufficient for CUDA runtime version", which sends people to
    update a driver they do not have.
    """
    if no_gpu_device_nodes(dev) is None or ctypes.util.find_library("cuda") is not None:
        return None
    return f"no NVIDIA GPU or driver was found on this machine (no {dev}/nvidia* device, no libcuda)"


def cuda_start_failure(error: str, prefix: str = "no usable CUDA GPU") -> str:
    """One line for a CUDA start-up that failed with `error`: no_gpu_or_driver() where that is the reason, else
    `prefix` and the error."""
    return no_gpu_or_driver() or f"{prefix} ({error})"
