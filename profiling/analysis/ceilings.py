"""Measured roofline ceilings, cached per device, and their conversion to `Ceilings`.

The measuring itself runs on the GPU, in `profiling.gpu.ceilings`.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from profiling.analysis.device_model import Ceiling, Ceilings, device_slug


def measured_to_ceilings(measured: dict[str, Any], label: str) -> Ceilings:
    """Turn measured rates into roofline ceilings; the DRAM ceiling is the faster of read and copy."""

    def ceiling(key: str) -> Ceiling | None:
        entry = measured.get(key)
        return Ceiling(float(entry["value"]), label, entry.get("how", "")) if entry else None

    dram = [c for c in (ceiling("dram_read_bytes_per_s"), ceiling("dram_copy_bytes_per_s")) if c]
    return Ceilings(
        fp32_flops=ceiling("fp32_flops"),
        dram_bytes_per_s=max(dram, key=lambda c: c.value) if dram else None,
        l2_bytes_per_s=ceiling("l2_read_bytes_per_s"),
        l1_bytes_per_s=ceiling("shared_read_bytes_per_s"),
        device_name=measured.get("device"),
    )


def cache_path(device_name: str) -> Path:
    """Where measured ceilings for a device are cached (GEMMLENS_CACHE_DIR or ~/.cache/gemmlens)."""
    root = Path(os.environ.get("GEMMLENS_CACHE_DIR") or Path.home() / ".cache" / "gemmlens")
    return root / "ceilings" / f"{device_slug(device_name)}.json"


def load_cached(device_name: str) -> dict[str, Any] | None:
    """Previously measured ceilings for this device, or None."""
    path = cache_path(device_name)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def save_cached(record: dict[str, Any]) -> Path:
    path = cache_path(record["device"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))
    return path
