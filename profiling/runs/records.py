"""Typed records of results and runs, each built in one place and read by the worker, store and review.

- `BenchResult` (with `TimeSummary`): one kernel x shape outcome of a benchmark or profile task, as the GPU
  worker reports it and as a row of a results file (runs.results.ResultsDocument, docs/results-format.md).
- `RunResult`: one result of a saved run: the store's comparison columns (RESULT_FIELDS) plus the metrics,
  derived metrics and untouched source row that live in JSON columns.
- `SavedRun`: a run in the store (`gemmlens.run.v1`): label, author, kind, dates, device, meta, results.

`from_dict` checks and cleans a JSON-able dict (raising InvalidInput with a one-line reason); `to_dict` writes it back.
Besides profiling's leaf modules this imports only the standard library: the GPU worker starts no slower.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput
from profiling.runs.values import (
    as_int,
    finite_number,
    iso_utc,
    json_number,
    jsonable,
    nonempty_str,
    raw_times,
    result_value_problem,
    store_int,
    text_or_none,
    to_utc,
    unicode_text,
)
from profiling.shape import Shape, shape_of

BENCH_SCHEMA = "gemmlens.bench.v1"  # results files written by `python -m profiling bench --json`
RUN_SCHEMA = "gemmlens.run.v1"  # one saved run
EXPORT_SCHEMA = "gemmlens.runs.v1"  # several saved runs, as runs.export.export_runs_json writes them
KINDS = ("bench", "profile", "upload")


def _kernel_of(data: Any, where: str) -> str:
    """The kernel name of a result's dict form; InvalidInput naming `where` when it is no object or has none."""
    if not isinstance(data, Mapping):
        raise InvalidInput(f"{where} is not an object")
    kernel = data.get("kernel")
    if not isinstance(kernel, str) or not kernel.strip():
        raise InvalidInput(f"{where} has no kernel name")
    return unicode_text(kernel)


def _times(data: Mapping[str, Any], where: str, kernel: str) -> list[float] | None:
    """raw_times of a result's dict form, its InvalidInput naming the result."""
    try:
        return raw_times(data.get("times_ms"))
    except InvalidInput as exc:
        raise InvalidInput(f"{where} ({kernel[:60]} {size_text(data)}): {exc}".replace(" )", ")")) from None


def size_text(result: Mapping[str, Any] | RunResult) -> str:
    """How a result's size is shown and matched: "MxNxK", else its size label, else ""."""
    if isinstance(result, RunResult):
        return result.size
    shape = shape_of(result.get("m"), result.get("n"), result.get("k"))
    return shape.label if shape else str(result.get("size_label") or "")


# ---------------------------------------------------------------------------------------------
# Benchmark results (docs/results-format.md)
# ---------------------------------------------------------------------------------------------


@dataclass
class TimeSummary:
    """CUDA-event times of single launches, in milliseconds (`time_ms` of a benchmark result)."""

    median: float
    min: float | None = None
    max: float | None = None
    mean: float | None = None
    stdev: float | None = None
    p10: float | None = None
    p90: float | None = None
    spread_pct: float | None = None  # (p90 - p10) / median
    samples: int | None = None

    @classmethod
    def from_dict(cls, data: Any) -> TimeSummary | None:
        """The summary of a `time_ms` object; None when there is none or it has no median."""
        if not isinstance(data, Mapping) or json_number(data.get("median")) is None:
            return None
        values = {f.name: json_number(data.get(f.name)) for f in dataclasses.fields(cls)}
        samples = data.get("samples")
        values["samples"] = samples if isinstance(samples, int) and not isinstance(samples, bool) else None
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        return {k: v for k, v in dataclasses.asdict(self).items() if v is not None}


