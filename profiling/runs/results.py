"""Benchmark result documents (docs/results-format.md): building, saving, loading and tabulating them."""

from __future__ import annotations

import datetime as _dt
import json
import subprocess
from pathlib import Path
from typing import Any

from profiling.errors import InvalidInput
from profiling.paths import SOURCE_ROOT

SCHEMA = "gemmlens.bench.v1"


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
    import pandas as pd

    rows = []
    for r in document["results"]:
        t = r.get("time_ms") or {}
        comp = r.get("compile") or {}
        nvml = r.get("nvml") or {}
        rows.append(
            {
                "kernel": r["kernel"],
                "title": r.get("title", r["kernel"]),
                "operation": r.get("operation", "sgemm"),
                "m": r["m"],
                "n": r["n"],
                "k": r["k"],
                "size": f"{r['m']}x{r['n']}x{r['k']}",
                "status": r["status"],
                "error": r.get("error"),
                "median_ms": t.get("median"),
                "min_ms": t.get("min"),
                "max_ms": t.get("max"),
                "spread_pct": t.get("spread_pct"),
                "samples": t.get("samples"),
                "tflops": r.get("tflops"),
                "pct_peak": r.get("pct_peak"),
                "pct_cublas": r.get("pct_cublas"),
                "rel_error": r.get("rel_error"),
                "registers": comp.get("registers"),
                "shared_bytes": comp.get("shared_static_bytes"),
                "spill_bytes": comp.get("local_bytes"),
                "sm_clock_mhz": (nvml.get("sm_clock_mhz") or {}).get("median"),
                "capped": nvml.get("capped"),
                "clock_events": ",".join(nvml.get("clock_event_reasons") or []),
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
    refs = {
        (r.get("operation"), r["m"], r["n"], r["k"]): r["time_ms"]["median"]
        for r in results
        if r["kernel"] == reference_ids.get(r.get("operation", "")) and r.get("time_ms")
    }
    for r in results:
        ref_ms = refs.get((r.get("operation"), r["m"], r["n"], r["k"]))
        if ref_ms and r.get("time_ms"):
            r["pct_cublas"] = 100.0 * ref_ms / r["time_ms"]["median"]
