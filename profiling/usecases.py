"""The use cases that the CLI commands and the app's GPU queue both run: benchmark, tune, profile, sanitize,
measure ceilings, probe the device, read a report.

Each GPU use case is planned first and run second. `plan_*` checks everything (kernels, sizes against each
kernel's constraint, numeric options, tool names) and raises InvalidInput with one line, so the app refuses
bad input before queueing and the CLI before starting anything. `run_*` reports progress through one
`Progress` callback, in the same words for both, and returns what the caller shows. The queue-job factories
at the end (`bench_job`, `device_info_job`, `profile_job`, `sanitize_job`) wrap these for the app.
"""

from __future__ import annotations

import json
import math
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any, Protocol

from kernels.registry import get_kernel
from kernels.tuning import (
    all_tuning_configs,
    best_per_size,
    config_by_id,
    measured_per_shape,
    read_tuned_record,
    tunable_bases,
    tuned_record_path,
)
from profiling.analysis.ceilings import (
    load_cached,
    record_ceilings,
    recorded_device_ceilings,
    recorded_measurements,
    save_cached,
)
from profiling.device_model import Ceilings, DeviceInfo, ceilings_from_device_info
from profiling.errors import InvalidInput, WorkerError
from profiling.gpu.jobs import BenchSettings, Job, Task, build_tasks
from profiling.gpu.worker import run_job, worker_command
from profiling.nsight import load as ncu_load
from profiling.nsight import runner as ncu_runner
from profiling.nsight.report import MAX_REPORT_BYTES, Report
from profiling.nsight.sanitizer import SanitizerResult
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument, add_reference_ratios, bench_results, build_document, utc_now
from profiling.shape import Shape, as_shape

METRIC_SETS = ("quick", "full")
CLOCK_CONTROLS = ("none", "base")
SANITIZER_TOOLS = ("memcheck", "racecheck", "initcheck", "synccheck")
MAX_UPLOAD_MB = MAX_REPORT_BYTES // (1000 * 1000)
"""The largest report read, in MB of 10^6 bytes (the parser's limit, MAX_REPORT_BYTES): 200."""
MAX_UPLOAD_MIB = MAX_REPORT_BYTES // 2**20
"""The same limit in whole MiB, rounded down: 190. Streamlit's server.maxUploadSize (.streamlit/config.toml) counts
MiB and is set to this, so every file the uploader accepts (190 MiB = 199.2 MB) is one the parser reads."""
MAX_SESSION_UPLOAD_BYTES = 2 * MAX_REPORT_BYTES
"""The uploads one browser session may hold parsed at once, in bytes (400 MB: a parsed report takes several times
its size in memory); files past it are refused with a message (profiling.app.reports_view.sync_uploads)."""
WorkerCommand = Callable[[Path], list[str]]


class Progress(Protocol):
    """Where a use case reports: the fraction done (0..1), a status line, and a partial result (GpuJob.report)."""

    def __call__(self, progress: float | None = None, message: str | None = None, item: Any = None) -> None: ...


def silent(progress: float | None = None, message: str | None = None, item: Any = None) -> None:
    """A Progress that reports nowhere."""


# ---------------------------------------------------------------------------------------------
# Checks shared by every use case
# ---------------------------------------------------------------------------------------------


def check_seconds(value: float, what: str = "--timeout") -> float:
    """A time limit: a finite number of seconds above zero."""
    if not isinstance(value, int | float) or isinstance(value, bool):
        raise InvalidInput(f"{what} must be a positive number of seconds, got {value!r}")
    if not (math.isfinite(value) and value > 0):
        raise InvalidInput(f"{what} must be a positive number of seconds, got {value:g}")
    return float(value)


def check_kernels_run_at(kernel_ids: Sequence[str], shapes: Sequence[Shape]) -> None:
    """InvalidInput for the first kernel whose size constraint a shape breaks (unknown ids raise too)."""
    for kid in kernel_ids:
        spec = get_kernel(kid)
        for shape in shapes:
            problem = spec.size_problem(shape.m, shape.n, shape.k)
            if problem:
                raise InvalidInput(problem)