@dataclass
class BenchResult:
    """One kernel at one shape: verification, timing and compiler facts (a `results` row of a bench file).

    The GPU worker builds it (gpu.runner.run_task) and sends `to_dict()`; readers use `from_dict`.
    Fields that a result does not have stay None and are left out of the dict form (config excepted).
    """

    kernel: str
    shape: Shape
    status: str = "ok"  # ok | wrong (verification failed) | failed (error) | refused (size) | cancelled
    error: str | None = None
    title: str | None = None
    operation: str | None = None  # sgemm | hgemm_addmm | bgemm_addmm
    tolerance: float | None = None
    config: str | None = None  # the entry point or tuned configuration that ran
    compile_info: dict[str, Any] | None = None  # "compile": registers, shared_static_bytes, local_bytes, log...
    launch: dict[str, Any] | None = None  # grid, block, dynamic_smem_bytes, max_active_blocks_per_sm
    rel_error: float | None = None  # ||C - ref|| / ||ref||; NaN where there is nothing to check against
    time_ms: TimeSummary | None = None
    nvml: dict[str, Any] | None = None  # clocks, power, temperature and clock-event reasons while timed
    tflops: float | None = None
    pct_peak: float | None = None  # of the device's FP32 peak (sgemm only)
    rel_error_after_timing: float | None = None
    pct_cublas: float | None = None  # speed against the same operation's library reference, same run
    times_ms: list[float] | None = None  # every timed launch, in launch order: what the verdicts' statistics need
    other: dict[str, Any] = field(default_factory=dict)  # keys this record does not know, kept as they came
    # The keys of the dict it was read from: to_dict writes them back in that order (a key it lacked keeps its place).
    key_order: tuple[str, ...] = field(default=(), repr=False, compare=False)

    @property
    def registers(self) -> int | None:
        return as_int((self.compile_info or {}).get("registers"))

    @property
    def shared_static_bytes(self) -> int | None:
        return as_int((self.compile_info or {}).get("shared_static_bytes"))

    @property
    def shared_bytes(self) -> int | None:
        """Static plus dynamic shared memory per block; None when neither is known."""
        static, dynamic = self.shared_static_bytes, as_int((self.launch or {}).get("dynamic_smem_bytes"))
        return None if static is None and dynamic is None else (static or 0) + (dynamic or 0)

    @property
    def spill_bytes(self) -> int | None:
        return as_int((self.compile_info or {}).get("local_bytes"))

    @property
    def sm_clock_mhz(self) -> float | None:
        """Median SM clock while timed."""
        clock = (self.nvml or {}).get("sm_clock_mhz")
        return clock.get("median") if isinstance(clock, Mapping) else None

    @property
    def capped(self) -> bool | None:
        """Whether power or thermal limits slowed the clocks while timed (None: not sampled)."""
        return (self.nvml or {}).get("capped")

    @property
    def clock_event_reasons(self) -> list[str]:
        return list((self.nvml or {}).get("clock_event_reasons") or [])

    @property
    def gpu_name(self) -> str | None:
        """The GPU a cluster worker ran it on (its `gpu.name`); None for a one-GPU run."""
        gpu = self.other.get("gpu")
        return str(gpu["name"]) if isinstance(gpu, Mapping) and gpu.get("name") else None

    @classmethod
    def from_dict(cls, data: Any, where: str = "benchmark result") -> BenchResult:
        """A result from its dict form; InvalidInput names `where` when the kernel or size is missing."""
        kernel = _kernel_of(data, where)
        shape = shape_of(as_int(data.get("m")), as_int(data.get("n")), as_int(data.get("k")))
        if shape is None:
            raise InvalidInput(f"{where} ({kernel}) has no size m, n, k")

        def mapping(key: str) -> dict[str, Any] | None:
            value = data.get(key)
            return value if isinstance(value, dict) else dict(value) if isinstance(value, Mapping) else None

        return cls(
            kernel=kernel,
            shape=shape,
            status=str(data.get("status") or "ok"),
            error=text_or_none(data.get("error")),
            title=text_or_none(data.get("title")),
            operation=text_or_none(data.get("operation")),
            tolerance=json_number(data.get("tolerance")),
            config=text_or_none(data.get("config")),
            compile_info=mapping("compile"),
            launch=mapping("launch"),
            rel_error=json_number(data.get("rel_error")),
            time_ms=TimeSummary.from_dict(data.get("time_ms")),
            nvml=mapping("nvml"),
            tflops=json_number(data.get("tflops")),
            pct_peak=json_number(data.get("pct_peak")),
            rel_error_after_timing=json_number(data.get("rel_error_after_timing")),
            pct_cublas=json_number(data.get("pct_cublas")),
            times_ms=_times(data, where, kernel),
            other={k: v for k, v in data.items() if k not in _BENCH_KEYS},
            key_order=tuple(data),
        )

    def to_dict(self) -> dict[str, Any]:
        """The results-file row: kernel, m, n, k, status, error and config always, other fields where known."""
        values = {
            "kernel": self.kernel,
            "title": self.title,
            "operation": self.operation,
            "m": self.shape.m,
            "n": self.shape.n,
            "k": self.shape.k,
            "status": self.status,
            "error": self.error,
            "tolerance": self.tolerance,
            "config": self.config,
            "compile": self.compile_info,
            "launch": self.launch,
            "rel_error": self.rel_error,
            "time_ms": None if self.time_ms is None else self.time_ms.to_dict(),
            "nvml": self.nvml,
            "tflops": self.tflops,
            "pct_peak": self.pct_peak,
            "rel_error_after_timing": self.rel_error_after_timing,
            "times_ms": self.times_ms,
        }
        out = {k: v for k, v in values.items() if v is not None or k in _BENCH_ALWAYS} | self.other
        if self.pct_cublas is not None:  # last: the parent adds it once every result of a shape is in
            out["pct_cublas"] = self.pct_cublas
        position = {k: i for i, k in enumerate(self.key_order)}
        came = iter(sorted((k for k in out if k in position), key=position.__getitem__))
        return {key: out[key] for key in (next(came) if k in position else k for k in out)}


