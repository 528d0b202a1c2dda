"""Benchmark result documents (docs/results-format.md): building, saving, loading and tabulating them."""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from kernels.catalog import reference_ids
from kernels.registry import operation_of
from profiling.errors import InvalidInput
from profiling.paths import SOURCE_ROOT
from profiling.runs.records import BENCH_SCHEMA as SCHEMA
from profiling.runs.records import BenchResult

COMMIT_ENV = "GEMMLENS_COMMIT"
# The code a result depends on: the kernels and the GPU side that compiles, verifies and times them.
DIGEST_GLOBS = (
    "kernels/**/*.cu",
    "kernels/**/*.cuh",  # the headers the kernels include (cp_async.cuh, hopper_wgmma.cuh, v8_body.cuh)
    "kernels/**/*.py",
    "profiling/gpu/**/*.py",
    "profiling/gpu/**/*.cu",
    "profiling/gpu/**/*.cuh",
)


def git_commit(root: Path = SOURCE_ROOT) -> str | None:
    """The checkout's short git commit, with "-dirty" when tracked files differ from it.

    $GEMMLENS_COMMIT wins when set: a copy of the tree without its .git folder (as the device tool sends to
    a GPU machine) or an installed package has no repository to ask, so git gives None there.
    """
    if os.environ.get(COMMIT_ENV, "").strip():
        return os.environ[COMMIT_ENV].strip()
    # safe.directory: a checkout owned by another user (a copied or mounted tree) is still read.
    git = ["git", "-c", "safe.directory=*", "-C", str(root)]
    try:
        head = subprocess.run([*git, "rev-parse", "--short", "HEAD"], capture_output=True, text=True, timeout=5)
        if head.returncode != 0 or not head.stdout.strip():
            return None
        status = subprocess.run(
            [*git, "status", "--porcelain", "--untracked-files=no"], capture_output=True, text=True, timeout=10
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    dirty = status.returncode == 0 and bool(status.stdout.strip())
    return head.stdout.strip() + ("-dirty" if dirty else "")


def source_digest(root: Path = SOURCE_ROOT) -> str:
    """First 16 hex digits of a sha256 over the kernel sources and the GPU code (paths and bytes): names the
    code behind a result even where git cannot (a copied tree, an installed package, uncommitted edits)."""
    digest = hashlib.sha256()
    files = sorted({p for pattern in DIGEST_GLOBS for p in root.glob(pattern) if p.is_file()})
    for path in files:
        digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()[:16]


def build_document(
    device: dict[str, Any] | None, settings: dict[str, Any], results: list[dict[str, Any]], created_utc: str
) -> dict[str, Any]:
    """A results document as written by `python -m profiling bench --json`."""
    device = device or {}
    tool = {
        "gemmlens_commit": git_commit(),
        "source_digest": source_digest(),
        "cupy": device.get("cupy"),
        "cuda_runtime": device.get("cuda_runtime"),
        "cuda_driver": device.get("cuda_driver"),
        "nvidia_driver": device.get("driver"),
        "python": device.get("python"),
    }
    return {
        "schema": SCHEMA,
        "created_utc": created_utc,
        "tool": tool,
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
        known = operation_of(r.kernel, r.operation)  # a row without one: the catalog's answer, else SGEMM
        rows.append(
            {
                "kernel": r.kernel,
                "title": r.title if r.title is not None else r.kernel,
                "operation": r.operation if r.operation is not None else known.name if known else "sgemm",
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
    reference = reference_ids()
    typed = [BenchResult.from_dict(r, f"result {i + 1}") for i, r in enumerate(results)]
    refs = {
        (r.operation, r.shape): r.time_ms.median
        for r in typed
        if r.kernel == reference.get(r.operation or "") and r.time_ms
    }
    for row, r in zip(results, typed, strict=True):
        ref_ms = refs.get((r.operation, r.shape))
        if ref_ms and r.time_ms:
            row["pct_cublas"] = 100.0 * ref_ms / r.time_ms.median
