"""Saved runs built from what GEMM Lens measures: benchmark results files and Nsight Compute reports.

bench_run() and report_run() give a SavedRun (profiling.runs.records), read_run_file() any JSON file that
`python -m profiling compare` accepts. run_from_bench, run_from_report and load_run_file give the same run
as its record dict, for callers that still read dicts.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from profiling import metric_names as MN
from profiling.errors import InvalidInput, error_line
from profiling.launch_operations import group_operations, merged_metrics
from profiling.runs.records import (
    BENCH_SCHEMA,
    EXPORT_SCHEMA,
    RUN_SCHEMA,
    BenchResult,
    RunResult,
    SavedRun,
)
from profiling.runs.results import ResultsDocument
from profiling.runs.values import MAX_JSON_DEPTH, finite_number, parse_json
from profiling.shape import tflops

# Canonical ncu metric names (see profiling/nsight/metrics.py) that feed the comparison columns.
NCU_TIME = MN.TIME  # nanoseconds
NCU_REGISTERS = MN.REGISTERS
NCU_SMEM_STATIC = MN.SMEM_STATIC
NCU_SMEM_DYNAMIC = MN.SMEM_DYNAMIC
NCU_OCCUPANCY = MN.ACHIEVED_OCC
NCU_BANK_CONFLICTS = (
    MN.SHARED_LD_CONFLICTS,
    MN.SHARED_ST_CONFLICTS,
)
NCU_DRAM_BYTES = MN.DRAM_BYTES
NCU_FP32 = {
    MN.FADD: 1,
    MN.FMUL: 1,
    MN.FFMA: 2,
}
MAX_RESULTS_FILE_BYTES = 200 * 1000 * 1000
"""The largest results JSON file read (the largest report too: profiling.nsight.report.MAX_REPORT_BYTES)."""
# The parts of a bench row whose numbers become a saved result's metrics ("time_ms.p90", "nvml.power_w_max"...).
_BENCH_NUMBER_KEYS = ("time_ms", "tflops", "pct_peak", "pct_cublas", "rel_error", "compile", "launch", "nvml")


def _flatten_numbers(value: Any, prefix: str, out: dict[str, float], depth: int = 0) -> None:
    if isinstance(value, Mapping):
        if depth > MAX_JSON_DEPTH:
            raise InvalidInput(f"{prefix} nests deeper than {MAX_JSON_DEPTH} levels")
        for key, item in value.items():
            _flatten_numbers(item, f"{prefix}.{key}" if prefix else str(key), out, depth + 1)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        num = finite_number(value)
        if num is not None:
            out[prefix] = num


def _metric(metrics: Mapping[str, Any], name: str) -> float | None:
    return finite_number(metrics.get(name))


def _sum_metrics(metrics: Mapping[str, Any], names: Sequence[str]) -> float | None:
    values = [finite_number(metrics.get(n)) for n in names]
    present = [v for v in values if v is not None]
    return sum(present) if present else None


def _get(obj: Any, *names: str) -> Any:
    for name in names:
        if isinstance(obj, Mapping):
            if name in obj:
                return obj[name]
        elif hasattr(obj, name):
            return getattr(obj, name)
    return None


def _bench_row_result(row: Any, where: str) -> RunResult:
    """A saved result from one results-file row; the row itself is kept whole in `extra`."""
    bench = BenchResult.from_dict(row, where)
    metrics: dict[str, float] = {}
    for key in _BENCH_NUMBER_KEYS:
        _flatten_numbers(row.get(key), key, metrics)
    if isinstance(row.get("metrics"), Mapping):  # ncu metrics merged into a bench row, if any
        metrics.update({str(k): v for k, v in row["metrics"].items() if finite_number(v) is not None})
    times = bench.time_ms
    return RunResult.from_dict(
        {
            "kernel": bench.kernel,
            "m": bench.shape.m,
            "n": bench.shape.n,
            "k": bench.shape.k,
            "status": bench.status,
            "error": bench.error,
            "time_median_ms": None if times is None else times.median,
            "time_min_ms": None if times is None else times.min,
            "time_max_ms": None if times is None else times.max,
            "tflops": bench.tflops,
            "pct_cublas": bench.pct_cublas,
            "rel_error": bench.rel_error,
            "registers": bench.registers,
            "shared_bytes": bench.shared_bytes,
            "occupancy_pct": _metric(metrics, NCU_OCCUPANCY),
            "bank_conflicts": _sum_metrics(metrics, NCU_BANK_CONFLICTS),
            "dram_bytes": _metric(metrics, NCU_DRAM_BYTES),
            "metrics": metrics,
            "times_ms": bench.times_ms,
            # The raw times live in their own column; the row is kept whole otherwise.
            "extra": {k: v for k, v in row.items() if k != "times_ms"} if isinstance(row, Mapping) else row,
        },
        where,
    )


def bench_run(
    doc: ResultsDocument | Mapping[str, Any],
    *,
    label: str | None = None,
    author: str = "",
    notes: str = "",
    kind: str = "bench",
) -> SavedRun:
    """A run from a `gemmlens.bench.v1` results document (docs/results-format.md), typed or as read from JSON."""
    if isinstance(doc, ResultsDocument):
        doc = doc.to_dict()  # the store keeps each row whole, as the file has it
    if not isinstance(doc, Mapping) or doc.get("schema") != BENCH_SCHEMA:
        found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
        raise InvalidInput(f"not a benchmark results file: schema is {found!r}, expected {BENCH_SCHEMA!r}")
    rows = doc.get("results")
    if not isinstance(rows, list):
        raise InvalidInput("benchmark results file has no `results` list")
    results = [_bench_row_result(row, f"benchmark result {i + 1}") for i, row in enumerate(rows)]
    tool = doc.get("tool") if isinstance(doc.get("tool"), Mapping) else {}
    return SavedRun.create(
        results,
        label=label,
        author=author,
        notes=notes,
        created=doc.get("created_utc"),
        kind=kind,
        device=doc.get("device") or {},
        catalog_commit=tool.get("gemmlens_commit"),
        meta={"source_schema": BENCH_SCHEMA, "tool": tool, "settings": doc.get("settings") or {}},
    )


def _launch_result(launch: Any, i: int, size_label: Any) -> dict[str, Any]:
    """The saved-result dict of one profiled launch (see report_run)."""
    raw_metrics = _get(launch, "metrics") or {}
    if not isinstance(raw_metrics, Mapping):
        raise InvalidInput(f"profile launch {i + 1}: metrics is not a mapping")
    metrics = {str(k): v for k, v in ((k, finite_number(v)) for k, v in raw_metrics.items()) if v is not None}
    raw_derived = _get(launch, "derived") or {}
    if not isinstance(raw_derived, Mapping):
        raise InvalidInput(f"profile launch {i + 1}: derived is not a mapping")
    derived = {str(k): finite_number(v) for k, v in raw_derived.items()}
    time_ns = _metric(metrics, NCU_TIME)
    flops = None
    if all(n_ in metrics for n_ in NCU_FP32):
        flops = sum(metrics[n_] * w for n_, w in NCU_FP32.items())
    return {
        "kernel": str(_get(launch, "name", "kernel") or ""),
        "size_label": size_label,
        "m": _get(launch, "m"),
        "n": _get(launch, "n"),
        "k": _get(launch, "k"),
        "status": "ok",
        "time_median_ms": None if time_ns is None else time_ns / 1e6,
        "tflops": tflops(flops, time_ns * 1e-9 if time_ns else None),
        "registers": _metric(metrics, NCU_REGISTERS),
        "shared_bytes": _sum_metrics(metrics, (NCU_SMEM_STATIC, NCU_SMEM_DYNAMIC)),
        "occupancy_pct": _metric(metrics, NCU_OCCUPANCY),
        "bank_conflicts": _sum_metrics(metrics, NCU_BANK_CONFLICTS),
        "dram_bytes": _metric(metrics, NCU_DRAM_BYTES),
        "metrics": metrics,
        "derived": derived,
        "extra": {
            "id": _get(launch, "id"),
            "block": _get(launch, "block"),
            "grid": _get(launch, "grid"),
            "cc": _get(launch, "cc"),
            "device": _get(launch, "device"),
            "units": {str(k): _get(v, "unit") for k, v in raw_metrics.items() if _get(v, "unit")},
            "findings": _get(launch, "findings") or [],
        },
    }


def _operations_merged(launches: Sequence[Any]) -> list[Any]:
    """The launches, with each operation that ran as several launches inside one worker NVTX range (cuBLAS split-K
    plus its reduction) merged into one: named by the catalog id and sized by the range, its time and every `.sum`
    metric added up, its other metrics from its longest part, and its parts listed (profiling.launch_operations)."""
    out: list[Any] = []
    for op in group_operations(launches):
        if op.key is None:
            out.extend(op.parts)
            continue
        if len(op.parts) == 1:
            # One launch in a worker range: named and sized by the range, so it lines up with a bench run (the same
            # for a parsed report and for its `report --json` form).
            out.append(_named_by_range(op.parts[0], op.key))
            continue
        kid, m, n, k = op.key
        main = op.main_part
        parts = []
        for part in op.parts:
            metrics = _get(part, "metrics")
            time_ns = metrics.get(NCU_TIME) if isinstance(metrics, Mapping) else None
            parts.append(
                {
                    "name": str(_get(part, "name") or ""),
                    "id": _get(part, "id"),
                    "grid": _dims(_get(part, "grid")),
                    "block": _dims(_get(part, "block")),
                    "time_ns": finite_number(time_ns),
                }
            )
        out.append(
            {
                "name": kid,
                "m": m,
                "n": n,
                "k": k,
                "metrics": merged_metrics(op),
                "derived": _get(main, "derived") or {},
                "block": _get(main, "block"),
                "grid": _get(main, "grid"),
                "cc": _get(main, "cc"),
                "device": _get(main, "device"),
                "findings": [],
                "parts": parts,
            }
        )
    return out


def _dims(value: Any) -> list[Any] | None:
    """A launch's grid or block as a list, None when it is not a sequence (a hand-edited or hostile file)."""
    if isinstance(value, Sequence) and not isinstance(value, (str, bytes)):
        return list(value)
    return None


