"""Benchmark result documents (docs/results-format.md): building, saving, loading and tabulating them."""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
from pathlib import Path
from typing import Any

from profiling.errors import InvalidInput
from profiling.paths import SOURCE_ROOT
from profiling.runs.records import BENCH_SCHEMA as SCHEMA
from profiling.runs.records import BenchResult


def git_commit() -> str | None:
    """The catalog's git commit (short), or None outside a git checkout."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], cwd=SOURCE_ROOT, capture_output=True, text=True, timeout=5
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    return done.stdout.strip() or None if done.returncode == 0 else None


def build_document(
    device: dict[str, Any] | None, settings: dict[str, Any], results: list[dict[str, Any]], created_utc: str
) -> dict[str, Any]:
    """A results document as written by `python -m profiling bench --json`."""
    device = device or {}
    return {
        "schema": SCHEMA,
        "created_utc": created_utc,
        "tool": {"gemmlens_commit": git_commit(), "cupy": device.get("cupy"), "python": device.get("python")},
        "device": device,
        "settings": settings,
        "results": results,
    }


def load_document(path: str | Path) -> dict[str, Any]:
    """Read and check a results document; InvalidInput says what is wrong with a bad file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path} is not a GEMM Lens results JSON file ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != SCHEMA or not isinstance(data.get("results"), list):
        raise InvalidInput(f'{path} is not a GEMM Lens results file (expected "schema": "{SCHEMA}")')
    return data


def results_frame(document: dict[str, Any]):  # -> pandas.DataFrame
    """One row per kernel and size with the columns the tables and charts use."""
    import pandas as pd  # lazy: importing this module (CLI, GPU job bodies) must not load pandas

    rows = []
    for i, row in enumerate(document["results"]):
        r = BenchResult.from_dict(row, f"result {i + 1}")
        t = r.time_ms
        rows.append(
            {
                "kernel": r.kernel,
                "title": r.title if r.title is not None else r.kernel,
                "operation": r.operation if r.operation is not None else "sgemm",
                "m": r.shape.m,
                "n": r.shape.n,
                "k": r.shape.k,
                "size": r.shape.label,
                "status": r.status,
                "error": r.error,
                "median_ms": None if t is None else t.median,
                "min_ms": None if t is None else t.min,
                "max_ms": None if t is None else t.max,
                "spread_pct": None if t is None else t.spread_pct,
                "samples": None if t is None else t.samples,
                "tflops": r.tflops,
                "pct_peak": r.pct_peak,
                "pct_cublas": r.pct_cublas,
                "rel_error": r.rel_error,
                "registers": r.registers,
                "shared_bytes": r.shared_static_bytes,
                "spill_bytes": r.spill_bytes,
                "sm_clock_mhz": r.sm_clock_mhz,
                "capped": r.capped,
                "clock_events": ",".join(r.clock_event_reasons),
            }
        )
    return pd.DataFrame(rows)


def format_table(document: dict[str, Any]) -> str:
    """A plain-text table of a results document for the terminal."""
    frame = results_frame(document)
    if frame.empty:
        return "(no results)"
    cols = [
        "kernel",
        "size",
        "status",
        "median_ms",
        "tflops",
        "pct_peak",
        "pct_cublas",
        "rel_error",
        "registers",
        "capped",
    ]
    view = frame[cols].copy()
    return view.to_string(
        index=False,
        na_rep="-",
        float_format=lambda v: f"{v:.3g}" if abs(v) < 1e-2 else f"{v:.2f}",
    )


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def add_reference_ratios(results: list[dict[str, Any]]) -> None:
    """Fill pct_cublas: each result's speed against its operation's library reference at the same shape."""
    reference_ids = {"sgemm": "cublas", "hgemm_addmm": "cublas-hgemm"}
    typed = [BenchResult.from_dict(r, f"result {i + 1}") for i, r in enumerate(results)]
    refs = {
        (r.operation, r.shape): r.time_ms.median
        for r in typed
        if r.kernel == reference_ids.get(r.operation or "") and r.time_ms
    }
    for row, r in zip(results, typed, strict=True):
        ref_ms = refs.get((r.operation, r.shape))
        if ref_ms and r.time_ms:
            row["pct_cublas"] = 100.0 * ref_ms / r.time_ms.median
