"""Run Nsight Compute and compute-sanitizer on catalog kernels: find the tools, build argument lists,
run them with a timeout that kills the whole process group, and turn their failures into messages.

Everything that touches a process goes through `run_tool`, so tests replace one function (or
`subprocess.Popen`) and assert exact argument lists.
"""

from __future__ import annotations

import json
import os
import re
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from kernels.registry import get_kernel
from profiling.errors import InvalidInput, NcuError
from profiling.gpu.jobs import BenchSettings, Job, Task
from profiling.gpu.process import worker_command
from profiling.identity import NVTX_PREFIX
from profiling.nsight import metrics as M
from profiling.nsight.load import load_ncu_rep
from profiling.nsight.report import Report
from profiling.nsight.sanitizer import (
    SanitizerResult,
    parse_sanitizer_output,
)
from profiling.nsight.tools import (
    explain_failure,
    query_metrics,
    require_ncu,
    run_tool,
    validate_metric_names,
)
from profiling.paths import tool_path as find_tool

MetricSet = Literal["quick", "full"]
ClockControl = Literal["none", "base"]
SanitizerTool = Literal["memcheck", "racecheck", "initcheck", "synccheck"]

# Push/pop ranges named by profiling.identity.nvtx_range_name in the default domain; the trailing "/" tells
# ncu the config names a push/pop range, "regex:" makes the rest a regular expression (ncu docs,
# "NVTX Filtering").
NVTX_INCLUDE = f"regex:{NVTX_PREFIX}:.*/"
QUICK_SECTIONS: tuple[str, ...] = ("LaunchStats", "Occupancy")


# ---------------------------------------------------------------------------------------------
# Command lines
# ---------------------------------------------------------------------------------------------


def kernel_name_regex(kernel_ids: Sequence[str]) -> str | None:
    """`-k regex:` matching the function names of the catalog kernels, or None when one has none
    (cuBLAS's kernel names are not ours to know; the NVTX filter alone selects them then)."""
    names: list[str] = []
    for kid in kernel_ids:
        spec = get_kernel(kid)
        if not spec.entry or spec.chooses_at_launch:
            # cuBLAS's names are not ours to know, nor which kernel sgemm-auto picks at a shape.
            return None
        # ncu matches the function name without template arguments ("sgemm_tiled"), the N % 4 != 0 twin's too.
        # A split-K kernel's operation starts with the launch that zeroes C (and pads B, and ends with the copy of
        # C back, where it pads N): parts of what is profiled.
        for name in (*spec.helper_entries, *spec.functions):
            if name not in names:
                names.append(name)
    return "regex:^(" + "|".join(re.escape(n) for n in names) + ")$"


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
    """Write the worker's job file (profiling.gpu.jobs.Job).

    op "profile": the worker verifies and warms up each kernel, then launches it once inside the NVTX
    range `gemmlens:<id>:<m>x<n>x<k>`; op "verify" launches it once, which is all a sanitizer needs.
    """
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
    report: Report | None = None
    log: str = ""
    extra_metrics: list[str] = field(default_factory=list)


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
