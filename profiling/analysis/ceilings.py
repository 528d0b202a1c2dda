"""Roofline ceilings: the theoretical ones known for a device or an ncu report, and the measured ones (cached
per device, or committed beside bundled measurements) as `Ceilings`.

The measuring itself runs on the GPU, in `profiling.gpu.ceilings`.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

from profiling.device_model import Ceiling, Ceilings, DeviceInfo, best_ceilings, device_slug
from profiling.errors import InvalidInput
from profiling.nsight.report import Report
from profiling.paths import BUNDLED_RESULTS_DIR

BUNDLED_CEILINGS = "ceilings.json"
"""The measured ceilings committed in a bundle folder (results/<device>-<date>/), as `ceilings --json` prints."""


# ---------------------------------------------------------------------------------------------
# Theoretical ceilings
# ---------------------------------------------------------------------------------------------


def ceilings_for(device: DeviceInfo | None = None, report: Report | None = None) -> Ceilings:
    """The best ceilings known: the ncu report's own clocks, else the device's properties, else the table."""
    metrics = None
    name = None
    if report is not None and report.launches:
        metrics = {k: m.value for k, m in report.launches[0].metrics.items()}
        name = report.launches[0].attributes.get("device__attribute_display_name")
    return best_ceilings(ncu_metrics=metrics, device_info=device, device_name=name or (device.name if device else None))


def recorded_device_ceilings(device: DeviceInfo | None, device_name: str | None = None) -> Ceilings | None:
    """Ceilings for a device recorded with a saved run: its properties when they were recorded, else the built-in
    table by name (`device_name` when the device has none); None when neither knows it."""
    device = device or DeviceInfo()
    name = device.name or device_name
    try:
        if device.sm_count:
            return ceilings_for(replace(device, name=name))
        return best_ceilings(device_name=name)
    except InvalidInput:
        return None


# ---------------------------------------------------------------------------------------------
# Measured ceilings
# ---------------------------------------------------------------------------------------------


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


def record_ceilings(record: dict[str, Any]) -> Ceilings:
    """A measured-ceilings record (the cache's or a bundle's) as roofline Ceilings."""
    return measured_to_ceilings(record["ceilings"] | {"device": record["device"]}, f"measured {record['measured_utc']}")


def measured_ceilings(device_name: str | None, folder: Path | None = None) -> Ceilings | None:
    """Ceilings measured on the GPU (`python -m profiling ceilings`): the ceilings.json in `folder` (a bundle of
    committed measurements) when it was measured on that device, else this machine's per-device cache; None when
    neither was measured there."""
    record = None
    if folder is not None and (folder / BUNDLED_CEILINGS).is_file():
        try:
            record = json.loads((folder / BUNDLED_CEILINGS).read_text()).get("measured")
        except (OSError, ValueError):
            record = None
    if (record is None or record.get("device") != device_name) and device_name:
        record = load_cached(device_name)
    if not record or record.get("device") != device_name:
        return None
    return record_ceilings(record)


def recorded_measurements(bundled: Path = BUNDLED_RESULTS_DIR) -> list[tuple[str, dict[str, Any], DeviceInfo]]:
    """Every measured-ceilings record this machine holds, for showing without a GPU: (where it is, the record, the
    device's properties, empty where the file has none), this machine's cache first, then the bundled ones
    (results/*/ceilings.json), each newest first. Unreadable files are skipped."""
    found: list[tuple[str, dict[str, Any], DeviceInfo]] = []
    cached = sorted(_cache_dir().glob("*.json"))
    for path in [*cached, *sorted(bundled.glob(f"*/{BUNDLED_CEILINGS}"))]:
        try:
            data = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        record, device = (data.get("measured"), data.get("device")) if path.name == BUNDLED_CEILINGS else (data, {})
        if isinstance(record, dict) and {"device", "measured_utc", "ceilings"} <= set(record):
            where = f"cached in {path}" if path in cached else f"bundled: {path.parent.name}/{path.name}"
            found.append((where, record, DeviceInfo.from_dict(device)))
    found.sort(key=lambda f: (f[0].startswith("bundled"), -_stamp(f[1])))
    return found


def _stamp(record: dict[str, Any]) -> float:
    try:
        return dt.datetime.fromisoformat(str(record["measured_utc"]).replace("Z", "+00:00")).timestamp()
    except (ValueError, OverflowError):
        return 0.0


def _cache_dir() -> Path:
    root = Path(os.environ.get("GEMMLENS_CACHE_DIR") or Path.home() / ".cache" / "gemmlens")
    return root / "ceilings"


def cache_path(device_name: str) -> Path:
    """Where measured ceilings for a device are cached (GEMMLENS_CACHE_DIR or ~/.cache/gemmlens)."""
    return _cache_dir() / f"{device_slug(device_name)}.json"


def load_cached(device_name: str) -> dict[str, Any] | None:
    """Previously measured ceilings for this device, or None."""
    path = cache_path(device_name)
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def save_cached(record: dict[str, Any]) -> Path:
    """Cache a measured-ceilings record for its device; returns the file written."""
    path = cache_path(record["device"])
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(record, indent=1))
    return path
