"""The page view modules' own logic, called directly on the bundled H200 measurements (the pages themselves are
driven end to end in test_app_pages.py)."""

from __future__ import annotations

from pathlib import Path

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling.app import benchmark_view, bundles, occupancy_view, reports_view, tables, ui
from profiling.errors import GemmLensError, InvalidInput
from profiling.shape import Shape

ROOT = Path(__file__).resolve().parents[1]
BUNDLE = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")


def test_the_benchmark_form_asks_for_the_sizes_of_its_mode() -> None:
    assert benchmark_view.requested_sizes("list", sizes_text="1024, 2048x512x64") == [
        Shape(1024, 1024, 1024),
        Shape(2048, 512, 64),
    ]
    assert benchmark_view.requested_sizes("A/B", sizes_text="4096") == [Shape(4096, 4096, 4096)]
    assert [s.m for s in benchmark_view.requested_sizes("sweep", start=512, stop=4096)] == [512, 1024, 2048, 4096]
    grid = benchmark_view.requested_sizes("grid", grid_text="M=1,16,N=1024,K=4096")
    assert grid == [Shape(1, 1024, 4096), Shape(16, 1024, 4096)]
    with pytest.raises(InvalidInput, match="is not N or MxNxK"):
        benchmark_view.requested_sizes("list", sizes_text="big")


def test_the_benchmark_job_is_checked_before_it_is_queued() -> None:
    sizes = [Shape(1024, 1024, 1024), Shape(2048, 2048, 2048)]
    label, job = benchmark_view.bench_job("list", ["v3", "v4"], sizes, 30)
    assert label == "benchmark 2 kernel(s) x 2 size(s)" and callable(job)
    label, job = benchmark_view.bench_job("A/B", [], sizes, 30, ("v7-warptile", "v8-async"))
    assert label == "A/B v7-warptile vs v8-async x 2 size(s)" and callable(job)
    with pytest.raises(GemmLensError, match="^choose at least one kernel$"):
        benchmark_view.bench_job("sweep", [], sizes, 30)
    with pytest.raises(InvalidInput, match="two different kernels, got v4 twice"):
        benchmark_view.bench_job("A/B", [], sizes, 30, ("v4", "v4"))
    label, job = benchmark_view.bench_job("A/B", [], sizes, 30, ("v7-warptile", "v8-async"), 2.0)
    assert label == "A/B v7-warptile vs v8-async x 2 size(s)" and callable(job)
    with pytest.raises(InvalidInput, match="a rest of 5 s before each of 30 pairs is 150 s, past the 120 s a size may"):
        benchmark_view.bench_job("A/B", [], sizes, 30, ("v7-warptile", "v8-async"), 5.0)
    # A rest is for the pairs of an A/B: a list ignores it.
    label, _job = benchmark_view.bench_job("list", ["v3"], sizes, 30, rest_s=5.0)
    assert label == "benchmark 1 kernel(s) x 2 size(s)"


def test_the_occupancy_page_offers_every_captured_launch_then_every_benchmarked_kernel() -> None:
    captures, document = bundles.load_bundle_reports(BUNDLE), bundles.load_bench(BUNDLE)
    configs = occupancy_view.launch_configs([captures], [document])
    labels = occupancy_view.launch_labels(configs)
    assert len(labels) == len(configs) + 1 and labels[-1] == "(enter your own)"
    assert labels[0] == "cublas 4096x4096x4096 — ncu_fast_4096_raw.csv"
    measured = [c for c in configs if c.source != "benchmark"]
    assert len(measured) == len(tables.key_metrics_table(captures))  # one per captured launch
    assert all(c.achieved_pct is not None for c in measured)
    v1 = next(c for c in configs if c.source == "benchmark" and c.name == "v1")
    assert (v1.cc, v1.threads, v1.registers, v1.shared_mem) == ("9.0", 1024, 32, 0)


def test_the_launch_choice_starts_again_when_the_launches_shown_change() -> None:
    bundled = ["v3 1024x1024x1024", "v4 1024x1024x1024"]
    assert reports_view.compare_key(bundled) == reports_view.compare_key(list(bundled))
    assert reports_view.compare_key(bundled) != reports_view.compare_key([*bundled, "v5 1024x1024x1024"])
    assert reports_view.compare_key(bundled).startswith("cmp-") and len(reports_view.compare_key(bundled)) == 16


def test_the_overview_describes_the_gpu_found_from_its_typed_description(monkeypatch) -> None:
    """With a GPU found, the banner and the device table read the probe's DeviceInfo (here the H200 of the bundle)."""
    device = bundles.load_bench(BUNDLE).device
    monkeypatch.setattr(ui, "device_status", lambda timeout_s=30.0: (device, None, False))
    st.cache_data.clear()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60).run()
    assert not at.exception, [e.value for e in at.exception]
    assert (
        at.success[0].value.replace("\\", "") == "GPU found: NVIDIA H200 (compute capability 9.0)"
    )  # Markdown-escaped
    rows = dict(zip(at.dataframe[0].value["property"], at.dataframe[0].value["value"], strict=True))
    assert (rows["GPU"], rows["SMs"], rows["L2"]) == ("NVIDIA H200", "132", f"{device.l2_bytes / 2**20:.0f} MiB")