def _named_by_range(launch: Any, key: tuple[str, int, int, int]) -> dict[str, Any]:
    """A report launch as a dict named by its worker range's catalog id and sized by it (function kept in extra)."""
    kid, m, n, k = key
    fields = ("id", "block", "grid", "cc", "device", "derived", "findings", "metrics")
    return {
        "name": kid,
        "m": m,
        "n": n,
        "k": k,
        "function": str(_get(launch, "name") or ""),
        **{f: _get(launch, f) for f in fields},
    }


def report_run(
    report: Any,
    *,
    label: str | None = None,
    author: str = "",
    notes: str = "",
    kind: str = "profile",
    device: Mapping[str, Any] | None = None,
    catalog_commit: str | None = None,
    created_utc: str | dt.datetime | None = None,
    meta: Mapping[str, Any] | None = None,
) -> SavedRun:
    """A run from an Nsight Compute report: an object with `.launches`, a `report --json` dict, or a list
    of launches. Each launch gives name, metrics {canonical name: number | {"value"} | Metric},
    optionally derived, findings, block, grid, cc, and a size (m/n/k or `size_label`)."""
    launches = report if isinstance(report, Sequence) else _get(report, "launches")
    if not isinstance(launches, Sequence) or isinstance(launches, (str, bytes)):
        raise InvalidInput("not a profile report: no list of kernel launches")
    launches = _operations_merged(launches)
    names = [str(_get(launch, "name", "kernel") or "") for launch in launches]
    seen: dict[str, int] = {}
    results = []
    first_device: Any = None
    for i, launch in enumerate(launches):
        name = names[i]
        if not name:
            raise InvalidInput(f"profile launch {i + 1} has no kernel name")
        size_label = _get(launch, "size_label", "size")
        if size_label is None and _get(launch, "m") is None and names.count(name) > 1:
            # Repeated launches of one kernel with no known size: number them so runs still line up.
            seen[name] = seen.get(name, 0) + 1
            size_label = f"#{seen[name]}"
        result = _launch_result(launch, i, size_label)
        if isinstance(launch, Mapping):
            for key in ("parts", "function"):
                if launch.get(key):
                    result["extra"][key] = launch[key]
        results.append(result)
        first_device = first_device or _get(launch, "device")
    dev = dict(device or {})
    if not dev.get("name") and isinstance(first_device, str):
        dev["name"] = first_device
    if not dev.get("cc") and launches:
        cc = _get(launches[0], "cc")
        if cc:
            dev["cc"] = str(cc)
    info = dict(meta or {})
    for key in ("source", "path", "layout", "warnings"):
        value = _get(report, key) if not isinstance(report, Sequence) else None
        if value:
            info.setdefault(key, value)
    return SavedRun.create(
        results,
        label=label,
        author=author,
        notes=notes,
        created=created_utc,
        kind=kind,
        device=dev,
        catalog_commit=catalog_commit,
        meta=info,
    )


