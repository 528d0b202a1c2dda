"""Review functions: filters, comparison verdicts, history, HTML/CSV/JSON export and import round trip."""

from __future__ import annotations

import csv
import datetime as dt
import io
import json
import math
import re
from copy import deepcopy
from pathlib import Path

import pandas as pd
import pytest

from profiling.charts import history_figure, review_html
from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput
from profiling.runs import convert, records, review
from profiling.runs.comparison import (
    COMPARISON_COLUMNS,
    VERDICT_COLORS,
    classify,
    compare_runs,
    side_by_side,
    slower_than,
    unmatched,
)
from profiling.runs.export import export_runs_json, import_runs_json, to_csv, to_json
from profiling.runs.store import RunStore

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"


def bench_doc(
    kernels: dict[str, float],
    *,
    size: int = 4096,
    created: str = "2026-11-22T01:23:45Z",
    device: str = "NVIDIA H100 80GB HBM3",
) -> dict:
    """A gemmlens.bench.v1 document (docs/results-format.md): one ok result per kernel, median ms."""
    return {
        "schema": "gemmlens.bench.v1",
        "created_utc": created,
        "tool": {"gemmlens_commit": "abc1234"},
        "device": {"name": device, "cc": "9.0", "driver": "580.159.04", "cuda_runtime": 13000},
        "settings": {"repeats": 30},
        "results": [
            {
                "kernel": name,
                "m": size,
                "n": size,
                "k": size,
                "status": "ok",
                "error": None,
                "rel_error": 1e-7,
                "time_ms": {"median": ms, "min": ms, "max": ms},
                "times_ms": [ms * (1 + 0.0002 * (i % 5 - 2)) for i in range(10)],  # steady launches around the median
                "tflops": 2 * size**3 / (ms * 1e-3) / 1e12,
                "pct_cublas": 80.0,
                "compile": {"registers": 128, "shared_static_bytes": 8192},
            }
            for name, ms in kernels.items()
        ],
    }


def record(kernels: dict[str, float], run_id: int, label: str, **kw: object) -> dict:
    rec = convert.run_from_bench(bench_doc(kernels, **kw), label=label)  # type: ignore[arg-type]
    rec["id"] = run_id
    return rec


def by(comparison: pd.DataFrame, kernel: str, metric: str) -> pd.Series:
    rows = comparison[(comparison["kernel"] == kernel) & (comparison["metric"] == metric)]
    assert len(rows) == 1, rows
    return rows.iloc[0]


@pytest.mark.parametrize(
    ("better", "base", "cand", "verdict"),
    [
        ("lower", 10.0, 9.0, "improvement"),
        ("lower", 10.0, 11.0, "regression"),
        ("lower", 10.0, 10.1, "same"),  # 1% is inside the 2% noise threshold
        ("higher", 10.0, 11.0, "improvement"),
        ("higher", 10.0, 9.0, "regression"),
        (None, 128, 160, "changed"),
        (None, 128, 128, "same"),
        ("lower", 0, 0, "same"),
        ("lower", 0, 5, "regression"),  # bank conflicts appearing from none
        ("higher", None, 5, "n/a"),
        ("lower", 1.0, math.nan, "n/a"),
    ],
)
def test_classify(better: str | None, base: float | None, cand: float | None, verdict: str) -> None:
    assert classify(better, base, cand, 2.0) == verdict


def test_compare_runs_deltas_and_directions() -> None:
    base = record({"v3": 3.0, "v5": 2.0, "v7": 1.0}, 1, "base")
    cand = record({"v3": 3.3, "v5": 1.9, "v8": 1.0}, 2, "cand")
    cand["results"][0]["bank_conflicts"] = 50.0
    base["results"][0]["bank_conflicts"] = 100.0
    cand["results"][1]["occupancy_pct"] = 20.0
    base["results"][1]["occupancy_pct"] = 25.0
    comparison = compare_runs(base, [cand])
    assert list(comparison.columns) == COMPARISON_COLUMNS
    assert set(comparison["kernel"]) == {"v3", "v5"}  # only pairs present in both

    t = by(comparison, "v3", "time_median_ms")
    assert (t["baseline"], t["candidate"]) == (3.0, 3.3)
    assert t["delta"] == pytest.approx(0.3) and t["delta_pct"] == pytest.approx(10.0)
    assert t["verdict"] == "slower" and t["better"] == "lower"
    assert by(comparison, "v3", "tflops")["verdict"] == "regression"
    assert by(comparison, "v3", "bank_conflicts")["verdict"] == "improvement"  # fewer conflicts
    assert by(comparison, "v5", "time_median_ms")["verdict"] == "faster"
    assert by(comparison, "v5", "occupancy_pct")["verdict"] == "regression"  # lower occupancy
    assert by(comparison, "v5", "pct_cublas")["verdict"] == "same"
    assert by(comparison, "v5", "dram_bytes")["verdict"] == "n/a"

    # A wider threshold for time turns the 5% change into noise; per-metric overrides apply.
    wide = compare_runs(base, [cand], thresholds={"time_median_ms": 6.0})
    assert by(wide, "v5", "time_median_ms")["verdict"] == "same"
    assert by(wide, "v5", "tflops")["verdict"] == "improvement"

    only = unmatched(base, cand)
    assert sorted(zip(only["kernel"], only["only_in"], strict=True)) == [("v7", "baseline"), ("v8", "candidate")]


