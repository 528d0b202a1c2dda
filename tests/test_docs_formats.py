"""The JSON examples in docs/*.md are valid JSON, real excerpts, and what the code writes and reads.

Each example is an excerpt of a committed file (results/, tests/fixtures/) or of a command's output on one,
so a change to a format fails here until its document follows.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kernels import tuning
from profiling.analysis import ceilings
from profiling.cli import main
from profiling.device_model import DeviceInfo, ceilings_from_device_info
from profiling.runs.results import load_document, results_frame

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BUNDLE = ROOT / "results" / "h200-2026-11-22"
NCU = ROOT / "tests" / "fixtures" / "ncu"
JSON_BLOCK = re.compile(r"^```json\n(.*?)^```$", re.DOTALL | re.MULTILINE)
# How many examples each document holds; every one is checked below.
EXPECTED_BLOCKS = {"results-format.md": 1, "report-format.md": 2, "tuning-format.md": 2, "ceilings-format.md": 2}


def json_examples(doc_name: str) -> list[Any]:
    """The ```json blocks of one document, parsed (strict JSON: no comments, no trailing commas)."""
    text = (DOCS / doc_name).read_text()
    parsed = []
    for number, match in enumerate(JSON_BLOCK.finditer(text), start=1):
        try:
            parsed.append(json.loads(match.group(1)))
        except json.JSONDecodeError as exc:
            pytest.fail(f"docs/{doc_name}, JSON example {number} is not valid JSON: {exc}")
    return parsed


def key_sets(records: list[dict[str, Any]]) -> set[frozenset[str]]:
    return {frozenset(record) for record in records}


def report_json(path: Path, capsys: pytest.CaptureFixture[str]) -> dict[str, Any]:
    """What `gemmlens report PATH --json` prints."""
    assert main(["report", str(path), "--json"]) == 0
    return json.loads(capsys.readouterr().out)


def test_every_json_example_in_the_docs_is_valid_json_and_checked_here() -> None:
    counts = {path.name: len(json_examples(path.name)) for path in sorted(DOCS.glob("*.md"))}
    assert {name: n for name, n in counts.items() if n} == EXPECTED_BLOCKS


def test_bench_example_loads_as_a_results_document_and_is_an_excerpt_of_a_committed_run(tmp_path: Path) -> None:
    (example,) = json_examples("results-format.md")
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(example))
    document = load_document(path)
    assert document.to_dict() == example  # read once, written back unchanged
    document = document.to_dict()
    committed = json.loads((BUNDLE / "bench_1024-4096.json").read_text())
    assert {k: v for k, v in document.items() if k != "results"} == {
        k: v for k, v in committed.items() if k != "results"
    }
    by_key = {(r["kernel"], r["m"], r["n"], r["k"]): r for r in committed["results"]}
    assert [by_key[(r["kernel"], r["m"], r["n"], r["k"])] for r in document["results"]] == document["results"]
    # Both a library reference (no compile/launch) and a compiled catalog kernel are shown.
    assert {"compile", "launch", "rel_error_after_timing"} <= set(document["results"][1])
    assert not {"compile", "launch"} & set(document["results"][0])
    frame = results_frame(load_document(path))
    assert list(frame["kernel"]) == ["cublas", "v3"]
    assert frame["pct_cublas"].iloc[1] == pytest.approx(100 * frame["median_ms"].iloc[0] / frame["median_ms"].iloc[1])


def test_report_example_has_the_keys_report_json_writes_and_real_values(capsys: pytest.CaptureFixture[str]) -> None:
    example, summary_metric = json_examples("report-format.md")
    raw = report_json(NCU / "raw.csv", capsys)
    details = report_json(NCU / "details.csv", capsys)
    assert set(example) == set(raw) == set(details)
    (launch,) = example["launches"]
    assert set(launch) == set(raw["launches"][0]) == set(details["launches"][0])
    real = next(r for r in details["launches"] if r["id"] == launch["id"])
    assert example["layout"] == details["layout"] and example["source"] == "tests/fixtures/ncu/details.csv"
    assert example["warnings"] == details["warnings"]
    for field in ("name", "block", "grid", "cc", "device", "process", "invocations", "nvtx", "identity", "findings"):
        assert launch[field] == real[field], field
    for field in ("unmapped", "attributes"):
        assert launch[field] == real[field], field
    assert launch["metrics"] and launch["derived"] and launch["findings"]
    for field in ("metrics", "derived"):
        assert {name: real[field][name] for name in launch[field]} == launch[field], field
    assert key_sets(list(launch["metrics"].values())) == {frozenset({"value", "unit"})}
    assert key_sets(list(launch["derived"].values())) == {frozenset({"value", "unit"})}
    assert key_sets(launch["findings"]) == key_sets([f for r in details["launches"] for f in r["findings"]])

    summary = report_json(NCU / "summary.csv", capsys)
    assert summary["layout"] == "summary"
    assert summary_metric in [r["metrics"]["gpu__time_duration.sum"] for r in summary["launches"]]
    assert set(summary_metric) == {"value", "unit", "minimum", "maximum"}


def test_tuning_record_example_is_read_by_kernels_tuning(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    record, _ = json_examples("tuning-format.md")
    committed = json.loads((ROOT / "results" / "tuning" / "nvidia-h200.json").read_text())
    assert set(record) == set(committed)
    assert key_sets(record["best"]) == key_sets(committed["best"])
    assert record["device"] == committed["device"] and record["measured_utc"] == committed["measured_utc"]
    stated = re.search(r"`measured` holds (\d+) in all", (ROOT / "docs" / "tuning-format.md").read_text())
    assert stated is not None and int(stated.group(1)) == len(committed["measured"])
    assert all(entry in committed["best"] for entry in record["best"])
    assert {entry["base"] for entry in record["best"]} == {e["base"] for e in committed["best"]}
    assert {e["base"] for e in committed["best"]} <= set(tuning.tunable_bases())

    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    path = tuning.tuned_record_path(record["device"])
    assert path.name == "nvidia-h200.json"
    path.write_text(json.dumps(record))
    for entry in record["best"]:
        assert tuning.config_by_id(entry["config"])["base"] == entry["base"]
        assert (
            tuning.tuned_config_id(record["device"], entry["base"], entry["m"], entry["n"], entry["k"])
            == (entry["config"])
        )


def test_tune_json_example_is_the_tuning_member_of_a_committed_sweep() -> None:
    _, fragment = json_examples("tuning-format.md")
    committed = json.loads((BUNDLE / "tuning.json").read_text())
    assert set(fragment) == {"tuning"}
    assert set(fragment["tuning"]) == set(committed["tuning"])
    assert fragment["tuning"]["kernels"] == committed["tuning"]["kernels"]
    assert fragment["tuning"]["best"] and all(b in committed["tuning"]["best"] for b in fragment["tuning"]["best"])


def test_ceilings_cache_example_round_trips_through_the_cache_and_measured_to_ceilings(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    record, _ = json_examples("ceilings-format.md")
    committed = json.loads((BUNDLE / "ceilings.json").read_text())
    assert record == committed["measured"]

    monkeypatch.setenv("GEMMLENS_CACHE_DIR", str(tmp_path))
    path = ceilings.save_cached(record)
    assert path == tmp_path / "ceilings" / "nvidia-h200.json"
    assert ceilings.load_cached(record["device"]) == record

    rates = record["ceilings"]
    measured = ceilings.measured_to_ceilings(rates | {"device": record["device"]}, "measured")
    assert measured.device_name == "NVIDIA H200"
    assert measured.fp32_flops.value == rates["fp32_flops"]["value"]
    assert measured.fp32_flops.note == rates["fp32_flops"]["how"]
    dram = max(rates["dram_read_bytes_per_s"]["value"], rates["dram_copy_bytes_per_s"]["value"])
    assert measured.dram_bytes_per_s.value == dram
    assert measured.l2_bytes_per_s.value == rates["l2_read_bytes_per_s"]["value"]
    assert measured.l1_bytes_per_s.value == rates["shared_read_bytes_per_s"]["value"]


def test_ceilings_json_example_is_what_the_command_prints_for_its_device() -> None:
    record, printed = json_examples("ceilings-format.md")
    committed = json.loads((BUNDLE / "ceilings.json").read_text())
    assert set(printed) == set(committed) == {"device", "measured", "theoretical"}
    assert printed["measured"] == record
    assert printed["device"].items() <= committed["device"].items()
    assert printed["theoretical"] == committed["theoretical"]
    # The theoretical ceilings are computed from the device fields shown.
    assert ceilings_from_device_info(DeviceInfo.from_dict(printed["device"])).to_dict() == printed["theoretical"]
