"""Benchmark result documents (docs/results-format.md): the typed `ResultsDocument`, and building, saving, loading
and tabulating it."""

from __future__ import annotations

import dataclasses
import datetime as _dt
import hashlib
import json
import os
import subprocess
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kernels.catalog import reference_ids
from kernels.registry import operation_of
from kernels.tuning import nvrtc_note_in
from profiling.device_model import DeviceInfo
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


@dataclass
class ResultsDocument:
    """A benchmark's results document (`gemmlens.bench.v1`, docs/results-format.md), read once from its JSON form.

    The worker's use cases build it, the CLI writes `to_dict()` as the `--json` file, the app and the store read
    its typed rows. The optional parts say what kind of run it was: an interleaved A/B pair (`ab`), a tuning sweep
    (`tuning`), a cluster run (`cluster`). Top-level keys it does not know stay in `other`, in their order.
    """

    results: list[BenchResult] = field(default_factory=list)
    created_utc: str = ""
    tool: dict[str, Any] = field(default_factory=dict)  # gemmlens_commit, source_digest, cupy, CUDA and driver versions
    device: DeviceInfo = field(default_factory=DeviceInfo)  # the GPU it ran on, as the worker described it
    settings: dict[str, Any] = field(default_factory=dict)  # the BenchSettings the job ran with
    ab: dict[str, Any] | None = None  # {"a", "b", "paired"}: which two kernels an A/B run interleaved
    tuning: dict[str, Any] | None = None  # {"kernels", "best", "by_gpu_type"?, "record_errors"?}
    cluster: dict[str, Any] | None = None  # scheduler, GPU workers, results per GPU, timings
    other: dict[str, Any] = field(default_factory=dict)

    @property
    def device_name(self) -> str | None:
        return self.device.name or None

    @property
    def all_verified(self) -> bool:
        """Whether every run verified (or was refused for its size, which is not a failure)."""
        return all(r.status in ("ok", "refused") for r in self.results)

    @classmethod
    def from_dict(cls, data: Any, where: str = "the results document") -> ResultsDocument:
        """The document of a results file's JSON; InvalidInput with one line when it is not one or a row is bad."""
        if not isinstance(data, Mapping) or data.get("schema") != SCHEMA or not isinstance(data.get("results"), list):
            raise InvalidInput(f'{where} is not a GEMM Lens results file (expected "schema": "{SCHEMA}")')

        def part(key: str) -> dict[str, Any] | None:
            value = data.get(key)
            return dict(value) if isinstance(value, Mapping) else None

        return cls(
            results=[BenchResult.from_dict(row, f"result {i + 1}") for i, row in enumerate(data["results"])],
            created_utc=str(data.get("created_utc") or ""),
            tool=part("tool") or {},
            device=DeviceInfo.from_dict(part("device")),
            settings=part("settings") or {},
            ab=part("ab"),
            tuning=part("tuning"),
            cluster=part("cluster"),
            other={k: v for k, v in data.items() if k not in _DOCUMENT_KEYS},
        )

    def to_dict(self) -> dict[str, Any]:
        """The JSON form, keys in the order the CLI has always written them (a written file reads back the same)."""
        out: dict[str, Any] = {
            "schema": SCHEMA,
            "created_utc": self.created_utc,
            "tool": self.tool,
            "device": self.device.to_dict(),
            "settings": self.settings,
            "results": [r.to_dict() for r in self.results],
        }
        for key in ("ab", "cluster", "tuning"):
            if getattr(self, key) is not None:
                out[key] = getattr(self, key)
        return out | {k: v for k, v in self.other.items() if k not in out}