def test_status_change_is_a_regression_and_slower_than_reports_it() -> None:
    base = record({"v3": 3.0, "v5": 2.0}, 1, "base")
    cand = record({"v3": 3.05, "v5": 2.0}, 2, "cand")
    cand["results"][1].update(status="wrong", time_median_ms=None)
    comparison = compare_runs(base, [cand])
    status = by(comparison, "v5", "status")
    assert (status["baseline"], status["candidate"], status["verdict"]) == ("ok", "wrong", "regression")
    bad = slower_than(comparison, 5.0)
    assert list(bad["kernel"]) == ["v5"]
    assert slower_than(comparison, 1.0)["kernel"].tolist() == ["v3", "v5"]  # v3 is 1.67% slower


def test_several_candidates_and_side_by_side() -> None:
    base = record({"v3": 3.0}, 1, "base")
    cands = [record({"v3": 2.7}, 2, "faster"), record({"v3": 3.6}, 3, "slower")]
    comparison = compare_runs(base, cands)
    wide = side_by_side(comparison)
    assert list(wide["candidate_label"]) == ["faster", "slower"]
    assert list(wide["Time (ms) verdict"]) == ["faster", "slower"]
    assert wide["Time (ms) Δ%"].tolist() == pytest.approx([-10.0, 20.0])
    assert wide["Time (ms) (base)"].tolist() == [3.0, 3.0]


def test_bad_threshold_is_refused() -> None:
    base = record({"v3": 3.0}, 1, "base")
    with pytest.raises(InvalidInput, match="noise threshold"):
        compare_runs(base, [base], threshold_pct=-1)


def test_filter_runs() -> None:
    runs = review.runs_frame(
        [
            {**record({"v3": 3.0}, 1, "monday sweep", created="2026-11-02T10:00:00Z"), "author": "Ann"},
            {
                **record(
                    {"v5": 2.0, "cublas": 1.0},
                    2,
                    "tuesday",
                    created="2026-11-03T23:30:00Z",
                    device="NVIDIA A100-SXM4-80GB",
                ),
                "author": "bo",
            },
            {**record({"v3": 2.5}, 3, "wed", created="2026-11-04T08:00:00Z"), "author": "ann"},
        ]
    )
    assert runs["created"].dt.tz is not None
    ids = lambda frame: frame["id"].tolist()  # noqa: E731
    assert ids(review.filter_runs(runs, device="a100")) == [2]
    assert ids(review.filter_runs(runs, kernel="v3")) == [1, 3]
    assert ids(review.filter_runs(runs, kernel="CUBLAS")) == [2]
    assert ids(review.filter_runs(runs, author="ann")) == [1, 3]
    assert ids(review.filter_runs(runs, label="sweep")) == [1]
    assert ids(review.filter_runs(runs, since="2026-11-03")) == [2, 3]
    # A bare date as the upper bound includes the whole day (run 2 is at 23:30 that day).
    assert ids(review.filter_runs(runs, until=dt.date(2026, 11, 3))) == [1, 2]
    assert ids(review.filter_runs(runs, until="2026-11-03")) == [1, 2]
    assert ids(review.filter_runs(runs, since=dt.datetime(2026, 11, 3, 12, tzinfo=dt.UTC), author="bo")) == [2]
    assert ids(review.filter_runs(runs, device="h100", kernel="v5")) == []
    with pytest.raises(InvalidInput, match="not a date"):
        review.filter_runs(runs, since="last tuesday")