def read_run_file(path: str | Path, *, label: str | None = None) -> SavedRun:
    """The run in a results JSON file: a bench file, a one-run export, or a `report --json` file."""
    path = Path(path)
    if path.exists() and not path.is_file():  # a folder, a device (/dev/zero), a pipe that would block
        raise InvalidInput(f"{path} is not a results file")
    try:
        with path.open("rb") as fh:
            data = fh.read(MAX_RESULTS_FILE_BYTES + 1)
        text = data.decode("utf-8-sig")
    except FileNotFoundError as exc:
        raise InvalidInput(f"no such file: {path}") from exc
    except (OSError, UnicodeDecodeError) as exc:
        raise InvalidInput(f"cannot read {path}: {error_line(exc, 200)}") from exc
    if len(data) > MAX_RESULTS_FILE_BYTES:
        raise InvalidInput(
            f"{path} is over {MAX_RESULTS_FILE_BYTES / 1e6:.0f} MB; results files that large are not read"
        )
    doc = parse_json(text, str(path))
    try:
        return _run_in(doc, label, path.stem)
    except InvalidInput as exc:
        raise InvalidInput(f"{path}: {exc}") from None


def _run_in(doc: Any, label: str | None, default_label: str) -> SavedRun:
    """The one run of a parsed results file (see read_run_file)."""
    if isinstance(doc, Mapping) and doc.get("schema") == BENCH_SCHEMA:
        return bench_run(doc, label=label or default_label)
    if isinstance(doc, Mapping) and doc.get("schema") in (RUN_SCHEMA, EXPORT_SCHEMA):
        runs = doc.get("runs") if doc.get("schema") == EXPORT_SCHEMA else [doc]
        if not isinstance(runs, list):
            raise InvalidInput("the runs export has no `runs` list")
        if len(runs) != 1:
            raise InvalidInput(f"the file holds {len(runs)} runs; compare needs a file with exactly one")
        run = SavedRun.from_dict(runs[0]).detached()  # a file is not a store: no store id here
        return dataclasses.replace(run, label=label) if label else run
    if isinstance(doc, Mapping) and "launches" in doc:
        return report_run(doc, label=label or default_label, kind="upload")
    found = doc.get("schema") if isinstance(doc, Mapping) else type(doc).__name__
    raise InvalidInput(f"unsupported JSON (schema {found!r}); expected {BENCH_SCHEMA}, {RUN_SCHEMA} or a report")


def run_from_bench(doc: Mapping[str, Any], **options: Any) -> dict[str, Any]:
    """bench_run() as a run record dict."""
    return bench_run(doc, **options).to_dict()


def run_from_report(report: Any, **options: Any) -> dict[str, Any]:
    """report_run() as a run record dict."""
    return report_run(report, **options).to_dict()


def load_run_file(path: str | Path, *, label: str | None = None) -> dict[str, Any]:
    """read_run_file() as a run record dict."""
    return read_run_file(path, label=label).to_dict()