# The keys of a results-file row, in the order the worker writes them.
_BENCH_KEYS = (
    "kernel",
    "title",
    "operation",
    "m",
    "n",
    "k",
    "status",
    "error",
    "tolerance",
    "config",
    "compile",
    "launch",
    "rel_error",
    "time_ms",
    "nvml",
    "tflops",
    "pct_peak",
    "rel_error_after_timing",
    "times_ms",
    "pct_cublas",
)
# Written even when None: a null config says a library reference ran, not a catalog entry point.
_BENCH_ALWAYS = frozenset({"kernel", "m", "n", "k", "status", "error", "config"})


# ---------------------------------------------------------------------------------------------
# Saved runs (the run store)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class RunResult:
    """One result of a saved run. Every field but metrics/derived/extra is a column of the store."""

    kernel: str
    size_label: str | None = None  # a size given as text (e.g. "#2" for the second unsized launch)
    m: int | None = None
    n: int | None = None
    k: int | None = None
    status: str = "ok"
    error: str | None = None
    time_median_ms: float | None = None
    time_min_ms: float | None = None
    time_max_ms: float | None = None
    tflops: float | None = None
    pct_cublas: float | None = None
    rel_error: float | None = None
    registers: int | None = None
    shared_bytes: int | None = None
    occupancy_pct: float | None = None
    bank_conflicts: float | None = None
    dram_bytes: float | None = None
    metrics: dict[str, float | None] = field(default_factory=dict)  # flattened numbers, ncu metrics
    derived: dict[str, float | None] = field(default_factory=dict)  # metrics computed from the report
    extra: dict[str, Any] = field(default_factory=dict)  # the source row or launch, kept whole
    times_ms: tuple[float, ...] | None = None  # every timed launch (ms), for the verdicts' statistics

    @property
    def shape(self) -> Shape | None:
        return shape_of(self.m, self.n, self.k)

    @property
    def size(self) -> str:
        """How the size is shown and matched between runs: "MxNxK", else size_label, else ""."""
        shape = self.shape
        return shape.label if shape else (self.size_label or "")

    @classmethod
    def from_dict(cls, data: Any, where: str = "result") -> RunResult:
        """A clean result: columns typed (non-finite numbers become None), JSON parts made JSON-safe; InvalidInput
        naming `where` and the field for a number that no store column holds."""
        kernel = _kernel_of(data, where)
        values = {}
        for name in RESULT_FIELDS:
            try:
                values[name] = _COLUMN_TYPES[name](data.get(name))
            except InvalidInput as exc:
                raise InvalidInput(f"{where} ({kernel[:60]}): {name} {exc}") from None
        values["kernel"] = kernel.strip()
        values["status"] = values["status"] or "ok"
        problem = result_value_problem(values, data)
        if problem:
            raise InvalidInput(f"{where} ({kernel[:60]}): {problem}")
        for part in ("metrics", "derived"):
            raw = data.get(part) or {}
            if not isinstance(raw, Mapping):
                raise InvalidInput(f"{where}: {part} is not an object")
            values[part] = {unicode_text(name): finite_number(v) for name, v in raw.items()}
        extra = data.get("extra") or {}
        values["extra"] = jsonable(extra) if isinstance(extra, Mapping) else {"value": jsonable(extra)}
        times = _times(data, where, kernel)
        values["times_ms"] = None if times is None else tuple(times)
        return cls(**values)

    def columns(self) -> dict[str, Any]:
        """The values of the store's result columns (RESULT_FIELDS)."""
        return {name: getattr(self, name) for name in RESULT_FIELDS}

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.columns(),
            "metrics": dict(self.metrics),
            "derived": dict(self.derived),
            "extra": dict(self.extra),
            "times_ms": None if self.times_ms is None else list(self.times_ms),
        }


