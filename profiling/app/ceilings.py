"""The roofline ceilings a page draws: theoretical (ncu report, device, table) and measured.

These belong with `profiling.analysis.device_model` and `profiling.analysis.ceilings`; they stay here until those
modules take them.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from profiling.analysis.ceilings import load_cached, measured_to_ceilings
from profiling.analysis.device_model import Ceilings, best_ceilings
from profiling.app.bundles import Bundle
from profiling.errors import InvalidInput
from profiling.nsight import report as ncu_report


def ceilings_for(device: Mapping[str, Any] | None = None, report: ncu_report.Report | None = None) -> Ceilings:
    """The best ceilings known: the ncu report's own clocks, else the device's properties, else the table."""
    metrics = None
    name = None
    if report is not None and report.launches:
        metrics = {k: m.value for k, m in report.launches[0].metrics.items()}
        name = report.launches[0].attributes.get("device__attribute_display_name")
    info = dict(device) if device else None
    return best_ceilings(ncu_metrics=metrics, device_info=info, device_name=name or (info or {}).get("name"))


def run_ceilings(run: Mapping[str, Any]) -> Ceilings | None:
    """Ceilings for a saved run's device: its properties when recorded, else the built-in table by name."""
    device = dict(run.get("device") or {})
    device.setdefault("name", run.get("device_name"))
    try:
        if device.get("sm_count"):
            return ceilings_for(device)
        return best_ceilings(device_name=device.get("name"))
    except InvalidInput:
        return None


def measured_ceilings(bundle: Bundle | None, device_name: str | None) -> Ceilings | None:
    """Ceilings measured on the GPU (`python -m profiling ceilings`): the bundle's ceilings.json for bundled
    data, else this machine's per-device cache; None when neither was measured for that device."""
    record = None
    if bundle is not None and (bundle.path / "ceilings.json").is_file():
        try:
            record = json.loads((bundle.path / "ceilings.json").read_text()).get("measured")
        except (OSError, ValueError):
            record = None
    if (record is None or record.get("device") != device_name) and device_name:
        record = load_cached(device_name)
    if not record or record.get("device") != device_name:
        return None
    return measured_to_ceilings(record["ceilings"] | {"device": record["device"]}, f"measured {record['measured_utc']}")