def test_kernel_history_per_device(tmp_path: Path) -> None:
    with RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}") as s:
        s.save_run(convert.run_from_bench(bench_doc({"v3": 3.0}, created="2026-11-01T00:00:00Z"), label="a"))
        s.save_run(convert.run_from_bench(bench_doc({"v3": 2.0}, created="2026-11-03T00:00:00Z"), label="c"))
        s.save_run(convert.run_from_bench(bench_doc({"v3": 2.5, "v5": 1.0}, created="2026-11-02T00:00:00Z"), label="b"))
        s.save_run(
            convert.run_from_bench(bench_doc({"v3": 6.0}, created="2026-11-02T00:00:00Z", device="A100"), label="x")
        )
        rows = review.rows_frame(s.result_rows(kernel="v3"))
    history = review.kernel_history(rows, "v3", device="NVIDIA H100 80GB HBM3")
    assert history["run_label"].tolist() == ["a", "b", "c"]  # by date, not by save order
    assert history["value"].tolist() == [3.0, 2.5, 2.0]
    both = review.kernel_history(rows, "v3", metric="tflops")
    assert sorted(set(both["device_name"])) == ["A100", "NVIDIA H100 80GB HBM3"]
    fig = history_figure(both, "v3", "tflops")
    assert sorted(t.name for t in fig.data) == ["A100", "NVIDIA H100 80GB HBM3"]  # a line per device
    assert [a.text for a in fig.layout.annotations] == ["4096³"]  # in the one size's panel


def test_html_report_is_self_contained() -> None:
    base = record({"v3": 3.0, "v5": 2.0}, 1, "base <b>")
    cand = record({"v3": 3.3, "v5": 1.9}, 2, "cand")
    page = review_html.report_html(base, [cand], title="Weekly review")
    assert page.startswith("<!DOCTYPE html>") and "<title>Weekly review</title>" in page
    # plotly.js is inlined exactly once and nothing is fetched from the network.
    assert page.count("* plotly.js v") == 1
    assert not re.search(r"<script[^>]*\ssrc=", page) and not re.search(r"<link[^>]*\shref=", page)
    assert page.count('class="plotly-graph-div"') == 2
    assert "base &lt;b&gt;" in page and "base <b>" not in page  # labels are escaped
    # Verdict colours land on the cells: v3's time regressed (red), v5's improved (green).
    assert f'color:{VERDICT_COLORS["regression"]};font-weight:600">3.3<' in page
    assert f'color:{VERDICT_COLORS["improvement"]};font-weight:600">1.9<' in page


def test_html_report_says_no_verdict_without_launch_times_and_the_reason_once() -> None:
    """The bundled H200 runs of 2026-11-22 saved medians only: the export shows the medians' change as no verdict,
    colours no time cell as faster or slower, and gives the reason once instead of in each of the 48 rows."""
    earlier = convert.load_run_file(RESULTS_DIR / "h200-2026-11-22" / "earlier" / "bench_1024-4096.json")
    later = convert.load_run_file(RESULTS_DIR / "h200-2026-11-22" / "bench_1024-4096.json")
    page = review_html.report_html(earlier, [later])
    assert "medians only: -2.2 %, no verdict" in page
    assert page.count("neither run saved per-launch times") == 1
    comparison = compare_runs(earlier, [later])
    v1c = comparison[(comparison["kernel"] == "v1-coalesced") & (comparison["size"] == "4096x4096x4096")]
    time_row = v1c[v1c["metric"] == "time_median_ms"].iloc[0]
    assert (time_row["verdict"], time_row["interval"]) == ("no verdict", "medians only: -2.2 %, no verdict")


def test_csv_and_json_export_of_tables() -> None:
    base = record({"v3": 3.0}, 1, "base")
    cand = record({"v3": 3.3}, 2, "cand")
    comparison = compare_runs(base, [cand])
    csv = pd.read_csv(io.StringIO(to_csv(comparison)))
    assert list(csv.columns) == COMPARISON_COLUMNS and len(csv) == len(comparison)
    assert csv[csv["metric"] == "time_median_ms"]["delta_pct"].iloc[0] == pytest.approx(10.0)
    rows = json.loads(to_json(comparison))
    assert rows[1]["metric"] == "time_median_ms" and rows[1]["verdict"] == "slower"
    runs_csv = to_csv(review.runs_frame([base, cand]))
    assert "v3" in runs_csv.splitlines()[1]


