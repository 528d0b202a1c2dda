"""The v3 -> v4 step of the bundled H100 capture at 1024, read on every view that shows it: the Why page, the
Indexing page, the Reports tables and the `explain`, `source` and `report` commands. Each must use the registry's
words and the same numbers: shared-load wavefronts per request 17.0 -> 5.0, no tensor-core row for two FP32
kernels, and an n-way only on shared-memory instructions."""

from __future__ import annotations

from pathlib import Path

import pytest

from profiling.analysis.details import details
from profiling.analysis.launch_compare import compare
from profiling.app import indexing, tables, why
from profiling.cli import main
from profiling.nsight import metric_registry as R
from profiling.nsight.load import load_report

ROOT = Path(__file__).resolve().parents[1]
H100 = ROOT / "results" / "h100-2026-11-22"
RAW = H100 / "ncu_why_1024_raw.csv"
SOURCE = H100 / "source_why_1024_cuda_sass.csv.gz"
PER_REQUEST = R.LD_WAVEFRONTS_PER_REQUEST
BEFORE, AFTER = 17.0, 5.0


@pytest.fixture(scope="module")
def launches() -> dict[str, object]:
    return {launch.identity.kernel_id: launch for launch in load_report(RAW).launches}


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    assert main(argv) == 0
    return capsys.readouterr().out


def test_the_registry_measures_the_step(launches: dict) -> None:
    assert PER_REQUEST.value(launches["v3"]) == pytest.approx(BEFORE, abs=0.01)
    assert PER_REQUEST.value(launches["v4"]) == pytest.approx(AFTER, abs=0.01)
    assert not launches["v3"].identity.tensor_core and not launches["v4"].identity.tensor_core


def test_why_page(launches: dict) -> None:
    captures = {raw.name: (raw, cs, s) for raw, cs, s in why.bundled_captures(H100)}
    data = why.load_capture("h100 1024", *captures[RAW.name])
    view = why.explain_step(data, "v3", "v4")
    row = view.ranked[view.ranked["what moved"] == PER_REQUEST.label].iloc[0]
    assert (row["before"], row["after"]) == (f"{BEFORE:.1f}", f"{AFTER:.1f}")
    assert why.tensor_table(view.explanation).empty
    assert not any("tensor" in str(label) for label in view.ranked["what moved"])


def test_explain_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["explain", "v3", "v4", "--data", str(RAW)], capsys)
    assert f"{PER_REQUEST.label} {BEFORE:.1f} -> {AFTER:.1f}" in out
    assert "-way" not in out and "tensor pipe" not in out


def test_report_command(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["report", str(RAW)], capsys)
    blocks = {block.split("] ", 1)[1].split(" ", 1)[0]: block for block in out.split("\n[")[1:]}
    assert f"{PER_REQUEST.label} {BEFORE:.1f}" in blocks["v3"]
    assert f"{PER_REQUEST.label} {AFTER:.1f}" in blocks["v4"]
    assert "-way" not in out and "tensor" not in blocks["v3"] + blocks["v4"]


def test_reports_tables() -> None:
    table = tables.key_metrics_table([("why", load_report(RAW))]).set_index("kernel")
    assert table.loc["v3", PER_REQUEST.title] == pytest.approx(BEFORE, abs=0.01)
    assert table.loc["v4", PER_REQUEST.title] == pytest.approx(AFTER, abs=0.01)
    assert not any("n-way" in str(column) for column in table.columns)


def test_indexing_page_predicts_the_same_wavefronts() -> None:
    for kernel, expected in (("v3", BEFORE), ("v4", AFTER)):
        frame = indexing.launch_table(kernel, 1024, 1024, 1024).set_index("family")
        assert frame.loc["shared loads", "per request"] == pytest.approx(expected)


def test_source_command_shows_n_way_only_on_shared_memory_instructions(capsys: pytest.CaptureFixture[str]) -> None:
    out = _run(["source", str(SOURCE), "--kernel", "v4", "--top", "40"], capsys)
    table = out.split("hottest lines", 1)[1].split("hottest instructions", 1)[0]
    barrier = [line for line in table.splitlines() if line.rstrip().endswith("__syncthreads();")]
    assert barrier and all(line.split()[3] == "-" for line in barrier)
    instructions = out.split("hottest instructions", 1)[1].splitlines()[1:]
    marked = [line for line in instructions if "shared wavefronts" in line]
    assert marked and all(line.split()[3].startswith(("LDS", "STS", "LDSM")) for line in marked)
    # ncu's per-instruction count is wavefronts (ideal 4 for LDS.128), not the n-way: v4's A loads take 8, 2-way.
    assert "8 shared wavefronts" in out and "-way" not in out


def test_the_reports_columns_explain_themselves_in_the_registrys_words() -> None:
    assert tables.KEY_TABLE_HELP[PER_REQUEST.title] == R.WAVEFRONTS_PER_REQUEST_MEANING
    assert tables.KEY_TABLE_HELP[R.LD_CONFLICT_RATE.title] == R.CONFLICT_RATE_MEANING


def test_details_and_the_launch_comparison_show_tensor_pipes_only_for_tensor_core_work(launches: dict) -> None:
    """The Details page's pipe chart and the launch comparison (Details' Compare tab, `compare-launches`) leave the
    tensor pipes out for two FP32 kernels, and keep them where a launch is tensor-core work."""
    fp32 = [f.label for f in details(launches["v3"]).pipes]
    assert "FMA pipe" in fp32 and not [label for label in fp32 if "tensor" in label]
    assert not [row.label for row in compare(launches["v3"], launches["v4"]) if "tensor" in row.label]
    assert launches["wmma-addmm"].identity.tensor_core
    tensor = [f.label for f in details(launches["wmma-addmm"]).pipes]
    assert {"tensor (all) pipe", "tensor (warp group) pipe"} <= set(tensor)
    assert "tensor (all) pipe" in [row.label for row in compare(launches["v8-async"], launches["wmma-addmm"])]
