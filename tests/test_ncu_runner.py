"""The ncu / compute-sanitizer boundary: tool discovery, exact argument lists, timeouts, error messages.

Processes are replaced by fakes; the tool text they return is real output captured on the device
(tests/fixtures/ncu, see its README). Hand-made text appears only in tests named for it.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from profiling import paths as tool_search  # tool_path lives here
from profiling.cli import main
from profiling.errors import InvalidInput, NcuError
from profiling.gpu.jobs import Job
from profiling.gpu.process import worker_command
from profiling.nsight import metrics as M
from profiling.nsight import runner as R
from profiling.nsight import sanitizer as S
from profiling.nsight import tools as T

FIXTURES = Path(__file__).parent / "fixtures" / "ncu"
PY = "/usr/bin/python3"


def fixture_text(name: str) -> str:
    path = FIXTURES / name
    if not path.is_file():  # a missing capture fails: skipping would hide that the parser went untested
        pytest.fail(f"real ncu capture {path.name} is missing from tests/fixtures/ncu (see its README)")
    return path.read_text(encoding="utf-8", errors="replace")


def make_exe(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\nexit 0\n")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# ---------------------------------------------------------------------------------------------
# Discovery
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def no_tools(monkeypatch: pytest.MonkeyPatch) -> None:
    """A machine with no ncu anywhere (as this one is)."""
    monkeypatch.delenv("NCU_PATH", raising=False)
    monkeypatch.delenv("CUDA_HOME", raising=False)
    monkeypatch.delenv("CUDA_PATH", raising=False)
    monkeypatch.setattr(tool_search.shutil, "which", lambda name: None)
    monkeypatch.setattr(tool_search.glob, "glob", lambda pattern: [])
    real_isfile = os.path.isfile
    monkeypatch.setattr(
        tool_search.os.path, "isfile", lambda p: not str(p).startswith("/usr/local/cuda") and real_isfile(p)
    )


def test_find_ncu_order(no_tools: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert T.find_ncu() is None
    home = make_exe(tmp_path / "cuda" / "bin" / "ncu")
    monkeypatch.setenv("CUDA_HOME", str(tmp_path / "cuda"))
    assert T.find_ncu() == str(home)
    monkeypatch.setattr(tool_search.shutil, "which", lambda name: "/on/path/ncu")
    assert T.find_ncu() == "/on/path/ncu"
    env = make_exe(tmp_path / "env" / "ncu")
    monkeypatch.setenv("NCU_PATH", str(env))
    assert T.find_ncu() == str(env)
    explicit = make_exe(tmp_path / "explicit" / "ncu")
    assert T.find_ncu(str(explicit)) == str(explicit)
    # A folder given as the setting means the ncu inside it.
    assert T.find_ncu(str(tmp_path / "explicit")) == str(explicit)


def test_find_ncu_prefers_newest_nsight_compute_install(no_tools: None, tmp_path: Path, monkeypatch) -> None:
    old = make_exe(tmp_path / "2024.3.2" / "ncu")
    new = make_exe(tmp_path / "2025.3.1" / "ncu")
    monkeypatch.setattr(tool_search.glob, "glob", lambda pattern: [str(new), str(old)][::-1])
    assert T.find_ncu() == str(new)


def test_require_ncu_says_how_to_install(no_tools: None) -> None:
    with pytest.raises(NcuError, match="not found; install Nsight Compute"):
        T.require_ncu()


def test_parse_ncu_version_on_real_text() -> None:
    assert T.parse_ncu_version(fixture_text("version.txt")) == "2025.3.1.0"


def test_parse_ncu_version_on_bad_input() -> None:
    assert T.parse_ncu_version("garbage") is None
    assert T.parse_ncu_version("") is None


# ---------------------------------------------------------------------------------------------
# Argument lists
# ---------------------------------------------------------------------------------------------


def test_profile_command_quick_exact() -> None:
    args = R.build_profile_command("/opt/ncu", "/tmp/job.json", "/tmp/run.ncu-rep", ["v3", "v5"], python=PY)
    assert args == [
        "/opt/ncu",
        "--nvtx",
        "--nvtx-include",
        "regex:gemmlens:.*/",
        "-k",
        "regex:^(sgemm_v3_regblock|sgemm_v5_double_buffer)$",
        "--clock-control",
        "none",
        "--section",
        "LaunchStats",
        "--section",
        "Occupancy",
        "--metrics",
        ",".join(M.QUICK_METRICS),
        "-f",
        "-o",
        "/tmp/run.ncu-rep",
        PY,
        "-m",
        "profiling",
        "worker",
        "--job",
        "/tmp/job.json",
    ]


def test_profile_command_full_base_clock_extra_metrics_and_template_kernels() -> None:
    args = R.build_profile_command(
        "ncu",
        "job.json",
        "out.ncu-rep",
        ["tiled-8", "tiled-16", "v1"],
        metric_set="full",
        extra_metrics=["smsp__inst_executed.sum", "dram__bytes.sum"],
        clock_control="base",
        python=PY,
    )
    # Template instantiations share one function name; extras already in the quick list are not repeated.
    assert args[:8] == [
        "ncu",
        "--nvtx",
        "--nvtx-include",
        "regex:gemmlens:.*/",
        "-k",
        "regex:^(sgemm_tiled|sgemm_v1_naive)$",
        "--clock-control",
        "base",
    ]
    assert args[8:10] == ["--set", "full"]
    assert args[10] == "--metrics"
    assert args[11] == ",".join([*M.QUICK_METRICS, "smsp__inst_executed.sum"])
    assert args[12:] == ["-f", "-o", "out.ncu-rep", PY, "-m", "profiling", "worker", "--job", "job.json"]


def test_profile_command_with_cublas_relies_on_nvtx_only() -> None:
    args = R.build_profile_command("ncu", "j", "r", ["cublas", "v5"], python=PY)
    assert "-k" not in args
    assert args[1:4] == ["--nvtx", "--nvtx-include", "regex:gemmlens:.*/"]


def test_profile_command_rejects_bad_options() -> None:
    with pytest.raises(InvalidInput, match="metric set"):
        R.build_profile_command("ncu", "j", "r", ["v5"], metric_set="huge")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="clock control"):
        R.build_profile_command("ncu", "j", "r", ["v5"], clock_control="max")  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="unknown kernel 'v9'"):
        R.build_profile_command("ncu", "j", "r", ["v9"])


def test_import_and_sanitizer_commands_exact() -> None:
    assert T.build_import_command("ncu", "run.ncu-rep") == [
        "ncu",
        "--import",
        "run.ncu-rep",
        "--csv",
        "--page",
        "raw",
        "--print-units",
        "base",
    ]
    assert T.build_import_command("ncu", "run.ncu-rep", "details")[5] == "details"
    worker = [PY, "-m", "profiling", "worker", "--job", "job.json"]
    racecheck = R.build_sanitizer_command("cs", "racecheck", "job.json", python=PY)
    assert racecheck == ["cs", "--tool", "racecheck", "--racecheck-report", "hazard", *worker]
    assert R.build_sanitizer_command("cs", "memcheck", "job.json", python=PY) == ["cs", "--tool", "memcheck", *worker]
    with pytest.raises(InvalidInput):
        R.build_sanitizer_command("cs", "leakcheck", "job.json")  # type: ignore[arg-type]


def test_write_job_matches_worker_job_format(tmp_path: Path) -> None:
    path = R.write_job(tmp_path / "job.json", ["v3", "v5"], [(1024, 1024, 1024), (256, 512, 128)], op="profile")
    job = Job.from_dict(json.loads(path.read_text()))
    assert job.op == "profile"
    assert [(t.kernel, t.m, t.n, t.k) for t in job.tasks] == [
        ("v3", 1024, 1024, 1024),
        ("v5", 1024, 1024, 1024),
        ("v3", 256, 512, 128),
        ("v5", 256, 512, 128),
    ]


# ---------------------------------------------------------------------------------------------
# Running processes
# ---------------------------------------------------------------------------------------------


def test_run_tool_passes_exact_args_to_popen(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: dict = {}

    class FakePopen:
        def __init__(self, args, **kwargs):
            seen["args"], seen["kwargs"] = args, kwargs
            self.pid, self.returncode = 1234, 0

        def communicate(self, timeout=None):
            return "out", "err"

    monkeypatch.setattr(T.subprocess, "Popen", FakePopen)
    result = T.run_tool(["ncu", "--version"], timeout_s=5)
    assert seen["args"] == ["ncu", "--version"]
    assert seen["kwargs"]["start_new_session"] is True  # so a timeout can kill ncu and its target together
    assert (result.returncode, result.stdout, result.stderr, result.timed_out) == (0, "out", "err", False)


def test_run_tool_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pidfile = tmp_path / "child.pid"
    # The shell starts a grandchild (like ncu starting the worker) and waits for it.
    script = f"sleep 60 & echo $! > {pidfile}; wait"
    start = time.monotonic()
    result = T.run_tool(["sh", "-c", script], timeout_s=1.0)
    assert result.timed_out
    assert time.monotonic() - start < 10
    grandchild = int(pidfile.read_text())
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            break
        # A killed but unreaped child is a zombie: gone for our purposes.
        status = Path(f"/proc/{grandchild}/status")
        if status.is_file() and "zombie" in status.read_text():
            break
        time.sleep(0.05)
    else:
        pytest.fail("the grandchild survived the timeout")
    assert "killed" in T.explain_failure(result)


def test_run_tool_missing_executable() -> None:
    with pytest.raises(NcuError, match="could not be started"):
        T.run_tool(["/nonexistent/ncu"], timeout_s=5)


# ---------------------------------------------------------------------------------------------
# Error text -> message
# ---------------------------------------------------------------------------------------------


def _result(text: str, rc: int = 1) -> T.ToolResult:
    return T.ToolResult(args=["ncu"], returncode=rc, stdout=text, stderr="", seconds=1.0)


def test_permission_error_message_on_hand_made_text() -> None:
    """Hand-made: ncu's ERR_NVGPUCTRPERM line as NVIDIA documents it. It cannot be captured on the device
    machines: their driver lets every user read the counters (/proc/driver/nvidia/params has
    "RmProfilingAdminOnly: 0", and ncu run as user nobody profiled normally; H100, 2026-11-22)."""
    text = (
        "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access NVIDIA GPU Performance "
        "Counters on the target device 0."
    )
    message = T.explain_failure(_result(text))
    assert "CAP_SYS_ADMIN" in message
    assert "NVreg_RestrictProfilingToAdminUsers=0" in message
    assert "\n" not in message


def test_unknown_metric_message_on_real_text() -> None:
    # ncu 2025.3.1 does not abort on an unknown metric: it exits 0 and prints "(!) n/a" for it.
    text = fixture_text("err_unknown_metric.txt")
    assert T.unknown_metrics_in(text) == ["no_such__metric.sum"]
    message = T.explain_failure(_result(text, rc=0))
    assert message.startswith("ncu could not collect the metric(s) no_such__metric.sum")
    assert "\n" not in message


def test_failed_to_find_metric_message_on_real_text() -> None:
    # A metric name without a rollup suffix that does not exist: ncu 2025.3.1 aborts with exit code 9 and
    # names it as a regex ("Failed to find metric regex:^sm__maxwarps_per_active_cycle_pct\.(sum|...)$").
    text = fixture_text("err_failed_to_find_metric.txt")
    assert "exit=9" in text
    assert T.unknown_metrics_in(text) == ["sm__maxwarps_per_active_cycle_pct"]
    message = T.explain_failure(_result(text, rc=9))
    assert message.startswith("ncu could not collect the metric(s) sm__maxwarps_per_active_cycle_pct on this GPU")
    assert "\n" not in message


def test_no_kernels_message_on_real_text() -> None:
    text = fixture_text("err_no_kernels.txt")
    message = T.explain_failure(_result(text, rc=0))
    assert message.startswith("no kernel matched")
    # CuPy's own kernels are left out of the hint; ours are named.
    assert "sgemm_v1_naive, sgemm_v5_double_buffer" in message and "cupy_fill" not in message
    assert len(T.available_kernels_in(text)) == 21
    assert "\n" not in message


def test_target_crash_message_on_real_text() -> None:
    text = fixture_text("err_target_crashed.txt")
    message = T.explain_failure(_result(text, rc=9))
    assert "crashed" in message
    assert "An error was reported by the driver: LaunchFailed" in message
    assert "error code (9)" in message
    assert "\n" not in message


def test_ncu_errors_keep_every_error_line() -> None:
    text = fixture_text("err_target_crashed.txt")
    assert T.ncu_errors(text) == (
        "An error was reported by the driver: LaunchFailed The application returned an error code (9)."
    )
    assert T.ncu_errors(text, limit=40) == "An error was reported by the driver: La…"
    assert T.ncu_errors(fixture_text("err_no_kernels.txt")) == ""


def test_target_that_raises_is_one_line_on_real_text() -> None:
    # ncu profiling `python -c "raise RuntimeError('boom')"`: the traceback, then ncu's own ==ERROR== line.
    text = fixture_text("err_target_traceback.txt")
    message = T.explain_failure(_result(text, rc=1))
    assert message == (
        "ncu failed (exit 1): the profiled program crashed or failed: The application returned an error code (1)."
    )


def test_unrecognised_failure_on_hand_made_text_is_one_line() -> None:
    """Hand-made bad input: output with no ==ERROR== line ncu would print; the last line is the hint."""
    text = "==PROF== Connected to process 1\nTraceback (most recent call last):\nRuntimeError: boom\n"
    message = T.explain_failure(_result(text, rc=1))
    assert "exited with status 1" in message and "RuntimeError: boom" in message
    assert "\n" not in message


def test_profile_maps_failures_to_ncu_errors(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    calls: list[list[str]] = []
    failed = fixture_text("err_failed_to_find_metric.txt")

    def fake_run(args, timeout_s, cwd=None):
        calls.append(list(args))
        return T.ToolResult(args, 9, failed, "", 3.0)

    ncu = str(make_exe(tmp_path / "bin" / "ncu"))
    monkeypatch.setattr(R, "run_tool", fake_run)
    with pytest.raises(NcuError, match="sm__maxwarps_per_active_cycle_pct"):
        R.profile(["v5"], [(256, 256, 256)], tmp_path / "run", ncu=ncu)
    assert calls[0][0] == ncu
    assert calls[0][calls[0].index("-o") + 1] == str(tmp_path / "run.ncu-rep")

    def timeout_run(args, timeout_s, cwd=None):
        return T.ToolResult(args, -9, "", "", timeout_s, timed_out=True)

    monkeypatch.setattr(R, "run_tool", timeout_run)
    with pytest.raises(NcuError, match="killed"):
        R.profile(["v5"], [(256, 256, 256)], tmp_path / "run.ncu-rep", ncu=ncu, timeout_s=7)
    with pytest.raises(NcuError, match="not an executable"):
        R.profile(["v5"], [(256, 256, 256)], tmp_path / "run.ncu-rep", ncu=str(tmp_path / "nope"))


def test_profile_validates_extra_metrics_before_running(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    calls: list[list[str]] = []

    listing = fixture_text("query_metrics.txt")

    def fake_run(args, timeout_s, cwd=None):
        calls.append(list(args))
        return T.ToolResult(args, 0, listing, "", 1.0)

    ncu = str(make_exe(tmp_path / "bin" / "ncu"))
    monkeypatch.setattr(R, "run_tool", fake_run)
    monkeypatch.setattr(T, "run_tool", fake_run)  # `--query-metrics` goes through the tools module
    with pytest.raises(InvalidInput, match="unknown metric\\(s\\) made__up.sum"):
        R.profile(["v5"], [(256,) * 3], tmp_path / "r", extra_metrics=["dram__bytes.sum", "made__up.sum"], ncu=ncu)
    assert calls == [[ncu, "--query-metrics"]]  # ncu itself never started


def test_validate_metric_names() -> None:
    available = {"dram__bytes", "sm__cycles_elapsed"}
    assert T.validate_metric_names([" dram__bytes.sum ", "dram__bytes.sum"], available) == ["dram__bytes.sum"]
    with pytest.raises(InvalidInput) as info:
        T.validate_metric_names(["sm__cycles_elapsed.avg", "x__y.sum", "not a metric"], available)
    assert "x__y.sum" in str(info.value) and "not a metric" in str(info.value)


def test_parse_query_metrics_on_real_listing() -> None:
    names = T.parse_query_metrics(fixture_text("query_metrics.txt"))
    assert len(names) > 3000
    # Qualified rows ("CTC.TriageCompute.ctc__rx_bytes") give their last part.
    assert "ctc__rx_bytes" in names and not any("." in n for n in names)
    for counter in ("dram__bytes", "lts__t_bytes", "sm__sass_thread_inst_executed_op_ffma_pred_on"):
        assert counter in names
    # Every counter of the quick set is listed or is a known unlisted kind (launch__, occupancy...).
    assert T.validate_metric_names(M.QUICK_METRICS, names) == list(M.QUICK_METRICS)
    assert T.validate_metric_names(["smsp__cycles_active.avg.pct_of_peak_sustained_elapsed"], names)
    with pytest.raises(InvalidInput, match="no_such__metric.sum"):
        T.validate_metric_names(["no_such__metric.sum"], names)


# ---------------------------------------------------------------------------------------------
# compute-sanitizer
# ---------------------------------------------------------------------------------------------


SANITIZER_FIXTURES = Path(__file__).resolve().parent / "fixtures" / "sanitizer"


def test_parse_memcheck_of_a_faulting_kernel() -> None:
    # The worker's deliberately faulting kernel under memcheck on the H200: 32 threads write out of bounds.
    result = S.parse_sanitizer_output((SANITIZER_FIXTURES / "memcheck_fault.txt").read_text(), "memcheck")
    assert result.errors == 35 and result.summary == "ERROR SUMMARY: 35 errors"
    writes = [f for f in result.findings if f.message == "Invalid __global__ write of size 4 bytes"]
    assert len(writes) == 32
    assert writes[0].details[:2] == ["at gemmlens_fault+0x80", "by thread (0,0,0) in block (0,0,0)"]
    assert any("cudaErrorLaunchFailure" in f.message for f in result.findings)


@pytest.mark.parametrize(
    "name,tool,summary",
    [
        ("memcheck_v5.txt", "memcheck", "ERROR SUMMARY: 0 errors"),
        ("racecheck_v5.txt", "racecheck", "RACECHECK SUMMARY: 0 hazards displayed (0 errors, 0 warnings)"),
    ],
)
def test_parse_clean_sanitizer_runs(name: str, tool: str, summary: str) -> None:
    # v5 (double buffering) and v2 at 200x136x72: no memory errors, no shared-memory races.
    result = S.parse_sanitizer_output((SANITIZER_FIXTURES / name).read_text(), tool)
    assert result.errors == 0 and result.findings == [] and result.summary == summary


def test_sanitize_needs_compute_sanitizer(no_tools: None) -> None:
    with pytest.raises(NcuError, match="compute-sanitizer was not found"):
        R.sanitize("v5", (256, 256, 256))


def test_cli_profile_bad_input_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["profile", "--kernels", "v9", "--sizes", "256"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "unknown kernel 'v9'" in err
    assert main(["profile", "--kernels", "v5", "--sizes", "12x"]) == 2
    assert "not N or MxNxK" in capsys.readouterr().err


def test_cli_sanitize_without_tool_is_one_line(no_tools: None, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sanitize", "--kernel", "v5", "--size", "256", "--tool", "racecheck"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "compute-sanitizer" in err


def test_worker_module_is_the_profiled_target() -> None:
    assert worker_command("j.json", python=sys.executable) == [
        sys.executable,
        "-m",
        "profiling",
        "worker",
        "--job",
        "j.json",
    ]
    assert subprocess.list2cmdline(worker_command("j", "p")) == "p -m profiling worker --job j"
