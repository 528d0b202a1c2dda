"""The use-case layer: one validation, one progress wording and one error text for the CLI and the app's queue.

The GPU worker is replaced by a scripted child that speaks the real protocol; ncu and compute-sanitizer by
monkeypatched runner functions. Everything here runs on a CPU.
"""

from __future__ import annotations

import json
import math
import re
import sys
import textwrap
import tomllib
from pathlib import Path

import pytest

from kernels import tuning
from profiling import usecases
from profiling.app.gpu_queue import GpuJobQueue
from profiling.cli import main
from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput, ReportError, WorkerError
from profiling.gpu.jobs import BenchSettings, parse_sizes
from profiling.nsight import runner as ncu_runner
from profiling.nsight.report import MAX_REPORT_BYTES
from profiling.nsight.sanitizer import SanitizerResult
from profiling.runs.records import BenchResult
from profiling.runs.results import ResultsDocument
from profiling.shape import INT32_MAX, Shape, parse_shape

ROOT = Path(__file__).resolve().parent.parent
NCU = ROOT / "tests" / "fixtures" / "ncu"

# Answers like the worker: the device line, then one result per task (or the measured ceilings), and keeps
# the job it was given so a test can see what the parent asked for.
SCRIPTED_WORKER = textwrap.dedent(
    """
    import json, shutil, sys
    sys.path.insert(0, {root!r})
    from profiling.gpu.worker import DEVICE_PREFIX, RESULT_PREFIX
    job = json.load(open(sys.argv[1]))
    shutil.copy(sys.argv[1], {seen!r})
    print(DEVICE_PREFIX + json.dumps({{"name": "scripted GPU", "cc": "9.0", "sm_count": 132,
                                       "max_sm_clock_mhz": 1980}}), flush=True)
    if job["op"] == "device_info":
        sys.exit(0)
    for t in job["tasks"]:
        if job["op"] == "ceilings":
            rec = dict(t, status="ok", error=None, ceilings={{"fp32_flops": {{"value": 6.0e13, "how": "scripted"}}}})
        else:
            ms = 1.0 if t["kernel"] == "cublas" else 4.0
            rec = dict(t, status="ok", error=None, operation="sgemm", time_ms={{"median": ms}}, tflops=ms)
        print(RESULT_PREFIX + json.dumps(rec), flush=True)
    """
)


@pytest.fixture
def worker(tmp_path: Path):
    """A command that starts the scripted worker; `worker.jobs()` lists the jobs it was given."""
    seen = tmp_path / "seen"
    seen.mkdir()
    script = tmp_path / "worker.py"

    def command(job_file: Path) -> list[str]:
        copy = seen / f"{len(list(seen.iterdir())):03d}.json"
        script.write_text(SCRIPTED_WORKER.format(root=str(ROOT), seen=str(copy)))
        return [sys.executable, str(script), str(job_file)]

    command.jobs = lambda: [json.loads(p.read_text()) for p in sorted(seen.iterdir())]
    return command


