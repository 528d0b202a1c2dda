"""Read `.ncu-rep` files with NVIDIA's `ncu-report` wheel (module `ncu_report`): no ncu binary.

`ncu_report.load_report(path)` gives ranges of actions (one action per profiled launch); each action names its
metrics (`metric_names()`), and `metric_by_name(n)` gives the value (`as_double()` / `as_string()`), the unit in
base units ("ns", "byte", "hz") and the display label. A metric collected per instance only (`has_value()` False)
has no single value, and ncu's raw CSV page prints it empty; it is missing here too. `ncu --import R --csv --page
raw` of the same report gives the same values (tests/test_ncu_rep.py checks every launch of every committed
`.ncu-rep` with an export beside it).

`ncu_report` is imported inside the functions that need it: the CLI and the worker start without its 50 MB.

Each report is read in a Python process of its own (fresh_process): the wheel keeps state for the life of a process,
and after it has read one report, units of another report of the same GPU can come back wrong (read after the
quick-set tests/fixtures/ncu/small.ncu-rep, 12 metrics of the full-set v4_full_1024.ncu-rep change unit: "thread"
becomes "inst", "%" becomes "byte"). A fresh process reads every report as ncu's own export does.
"""

from __future__ import annotations

import gzip
import os
import pickle
import re
import struct
import subprocess
import sys
import tempfile
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from profiling import metric_names as MN
from profiling.errors import ReportError
from profiling.nsight import metrics as M
from profiling.nsight import units as U
from profiling.nsight.layouts import derived_metric
from profiling.nsight.metric_table import MetricTable
from profiling.nsight.model import Finding, KernelLaunch, Report

WHEEL = "ncu-report"
"""The PyPI name of NVIDIA's reader (module `ncu_report`); requirements.txt pins its version."""

MAX_UNPACKED_BYTES = 500 * 1000 * 1000
"""A gzip `.ncu-rep` unpacking to more is refused (`--set full` of 17 launches is 65 MB)."""
# ncu's message types as the details page prints them in "Rule Type".
_RULE_TYPES = {0: "", 1: "INF", 2: "OPT", 3: "WRN", 4: "ERR"}
_SPEEDUP_TYPES = {0: "", 1: "local", 2: "global"}
# String metrics that list other metrics (a section's table, a breakdown): not values, and not on the raw page.
_LIST_PREFIXES = ("group:", "breakdown:")


class ReaderMissing(ReportError):
    """The ncu-report wheel is not installed (a GPU machine that has ncu may read the report with it instead)."""


def wheel_version() -> str | None:
    """The installed ncu-report version, or None when it is not installed."""
    from importlib import metadata

    try:
        return metadata.version(WHEEL)
    except metadata.PackageNotFoundError:
        return None


def _wheel() -> Any:
    try:
        import ncu_report  # lazy: 50 MB of native code, needed only for .ncu-rep files
    except ImportError:
        raise ReaderMissing(
            f"reading .ncu-rep files needs NVIDIA's reader `{WHEEL}`, which is not installed; "
            f"`pip install -r requirements.txt` (or `pip install {WHEEL}`), or export CSV with "
            "`ncu --import report.ncu-rep --csv --page raw > report.csv`"
        ) from None
    return ncu_report


def file_format_version(path: Path) -> int | None:
    """The format number after the `NVR\\0` magic of a `.ncu-rep` (2 for ncu 2025.3), or None if unreadable."""
    try:
        with path.open("rb") as fh:
            head = fh.read(8)
    except OSError:
        return None
    if len(head) < 8 or head[:4] != b"NVR\x00":
        return None
    return struct.unpack("<I", head[4:8])[0]


def is_ncu_rep(path: Path) -> bool:
    """Whether a file is a `.ncu-rep`, plain or gzip (told by its name or by the `NVR\\0` magic of its content)."""
    name = path.name.lower()
    if name.endswith((".ncu-rep", ".ncu-rep.gz", ".ncu-repz")):
        return True
    try:
        with path.open("rb") as fh:
            head = fh.read(4)
            if head[:2] == b"\x1f\x8b":
                fh.seek(0)
                with gzip.open(fh) as unpacked:
                    head = unpacked.read(4)
    except (OSError, EOFError, zlib.error):
        return False
    return head == b"NVR\x00"