_DOCUMENT_KEYS = ("schema", "created_utc", "tool", "device", "settings", "results", "ab", "tuning", "cluster")


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
    device: DeviceInfo, settings: dict[str, Any], results: list[BenchResult], created_utc: str
) -> ResultsDocument:
    """A results document as written by `python -m profiling bench --json`: the worker's device and the job's
    settings (JSON from the worker pipe) with the tool versions this checkout ran."""
    tool = {
        "gemmlens_commit": git_commit(),
        "source_digest": source_digest(),
        "cupy": device.cupy,
        "nvrtc": device.nvrtc,
        "cuda_runtime": device.cuda_runtime,
        "cuda_driver": device.cuda_driver,
        "nvidia_driver": device.driver,
        "python": device.python,
    }
    return ResultsDocument(results=list(results), created_utc=created_utc, tool=tool, device=device, settings=settings)


def load_document(path: str | Path) -> ResultsDocument:
    """Read and check a results document; InvalidInput says what is wrong with a bad file."""
    path = Path(path)
    try:
        data = json.loads(path.read_text())
    except OSError as exc:
        raise InvalidInput(f"cannot read {path}: {exc.strerror or exc}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InvalidInput(f"{path} is not a GEMM Lens results JSON file ({exc})") from None
    try:
        return ResultsDocument.from_dict(data, str(path))
    except InvalidInput as exc:
        raise InvalidInput(str(exc) if str(path) in str(exc) else f"{path}: {exc}") from None


def merge_documents(documents: list[ResultsDocument], sources: list[str]) -> ResultsDocument:
    """Several results documents as one: the first one's device, settings and tool, every result in order, and
    `sources` (in `other`) naming the files. A result's reference (cuBLAS) precedes it within its own document, so
    that order keeps each ratio's pairing."""
    return dataclasses.replace(
        documents[0],
        results=[r for d in documents for r in d.results],
        other=documents[0].other | {"sources": list(sources)},
    )


def run_references(document: ResultsDocument) -> list[BenchResult | None]:
    """Each result's library reference from its own run (aligned with document.results): the latest result of its
    operation's reference at its shape before it (a run times the reference first, and merge_documents keeps each
    document's order); None where none precedes it. A reference result is its own."""
    reference = reference_ids()
    latest: dict[tuple[str | None, Any], BenchResult] = {}
    found: list[BenchResult | None] = []
    for r in document.results:
        if r.kernel == reference.get(r.operation or ""):
            latest[(r.operation, r.shape)] = r
        found.append(latest.get((r.operation, r.shape)))
    return found


def results_frame(document: ResultsDocument):  # -> pandas.DataFrame
    """One row per kernel and size with the columns the tables and charts use."""
    import pandas as pd  # lazy: importing this module (CLI, GPU job bodies) must not load pandas

    rows = []
    for r in document.results:
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


def format_table(document: ResultsDocument) -> str:
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


def compiler_notes(document: ResultsDocument) -> dict[str, list[str]]:
    """The results that ran a configuration their GPU's tuning record measured with another NVRTC than the run's
    (kernels.tuning.nvrtc_note_in), by note: "<kernel> <shape> ran <configuration>" each."""
    notes: dict[str, list[str]] = {}
    for r in document.results:
        if note := nvrtc_note_in(r.config):
            notes.setdefault(note, []).append(f"{r.kernel} {r.shape.label} ran {str(r.config).split(' ')[0]}")
    return notes


def utc_now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def add_reference_ratios(results: list[BenchResult]) -> None:
    """Fill pct_cublas: each result's speed against its operation's library reference at the same shape."""
    reference = reference_ids()
    refs = {
        (r.operation, r.shape): r.time_ms.median
        for r in results
        if r.kernel == reference.get(r.operation or "") and r.time_ms
    }
    for r in results:
        ref_ms = refs.get((r.operation, r.shape))
        if ref_ms and r.time_ms:
            r.pct_cublas = 100.0 * ref_ms / r.time_ms.median


def bench_results(records: list[dict[str, Any]]) -> list[BenchResult]:
    """The worker's result lines (JSON from its pipe, or a cluster share) as typed rows."""
    return [BenchResult.from_dict(r, f"result {i + 1}") for i, r in enumerate(records)]