def _kernel_ids(kernels: Sequence[str]) -> list[str]:
    ids = list(dict.fromkeys(k.strip() for k in kernels if k.strip()))
    if not ids:
        raise InvalidInput("no kernels given; pick at least one catalog kernel (e.g. v1,v3,v5)")
    for kid in ids:
        get_kernel(kid)  # raises, naming the known ids
    return ids


def _shapes(shapes: Sequence[Shape | Sequence[int]]) -> list[Shape]:
    out = [as_shape(s) for s in shapes]
    if not out:
        raise InvalidInput("no sizes given; give at least one size, e.g. 1024,4096 or 4096x1000x333")
    return out


def _result_line(result: BenchResult) -> str:
    return f"{result.kernel} {result.shape.label}: {result.status}"


# ---------------------------------------------------------------------------------------------
# Benchmark and tuning sweep (the GPU worker)
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchmarkPlan:
    """A checked benchmark: the worker's job (each shape's reference first) and the time one task may take."""

    job: Job
    task_timeout_s: float


def plan_benchmark(
    kernel_ids: Sequence[str],
    shapes: Sequence[Shape | Sequence[int]],
    settings: BenchSettings,
    verify_only: bool = False,
    task_timeout_s: float = 120.0,
    interleaved: bool = False,
) -> BenchmarkPlan:
    """Check a benchmark of kernels x shapes. A kernel whose size constraint a shape breaks is kept: the worker
    reports that pair as refused, so one odd size does not cancel the rest of a sweep. `interleaved` times each
    shape's kernels and their reference together in rounds that run each once (job op "rounds"), so drift between
    one kernel's launches and the next kernel's cannot move their ratio; `task_timeout_s` then covers a shape."""
    settings.validate()
    specs = [get_kernel(k) for k in _kernel_ids(kernel_ids)]
    if interleaved:
        if verify_only:
            raise InvalidInput("--interleaved times kernels together; it cannot be combined with --verify-only")
        operations = sorted({spec.operation for spec in specs})
        if len(operations) > 1:
            raise InvalidInput(
                f"--interleaved times one operation's kernels together, and these compute {', '.join(operations)}: "
                "bench each operation's kernels on their own"
            )
    checked_shapes = _shapes(shapes)
    tasks = build_tasks(specs, checked_shapes)
    job = Job(op="verify" if verify_only else "bench", tasks=tasks, settings=settings)
    timeout_s = check_seconds(task_timeout_s)
    if interleaved:
        per_shape = len(tasks) // len(checked_shapes)
        return BenchmarkPlan(replace(job, op="rounds"), timeout_s * per_shape)
    return BenchmarkPlan(job, timeout_s)


def run_benchmark(
    plan: BenchmarkPlan,
    progress: Progress = silent,
    cancel: threading.Event | None = None,
    command: WorkerCommand | None = None,
) -> ResultsDocument:
    """Verify and time the plan's tasks in the GPU worker; returns the results document.

    Each result is reported as it arrives (fraction = results / tasks); setting `cancel` stops the run after
    the current task. `command` substitutes the worker (tests).
    """
    tasks = plan.job.tasks
    done = [0]

    def on_result(record: dict[str, Any]) -> None:
        done[0] += 1
        progress(done[0] / len(tasks), _result_line(BenchResult.from_dict(record)), record)

    started = utc_now()
    progress(0.0, f"starting the GPU worker for {len(tasks)} kernel/size runs")
    device, results = run_job(
        plan.job,
        task_timeout_s=plan.task_timeout_s,
        on_result=on_result,
        cancel=cancel,
        command=command or worker_command,
    )
    typed = bench_results(results)
    add_reference_ratios(typed)
    return build_document(DeviceInfo.from_dict(device), asdict(plan.job.settings), typed, started)


@dataclass(frozen=True)
class TunePlan:
    """A checked tuning sweep: every configuration of the chosen tunable kernels at each shape."""

    bench: BenchmarkPlan
    bases: list[str]