@contextmanager
def plain_file(path: Path, limit: int) -> Iterator[Path]:
    """`path`, or for a gzip file its content unpacked to a private temporary file (refused past `limit` bytes
    unpacked): the wheel opens files by name only."""
    with path.open("rb") as fh:
        packed = fh.read(2) == b"\x1f\x8b"
    if not packed:
        yield path
        return
    stem = path.name[: -len(".gz")] if path.name.endswith(".gz") else path.name
    with tempfile.TemporaryDirectory(prefix="gemmlens-ncu-rep-") as tmp:
        out = Path(tmp) / (Path(stem).stem[:100] + ".ncu-rep")
        written = 0
        try:
            with gzip.open(path, "rb") as src, out.open("wb") as dst:
                while chunk := src.read(1 << 20):
                    written += len(chunk)
                    if written > limit:
                        raise ReportError(
                            f"{path.name} unpacks to over {limit / 1e6:.0f} MB; reports that large are not read"
                        )
                    dst.write(chunk)
        except (OSError, EOFError, zlib.error) as exc:
            raise ReportError(f"{path.name} is a damaged gzip file ({exc})") from None
        yield out


def open_context(path: str | os.PathLike[str]) -> Any:
    """The wheel's IContext of a report; ReportError with one line (naming the versions and the fix) when the
    wheel cannot read it: a damaged file, or one written by a newer Nsight Compute than the wheel knows."""
    path = Path(path)
    wheel = _wheel()
    try:
        ctx = wheel.load_report(str(path))
    except FileNotFoundError:
        raise ReportError(f"cannot read {path}: no such file") from None
    except Exception as exc:  # a native library boundary: any failure is one line for the user
        raise ReportError(f"{_unreadable(path)} ({' '.join(str(exc).split())[:200]})") from None
    if ctx.num_ranges() == 0 or not any(ctx.range_by_idx(i).num_actions() for i in range(ctx.num_ranges())):
        raise ReportError(_unreadable(path))
    return ctx


def _unreadable(path: Path) -> str:
    fmt = file_format_version(path)
    shown = f"file format {fmt}" if fmt is not None else "not a .ncu-rep header"
    return (
        f"{path.name} ({shown}) could not be read by {WHEEL} {wheel_version() or '?'}, which reads reports of "
        "Nsight Compute up to 2026.3: the file is damaged or comes from a newer ncu; upgrade the reader "
        f"(`pip install -U {WHEEL}`), or export CSV where that ncu is: "
        f"`ncu --import {path.name} --csv --page raw > report.csv`"
    )


def actions(ctx: Any) -> Iterator[Any]:
    """Every action (profiled launch) of a report in report order: the order of ncu's ID column."""
    for r in range(ctx.num_ranges()):
        rng = ctx.range_by_idx(r)
        for a in range(rng.num_actions()):
            yield rng.action_by_idx(a)


def nvtx_ranges(action: Any) -> list[str]:
    """The NVTX push/pop ranges around a launch, outermost first, each as its own name ("triton_matmul")."""
    state = action.nvtx_state()
    if state is None:
        return []
    names: list[str] = []
    for domain_id in state.domains():
        domain = state.domain_by_id(domain_id)
        names.extend(str(n) for n in domain.push_pop_ranges())
    return names


def _dims(action: Any, prefix: str) -> tuple[int, ...] | None:
    dims = []
    for axis in "xyz":
        metric = action.metric_by_name(f"{prefix}_{axis}")
        if metric is None or not metric.has_value():
            return None
        dims.append(int(metric.as_double()))
    return tuple(dims)


def _number(action: Any, name: str) -> float | None:
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_value():
        return None
    return metric.as_double()


_LINK = re.compile(r"@(\w+):([^@]*)@")


def rule_text(message: str) -> str:
    """A rule message with ncu's links written as their text, as the details page prints it:
    "@section:LaunchStats:Launch Statistics@" -> "Launch Statistics", "@url:Guide:https://x@" -> "Guide (https://x)"."""

    def shown(match: re.Match[str]) -> str:
        kind, rest = match.group(1), match.group(2)
        if kind == "url":
            text, _, url = rest.partition(":http")
            return f"{text} (http{url})" if url else rest
        return rest.split(":", 1)[-1]

    return _LINK.sub(shown, message)


