"""Derived tables of the bundled data kept as Parquet (profiling.app.precompute): built once per content, read back
equal to what parsing gives, shared between processes, and the Why page's source pages filled lazily."""

from __future__ import annotations

import pandas as pd
import pytest

from profiling.analysis.access_table import capture_comparisons, comparison_frame, load_captures
from profiling.app import precompute, why
from profiling.nsight import source_load as SL
from profiling.nsight import source_table
from profiling.paths import BUNDLED_RESULTS_DIR

H100 = BUNDLED_RESULTS_DIR / "h100-2026-11-22"
RAW_1024 = H100 / "ncu_why_1024_raw.csv"
CUDA_SASS_1024 = H100 / "source_why_1024_cuda_sass.csv.gz"
SASS_1024 = H100 / "source_why_1024_sass.csv.gz"


@pytest.fixture(autouse=True)
def cache_dir(tmp_path, monkeypatch):
    monkeypatch.setenv(precompute.CACHE_ENV, str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_source_page_read_back_from_its_tables_is_the_parsed_page() -> None:
    parsed = SL.read_source_file(CUDA_SASS_1024)
    again = source_table.page_from_tables(source_table.page_tables(parsed))
    assert again == parsed  # every section, line and instruction, field for field
    v4 = next(k for k in again.kernels if "sgemm_v4" in k.name or k.catalog_id == "v4")
    assert v4.total_samples == next(k for k in parsed.kernels if k.name == v4.name).total_samples > 0


def test_tables_are_built_once_then_read_from_parquet(cache_dir) -> None:
    calls = []

    def build() -> dict[str, pd.DataFrame]:
        calls.append(1)
        return {"t": pd.DataFrame({"kernel": ["v3", "v4"], "wavefronts": [4.0, 1.0]})}

    key = precompute.content_key([RAW_1024], code=[precompute])
    first = precompute.cached_tables("demo", key, build)
    second = precompute.cached_tables("demo", key, build)
    assert calls == [1]
    assert second["t"]["wavefronts"].tolist() == [4.0, 1.0] == first["t"]["wavefronts"].tolist()
    assert (cache_dir / "demo" / key / "t.parquet").is_file()
    # Other content, another key: a changed capture never reads the old tables.
    assert precompute.content_key([SASS_1024], code=[precompute]) != key


def test_an_unwritable_cache_still_serves_the_tables(cache_dir) -> None:
    cache_dir.write_text("a file where the cache folder should be")  # no folder can be made under it, even as root
    tables = precompute.cached_tables("demo", "k", lambda: {"t": pd.DataFrame({"a": [1]})})
    assert tables["t"]["a"].tolist() == [1]


def test_a_damaged_entry_is_built_again(cache_dir) -> None:
    build = lambda: {"t": pd.DataFrame({"a": [1, 2]})}  # noqa: E731
    precompute.cached_tables("demo", "k", build)
    (cache_dir / "demo" / "k" / "t.parquet").write_bytes(b"not parquet")
    assert precompute.cached_tables("demo", "k", build)["t"]["a"].tolist() == [1, 2]


def test_the_why_capture_fills_only_the_sections_it_shows() -> None:
    data = why.load_capture("bundled", RAW_1024, CUDA_SASS_1024, SASS_1024)
    eager = SL.merge_views(SL.read_source_file(CUDA_SASS_1024), SL.read_source_file(SASS_1024))
    assert [k.name for k in data.page.kernels] == [k.name for k in eager.kernels]
    assert all(not k.instructions for k in data.page.kernels)  # nothing filled before a section is shown
    label = next(lab for lab in data.labels() if data.catalog_id(lab) == "v4")
    v4 = data.kernel_source(label)
    same = next(k for k in eager.kernels if k.name == v4.name)
    assert v4.instructions == same.instructions
    assert round(v4.total_samples) == round(same.total_samples) > 0
    assert sum(1 for k in data.page.kernels if k.instructions) == 1
    # The lines carry the catalog's .cu text, as before.
    assert v4.source_note.startswith("kernels/src/")
    assert any("__syncthreads()" in ln.text for ln in v4.lines)


def test_the_measured_table_from_parquet_is_the_comparison_itself() -> None:
    from profiling.app import indexing

    frame = indexing.measured_frame()
    assert indexing.measured_frame() is frame or indexing.measured_frame().equals(frame)
    direct = comparison_frame(capture_comparisons(load_captures(), kernels=["v3"]))[indexing.MEASURED_COLUMNS]
    v3 = indexing.measured_table("v3")
    assert len(v3) == len(direct) > 0
    pd.testing.assert_frame_equal(v3.reset_index(drop=True), direct.reset_index(drop=True), check_dtype=False)
    assert set(v3["capture"]) == {"H100 full set", "H100 quick set", "H200 quick set"}


def test_a_bundled_ncu_rep_is_parsed_once_then_read_back_equal(cache_dir) -> None:
    from profiling.app.details_view import bundled_ncu_rep
    from profiling.nsight import load

    rep = BUNDLED_RESULTS_DIR / "h200-2026-11-22" / "v4_full_1024.ncu-rep"
    kept = bundled_ncu_rep(rep)
    assert len(list((cache_dir / "ncu_rep").glob("*.pickle"))) == 1
    again = bundled_ncu_rep(rep)  # read back from the cache folder, no reader process
    parsed = load.load_report(rep)
    assert [launch.label for launch in again.launches] == [launch.label for launch in parsed.launches]
    assert again.launches[0].value("gpu__time_duration.sum") == parsed.launches[0].value("gpu__time_duration.sum")
    assert again.launches[0].value("gpu__time_duration.sum") == kept.launches[0].value("gpu__time_duration.sum") > 0


def test_a_damaged_object_entry_is_built_again(cache_dir) -> None:
    assert precompute.cached_object("demo", "k", lambda: {"a": 1}) == {"a": 1}
    (cache_dir / "demo" / "k.pickle").write_bytes(b"cut off")
    assert precompute.cached_object("demo", "k", lambda: {"a": 2}) == {"a": 2}
    assert precompute.cached_object("demo", "k", lambda: {"a": 3}) == {"a": 2}  # the rebuilt entry is kept