def plan_tune(
    shapes: Sequence[Shape | Sequence[int]],
    bases: Sequence[str] = (),
    repeats: int = 20,
    task_timeout_s: float = 120.0,
    interleaved: bool = False,
) -> TunePlan:
    """Check a tuning sweep of the templated kernels (all of them when `bases` is empty); an item of `bases` may also
    be one configuration id, which sweeps that configuration alone (new configurations of a kernel whose others are
    recorded already). `interleaved` times each shape's configurations and cuBLAS together in rounds that run each
    once (job op "rounds"): to choose between configurations a few per cent apart, which one after the other a
    drifting GPU can misorder; `task_timeout_s` then covers a whole shape's configurations."""
    chosen = list(dict.fromkeys(b.strip() for b in bases if b.strip())) or tunable_bases()
    by_id = {c["id"]: c for c in all_tuning_configs()}
    unknown = [b for b in chosen if b not in tunable_bases() and b not in by_id]
    if unknown:
        raise InvalidInput(
            f"not tunable: {', '.join(unknown)}; tunable kernels: {', '.join(tunable_bases())} "
            "(or one of their configuration ids)"
        )
    configs = [c["id"] for c in all_tuning_configs() if c["base"] in chosen or c["id"] in chosen]
    swept = list(dict.fromkeys(by_id[b]["base"] if b in by_id else b for b in chosen))
    bench = plan_benchmark(configs, shapes, BenchSettings(repeats=repeats), False, task_timeout_s, interleaved)
    return TunePlan(bench, swept)


def run_tune(
    plan: TunePlan,
    record: bool = False,
    progress: Progress = silent,
    cancel: threading.Event | None = None,
    command: WorkerCommand | None = None,
) -> ResultsDocument:
    """Run the sweep; the document gains "tuning": the kernels swept and the fastest verified configuration per
    kernel and size. With `record`, that best list is written for this GPU (kernels.tuning.tuned_record_path)."""
    document = run_benchmark(plan.bench, progress, cancel, command)
    rows = [r.to_dict() for r in document.results]
    document.tuning = {"kernels": plan.bases, "best": best_per_size(rows)}
    if record and document.device_name:
        record_tuning(document, document.device_name, document.results, progress)
    return document


def record_tuning(
    document: ResultsDocument, device_name: str, results: list[BenchResult], progress: Progress = silent
) -> None:
    """write_tuning_record for one GPU type after a sweep, its entries marked with the NVRTC that built them where
    the document's device is that type (a cluster's other types: unknown). A record that cannot be written does not
    lose the sweep: it is said, and noted in the document (`tuning.record_errors`, which `tune` reports once the
    results are kept). Measurements the record keeps from another NVRTC are said too: they may no longer hold."""
    nvrtc = document.device.nvrtc if document.device.name == device_name else None
    try:
        path = write_tuning_record(device_name, document.created_utc, [r.to_dict() for r in results], nvrtc)
    except OSError as exc:
        message = f"could not record the fastest configurations for {device_name}: {exc.strerror or exc}"
        document.tuning = document.tuning or {}
        document.tuning.setdefault("record_errors", []).append(f"{message} ({exc.filename or ''})")
        progress(1.0, message)
        return
    progress(1.0, f"recorded the fastest configurations for {device_name} in {path}")
    if others := other_nvrtc_counts(json.loads(path.read_text()).get("measured"), nvrtc):
        kept = ", ".join(f"{count} by NVRTC {version}" for version, count in others.items())
        progress(1.0, f"the record keeps measurements this sweep did not repeat: {kept}; this sweep's NVRTC is {nvrtc}")


def other_nvrtc_counts(measured: object, nvrtc: str | None) -> dict[str, int]:
    """How many of a record's `measured` entries each NVRTC other than `nvrtc` built (by version; entries that do
    not say are left out, and so is everything where `nvrtc` is unknown)."""
    if not nvrtc or not isinstance(measured, list):
        return {}
    versions = [str(e["nvrtc"]) for e in measured if isinstance(e, dict) and e.get("nvrtc")]
    return {v: versions.count(v) for v in sorted(set(versions)) if v != nvrtc}