def findings(action: Any) -> list[Finding]:
    """The launch's rule results as the details page lists them: rule, type (OPT, INF, WRN, ERR), section,
    the whole message, and the estimated speedup where the rule gives one."""
    out: list[Finding] = []
    for rule in action.rule_results_as_dicts():
        message = rule.get("rule_message") or {}
        if not message.get("message"):
            continue  # a rule that ran and said nothing: ncu's details page leaves it out too
        speedup = rule.get("speedup_estimation") or {}
        value = speedup.get("speedup")
        out.append(
            Finding(
                rule=str(rule.get("rule_identifier") or rule.get("name") or ""),
                type=_RULE_TYPES.get(int(message.get("type", 0) or 0), ""),
                description=rule_text(str(message.get("message") or "")),
                section=str(rule.get("section_identifier") or ""),
                speedup_type=_SPEEDUP_TYPES.get(int(speedup.get("type", 0) or 0), "") if speedup else "",
                estimated_speedup_pct=float(value) if value is not None else None,
            )
        )
    return out


def read_ncu_rep(path: str | os.PathLike[str], ours: bool = False) -> Report:
    """Every launch of a `.ncu-rep` with all its metrics (base units), NVTX ranges and rule findings.

    Launch ids count launches in report order from 0, as ncu's ID column does. The report's metric labels ("Duration")
    and the section each metric is shown in ("GPU Speed Of Light Throughput") go to Report.metric_labels and
    metric_sections. ReportError (one line) when the wheel is missing or cannot read the file.
    """
    path = Path(path)
    with plain_file(path, MAX_UNPACKED_BYTES) as plain:
        report = fresh_process("_read_report", plain, ours)
    report.source = str(path)
    return report


def fresh_process(function: str, path: Path, *args: Any) -> Any:
    """`function(path, *args)` of this module run in a new Python process, its result (or its ReportError) pickled
    back: the wheel's state from one report never reaches the next (see the module's docstring). A reader that dies
    (a native crash on a damaged file) is a ReportError; its stderr goes to ours."""
    _wheel()  # ReaderMissing here, before any process is started
    root = str(Path(__file__).resolve().parents[2])  # the folder holding the `profiling` package
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (root, os.environ.get("PYTHONPATH")) if p)}
    with tempfile.TemporaryDirectory(prefix="gemmlens-ncu-rep-") as tmp:
        out = Path(tmp) / "result.pickle"
        code = "from profiling.nsight import ncu_rep; ncu_rep._child(__import__('sys').argv[1:])"
        request = pickle.dumps((function, str(path), args))
        done = subprocess.run([sys.executable, "-c", code, str(out)], input=request, env=env, check=False)
        if done.returncode != 0 or not out.is_file():
            raise ReportError(
                f"{path.name} could not be read: the .ncu-rep reader stopped (exit status {done.returncode})"
            )
        ok, value = pickle.loads(out.read_bytes())
    if not ok:
        raise value
    return value


def _child(argv: list[str]) -> None:
    """The reading process of fresh_process: the request on stdin, the pickled (ok, result or error) to argv[0]."""
    function, path, args = pickle.loads(sys.stdin.buffer.read())
    allowed = {"_read_report": _read_report, "_read_source_kernels": _read_source_kernels}
    try:
        result: tuple[bool, Any] = (True, allowed[function](Path(path), *args))
    except ReportError as exc:
        result = (False, exc)
    Path(argv[0]).write_bytes(pickle.dumps(result))