# The parts of a result kept in JSON columns; every other field is a column of its own (RESULT_FIELDS).
JSON_PARTS = ("metrics", "derived", "extra", "times_ms")
RESULT_FIELDS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RunResult) if f.name not in JSON_PARTS)
_CONVERTERS = {"str": text_or_none, "str | None": text_or_none, "int | None": store_int, "float | None": finite_number}
# A new column of another type fails here, at import, until it has a converter.
_COLUMN_TYPES = {f.name: _CONVERTERS[str(f.type)] for f in dataclasses.fields(RunResult) if f.name in RESULT_FIELDS}


@dataclass(frozen=True)
class SavedRun:
    """A benchmark, profile or uploaded run as the store keeps it. `id` and `saved` are set once stored."""

    label: str
    kind: str  # bench | profile | upload
    created: dt.datetime  # naive UTC, whole seconds: when the run was measured
    results: tuple[RunResult, ...] = ()
    author: str = ""
    notes: str = ""
    device: DeviceInfo = field(default_factory=DeviceInfo)  # the GPU it ran on: name, cc, driver, clocks...
    catalog_commit: str | None = None
    meta: dict[str, Any] = field(default_factory=dict)  # settings, tool, source, layout, warnings...
    id: int | None = None
    saved: dt.datetime | None = None  # naive UTC: when it entered the store
    device_name: str | None = None  # the store's device columns (default: the device's name and cc)
    device_cc: str | None = None

    @property
    def settings(self) -> dict[str, Any]:
        """The benchmark settings (repeats, warm-up, L2 flush...) of a bench run; {} for others."""
        return dict(self.meta.get("settings") or {})

    def detached(self) -> SavedRun:
        """This run without its store id and save time: a copy to save elsewhere or read from a file."""
        return dataclasses.replace(self, id=None, saved=None)

    @classmethod
    def create(
        cls,
        results: Iterable[RunResult | Mapping[str, Any]],
        *,
        label: str | None = None,
        kind: str = "bench",
        created: str | dt.datetime | None = None,
        author: str | None = "",
        notes: str | None = "",
        device: DeviceInfo | Mapping[str, Any] | None = None,
        catalog_commit: str | None = None,
        meta: Mapping[str, Any] | None = None,
        id: int | None = None,
        saved: str | dt.datetime | None = None,
        device_name: str | None = None,
        device_cc: str | None = None,
    ) -> SavedRun:
        """The one constructor that checks and cleans a run: kind, dates, label (default "<kind> <date>"),
        lengths the store allows, JSON-safe device and meta; results given as dicts are cleaned too."""
        if kind not in KINDS:
            raise InvalidInput(f"run kind must be one of {', '.join(KINDS)}, not {kind!r}")
        if device is not None and not isinstance(device, (Mapping, DeviceInfo)):
            raise InvalidInput("run `device` must be an object")
        if meta is not None and not isinstance(meta, Mapping):
            raise InvalidInput("run `meta` must be an object")
        when = to_utc(created, "created_utc").replace(microsecond=0)
        raw_device = jsonable(device.to_dict() if isinstance(device, DeviceInfo) else device or {})
        label = unicode_text(label or "").strip() or f"{kind} {when:%Y-%m-%d %H:%M}"
        return cls(
            label=label[:300],
            kind=kind,
            created=when,
            results=tuple(
                r if isinstance(r, RunResult) else RunResult.from_dict(r, f"result {i + 1}")
                for i, r in enumerate(results)
            ),
            author=unicode_text(author or "").strip()[:200],
            notes=unicode_text(notes or ""),
            device=DeviceInfo.from_dict(raw_device),
            catalog_commit=unicode_text(catalog_commit) if catalog_commit else None,
            meta=jsonable(meta or {}),
            id=_run_id(id),
            saved=None if saved is None or saved == "" else to_utc(saved, "saved_utc"),
            device_name=nonempty_str(device_name) or nonempty_str(raw_device.get("name")),
            device_cc=nonempty_str(device_cc) or nonempty_str(raw_device.get("cc")),
        )

    @classmethod
    def from_dict(cls, record: Any) -> SavedRun:
        """A run from a `gemmlens.run.v1` record (as to_dict, RunStore.get_run or an export writes it)."""
        if not isinstance(record, Mapping):
            raise InvalidInput("a run must be a JSON object")
        schema = record.get("schema", RUN_SCHEMA)
        if schema != RUN_SCHEMA:
            raise InvalidInput(f"not a run record: schema is {schema!r}, expected {RUN_SCHEMA!r}")
        results = record.get("results")
        if not isinstance(results, Sequence) or isinstance(results, (str, bytes)):
            raise InvalidInput("a run needs a `results` list")
        return cls.create(
            results,
            label=record.get("label"),
            kind=record.get("kind", "bench"),
            created=record.get("created_utc"),
            author=record.get("author"),
            notes=record.get("notes"),
            device=record.get("device") or {},  # create() refuses one that is not an object
            catalog_commit=record.get("catalog_commit"),
            meta=record.get("meta"),
            id=record.get("id"),
            saved=_saved_time(record.get("saved_utc")),
            device_name=record.get("device_name"),
            device_cc=record.get("device_cc"),
        )

    def to_dict(self, *, store_fields: bool = True) -> dict[str, Any]:
        """The run record. A stored run (id set) also carries id, saved_utc, device_name and device_cc,
        unless `store_fields` is off (the portable form that another store imports)."""
        stored = store_fields and self.id is not None
        out: dict[str, Any] = {"schema": RUN_SCHEMA}
        if stored:
            out["id"] = self.id
        out.update(label=self.label, author=self.author, notes=self.notes, created_utc=iso_utc(self.created))
        if stored:
            out["saved_utc"] = iso_utc(self.saved)
        out.update(kind=self.kind, device=self.device.to_dict())
        if stored:
            out.update(device_name=self.device_name, device_cc=self.device_cc)
        out.update(catalog_commit=self.catalog_commit, meta=dict(self.meta))
        out["results"] = [r.to_dict() for r in self.results]
        return out