def write_tuning_record(
    device_name: str, measured_utc: str, results: list[dict[str, Any]], nvrtc: str | None = None
) -> Path:
    """Write the tuning record of one GPU type (kernels.tuning.tuned_record_path): the fastest verified configuration
    per kernel and size, and every configuration's measurement, from `results` (all of that GPU type). With `nvrtc`,
    the version that built this sweep's kernels, each of its entries says so (`nvrtc`): sgemm-auto tells a run
    built by another (kernels.tuning.nvrtc_mismatch).

    An existing record keeps what this sweep did not run: a measurement of a configuration at a shape not swept
    again, and the best of a kernel at a shape where none of its configurations ran or where the sweep's own best is
    slower and the old best's configuration was not swept again. So a split-K sweep at its own shapes adds to the
    v8/v9 sweep's record instead of replacing it, and a sweep of two new configurations does not demote the best."""
    path = tuned_record_path(device_name)
    path.parent.mkdir(parents=True, exist_ok=True)
    old = read_tuned_record(device_name) or {}
    ran = [
        (config["base"], r["kernel"], r["m"], r["n"], r["k"])
        for r in results
        if (config := config_by_id(str(r.get("kernel", "")))) is not None
    ]
    swept_configs = {(kid, m, n, k) for _, kid, m, n, k in ran}
    swept_bases = {(base, m, n, k) for base, _, m, n, k in ran}

    def kept(entries: object, swept: set, *fields: str) -> list[dict]:
        listed = entries if isinstance(entries, list) else []
        return [e for e in listed if isinstance(e, dict) and tuple(e.get(f) for f in fields) not in swept]

    def order(e: dict) -> tuple:
        return (str(e.get("base")), *(e[d] if isinstance(e.get(d), int) else -1 for d in ("m", "n", "k")))

    # A sweep of some of a kernel's configurations at a shape replaces the kernel's best there only where it is
    # faster, or where the old best's own configuration was swept again (its old measurement no longer stands).
    standing = [
        e
        for e in kept(old.get("best"), swept_configs, "config", "m", "n", "k")
        if (e.get("base"), e.get("m"), e.get("n"), e.get("k")) in swept_bases
    ]
    stamp = {"nvrtc": nvrtc} if nvrtc else {}
    best_here: dict[tuple, dict] = {}
    for e in [b | stamp for b in best_per_size(results)] + standing:
        key = (e["base"], e["m"], e["n"], e["k"])
        if key not in best_here or float(e.get("tflops") or 0) > float(best_here[key].get("tflops") or 0):
            best_here[key] = e
    best = kept(old.get("best"), swept_bases, "base", "m", "n", "k") + list(best_here.values())
    measured = kept(old.get("measured"), swept_configs, "config", "m", "n", "k") + [
        e | stamp for e in measured_per_shape(results)
    ]
    document = {
        "device": device_name,
        "measured_utc": measured_utc,
        "best": sorted(best, key=order),
        "measured": measured,
    }
    path.write_text(json.dumps(document, indent=1))
    return path


# ---------------------------------------------------------------------------------------------
# Device and roofline ceilings
# ---------------------------------------------------------------------------------------------


def device_info(timeout_s: float = 30.0, command: WorkerCommand | None = None) -> DeviceInfo:
    """The worker's description of the GPU; WorkerError when there is no usable one."""
    timeout_s = check_seconds(timeout_s)
    device, _ = run_job(
        Job(op="device_info"), task_timeout_s=timeout_s, startup_timeout_s=timeout_s, command=command or worker_command
    )
    if device is None:
        raise WorkerError("the GPU worker reported no device")
    return DeviceInfo.from_dict(device)


@dataclass
class CeilingsRun:
    """Roofline ceilings of the live GPU: the measured record (cached per device) beside the theoretical ones."""

    device: DeviceInfo
    record: dict[str, Any]
    measured: Ceilings
    theoretical: Ceilings | None
    cached: bool = field(default=False)
    source: str = "measured now"  # "cached", or where a recorded measurement is (recorded_ceilings)