def _read_report(path: Path, ours: bool) -> Report:
    import numpy as np  # lazy, as pandas elsewhere

    ctx = open_context(path)
    wheel = _wheel()
    string_kind = wheel.IMetric.ValueKind_STRING
    unknown_kind = wheel.IMetric.ValueKind_UNKNOWN
    names: dict[str, int] = {}
    units: list[str] = []
    factors: list[float] = []
    rows: list[dict[int, float]] = []
    launches: list[KernelLaunch] = []
    warnings: list[str] = []
    labels: dict[str, str] = {}
    sections: dict[str, str] = {}
    for n, action in enumerate(actions(ctx)):
        values: dict[int, float] = {}
        attributes: dict[str, str] = {}
        for name in action.metric_names():
            metric = action.metric_by_name(name)
            if metric is None:
                continue
            kind = metric.kind()
            if kind == string_kind:
                text = metric.as_string()
                if text and not name.startswith(_LIST_PREFIXES):
                    attributes[name] = text
                continue
            if kind == unknown_kind or not metric.has_value():
                continue
            j = names.get(name)
            if j is None:
                j = names[name] = len(units)
                # Asked of every report, in its own order, never remembered from another: the wheel's unit of a
                # derived metric depends on the units asked before it in the same report (v4_full_1024's
                # derived__sm__sass_thread_inst_executed_op_dfma_pred_on_x2 is "thread", as ncu's export prints,
                # when its report's metrics are asked in order, and "inst" when asked first).
                factor, base = U.to_base(str(metric.unit()))
                units.append(base)
                factors.append(factor)
                label = metric.label()
                if label:
                    labels[name] = str(label)
            value = metric.as_double() * factors[j]
            if value == value and abs(value) != float("inf"):
                values[j] = value
        rows.append(values)
        for section in action.sections():
            for metric in (*section.header_metrics(), *section.body_metrics()):
                if metric is not None:
                    sections.setdefault(str(metric.name()), str(section.name()))
        major = _number(action, "device__attribute_compute_capability_major")
        minor = _number(action, "device__attribute_compute_capability_minor")
        device = _number(action, "launch__device_id")
        ranges = nvtx_ranges(action)
        launches.append(
            KernelLaunch(
                id=str(n),
                name=str(action.name(action.NameBase_DEMANGLED)),
                block=_dims(action, "launch__block_dim"),
                grid=_dims(action, "launch__grid_dim"),
                cc=f"{int(major)}.{int(minor)}" if major is not None and minor is not None else None,
                device=str(int(device)) if device is not None else None,
                nvtx=" / ".join(ranges) or None,
                findings=findings(action),
                attributes=attributes,
                ours=ours,
            )
        )
    if not launches:
        raise ReportError(_unreadable(path))
    table = MetricTable(list(names), units)
    block = np.full((len(rows), table.width), np.nan)
    for r, values in enumerate(rows):
        if values:
            cols = np.fromiter(values.keys(), dtype=np.int64, count=len(values))
            block[r, cols] = np.fromiter(values.values(), dtype=np.float64, count=len(values))
    for launch, row in zip(launches, table.rows(block), strict=True):
        launch.metrics = row
        M.fill_fallbacks(launch.metrics, derived_metric)
        launch.derived = M.derive(launch.metric_values())
        launch.identify()
    report = Report(launches=launches, layout="raw", source=str(path), warnings=warnings)
    report.metric_labels = labels
    report.metric_sections = sections
    return report


# ---------------------------------------------------------------------------------------------
# Source level: per-instruction counters and warp-stall samples, as ncu's source page shows them
# ---------------------------------------------------------------------------------------------

_STALL_PREFIX = "smsp__pcsamp_warps_issue_stalled_"
# ncu's metric suffix -> the reason name the source page's columns use (profiling.nsight.source.STALL_COLUMNS).
_REASON_NAMES = {"no_instructions": "no_instruction"}
# Per-instruction counters the source view shows, by the source page's column label.
_SOURCE_COUNTERS = {
    "derived__memory_l1_conflicts_shared_nway": "L1 Conflicts Shared N-Way",
    "derived__memory_l1_wavefronts_shared_excessive": "L1 Wavefronts Shared Excessive",
    MN.GLOBAL_EXCESS_SECTORS: "L2 Theoretical Sectors Global Excessive",
    "memory_l1_wavefronts_shared": "L1 Wavefronts Shared",
    "memory_l1_wavefronts_shared_ideal": "L1 Wavefronts Shared Ideal",
    "memory_l2_theoretical_sectors_global": "L2 Theoretical Sectors Global",
    "memory_l2_theoretical_sectors_global_ideal": "L2 Theoretical Sectors Global Ideal",
    "memory_l1_tag_requests_global": "L1 Tag Requests Global",
    "thread_inst_executed": "Thread Instructions Executed",
}


