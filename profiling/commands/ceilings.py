"""`python -m profiling ceilings`: measured roofline ceilings of the live GPU beside the theoretical ones."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import print_json, print_progress, seconds

HELP = "measure DRAM, L2, shared-memory bandwidth and FP32 FMA peak on the GPU (cached per device)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refresh", action="store_true", help="measure again even if cached")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--timeout", type=seconds("--timeout"), default=300.0, help="seconds the measurement may take")


def run(args: argparse.Namespace) -> int:
    ceilings = usecases.run_ceilings(refresh=args.refresh, timeout_s=args.timeout, progress=print_progress)
    device, record, measured, theoretical = ceilings.device, ceilings.record, ceilings.measured, ceilings.theoretical
    if args.json:
        print_json({"device": device, "measured": record, "theoretical": theoretical.to_dict()})
        return 0
    print(f"{device['name']} (cc {device['cc']}); measured {record['measured_utc']}")
    rows = [
        ("FP32 FMA", "fp32_flops", 1e12, "TFLOP/s"),
        ("DRAM", "dram_bytes_per_s", 1e12, "TB/s"),
        ("L2", "l2_bytes_per_s", 1e12, "TB/s"),
        ("shared/L1", "l1_bytes_per_s", 1e12, "TB/s"),
    ]
    for label, attr, scale, unit in rows:
        m, t = getattr(measured, attr), getattr(theoretical, attr)
        m_text = f"{m.value / scale:8.2f} {unit}" if m else "       -"
        t_text = f"{t.value / scale:8.2f} {unit} ({t.source})" if t else "-"
        print(f"  {label:<10} measured {m_text}   theoretical {t_text}")
    return 0
