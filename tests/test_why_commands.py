"""The `source`, `sass` and `explain` commands through their own add_arguments / run (as profiling.cli wires
every command), on the real captures; bad input must give one line and exit status 2."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from types import ModuleType

import pytest

from profiling.cli import OneLineParser
from profiling.commands import explain as explain_cmd
from profiling.commands import sass as sass_cmd
from profiling.commands import source as source_cmd
from profiling.errors import GemmLensError

ROOT = Path(__file__).resolve().parent.parent
H100 = ROOT / "results" / "h100-2026-11-22"
CUDA_SASS_1024 = H100 / "source_why_1024_cuda_sass.csv.gz"


def call(module: ModuleType, argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """What `python -m profiling <command> argv` does once the command is registered in profiling.cli."""
    parser = OneLineParser(prog="python -m profiling")
    module.add_arguments(parser)
    try:
        args = parser.parse_args(argv)
        code = int(module.run(args) or 0)
    except GemmLensError as exc:
        print(f"error: {exc}", file=sys.stderr)
        code = 2
    except SystemExit as exc:
        code = int(exc.code or 0)
    out = capsys.readouterr()
    return code, out.out, out.err


def test_every_command_has_the_cli_shape() -> None:
    for module in (source_cmd, sass_cmd, explain_cmd):
        assert isinstance(module.HELP, str) and module.HELP
        module.add_arguments(argparse.ArgumentParser())


def test_source_json_shape(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(source_cmd, [str(CUDA_SASS_1024), "--kernel", "v5", "--top", "3", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    (kernel,) = data["kernels"]
    assert kernel["kernel"] == "sgemm_v5_double_buffer" and kernel["total_samples"] == 12908
    assert len(kernel["lines"]) == 3 and kernel["lines"][0]["source"].strip() == "sum[xx][yy] +="
    ins = kernel["instructions"][0]
    assert {"address", "sass", "samples", "stalls"} <= set(ins) and ins["sass"].startswith("STS")
    assert sum(ins["stalls"].values()) == ins["samples"]


def test_source_text_output(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(source_cmd, [str(H100 / "source_why_4096_sass.csv.gz"), "--kernel", "v9-regdb"], capsys)
    assert code == 0
    assert "[v9-regdb]" in out and "hottest instructions" in out and "FFMA" in out


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        ([str(H100 / "ncu_why_1024_raw.csv")], "no source rows"),
        ([str(CUDA_SASS_1024), "--kernel", "no_such_kernel"], "no kernel named 'no_such_kernel'"),
        ([str(ROOT / "no" / "such.csv")], "cannot read"),
        ([str(CUDA_SASS_1024), "--top", "0"], "--top"),
    ],
)
def test_source_bad_input_is_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(source_cmd, argv, capsys)
    assert code == 2 and message in err and err.count("\n") == 1


def test_source_ncu_rep_without_ncu(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr("profiling.nsight.tools.find_ncu", lambda *a, **k: None)
    code, out, _ = call(source_cmd, [str(ROOT / "results" / "h200-2026-11-22" / "v4_full_1024.ncu-rep")], capsys)
    assert code == 0 and "sgemm_v4_transposed" in out and "STS" in out


def test_explain_two_catalog_ids_from_the_bundled_data(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(explain_cmd, ["v3", "v4", "--size", "1024"], capsys)
    assert code == 0
    data, first = out.splitlines()[:2]
    assert data == (
        "data: v3 1024x1024x1024 and v4 1024x1024x1024 from the bundled capture "
        "results/h100-2026-11-22/ncu_why_1024_raw.csv (size 1024; --size or --data for another)"
    )
    assert first.startswith("v3 -> v4: time -47%") and "wavefronts per request 17.0 -> 5.0" in first
    assert "the step adds: aTile stored as [BK][BM]" in out and "% of cuBLAS" in out and "hot line after" in out


def test_explain_says_which_capture_and_size_it_used_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --size: the largest bundled size (4096), named on the first line and in the JSON, the same capture
    the Why page opens first (profiling.paths.largest_first)."""
    code, out, _ = call(explain_cmd, ["v3", "v4"], capsys)
    assert code == 0
    data, first = out.splitlines()[:2]
    assert data.startswith(
        "data: v3 4096x4096x4096 and v4 4096x4096x4096 from the bundled capture "
        "results/h100-2026-11-22/ncu_why_4096_raw.csv"
    )
    assert first.startswith("v3 -> v4: time -50% (13,650.5 -> 6,768.0 us)")
    code, out, _ = call(explain_cmd, ["v3", "v4", "--json"], capsys)
    assert "results/h100-2026-11-22/ncu_why_4096_raw.csv (size 4096" in json.loads(out)["data"]
    from profiling.app import why  # the page's default capture: the first the H100 bundle offers

    assert why.bundled_captures(H100)[0][0] == explain_cmd.bundled_captures()[4096]