def test_runs_json_export_imports_back(tmp_path: Path) -> None:
    with RunStore(f"sqlite:///{tmp_path / 'a.sqlite'}") as a:
        ids = [
            a.save_run(convert.run_from_bench(bench_doc({"v3": 3.0, "v5": 2.0}), label="one", author="ann")),
            a.save_run(
                convert.run_from_report(
                    {
                        "launches": [
                            {
                                "name": "k(float*)",
                                "metrics": {"dram__bytes.sum": {"value": 5.0, "unit": "byte"}},
                                "derived": {"x": 1.0},
                            }
                        ]
                    },
                    label="two",
                )
            ),
        ]
        originals = a.get_runs(ids)
    text = export_runs_json(originals)
    imported = import_runs_json(text)
    with RunStore(f"sqlite:///{tmp_path / 'b.sqlite'}") as b:
        new_ids = b.import_runs(imported)
        copies = b.get_runs(new_ids)
    for orig, copy in zip(originals, copies, strict=True):
        for key in ("label", "author", "notes", "created_utc", "kind", "device", "catalog_commit", "meta", "results"):
            assert copy[key] == orig[key], key
    # Bytes, a single run record, and bad documents.
    assert len(import_runs_json(text.encode())) == 2
    assert import_runs_json(json.dumps(originals[0]))[0]["label"] == "one"
    with pytest.raises(InvalidInput, match="not a JSON export"):
        import_runs_json("{nope")
    with pytest.raises(InvalidInput, match="not a GEMM Lens runs export"):
        import_runs_json('{"schema": "gemmlens.bench.v1", "results": []}')
    with pytest.raises(InvalidInput, match="run 1 of the export: a run needs"):
        import_runs_json('{"schema": "gemmlens.runs.v1", "runs": [{"label": "x"}]}')


def test_real_results_files_load_and_compare() -> None:
    """Every committed benchmark file (results/<device>-<date>/bench*.json) loads as a run; against a copy with
    one result 20 % slower and another turned wrong, the comparison flags exactly those two and no other row."""
    paths = sorted(RESULTS_DIR.rglob("bench*.json"))
    assert paths, "the H200 benchmark results are committed under results/"
    for path in paths:
        doc = json.loads(path.read_text())
        assert doc.get("schema") == records.BENCH_SCHEMA, path
        rec = convert.load_run_file(path)
        assert rec["results"] and rec["device"].get("name"), path
        ok = [r for r in rec["results"] if r["status"] == "ok"]
        assert len(ok) == len(rec["results"]), path
        assert all(r["time_median_ms"] and r["time_median_ms"] > 0 for r in ok), path
        candidate = deepcopy(rec)
        slow, broken = candidate["results"][1], candidate["results"][2]
        slow["time_median_ms"] *= 1.2
        if slow.get("times_ms"):
            slow["times_ms"] = [t * 1.2 for t in slow["times_ms"]]
        broken["status"] = "wrong"
        comparison = compare_runs(rec, [candidate])
        assert len(comparison) > 2 * len(rec["results"]), path
        # A result whose launches spread wider than the threshold cannot be called "same" even against itself.
        noisy = comparison[comparison["verdict"] == "noisy"]
        spread = {
            (r["kernel"], f"{r['m']}x{r['n']}x{r['k']}"): r["time_ms"].get("spread_pct", 0) for r in doc["results"]
        }
        assert all(spread[(k, s)] > 2.0 for k, s in zip(noisy["kernel"], noisy["size"], strict=True)), path
        flagged = comparison[~comparison["verdict"].isin(["same", "n/a", "noisy", "no verdict"])]
        time_rows = comparison[comparison["metric"] == "time_median_ms"]
        if not slow.get("times_ms"):
            # Medians only: no interval, so no time verdict at all, and the 20 % is shown as the medians' change.
            assert set(time_rows["verdict"]) == {"no verdict"}, path
            assert "medians only: +20.0 %, no verdict" in set(time_rows["interval"]), path
            assert sorted(zip(flagged["kernel"], flagged["metric"], flagged["verdict"], strict=True)) == [
                (broken["kernel"], "status", "regression")
            ], path
            continue
        assert sorted(
            zip(flagged["kernel"], flagged["size"], flagged["metric"], flagged["verdict"], strict=True)
        ) == sorted(
            [
                (slow["kernel"], f"{slow['m']}x{slow['n']}x{slow['k']}", "time_median_ms", "slower"),
                (broken["kernel"], f"{broken['m']}x{broken['n']}x{broken['k']}", "status", "regression"),
            ]
        ), path


