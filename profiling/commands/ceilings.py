"""`python -m profiling ceilings`: measured roofline ceilings of the live GPU beside the theoretical ones."""

from __future__ import annotations

import argparse
import json

HELP = "measure DRAM, L2, shared-memory bandwidth and FP32 FMA peak on the GPU (cached per device)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--refresh", action="store_true", help="measure again even if cached")
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds the measurement may take")


def run(args: argparse.Namespace) -> int:
    from profiling.analysis.ceilings import load_cached, measured_to_ceilings, save_cached
    from profiling.analysis.device_model import ceilings_from_device_info
    from profiling.errors import WorkerError
    from profiling.gpu.jobs import Job, Task
    from profiling.gpu.worker import run_job
    from profiling.runs.results import utc_now

    device, _ = run_job(Job(op="device_info"), task_timeout_s=60)
    if device is None:
        raise WorkerError("the GPU worker reported no device")
    record = None if args.refresh else load_cached(device["name"])
    if record is None:
        device, results = run_job(Job(op="ceilings", tasks=[Task("ceilings", 1, 1, 1)]), task_timeout_s=args.timeout)
        if not results or results[0]["status"] != "ok":
            raise WorkerError(f"measuring ceilings failed: {results[0]['error'] if results else 'no result'}")
        record = {"device": device["name"], "measured_utc": utc_now(), "ceilings": results[0]["ceilings"]}
        save_cached(record)
    measured = measured_to_ceilings(
        record["ceilings"] | {"device": record["device"]}, f"measured {record['measured_utc']}"
    )
    theoretical = ceilings_from_device_info(device)
    if args.json:
        print(json.dumps({"device": device, "measured": record, "theoretical": theoretical.to_dict()}, indent=1))
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
