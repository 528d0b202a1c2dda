"""Run Nsight Compute and compute-sanitizer on catalog kernels: find the tools, build argument lists,
run them with a timeout that kills the whole process group, and turn their failures into messages.

Everything that touches a process goes through `run_tool`, so tests replace one function (or
`subprocess.Popen`) and assert exact argument lists.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from profiling import metrics as M
from profiling.errors import InvalidInput, NcuError, ReportError
from profiling.gpu_env import tool_path as find_tool

MetricSet = Literal["quick", "full"]
ClockControl = Literal["none", "base"]
SanitizerTool = Literal["memcheck", "racecheck", "initcheck", "synccheck"]

NVTX_PREFIX = "gemmlens"
# Push/pop ranges named `gemmlens:<kernel>:<m>x<n>x<k>` in the default domain; the trailing "/" tells
# ncu the config names a push/pop range, "regex:" makes the rest a regular expression (ncu docs,
# "NVTX Filtering").
NVTX_INCLUDE = f"regex:{NVTX_PREFIX}:.*/"
QUICK_SECTIONS: tuple[str, ...] = ("LaunchStats", "Occupancy")

INSTALL_HINT = (
    "install Nsight Compute (it comes with the CUDA toolkit, or from "
    "https://developer.nvidia.com/nsight-compute) and put `ncu` on PATH or set NCU_PATH"
)
PERMISSION_FIX = (
    "ERR_NVGPUCTRPERM: this user may not read the GPU performance counters; run as root / with "
    "CAP_SYS_ADMIN (CAP_PERFMON on drivers >= R565), or allow all users with "
    "`options nvidia NVreg_RestrictProfilingToAdminUsers=0` in a file under /etc/modprobe.d and reboot"
)

# Nsight Compute chip names for `--query-metrics --chip`, by compute capability.
CHIP_BY_CC: dict[str, str] = {
    "7.0": "gv100",
    "7.5": "tu102",
    "8.0": "ga100",
    "8.6": "ga102",
    "8.7": "ga10b",
    "8.9": "ad102",
    "9.0": "gh100",
    "10.0": "gb100",
    "12.0": "gb202",
}


# ---------------------------------------------------------------------------------------------
# Finding the tools
# ---------------------------------------------------------------------------------------------


def find_ncu(setting: str | None = None) -> str | None:
    """Path of ncu: the explicit setting, then $NCU_PATH, PATH, $CUDA_HOME/bin, /usr/local/cuda/bin,
    /opt/nvidia/nsight-compute/*/ncu (newest first); None when none is installed."""
    for explicit in (setting, os.environ.get("NCU_PATH")):
        if explicit:
            if os.path.isdir(explicit):
                explicit = os.path.join(explicit, "ncu")
            if os.path.isfile(explicit) and os.access(explicit, os.X_OK):
                return explicit
    return find_tool("ncu")


def require_ncu(setting: str | None = None) -> str:
    """find_ncu, or NcuError saying how to install it (or that the explicit setting is wrong)."""
    if setting and find_ncu(setting) != setting and not os.path.isdir(setting):
        raise NcuError(f"the ncu path given, {setting}, is not an executable file")
    path = find_ncu(setting)
    if path is None:
        raise NcuError(f"Nsight Compute (ncu) was not found; {INSTALL_HINT}")
    return path


def parse_ncu_version(text: str) -> str | None:
    """'... Version 2025.3.1.0 (build 36398880) (public-release)' -> '2025.3.1.0'."""
    match = re.search(r"Version\s+(\d+(?:\.\d+)+)", text)
    return match.group(1) if match else None


def ncu_version(ncu: str, timeout_s: float = 30) -> str:
    """The version ncu reports; NcuError when it cannot be run."""
    result = run_tool([ncu, "--version"], timeout_s=timeout_s)
    version = parse_ncu_version(result.output)
    if result.returncode != 0 or version is None:
        raise NcuError(f"`{ncu} --version` failed: {last_line(result.output)}")
    return version


# ---------------------------------------------------------------------------------------------
# Running a process
# ---------------------------------------------------------------------------------------------


@dataclass
class ToolResult:
    """What a finished tool run left: exit status, stdout and stderr, wall time."""

    args: list[str]
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    timed_out: bool = False

    @property
    def output(self) -> str:
        return f"{self.stdout}\n{self.stderr}" if self.stderr else self.stdout


def run_tool(args: Sequence[str], timeout_s: float, cwd: str | None = None) -> ToolResult:
    """Run a command in its own process group; on timeout kill the whole group (ncu and its target)."""
    start = time.monotonic()
    try:
        proc = subprocess.Popen(
            list(args),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            cwd=cwd,
            start_new_session=True,
        )
    except FileNotFoundError:
        raise NcuError(f"{args[0]} could not be started (not found)") from None
    except PermissionError:
        raise NcuError(f"{args[0]} could not be started (not executable)") from None
    try:
        stdout, stderr = proc.communicate(timeout=timeout_s)
        timed_out = False
    except subprocess.TimeoutExpired:
        _kill_group(proc)
        stdout, stderr = proc.communicate()
        timed_out = True
    return ToolResult(
        args=list(args),
        returncode=proc.returncode,
        stdout=stdout or "",
        stderr=stderr or "",
        seconds=time.monotonic() - start,
        timed_out=timed_out,
    )


def _kill_group(proc: subprocess.Popen) -> None:
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        proc.kill()


def last_line(text: str) -> str:
    """The last non-empty line, for one-line messages."""
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else "no output"


# ---------------------------------------------------------------------------------------------
# Error text -> message
# ---------------------------------------------------------------------------------------------


def explain_failure(result: ToolResult, tool: str = "ncu") -> str:
    """One line saying what went wrong with an ncu (or sanitizer) run and what to do."""
    text = result.output
    if result.timed_out:
        return (
            f"{tool} did not finish within its time limit ({result.seconds:.0f} s) and was killed with its "
            "target; profile fewer kernels or smaller sizes, or use the quick metric set"
        )
    if "ERR_NVGPUCTRPERM" in text:
        return PERMISSION_FIX
    unknown = unknown_metrics_in(text)
    if unknown or "Failed to find metric" in text:
        names = ", ".join(unknown) if unknown else "(see ncu output)"
        return (
            f"ncu could not collect the metric(s) {names} on this GPU (unknown names?); "
            "check names with `ncu --query-metrics`"
        )
    if "No kernels were profiled" in text:
        seen = available_kernels_in(text)
        ours = [k for k in seen if not k.startswith(("cupy_", "Device", "execute_", "init_"))]
        listed = f"; kernels that ran: {', '.join(ours[:6])}" if ours else ""
        return (
            "no kernel matched the filters (NVTX range gemmlens:* and the catalog kernel names): "
            f"the kernels ran outside the worker's NVTX ranges, or under other names{listed}"
        )
    errors = [ln.split("==ERROR==", 1)[1].strip() for ln in text.splitlines() if "==ERROR==" in ln]
    errors = [e for e in errors if e]
    if errors:
        # ncu splits one failure over several lines ("An error was reported by the driver:", "LaunchFailed").
        detail = " ".join(errors)[:400]
        return f"{tool} failed (exit {result.returncode}): the profiled program crashed or failed: {detail}"
    return f"{tool} failed: its target exited with status {result.returncode} ({last_line(text)})"


def unknown_metrics_in(text: str) -> list[str]:
    """Metric names ncu could not collect: 'Failed to find metric X' or a '(!) n/a' table row."""
    names: list[str] = []
    patterns = (
        r"Failed to find metrics?\s*:?\s*'?([A-Za-z0-9_.]+__[A-Za-z0-9_.]+)",
        r"^\s*([A-Za-z0-9_]+__[A-Za-z0-9_.]+)\s.*\(!\)\s*n/a\s*$",
    )
    for pattern in patterns:
        for match in re.finditer(pattern, text, flags=re.MULTILINE):
            name = match.group(1).rstrip(".")
            if name not in names:
                names.append(name)
    return names


def available_kernels_in(text: str) -> list[str]:
    """The 'Available Kernels:' list ncu prints after 'No kernels were profiled'."""
    _, _, tail = text.partition("Available Kernels:")
    return [m.group(1).strip() for m in re.finditer(r"^\s*\d+\.\s+(\S.*)$", tail, flags=re.MULTILINE)]


# ---------------------------------------------------------------------------------------------
# Metric validation
# ---------------------------------------------------------------------------------------------


# `ncu --query-metrics` lists hardware counters only (checked on gh100 with 2025.3.1): launch
# attributes, device attributes and a few derived occupancy metrics are valid but never listed.
UNLISTED_PREFIXES: tuple[str, ...] = ("launch__", "device__", "derived__", "profiler__", "sm__maximum_warps")


def parse_query_metrics(text: str) -> set[str]:
    """Base metric names listed by `ncu --query-metrics` (first column of its table).

    Some rows are qualified by unit and configuration ("CTC.TriageCompute.ctc__rx_bytes"); the metric
    is the last dotted part.
    """
    names: set[str] = set()
    for line in text.splitlines():
        if not line or line[0].isspace():
            continue  # wrapped description lines are indented
        first = line.split(None, 1)[0].rsplit(".", 1)[-1]
        if "__" in first and M.looks_like_metric_name(first):
            names.add(first)
    return names


def query_metrics(ncu: str, chip: str | None = None, timeout_s: float = 120) -> set[str]:
    """Metric names ncu knows for `chip` (or the installed GPU when chip is None)."""
    args = [ncu, "--query-metrics"]
    if chip:
        args += ["--chip", chip]
    result = run_tool(args, timeout_s=timeout_s)
    names = parse_query_metrics(result.stdout)
    if result.returncode != 0 or not names:
        raise NcuError(f"could not list metrics: {explain_failure(result)}")
    return names


def validate_metric_names(requested: Iterable[str], available: set[str]) -> list[str]:
    """Requested names, stripped and de-duplicated; InvalidInput naming every unknown one.

    ncu lists base names; a request may add a rollup and submetrics (`dram__bytes.sum.per_second`).
    """
    names: list[str] = []
    for raw in requested:
        name = raw.strip()
        if name and name not in names:
            names.append(name)
    bases = {M.base_metric_name(n) for n in available}
    malformed = [n for n in names if not M.looks_like_metric_name(n)]
    unknown = [
        n
        for n in names
        if n not in malformed
        and M.base_metric_name(n) not in bases
        and n not in M.QUICK_METRICS
        and not n.startswith(UNLISTED_PREFIXES)
    ]
    if malformed or unknown:
        parts = []
        if unknown:
            parts.append(f"unknown metric(s) {', '.join(unknown)}")
        if malformed:
            parts.append(f"not metric names: {', '.join(malformed)}")
        raise InvalidInput(
            f"{'; '.join(parts)} (ncu would abort the whole run); list valid names with `ncu --query-metrics`"
        )
    return names


# ---------------------------------------------------------------------------------------------
# Command lines
# ---------------------------------------------------------------------------------------------


def kernel_name_regex(kernel_ids: Sequence[str]) -> str | None:
    """`-k regex:` matching the function names of the catalog kernels, or None when one has none
    (cuBLAS's kernel names are not ours to know; the NVTX filter alone selects them then)."""
    from kernels.catalog import get_kernel

    names: list[str] = []
    for kid in kernel_ids:
        spec = get_kernel(kid)
        if not spec.entry:
            return None
        # ncu matches the function name without template arguments ("sgemm_tiled").
        base = spec.entry.split("<", 1)[0].strip()
        if base not in names:
            names.append(base)
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"


def worker_command(job_path: str | os.PathLike[str], python: str | None = None) -> list[str]:
    """The GPU worker process that ncu and compute-sanitizer launch."""
    return [python or sys.executable, "-m", "profiling", "worker", "--job", str(job_path)]


def build_profile_command(
    ncu: str,
    job_path: str | os.PathLike[str],
    report_path: str | os.PathLike[str],
    kernel_ids: Sequence[str],
    metric_set: MetricSet = "quick",
    extra_metrics: Sequence[str] = (),
    clock_control: ClockControl = "none",
    python: str | None = None,
) -> list[str]:
    """The single ncu command profiling every chosen kernel and size inside the worker."""
    if metric_set not in ("quick", "full"):
        raise InvalidInput(f"unknown metric set '{metric_set}'; use quick or full")
    if clock_control not in ("none", "base"):
        raise InvalidInput(f"unknown clock control '{clock_control}'; use none or base")
    args = [ncu, "--nvtx", "--nvtx-include", NVTX_INCLUDE]
    regex = kernel_name_regex(kernel_ids)
    if regex:
        args += ["-k", regex]
    args += ["--clock-control", clock_control]
    metric_list = list(dict.fromkeys([*M.QUICK_METRICS, *extra_metrics]))
    if metric_set == "full":
        args += ["--set", "full"]
    else:
        for section in QUICK_SECTIONS:
            args += ["--section", section]
    args += ["--metrics", ",".join(metric_list)]
    args += ["-f", "-o", str(report_path)]
    return args + worker_command(job_path, python)


def build_import_command(ncu: str, report_path: str | os.PathLike[str], page: str = "raw") -> list[str]:
    """`ncu --import REPORT --csv --page PAGE` with values in base units."""
    return [ncu, "--import", str(report_path), "--csv", "--page", page, "--print-units", "base"]


def build_sanitizer_command(
    sanitizer: str, tool: SanitizerTool, job_path: str | os.PathLike[str], python: str | None = None
) -> list[str]:
    """compute-sanitizer running one tool on the worker."""
    if tool not in ("memcheck", "racecheck", "initcheck", "synccheck"):
        raise InvalidInput(f"unknown sanitizer tool '{tool}'; use memcheck, racecheck, initcheck or synccheck")
    args = [sanitizer, "--tool", tool]
    if tool == "racecheck":
        # Report each hazard, not only the per-kernel analysis summary.
        args += ["--racecheck-report", "hazard"]
    return args + worker_command(job_path, python)


def write_job(
    path: str | os.PathLike[str],
    kernel_ids: Sequence[str],
    sizes: Sequence[tuple[int, int, int]],
    op: Literal["profile", "verify"],
) -> Path:
    """Write the worker's job file (profiling.jobs.Job).

    op "profile": the worker verifies and warms up each kernel, then launches it once inside the NVTX
    range `gemmlens:<id>:<m>x<n>x<k>`; op "verify" launches it once, which is all a sanitizer needs.
    """
    from profiling.jobs import BenchSettings, Job, Task

    tasks = [Task(kid, m, n, k) for m, n, k in sizes for kid in kernel_ids]
    job = Job(op=op, tasks=tasks, settings=BenchSettings(repeats=1, warmup=1, flush_l2=False))
    path = Path(path)
    path.write_text(json.dumps(job.to_dict(), indent=2))
    return path


# ---------------------------------------------------------------------------------------------
# Profile and import
# ---------------------------------------------------------------------------------------------


@dataclass
class ProfileRun:
    """One ncu run: where the report is, what was asked, how long it took, and what was read."""

    report_path: Path
    command: list[str]
    clock_control: ClockControl
    metric_set: MetricSet
    seconds: float
    ncu_version: str | None = None
    report: object | None = None
    log: str = ""
    extra_metrics: list[str] = field(default_factory=list)


def import_page(ncu: str, report_path: str | os.PathLike[str], page: str, timeout_s: float = 300) -> str:
    """The CSV text of one page of a .ncu-rep; ReportError when ncu cannot read it."""
    result = run_tool(build_import_command(ncu, report_path, page), timeout_s=timeout_s)
    if result.returncode != 0 or result.timed_out:
        raise ReportError(f"ncu could not read {Path(report_path).name}: {explain_failure(result)}")
    return result.stdout


def profile(
    kernel_ids: Sequence[str],
    sizes: Sequence[tuple[int, int, int]],
    report_path: str | os.PathLike[str],
    metric_set: MetricSet = "quick",
    extra_metrics: Sequence[str] = (),
    clock_control: ClockControl = "none",
    timeout_s: float = 600,
    ncu: str | None = None,
    chip: str | None = None,
) -> ProfileRun:
    """Profile all kernels x sizes in ONE ncu process, keep the .ncu-rep and read it back.

    Extra metrics are validated against `ncu --query-metrics` first, since one unknown name aborts ncu.
    """
    from profiling.ncu_report import load_ncu_rep

    exe = require_ncu(ncu)
    extras = list(extra_metrics)
    if extras:
        extras = validate_metric_names(extras, query_metrics(exe, chip))
    report_path = Path(report_path)
    if report_path.suffix != ".ncu-rep":
        report_path = report_path.with_name(report_path.name + ".ncu-rep")
    with tempfile.TemporaryDirectory(prefix="gemmlens-ncu-") as tmp:
        job = write_job(Path(tmp) / "job.json", kernel_ids, sizes, op="profile")
        command = build_profile_command(exe, job, report_path, kernel_ids, metric_set, extras, clock_control)
        result = run_tool(command, timeout_s=timeout_s)
    failed = result.timed_out or result.returncode != 0 or "No kernels were profiled" in result.output
    if failed or not report_path.is_file():
        raise NcuError(explain_failure(result))
    report = load_ncu_rep(report_path, ncu=exe)
    # ncu 2025.3 does not abort on a metric it cannot collect: it records n/a (read as absent).
    missing = [n for n in extras if not any(n in launch.metrics for launch in report.launches)]
    if missing:
        report.warnings.append(f"ncu returned n/a for {', '.join(missing)} (not collectable on this GPU?)")
    return ProfileRun(
        report_path=report_path,
        command=command,
        clock_control=clock_control,
        metric_set=metric_set,
        seconds=result.seconds,
        report=report,
        log=result.output,
        extra_metrics=extras,
    )


# ---------------------------------------------------------------------------------------------
# compute-sanitizer
# ---------------------------------------------------------------------------------------------


@dataclass
class SanitizerFinding:
    """One reported error or hazard, with its indented detail lines."""

    severity: str
    message: str
    details: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"severity": self.severity, "message": self.message, "details": self.details}


@dataclass
class SanitizerResult:
    """A compute-sanitizer run: the tool, error count from its summary, and the findings."""

    tool: str
    errors: int | None
    warnings: int | None
    findings: list[SanitizerFinding]
    summary: str
    returncode: int = 0

    @property
    def clean(self) -> bool:
        return (self.errors or 0) == 0 and not self.findings

    def to_dict(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "errors": self.errors,
            "warnings": self.warnings,
            "clean": self.clean,
            "summary": self.summary,
            "findings": [f.to_dict() for f in self.findings],
        }


_SAN_PREFIX = re.compile(r"^=========( ?)(.*)$")
_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+errors?")
_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*([\d,]+)\s+hazards?\s+displayed\s*\(([\d,]+)\s+errors?,\s*([\d,]+)\s+warnings?\)"
)
_SEVERITY = re.compile(r"^(Error|ERROR|Warning|WARNING|WARN|Invalid|Program hit|Race|Uninitialized|Barrier)")


def parse_sanitizer_output(text: str, tool: str) -> SanitizerResult:
    """Findings and counts from compute-sanitizer's `=========`-prefixed report."""
    findings: list[SanitizerFinding] = []
    errors: int | None = None
    warnings: int | None = None
    summary = ""
    current: SanitizerFinding | None = None
    for line in text.splitlines():
        match = _SAN_PREFIX.match(line)
        if not match:
            continue
        body = match.group(2)
        stripped = body.strip()
        if not stripped or stripped == "COMPUTE-SANITIZER":
            current = None
            continue
        race = _RACE_SUMMARY.search(stripped)
        if race:
            summary = stripped
            errors, warnings = int(race.group(2).replace(",", "")), int(race.group(3).replace(",", ""))
            current = None
            continue
        err = _ERROR_SUMMARY.search(stripped)
        if err:
            summary = summary or stripped
            if errors is None:
                errors = int(err.group(1).replace(",", ""))
            current = None
            continue
        indented = body.startswith(" ") or body.startswith("\t")
        if indented and current is not None:
            current.details.append(stripped)
            continue
        if _SEVERITY.match(stripped) or not indented:
            lowered = stripped.lower()
            severity = "warning" if lowered.startswith("warn") else "error"
            message = re.sub(r"^(Error|ERROR|Warning|WARNING|WARN)\s*:\s*", "", stripped)
            current = SanitizerFinding(severity=severity, message=message)
            findings.append(current)
    return SanitizerResult(tool=tool, errors=errors, warnings=warnings, findings=findings, summary=summary)


def sanitize(
    kernel_id: str,
    size: tuple[int, int, int],
    tool: SanitizerTool = "memcheck",
    timeout_s: float = 600,
    sanitizer: str | None = None,
) -> SanitizerResult:
    """Run compute-sanitizer `tool` on one kernel and size inside the worker and parse its findings."""
    exe = sanitizer or find_tool("compute-sanitizer")
    if exe is None:
        raise NcuError(
            "compute-sanitizer was not found; it ships with the CUDA toolkit: install the toolkit and put "
            "its bin folder on PATH or set CUDA_HOME"
        )
    with tempfile.TemporaryDirectory(prefix="gemmlens-san-") as tmp:
        job = write_job(Path(tmp) / "job.json", [kernel_id], [size], op="verify")
        result = run_tool(build_sanitizer_command(exe, tool, job), timeout_s=timeout_s)
    if result.timed_out:
        raise NcuError(explain_failure(result, tool="compute-sanitizer"))
    parsed = parse_sanitizer_output(result.output, tool)
    parsed.returncode = result.returncode
    if parsed.errors is None and not parsed.findings and result.returncode != 0:
        raise NcuError(explain_failure(result, tool="compute-sanitizer"))
    return parsed
