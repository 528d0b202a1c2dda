"""What this machine offers, learned without starting a GPU worker.

`no_gpu_device_nodes` belongs with the CUDA environment (`profiling.gpu.env`); it stays here until that module
takes it.
"""

from __future__ import annotations

import sys
from pathlib import Path


def no_gpu_device_nodes(dev: Path = Path("/dev")) -> str | None:
    """On Linux, why no NVIDIA GPU can be present (no /dev/nvidia* or WSL /dev/dxg node), else None.

    Lets the app skip starting a worker child just to learn there is no GPU.
    """
    if not sys.platform.startswith("linux") or not dev.is_dir():
        return None
    if any(dev.glob("nvidia[0-9]*")) or (dev / "nvidiactl").exists() or (dev / "dxg").exists():
        return None
    return f"no NVIDIA device nodes ({dev}/nvidia*) on this machine"