def content_fingerprint(run: SavedRun | Mapping[str, Any]) -> str:
    """What makes two runs the same measurement: kind, when it was measured, device, settings and every result
    (launch times included). The label, author and notes a saver gives it, and the store's id and save time, are
    not part of it, so the same file saved twice under another label is still found."""
    record = as_run(run).to_dict(store_fields=False)
    for name in ("label", "author", "notes"):
        record.pop(name, None)
    return hashlib.sha256(json.dumps(record, sort_keys=True, default=str).encode()).hexdigest()


def _run_id(value: Any) -> int | None:
    try:
        return store_int(value)
    except InvalidInput as exc:
        raise InvalidInput(f"run id {exc}") from None


def _saved_time(value: Any) -> dt.datetime | None:
    """A record's save time, or None when it has none that reads as one (a store sets its own anyway)."""
    try:
        return to_utc(value) if value else None
    except InvalidInput:
        return None


def as_run(run: SavedRun | Mapping[str, Any]) -> SavedRun:
    """A SavedRun as it is, or one read from its record dict."""
    return run if isinstance(run, SavedRun) else SavedRun.from_dict(run)


def normalize_run(record: SavedRun | Mapping[str, Any]) -> dict[str, Any]:
    """Validate a run record and return a clean portable copy (raises InvalidInput with a one-line reason)."""
    return as_run(record).to_dict(store_fields=False)


def normalize_result(result: Mapping[str, Any], where: str = "result") -> dict[str, Any]:
    """A result dict with every field of RESULT_FIELDS (typed) plus metrics/derived/extra dicts."""
    return RunResult.from_dict(result, where).to_dict()
