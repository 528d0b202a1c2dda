"""Find Nsight Compute and compute-sanitizer, run them with a timeout that kills the whole process group,
turn their failures into one-line messages, and read what they know (`--query-metrics`, `--import`)."""

from __future__ import annotations

import os
import re
import subprocess
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from profiling.errors import InvalidInput, NcuError, ReportError, first_line, last_line
from profiling.gpu.process import kill_process_group
from profiling.identity import NVTX_PREFIX
from profiling.nsight import metrics as M
from profiling.paths import tool_path as find_tool

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
        raise NcuError(f"`{ncu} --version` failed: {_tail(result.output)}")
    return version


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
        kill_process_group(proc)
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


def _tail(text: str) -> str:
    """The last line of a tool's output, where it says why it stopped."""
    return last_line(text, limit=300) or "no output"


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
            f"no kernel matched the filters (NVTX range {NVTX_PREFIX}:* and the catalog kernel names): "
            f"the kernels ran outside the worker's NVTX ranges, or under other names{listed}"
        )
    detail = ncu_errors(text)
    if detail:
        return f"{tool} failed (exit {result.returncode}): the profiled program crashed or failed: {detail}"
    return f"{tool} failed: its target exited with status {result.returncode} ({_tail(text)})"


def ncu_errors(text: str, limit: int = 400) -> str:
    """Every `==ERROR==` line of ncu's output as one line, cut to `limit` characters ("" when there is none).

    ncu splits one failure over several lines ("An error was reported by the driver:", then "LaunchFailed"), so
    the first line alone loses what happened.
    """
    errors = [ln.split("==ERROR==", 1)[1].strip() for ln in text.splitlines() if "==ERROR==" in ln]
    return first_line(" ".join(e for e in errors if e), limit)


def unknown_metrics_in(text: str) -> list[str]:
    """Metric names ncu could not collect: 'Failed to find metric X' or a '(!) n/a' table row."""
    names: list[str] = []
    patterns = (
        # ncu 2025.3.1: "Failed to find metric regex:^sm__x_pct\.(sum|min|max|avg|pct|ratio|max_rate)$".
        r"Failed to find metrics?\s*:?\s*'?(?:regex:\^?)?([A-Za-z0-9_.]+__[A-Za-z0-9_]+(?:\.[A-Za-z0-9_]+)*)",
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


def build_import_command(ncu: str, report_path: str | os.PathLike[str], page: str = "raw") -> list[str]:
    """`ncu --import REPORT --csv --page PAGE` with values in base units."""
    return [ncu, "--import", str(report_path), "--csv", "--page", page, "--print-units", "base"]


def import_page(ncu: str, report_path: str | os.PathLike[str], page: str, timeout_s: float = 300) -> str:
    """The CSV text of one page of a .ncu-rep; ReportError when ncu cannot read it."""
    result = run_tool(build_import_command(ncu, report_path, page), timeout_s=timeout_s)
    if result.returncode != 0 or result.timed_out:
        raise ReportError(f"ncu could not read {Path(report_path).name}: {explain_failure(result)}")
    return result.stdout