class Recorder:
    """A Progress that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[tuple[float | None, str | None, object]] = []

    def __call__(self, progress=None, message=None, item=None) -> None:
        self.calls.append((progress, message, item))

    @property
    def messages(self) -> list[str]:
        return [m for _, m, _ in self.calls if m]


# --- one rule for sizes ------------------------------------------------------------------------------------


def test_sizes_take_n_and_mxnxk_with_one_dimension_rule() -> None:
    assert parse_sizes("256, 131072x64x64 ,70000") == [
        Shape(256, 256, 256),
        Shape(131072, 64, 64),
        Shape(70000, 70000, 70000),
    ]
    assert parse_sizes(f"{INT32_MAX}x1x1") == [Shape(INT32_MAX, 1, 1)]
    for text in (f"{INT32_MAX + 1}", f"1x{INT32_MAX + 1}x1"):
        with pytest.raises(InvalidInput, match=f"at most {INT32_MAX}"):
            parse_sizes(text)
    with pytest.raises(InvalidInput, match=f"at most {INT32_MAX}"):
        parse_shape(f"1x1x{INT32_MAX + 1}")
    with pytest.raises(InvalidInput, match="'12x' is not N or MxNxK"):
        parse_sizes("256,12x")


def test_the_cli_commands_share_the_size_rule(capsys: pytest.CaptureFixture[str]) -> None:
    too_big = f"{INT32_MAX + 1}"
    for argv in (
        ["bench", "--kernels", "v5", "--sizes", too_big],
        ["profile", "--kernels", "v5", "--sizes", too_big],
        ["sanitize", "--kernel", "v5", "--size", too_big],
        ["tune", "--sizes", too_big],
    ):
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"size must be at most {INT32_MAX}" in err, argv


# --- planning: everything is checked before any GPU work -------------------------------------------------


@pytest.mark.parametrize("seconds", [0, -1, math.nan, math.inf])
def test_time_limits_must_be_positive_and_finite(seconds: float) -> None:
    with pytest.raises(InvalidInput, match="--timeout must be a positive number of seconds"):
        usecases.check_seconds(seconds)
    with pytest.raises(InvalidInput, match="positive number of seconds"):
        usecases.plan_profile(["v5"], [(256, 256, 256)], "r", timeout_s=seconds)


def test_profile_plan_checks_kernels_sizes_and_options() -> None:
    plan = usecases.plan_profile(
        ["v5", "v5", "wmma-async"], [(256, 256, 256)], "r", extra_metrics=[" a__b ", "", "a__b"]
    )
    assert plan.kernel_ids == ["v5", "wmma-async"] and plan.shapes == [Shape(256, 256, 256)]
    assert plan.extra_metrics == ["a__b"] and plan.report_path == Path("r")
    with pytest.raises(InvalidInput, match="multiples of 16"):
        usecases.plan_profile(["v5", "wmma-async"], [(256, 256, 256), (100, 64, 64)], "r")
    with pytest.raises(InvalidInput, match="unknown kernel 'v0'"):
        usecases.plan_profile(["v0"], [(256, 256, 256)], "r")
    with pytest.raises(InvalidInput, match="no kernels given"):
        usecases.plan_profile([" "], [(256, 256, 256)], "r")
    with pytest.raises(InvalidInput, match="no sizes given"):
        usecases.plan_profile(["v5"], [], "r")
    with pytest.raises(InvalidInput, match="unknown metric set 'huge'; use quick or full"):
        usecases.plan_profile(["v5"], [(256, 256, 256)], "r", metric_set="huge")
    with pytest.raises(InvalidInput, match="unknown clock control 'max'; use none or base"):
        usecases.plan_profile(["v5"], [(256, 256, 256)], "r", clock_control="max")


def test_sanitizer_plan_refuses_what_cannot_be_sanitized() -> None:
    assert usecases.plan_sanitizer("v8-async", (130, 200, 40), "racecheck").shape == Shape(130, 200, 40)
    with pytest.raises(InvalidInput, match="library kernel"):
        usecases.plan_sanitizer("cublas", (256, 256, 256))
    with pytest.raises(InvalidInput, match="multiples of 16"):
        usecases.plan_sanitizer("wmma-addmm", (100, 64, 64))
    with pytest.raises(InvalidInput, match="unknown sanitizer tool 'leakcheck'"):
        usecases.plan_sanitizer("v5", (256, 256, 256), tool="leakcheck")
    with pytest.raises(InvalidInput, match="M, N and K"):
        usecases.plan_sanitizer("v5", (256, 256))


def test_the_queue_and_the_cli_refuse_with_the_same_line(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["sanitize", "--kernel", "cublas"], lambda: usecases.sanitize_job("cublas", (256, 256, 256))),
        (
            ["sanitize", "--kernel", "wmma-addmm", "--size", "100"],
            lambda: usecases.sanitize_job("wmma-addmm", (100,) * 3),
        ),
        (
            ["profile", "--kernels", "wmma-async", "--sizes", "100"],
            lambda: usecases.profile_job(["wmma-async"], (100,) * 3, Path("r")),
        ),
        (
            ["bench", "--kernels", "v5", "--sizes", "64", "--repeats", "0"],
            lambda: usecases.bench_job(["v5"], [Shape(64, 64, 64)], BenchSettings(repeats=0)),
        ),
        (
            ["bench", "--kernels", "v5", "--sizes", "64", "--timeout", "0"],
            lambda: usecases.bench_job(["v5"], [Shape(64, 64, 64)], BenchSettings(), task_timeout_s=0),
        ),
    ]
    for argv, make_job in cases:
        assert main(argv) == 2, argv
        cli_line = capsys.readouterr().err.strip().removeprefix("error: ")
        with pytest.raises(InvalidInput) as info:
            make_job()
        assert str(info.value) == cli_line, argv


def test_bench_settings_are_checked() -> None:
    for settings, flag in [
        (BenchSettings(repeats=0), "--repeats"),
        (BenchSettings(warmup=-1), "--warmup"),
        (BenchSettings(max_seconds_per_run=0), "--max-seconds"),
        (BenchSettings(max_seconds_per_run=math.nan), "--max-seconds"),
    ]:
        with pytest.raises(InvalidInput, match=flag):
            usecases.plan_benchmark(["v5"], [Shape(64, 64, 64)], settings)


def test_a_benchmark_keeps_kernels_a_size_refuses_for_the_worker_to_report() -> None:
    plan = usecases.plan_benchmark(["wmma-addmm", "v5"], [(100, 64, 64)], BenchSettings(), verify_only=True)
    assert plan.job.op == "verify"
    assert [t.kernel for t in plan.job.tasks] == ["cublas-addmm", "cublas", "wmma-addmm", "v5"]


def test_tune_plan_sweeps_only_tunable_kernels() -> None:
    plan = usecases.plan_tune([Shape(512, 512, 512)], ["v9-regdb", ""], repeats=3)
    swept = [t.kernel for t in plan.bench.job.tasks]
    assert plan.bases == ["v9-regdb"] and swept[0] == "cublas"
    assert swept[1:] == [c["id"] for c in tuning.V9_TUNING_CONFIGS] and plan.bench.job.settings.repeats == 3
    assert usecases.plan_tune([Shape(64, 64, 64)]).bases == tuning.tunable_bases()
    with pytest.raises(InvalidInput, match="not tunable: v5"):
        usecases.plan_tune([Shape(64, 64, 64)], ["v5"])


def test_tune_plan_sweeps_a_single_configuration_named_by_its_id() -> None:
    serial = [c["id"] for c in tuning.V9_SPLITK_TUNING_CONFIGS if c["params"].get("SERIAL")]
    assert len(serial) == 12
    plan = usecases.plan_tune([Shape(333, 127, 4096)], [serial[1], serial[0], "v9-regdb"])
    swept = [t.kernel for t in plan.bench.job.tasks]
    # In the catalog's order of configurations; the record names the kernels they belong to.
    assert swept == ["cublas", *(c["id"] for c in tuning.V9_TUNING_CONFIGS), serial[0], serial[1]]
    assert plan.bases == ["v9-splitk", "v9-regdb"]
    with pytest.raises(
        InvalidInput, match=r"not tunable: v9-splitk-64x64-ser; .*\(or one of their configuration ids\)"
    ):
        usecases.plan_tune([Shape(64, 64, 64)], ["v9-splitk-64x64-ser"])


# --- running: one progress wording for the CLI and the queue ----------------------------------------------


def test_benchmark_reports_each_result_as_it_arrives(worker) -> None:
    plan = usecases.plan_benchmark(["v3", "v5"], [Shape(256, 128, 64)], BenchSettings(repeats=2), task_timeout_s=30)
    progress = Recorder()
    document = usecases.run_benchmark(plan, progress, command=worker)
    assert [r.kernel for r in document.results] == ["cublas", "v3", "v5"]
    assert document.results[2].pct_cublas == pytest.approx(25.0)
    assert document.settings["repeats"] == 2 and document.device_name == "scripted GPU"
    assert progress.messages == [
        "starting the GPU worker for 3 kernel/size runs",
        "cublas 256x128x64: ok",
        "v3 256x128x64: ok",
        "v5 256x128x64: ok",
    ]
    assert [p for p, _, _ in progress.calls] == pytest.approx([0.0, 1 / 3, 2 / 3, 1.0])
    assert [item["kernel"] for _, _, item in progress.calls[1:]] == ["cublas", "v3", "v5"]
    assert document.all_verified
    assert worker.jobs()[0]["settings"]["repeats"] == 2


def test_bench_cli_prints_the_same_progress_lines(worker, monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setattr(usecases, "worker_command", worker)
    out = tmp_path / "r.json"
    assert main(["bench", "--kernels", "v5", "--sizes", "128", "--shape", "64x32x16", "--json", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.err.splitlines() == [
        "  starting the GPU worker for 4 kernel/size runs",
        "  cublas 128x128x128: ok",
        "  v5 128x128x128: ok",
        "  cublas 64x32x16: ok",
        "  v5 64x32x16: ok",
    ]
    assert captured.out.startswith("scripted GPU (cc 9.0, 132 SMs") and "v5" in captured.out
    assert [r["kernel"] for r in json.loads(out.read_text())["results"]] == ["cublas", "v5", "cublas", "v5"]


def test_bench_job_runs_through_the_queue_with_the_same_words(worker) -> None:
    fn = usecases.bench_job(["v5"], [Shape(64, 64, 64)], BenchSettings(repeats=2), command=worker)
    queue = GpuJobQueue()
    job = queue.wait(queue.submit("bench", "me", fn).id, 60)
    assert job.state == "done", job.error
    assert job.events == ["starting the GPU worker for 2 kernel/size runs", "cublas 64x64x64: ok", "v5 64x64x64: ok"]
    assert job.progress == 1.0 and [r["kernel"] for r in job.partial] == ["cublas", "v5"]


def test_tune_records_the_fastest_configuration(worker, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path / "tuned")
    plan = usecases.plan_tune([Shape(256, 256, 256)], ["v8-async"], repeats=2)
    progress = Recorder()
    document = usecases.run_tune(plan, record=True, progress=progress, command=worker)
    best = document.tuning["best"]
    assert document.tuning["kernels"] == ["v8-async"]
    assert [(b["base"], b["m"], b["config"]) for b in best] == [("v8-async", 256, tuning.TUNING_CONFIGS[0]["id"])]
    saved = json.loads(tuning.tuned_record_path("scripted GPU").read_text())
    measured = tuning.measured_per_shape([r.to_dict() for r in document.results])
    assert {m["config"] for m in measured} == {c["id"] for c in tuning.TUNING_CONFIGS}
    assert saved == {
        "device": "scripted GPU",
        "measured_utc": document.created_utc,
        "best": best,
        "measured": measured,
    }
    assert progress.messages[-1].startswith("recorded the fastest configurations for scripted GPU in ")


def test_a_tuning_record_keeps_what_a_later_sweep_did_not_run(monkeypatch, tmp_path: Path) -> None:
    """A split-K sweep at its own shapes adds to the v8/v9 record; a re-swept configuration and shape is replaced."""
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    v8, v9, split = tuning.TUNING_CONFIGS[0]["id"], tuning.V9_TUNING_CONFIGS[0]["id"], tuning.SPLITK_TUNING_CONFIGS[0]

    def result(kernel: str, m: int, n: int, k: int, tflops: float, status: str = "ok") -> dict:
        return {"kernel": kernel, "m": m, "n": n, "k": k, "status": status, "tflops": tflops, "pct_cublas": 50.0}

    usecases.write_tuning_record(
        "GPU X", "t1", [result(v8, 4096, 4096, 4096, 40.0), result(v9, 4096, 4096, 4096, 47.0)]
    )
    path = usecases.write_tuning_record(
        "GPU X", "t2", [result(split["id"], 127, 127, 8191, 5.0), result(v9, 4096, 4096, 4096, 46.0, "wrong")]
    )
    record = json.loads(path.read_text())
    assert record["measured_utc"] == "t2"
    assert [(e["config"], e["m"], e["tflops"]) for e in record["measured"]] == [
        (v8, 4096, 40.0),
        (split["id"], 127, 5.0),
    ]
    assert [(e["base"], e["m"], e["config"]) for e in record["best"]] == [
        ("v8-async", 4096, v8),
        ("v8-splitk", 127, split["id"]),
    ]


def test_a_sweep_of_some_configurations_keeps_a_faster_best_of_their_kernel(monkeypatch, tmp_path: Path) -> None:
    """Two new v9-regdb configurations swept at every grid shape (2026-11-28) replaced v9-regdb's best at 4096^3,
    49.6 TFLOP/s, with the new 64x64 tile's 33.8: the best stays unless the new one is faster or its own
    configuration was swept again."""
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    big, mid, small = (c["id"] for c in tuning.V9_TUNING_CONFIGS[:3])

    def result(kernel: str, m: int, tflops: float) -> dict:
        return {"kernel": kernel, "m": m, "n": m, "k": m, "status": "ok", "tflops": tflops, "pct_cublas": 50.0}

    usecases.write_tuning_record("GPU X", "t1", [result(big, 4096, 49.6), result(mid, 1024, 20.0)])
    path = usecases.write_tuning_record(
        "GPU X", "t2", [result(small, 4096, 33.8), result(small, 1024, 25.0), result(big, 2048, 40.0)]
    )
    assert [(e["m"], e["config"], e["tflops"]) for e in json.loads(path.read_text())["best"]] == [
        (1024, small, 25.0),
        (2048, big, 40.0),
        (4096, big, 49.6),
    ]
    # The old best's configuration swept again, slower: its new measurement is the one that stands.
    path = usecases.write_tuning_record("GPU X", "t3", [result(big, 4096, 30.0), result(small, 4096, 33.8)])
    assert [(e["m"], e["config"], e["tflops"]) for e in json.loads(path.read_text())["best"]][-1] == (
        4096,
        small,
        33.8,
    )


def test_ceilings_are_measured_once_then_read_from_the_cache(worker, monkeypatch, tmp_path: Path) -> None:
    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path / "cache"))
    first = usecases.run_ceilings(timeout_s=30, command=worker)
    assert not first.cached and first.measured.fp32_flops.value == 6.0e13
    assert first.record["device"] == "scripted GPU" and first.theoretical.fp32_flops is not None
    assert [j["op"] for j in worker.jobs()] == ["device_info", "ceilings"]
    again = usecases.run_ceilings(timeout_s=30, command=worker)
    assert again.cached and again.record == first.record
    assert [j["op"] for j in worker.jobs()] == ["device_info", "ceilings", "device_info"]
    usecases.run_ceilings(refresh=True, timeout_s=30, command=worker)
    assert [j["op"] for j in worker.jobs()][-2:] == ["device_info", "ceilings"]


def test_device_info_without_a_gpu_is_one_worker_error(tmp_path: Path) -> None:
    script = tmp_path / "nogpu.py"
    script.write_text(
        "import sys\nprint('no usable CUDA GPU: CUDARuntimeError: no device', file=sys.stderr)\nsys.exit(1)\n"
    )
    with pytest.raises(WorkerError, match="no usable CUDA GPU: CUDARuntimeError: no device"):
        usecases.device_info(10, command=lambda f: [sys.executable, str(script), str(f)])


def test_profile_and_sanitizer_report_their_start(monkeypatch, tmp_path: Path) -> None:
    calls: list[tuple] = []

    def fake_profile(kernel_ids, sizes, report_path, **options):
        calls.append((kernel_ids, sizes, report_path, options))
        return ncu_runner.ProfileRun(Path(report_path), ["ncu"], "none", "quick", 2.5)

    def fake_sanitize(kernel_id, size, tool, timeout_s):
        calls.append((kernel_id, size, tool, timeout_s))
        return SanitizerResult(tool=tool, errors=0, warnings=0, findings=[], summary="ERROR SUMMARY: 0 errors")

    monkeypatch.setattr(ncu_runner, "profile", fake_profile)
    monkeypatch.setattr(ncu_runner, "sanitize", fake_sanitize)
    progress = Recorder()
    plan = usecases.plan_profile(["v4", "v5"], [(1024, 512, 256)], tmp_path / "r.ncu-rep", extra_metrics=["x__y.sum"])
    assert usecases.run_profile(plan, progress).seconds == 2.5
    assert calls[0][:3] == (["v4", "v5"], [(1024, 512, 256)], tmp_path / "r.ncu-rep")
    assert calls[0][3]["extra_metrics"] == ["x__y.sum"] and calls[0][3]["metric_set"] == "quick"
    assert progress.messages == ["ncu profiling v4, v5 at 1024x512x256", "ncu finished in 2.5 s; reading the report"]
    result = usecases.run_sanitizer(usecases.plan_sanitizer("v5", (256, 128, 64), "racecheck", 60), progress)
    assert result.clean and calls[1] == ("v5", (256, 128, 64), "racecheck", 60.0)
    assert progress.messages[-1] == "compute-sanitizer --tool racecheck on v5 at 256x128x64"


# --- reports -----------------------------------------------------------------------------------------------


def test_a_report_reads_the_same_from_a_file_and_from_an_upload() -> None:
    from_file = usecases.load_report(NCU / "raw.csv")
    uploaded = usecases.load_upload("raw.csv", (NCU / "raw.csv").read_bytes())
    assert uploaded.source == "raw.csv" and len(uploaded.launches) == len(from_file.launches) == 10
    assert [launch.metrics for launch in uploaded.launches] == [launch.metrics for launch in from_file.launches]


def test_the_upload_limit_is_the_parsers_and_the_servers() -> None:
    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text())
    # Streamlit counts MiB: the largest whole number of MiB that the parser's 200 MB (10^6 bytes) holds.
    assert config["server"]["maxUploadSize"] == usecases.MAX_UPLOAD_MIB == 190
    mib = 2**20
    assert usecases.MAX_UPLOAD_MIB * mib <= MAX_REPORT_BYTES == usecases.MAX_UPLOAD_MB * 10**6 < (190 + 1) * mib


@pytest.mark.parametrize(
    "name,data,expected",
    [
        ("empty.csv", b"", "empty.csv is empty"),
        ("big.csv", b"x" * (200 * 1000 * 1000 + 1), "uploads over 200 MB are not read"),
        ("runs.json", b'{"schema": "gemmlens.runs.v1"}', "runs.json is JSON"),
        ("v4.ncu-rep", b"NVPERF" + b"\x00" * 64, "could not be read by ncu-report"),
    ],
    ids=["empty", "oversized", "json", "damaged-ncu-rep"],
)
def test_bad_uploads_are_one_line_report_errors(name: str, data: bytes, expected: str, monkeypatch) -> None:
    monkeypatch.setattr("profiling.nsight.tools.find_ncu", lambda *a, **k: None)
    with pytest.raises(ReportError, match=re.escape(expected)) as info:
        usecases.load_upload(name, data)
    assert "\n" not in str(info.value)


def test_bench_rest_is_for_an_ab_and_must_fit_its_time_limit(capsys: pytest.CaptureFixture[str]) -> None:
    cases = [
        (["bench", "--kernels", "v5", "--sizes", "64", "--rest", "2"], "--rest spaces out the pairs of an A/B"),
        (
            ["bench", "--ab", "cublas,v5", "--sizes", "64", "--rest", "5"],
            "a rest of 5 s before each of 30 pairs is 150 s, past the 120 s a size may take",
        ),
        (
            ["bench", "--ab", "cublas,v5", "--sizes", "64", "--rest", "61"],
            "--rest must be a number of seconds between 0 and 60, got 61",
        ),
        (
            ["bench", "--ab", "cublas,v5", "--sizes", "64", "--rest", "nan"],
            "--rest must be a number of seconds between 0 and 60",
        ),
    ]
    for argv, message in cases:
        assert main(argv) == 2, argv
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and message in err, (argv, err)
    with pytest.raises(InvalidInput, match="--rest must be between 0 and 60 seconds, got -1"):
        BenchSettings(rest_s=-1.0).validate()
    BenchSettings(rest_s=2.0).validate()


def test_a_sweep_records_its_nvrtc_and_says_what_another_nvrtc_measured(monkeypatch, tmp_path: Path) -> None:
    """Each entry a sweep writes says which NVRTC built it; the sweep's progress names the measurements it kept from
    another NVRTC, with their count; a cluster's GPU type other than the document's device gets no `nvrtc`."""

    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    big, mid = (c["id"] for c in tuning.V9_TUNING_CONFIGS[:2])

    def result(kernel: str, m: int, tflops: float) -> BenchResult:
        return BenchResult(kernel=kernel, shape=Shape(m, m, m), tflops=tflops, pct_cublas=90.0)

    said: list[str] = []
    for nvrtc, sizes in (("12.9", (1024, 2048)), ("13.0", (4096,))):
        document = ResultsDocument(created_utc=nvrtc, device=DeviceInfo(name="GPU X", nvrtc=nvrtc))
        said.clear()
        usecases.record_tuning(
            document, "GPU X", [result(c, m, 40.0) for m in sizes for c in (big, mid)], lambda _f, t: said.append(t)
        )
    record = json.loads(tuning.tuned_record_path("GPU X").read_text())
    assert [(e["m"], e["nvrtc"]) for e in record["best"]] == [(1024, "12.9"), (2048, "12.9"), (4096, "13.0")]
    assert [e["nvrtc"] for e in record["measured"]] == ["12.9"] * 4 + ["13.0"] * 2
    assert said[-1] == (
        "the record keeps measurements this sweep did not repeat: 4 by NVRTC 12.9; this sweep's NVRTC is 13.0"
    )
    assert usecases.other_nvrtc_counts(record["measured"], "12.9") == {"13.0": 2}
    assert usecases.other_nvrtc_counts(record["measured"], None) == {}
    document = ResultsDocument(created_utc="t", device=DeviceInfo(name="GPU X", nvrtc="13.0"))
    usecases.record_tuning(document, "GPU Y", [result(big, 4096, 40.0)])
    assert "nvrtc" not in json.loads(tuning.tuned_record_path("GPU Y").read_text())["measured"][0]