def test_review_figures_escape_every_label_that_came_with_a_run() -> None:
    """Legends, ticks and hovers read HTML: a label must not put a link or markup in a chart."""
    from profiling.analysis.ceilings import recorded_device_ceilings
    from profiling.charts import comparison_figures, review_roofline

    kernel, label, device = "<b>v3</b>", "<a href='https://example.com'>click</a>", "<i>H100</i>"
    base = records.as_run(record({kernel: 3.0}, 1, label, device=device))
    cand = records.as_run(record({kernel: 2.0}, 2, label + " 2", device=device))
    comparison = compare_runs(base, [cand])
    rows = [
        {
            "run_id": r.id,
            "run_label": r.label,
            "created_utc": "2026-11-22T00:00:00Z",
            "kind": "bench",
            "device_name": device,
            "device_cc": "9.0",
            **r.results[0].to_dict(),
        }
        for r in (base, cand)
    ]
    history = review.kernel_history(review.rows_frame(rows), kernel)
    ceilings = recorded_device_ceilings(DeviceInfo(name="NVIDIA H100 80GB HBM3"))
    figures = [
        *comparison_figures(base, [cand], comparison),
        history_figure(history, kernel),
        review_roofline(base, [cand], ceilings),
    ]
    shown = []
    for fig in figures:
        shown.append(str(fig.layout.title.text))
        for trace in fig.data:
            shown.append(str(trace.name))
            for part in ("x", "text"):
                value = getattr(trace, part, None)
                if value is not None and not isinstance(value, str):
                    shown.extend(str(v) for v in value)
    text = " ".join(shown)
    assert "&lt;a href=" in text and "&lt;b&gt;v3&lt;/b&gt;" in text and "&lt;i&gt;H100&lt;/i&gt;" in text
    assert "<a" not in text and "<b>" not in text and "<i>" not in text
    assert "&amp;lt;" not in text  # escaped once, not twice


@pytest.mark.parametrize("formula", ["=cmd|' /C calc'!A0", "+SUM(A1)", "-2+3", "@SUM(A1:A9)", "\t=1", "\r=1"])
def test_csv_export_neutralises_formulas_and_keeps_numbers(formula: str) -> None:
    base = record({formula: 3.0, "v5": 2.0}, 1, formula)
    cand = record({formula: 2.0, "v5": 2.2}, 2, "cand")
    for table in (side_by_side(compare_runs(base, [cand])), review.runs_frame([base, cand])):
        text = to_csv(table)
        cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
        assert "'" + formula.strip() in cells  # run labels and kernel names are stripped when saved
        for cell in cells:
            if cell.startswith(("=", "+", "-", "@", "\t", "\r")):
                float(cell)  # only a number may start so (a negative Δ%), and it stays a number
    side = pd.read_csv(io.StringIO(to_csv(side_by_side(compare_runs(base, [cand])))))
    assert (side.select_dtypes("number").to_numpy() < 0).any()


def test_html_report_rounds_changes_says_a_shared_note_once_and_drops_empty_columns() -> None:
    """The real earlier and later H200 runs (medians only, no commit recorded): deltas to 0.1 % with a sign, the
    note that every row shares said once above the table, no empty catalog_commit column, wide tables in a
    scrolling box."""
    from profiling.app import bundles

    bundle = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")
    runs = bundles.bundled_runs(bundle)  # bench_1024-4096, bench_8192, then the earlier bench_1024-4096
    later, earlier = records.as_run(runs[0]), records.as_run(runs[2])
    comparison = compare_runs(earlier, [later])
    page = review_html.report_html(earlier, [later], comparison)
    side = side_by_side(comparison)
    raw = [v for v in side["Time (ms) Δ%"] if v == v]
    assert any(f"{v:+.1f}" in page for v in raw) and "-0.4472" not in page
    assert page.count("no per-launch times") == 1  # the shared reason, said once above the table
    assert "catalog_commit" not in page and "<th>Time (ms) note</th>" not in page
    assert page.count('<div class="wide"><table>') == 2 and ".wide{max-width:100%;overflow-x:auto}" in page