def _per_pc(action: Any, name: str) -> dict[int, float]:
    """A source-correlated metric's value per instruction address (nothing when the report lacks it)."""
    metric = action.metric_by_name(name)
    if metric is None or not metric.has_correlation_ids():
        return {}
    ids = metric.correlation_ids()
    out: dict[int, float] = {}
    for i in range(ids.num_instances()):
        value = metric.as_double(i)
        if value:
            out[ids.as_uint64(i)] = value
    return out


def kernel_source(action: Any) -> Any:
    """One launch's source view (profiling.nsight.source.KernelSource): every SASS instruction with its warp-stall
    samples per reason, executions and memory counters, and, where the cubin has line information, the CUDA
    source lines each instruction belongs to (with their text when the report embedded the source)."""
    from profiling.nsight.source import EXECUTED, NOT_ISSUED, SAMPLES, Instruction, KernelSource, SourceLine

    wheel = _wheel()
    executed = _per_pc(action, "inst_executed")
    samples = _per_pc(action, "smsp__pcsamp_sample_count")
    stalls: dict[str, dict[int, float]] = {}
    stalls_not_issued: dict[str, dict[int, float]] = {}
    for name in action.metric_names():
        if not name.startswith(_STALL_PREFIX):
            continue
        reason = name[len(_STALL_PREFIX) :]
        target = stalls
        if reason.endswith("_not_issued"):
            reason, target = reason[: -len("_not_issued")], stalls_not_issued
        target[_REASON_NAMES.get(reason, reason)] = _per_pc(action, name)
    counters = {label: _per_pc(action, name) for name, label in _SOURCE_COUNTERS.items()}
    addresses = sorted(set(executed) | set(samples))
    kernel = KernelSource(name=str(action.name(wheel.IAction.NameBase_DEMANGLED)), view="sass")
    kernel.columns = [SAMPLES, NOT_ISSUED, EXECUTED, *counters]
    texts = {str(k): str(v).splitlines() for k, v in dict(action.source_files()).items()}
    lines: dict[tuple[str, int], SourceLine] = {}
    for address in addresses:
        ins = Instruction(address=address, sass=str(action.sass_by_pc(address)).strip())
        ins.samples = samples.get(address, 0.0)
        ins.executed = executed.get(address, 0.0)
        ins.stalls = {r: v[address] for r, v in stalls.items() if address in v}
        ins.stalls_not_issued = {r: v[address] for r, v in stalls_not_issued.items() if address in v}
        ins.samples_not_issued = sum(ins.stalls_not_issued.values())
        ins.counters = {label: v[address] for label, v in counters.items() if address in v}
        if ins.executed:
            ins.counters[EXECUTED] = ins.executed
        info = action.source_info(address)
        if info is not None and info.line() > 0:
            key = (str(info.file_name()), int(info.line()))
            ins.lines.append(key[1])
            line = lines.get(key)
            if line is None:
                text = texts.get(key[0], [])
                line = lines[key] = SourceLine(key[1], key[0], text[key[1] - 1] if key[1] <= len(text) else "")
            line.addresses.append(address)
        kernel.instructions[address] = ins
    if lines:
        kernel.view = "cuda,sass"
        kernel.lines = sorted(lines.values(), key=lambda ln: (ln.file, ln.line))
        kernel.file = kernel.lines[0].file
    return kernel


def _read_source_kernels(path: Path) -> list[Any]:
    return [kernel_source(action) for action in actions(open_context(path))]


def read_source_page(path: str | os.PathLike[str]) -> Any:
    """The source view of every launch of a `.ncu-rep` (profiling.nsight.source.SourcePage), with no ncu: what
    `ncu --import R --page source --csv --print-source cuda,sass` and `sass` give, merged."""
    from profiling.nsight.source import SourcePage

    path = Path(path)
    with plain_file(path, MAX_UNPACKED_BYTES) as plain:
        kernels = fresh_process("_read_source_kernels", plain)
    warnings = []
    if not any(k.instructions for k in kernels):
        warnings.append(f"{path.name} holds no source-level counters (profile with `--set full` for them)")
    view = "cuda,sass" if any(k.lines for k in kernels) else "sass"
    return SourcePage(kernels=kernels, view=view, source=str(path), warnings=warnings)
