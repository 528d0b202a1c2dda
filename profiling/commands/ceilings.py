"""`python -m profiling ceilings`: measured roofline ceilings of the live GPU beside the theoretical ones.

Without a GPU (and without --refresh) it prints the ceilings measured earlier instead: this machine's cache and
the bundled measurements (results/*/ceilings.json), each labelled with its device, date and source.
"""

from __future__ import annotations

import argparse
import sys

from profiling import usecases
from profiling.commands import print_json, print_progress, seconds
from profiling.errors import WorkerError

HELP = "measure DRAM, L2, shared-memory bandwidth and FP32 FMA peak on the GPU (cached per device)"

_ROWS = (
    ("FP32 FMA", "fp32_flops", 1e12, "TFLOP/s"),
    ("DRAM", "dram_bytes_per_s", 1e12, "TB/s"),
    ("L2", "l2_bytes_per_s", 1e12, "TB/s"),
    ("shared/L1", "l1_bytes_per_s", 1e12, "TB/s"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refresh", action="store_true", help="measure again even if cached")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help="seconds the measurement may take")


def run(args: argparse.Namespace) -> int:
    try:
        runs = [usecases.run_ceilings(refresh=args.refresh, timeout_s=args.timeout, progress=print_progress)]
    except WorkerError as exc:
        runs = [] if args.refresh else usecases.recorded_ceilings()
        if not runs:
            raise
        print(f"note: nothing measured now ({exc}); showing ceilings measured earlier", file=sys.stderr)
    if args.json:
        documents = [_document(r) for r in runs]
        print_json(documents[0] if runs[0].source in ("measured now", "cached") else {"recorded": documents})
        return 0
    for i, ceilings in enumerate(runs):
        print(("\n" if i else "") + _heading(ceilings))
        for label, attr, scale, unit in _ROWS:
            m = getattr(ceilings.measured, attr)
            t = getattr(ceilings.theoretical, attr) if ceilings.theoretical else None
            m_text = f"{m.value / scale:8.2f} {unit}" if m else "       -"
            t_text = f"{t.value / scale:8.2f} {unit} ({t.source})" if t else "-"
            print(f"  {label:<10} measured {m_text}   theoretical {t_text}")
    return 0


def _heading(ceilings: usecases.CeilingsRun) -> str:
    device, record = ceilings.device, ceilings.record
    cc = f" (cc {device.cc})" if device.cc else ""
    where = "" if ceilings.source in ("measured now", "cached") else f" [{ceilings.source}]"
    return f"{device.name or record['device']}{cc}; measured {record['measured_utc']}{where}"


def _document(ceilings: usecases.CeilingsRun) -> dict:
    theoretical = ceilings.theoretical.to_dict() if ceilings.theoretical else None
    out = {"device": ceilings.device.to_dict(), "measured": ceilings.record, "theoretical": theoretical}
    return out if ceilings.source in ("measured now", "cached") else out | {"source": ceilings.source}