def test_explain_empty_launches_fail_through_the_cli(capsys: pytest.CaptureFixture[str]) -> None:
    """`explain "" ""` used to explain cuBLAS against itself with exit status 0."""
    from profiling.cli import main

    assert main(["explain", "", ""]) == 2
    err = capsys.readouterr().err
    assert "not empty text" in err and err.count("\n") == 1 and "Traceback" not in err


def test_explain_files_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    raw = H100 / "ncu_why_4096_raw.csv"
    code, out, _ = call(explain_cmd, [f"{raw}:v7-warptile", f"{raw}:v8-async", "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["baseline_id"] == "v7-warptile" and {i["key"] for i in data["items"][:2]} == {"global_loads", "ldgsts"}


def test_explain_ladder(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = call(explain_cmd, ["--ladder", "--data", str(H100 / "ncu_why_1024_raw.csv")], capsys)
    lines = out.splitlines()
    assert code == 0 and len(lines) == 11
    assert lines[0] == f"data: {H100 / 'ncu_why_1024_raw.csv'}"
    assert lines[1].startswith("v1 -> v1-coalesced: time -92%")


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["v3"], "give BASELINE and CANDIDATE"),
        (["v3", "v99"], "no single launch for 'v99'; it has: cublas 4096x4096x4096, v1 4096x4096x4096"),
        (["v3", "v9"], "no single launch for 'v9': did you mean v9-regdb? It has: cublas"),
        (["v3", "v8-asnyc"], "did you mean v8-async?"),
        (["", ""], "must name a launch (a catalog id such as v3, or FILE[:kernel]), not empty text"),
        (["v3", "  "], "not empty text"),
        (["v3", "v3"], "'v3' and 'v3' are the same launch (v3 4096x4096x4096): name two different ones"),
        (["sgemm", "v4"], "'sgemm' is part of the names of 11 kernels in the data"),
        (["v3", "v4", "--size", "777"], "no bundled capture at size 777"),
        ([f"{H100 / 'ncu_why_1024_raw.csv'}", "v4"], "no single launch for which launch"),
    ],
)
def test_explain_bad_input_is_one_line(argv: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(explain_cmd, argv, capsys)
    assert code == 2 and message in err and err.count("\n") == 1


def test_sass_refuses_a_library_reference(capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = call(sass_cmd, ["--kernel", "cublas"], capsys)
    assert code == 2 and "no source to compile" in err
    code, _, err = call(sass_cmd, ["--kernel", "v42"], capsys)
    assert code == 2 and "unknown kernel 'v42'" in err


def test_sass_text_and_json(capsys: pytest.CaptureFixture[str]) -> None:
    from profiling.analysis.sass import find_binary
    from profiling.paths import tool_path

    if tool_path("nvcc") is None or find_binary("nvdisasm") is None:
        pytest.skip("needs nvcc and nvdisasm")
    code, out, _ = call(sass_cmd, ["--kernel", "v5"], capsys)
    assert code == 0 and "FFMA per shared load in the main loop: 16.0" in out
    code, out, _ = call(sass_cmd, ["--kernel", "v5", "--json"], capsys)
    data = json.loads(out)
    assert data["main_loop"]["mix"]["ffma"] == 512 and data["main_loop"]["mix"]["bar"] == 1