def run_ceilings(
    refresh: bool = False,
    timeout_s: float = 300.0,
    progress: Progress = silent,
    command: WorkerCommand | None = None,
) -> CeilingsRun:
    """The measured ceilings of this GPU: the cached record unless `refresh`, else measured in the worker."""
    timeout_s = check_seconds(timeout_s)
    device = device_info(120.0, command)
    record = None if refresh else load_cached(device.name or "")
    cached = record is not None
    if record is None:
        progress(0.1, f"measuring DRAM, L2, shared-memory and FP32 ceilings on {device.name}")
        job = Job(op="ceilings", tasks=[Task("ceilings", 1, 1, 1)])
        described, results = run_job(job, task_timeout_s=timeout_s, command=command or worker_command)
        measured = BenchResult.from_dict(results[0], "the ceilings result") if results else None
        if measured is None or measured.status != "ok" or described is None:
            raise WorkerError(f"measuring ceilings failed: {measured.error if measured else 'no result'}")
        device = DeviceInfo.from_dict(described)
        record = {"device": device.name, "measured_utc": utc_now(), "ceilings": measured.other["ceilings"]}
        try:
            save_cached(record)
        except OSError as exc:  # the measurement is still shown; only the next run measures again
            progress(1.0, f"could not cache the measured ceilings: {exc.strerror or exc} ({exc.filename or ''})")
    theoretical = ceilings_from_device_info(device)
    return CeilingsRun(
        device, record, record_ceilings(record), theoretical, cached, "cached" if cached else "measured now"
    )


def recorded_ceilings() -> list[CeilingsRun]:
    """Ceilings measured earlier, on this machine (the cache) or bundled with GEMM Lens (results/*/ceilings.json),
    for `ceilings` where no GPU can measure; each with its device, date and source. Theoretical ceilings come
    from the recorded device properties, else from the built-in table by name (None when neither knows it)."""
    out = []
    for where, record, device in recorded_measurements():
        device = device if device.known else DeviceInfo(name=record["device"])
        theoretical = recorded_device_ceilings(device, record["device"])
        out.append(CeilingsRun(device, record, record_ceilings(record), theoretical, True, where))
    return out


# ---------------------------------------------------------------------------------------------
# Nsight Compute and compute-sanitizer
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class ProfilePlan:
    """A checked ncu run: kernels x shapes in one process, the report to write, and how to profile."""

    kernel_ids: list[str]
    shapes: list[Shape]
    report_path: Path
    metric_set: str = "quick"
    extra_metrics: list[str] = field(default_factory=list)
    clock_control: str = "none"
    timeout_s: float = 600.0
    ncu: str | None = None


def plan_profile(
    kernel_ids: Sequence[str],
    shapes: Sequence[Shape | Sequence[int]],
    report_path: str | Path,
    metric_set: str = "quick",
    extra_metrics: Sequence[str] = (),
    clock_control: str = "none",
    timeout_s: float = 600.0,
    ncu: str | None = None,
) -> ProfilePlan:
    """Check an ncu run; every kernel must accept every shape (ncu profiles them all in one process)."""
    ids, sizes = _kernel_ids(kernel_ids), _shapes(shapes)
    check_kernels_run_at(ids, sizes)
    if metric_set not in METRIC_SETS:
        raise InvalidInput(f"unknown metric set '{metric_set}'; use {' or '.join(METRIC_SETS)}")
    if clock_control not in CLOCK_CONTROLS:
        raise InvalidInput(f"unknown clock control '{clock_control}'; use {' or '.join(CLOCK_CONTROLS)}")
    extras = list(dict.fromkeys(m.strip() for m in extra_metrics if m.strip()))
    return ProfilePlan(ids, sizes, Path(report_path), metric_set, extras, clock_control, check_seconds(timeout_s), ncu)


def run_profile(plan: ProfilePlan, progress: Progress = silent) -> ncu_runner.ProfileRun:
    """Profile the plan in one ncu process, keep the .ncu-rep and read it back."""
    sizes = ", ".join(s.label for s in plan.shapes)
    progress(0.05, f"ncu profiling {', '.join(plan.kernel_ids)} at {sizes}")
    result = ncu_runner.profile(
        plan.kernel_ids,
        [(s.m, s.n, s.k) for s in plan.shapes],
        plan.report_path,
        metric_set=plan.metric_set,  # type: ignore[arg-type]
        extra_metrics=plan.extra_metrics,
        clock_control=plan.clock_control,  # type: ignore[arg-type]
        timeout_s=plan.timeout_s,
        ncu=plan.ncu,
    )
    progress(0.95, f"ncu finished in {result.seconds:.1f} s; reading the report")
    return result


@dataclass(frozen=True)
class SanitizerPlan:
    """A checked compute-sanitizer run: one of our kernels at one shape under one tool."""

    kernel_id: str
    shape: Shape
    tool: str = "memcheck"
    timeout_s: float = 600.0


def plan_sanitizer(
    kernel_id: str, shape: Shape | Sequence[int], tool: str = "memcheck", timeout_s: float = 600.0
) -> SanitizerPlan:
    """Check a sanitizer run: a catalog kernel with a source of ours, a size it accepts, a known tool."""
    spec = get_kernel(kernel_id)
    if not spec.source:
        raise InvalidInput(f"{spec.id} is a library kernel with no source of ours; pick a catalog kernel")
    size = as_shape(shape)
    check_kernels_run_at([spec.id], [size])
    if tool not in SANITIZER_TOOLS:
        raise InvalidInput(f"unknown sanitizer tool '{tool}'; use {', '.join(SANITIZER_TOOLS)}")
    return SanitizerPlan(spec.id, size, tool, check_seconds(timeout_s))


def run_sanitizer(plan: SanitizerPlan, progress: Progress = silent) -> SanitizerResult:
    """Run compute-sanitizer on the plan's kernel inside the worker and parse its findings."""
    progress(0.1, f"compute-sanitizer --tool {plan.tool} on {plan.kernel_id} at {plan.shape.label}")
    size = (plan.shape.m, plan.shape.n, plan.shape.k)
    return ncu_runner.sanitize(plan.kernel_id, size, tool=plan.tool, timeout_s=plan.timeout_s)  # type: ignore[arg-type]


def load_report(path: str | Path, ncu: str | None = None) -> Report:
    """Read a report file of any kind (CSV of any page, ncu stdout, .ncu-rep through ncu); ReportError if not."""
    return ncu_load.load_report(path, ncu=ncu)


def load_upload(name: str, data: bytes, ncu: str | None = None) -> ncu_load.LoadedUpload:
    """Read an uploaded report from its bytes (profiling.nsight.load.load_upload): CSV of any ncu page, ncu's text
    output or stdout, or a `.ncu-rep`, as a Report; a source-page export as a SourcePage (for the source view);
    ReportError with one line for empty, oversized, binary, truncated or foreign files, and a JSON upload (a runs
    export) is pointed to the Review page."""
    return ncu_load.load_upload(name, data, ncu=ncu)


# ---------------------------------------------------------------------------------------------
# The app's GPU queue: jobs are functions of the GpuJob they run as (profiling.app.gpu_queue)
# ---------------------------------------------------------------------------------------------


def bench_job(
    kernel_ids: Sequence[str],
    shapes: Sequence[Shape],
    settings: BenchSettings,
    task_timeout_s: float = 120.0,
    command: WorkerCommand | None = None,
) -> Callable[[Any], ResultsDocument]:
    """A queue job running `run_benchmark` (checked now, before it is queued); its cancel Event stops it."""
    plan = plan_benchmark(kernel_ids, shapes, settings, task_timeout_s=task_timeout_s)
    return lambda job: run_benchmark(plan, job.report, job.cancel, command)


def device_info_job(timeout_s: float = 30.0, command: WorkerCommand | None = None):
    """A queue job returning the worker's DeviceInfo (raises WorkerError when there is no usable GPU)."""
    check_seconds(timeout_s)
    return lambda job: device_info(timeout_s, command)


def profile_job(
    kernel_ids: Sequence[str],
    size: tuple[int, int, int],
    report_path: Path,
    metric_set: str = "quick",
    extra_metrics: Sequence[str] = (),
    clock_control: str = "none",
    timeout_s: float = 600,
):
    """A queue job running `run_profile` over the kernels at one size (checked now, before it is queued)."""
    plan = plan_profile(kernel_ids, [size], report_path, metric_set, extra_metrics, clock_control, timeout_s)
    return lambda job: run_profile(plan, job.report)


def sanitize_job(kernel_id: str, size: tuple[int, int, int], tool: str = "memcheck", timeout_s: float = 600):
    """A queue job running `run_sanitizer` on one kernel and size (checked now, before it is queued)."""
    plan = plan_sanitizer(kernel_id, size, tool, timeout_s)
    return lambda job: run_sanitizer(plan, job.report)
