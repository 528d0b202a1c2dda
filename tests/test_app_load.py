"""The app under load, without timing anything: identical uploads share one parse, the caches are
bounded, exports are built only when asked, the run list pages. Speed lives in scripts/load_test.py's output."""

from __future__ import annotations

import functools
import threading
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import plotly.tools
import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling import charts, usecases
from profiling.analysis import shape_grid
from profiling.app import bundles, cache, permalink, review_view, table_format, tables, upload_parse
from profiling.runs.export import export_runs_json
from profiling.runs.store import RunStore

ROOT = Path(__file__).resolve().parent.parent
NCU = ROOT / "tests" / "fixtures" / "ncu"
BUNDLE = next(b for b in bundles.discover_bundles() if b.name == "h200-2026-11-22")


@pytest.fixture(autouse=True)
def no_gpu(monkeypatch, tmp_path: Path):
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    # The parsed uploads every server process shares on disk: empty for each test, so parses can be counted.
    monkeypatch.setattr(upload_parse, "SHARED_DIR", str(tmp_path / "uploads"))
    st.cache_data.clear()
    st.cache_resource.clear()


def counting_parser(monkeypatch) -> list[str]:
    """Count real parses (the child process upload_parse starts, as the app calls it) by file name."""
    calls: list[str] = []
    real = upload_parse._child_answer

    def counted(name: str, data: bytes, *args):
        calls.append(name)
        return real(name, data, *args)

    monkeypatch.setattr(upload_parse, "_child_answer", counted)
    return calls


def test_five_identical_uploads_at_once_cause_one_parse(monkeypatch) -> None:
    calls = counting_parser(monkeypatch)
    content = (NCU / "raw.csv").read_bytes()
    key = cache.upload_key("raw.csv", content)
    got, start = [], threading.Barrier(5)

    def upload() -> None:
        start.wait()
        got.append(cache.parse_upload(key, "raw.csv", content))

    threads = [threading.Thread(target=upload) for _ in range(5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert calls == ["raw.csv"]
    assert len(got) == 5 and all(r is got[0] for r in got) and len(got[0].launches) == 10
    assert cache.shared_uploads().parses == 1


def test_two_sessions_uploading_the_same_file_share_one_parse(monkeypatch) -> None:
    calls = counting_parser(monkeypatch)
    raw = (NCU / "raw.csv").read_bytes()
    tables = []
    for _ in range(2):
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        at.switch_page("pages/6_Reports.py").run()
        at.file_uploader(key="report_files").set_value([("raw.csv", raw, "text/csv")]).run()
        assert not at.exception and not at.error
        tables.append(at.dataframe[0].value)
        # the session keeps the upload's key and name only; the report lives in the shared cache
        assert list(at.session_state["uploads"].values()) == ["raw.csv"]
    assert calls == ["raw.csv"]
    assert len(tables[0]) == len(tables[1]) == 10 and set(tables[1]["source"]) == {"raw.csv"}


def test_upload_cache_is_bounded_by_entries_and_bytes() -> None:
    files = {name: (NCU / name).read_bytes() for name in ("raw.csv", "details.csv", "summary.csv")}
    parses: list[str] = []

    def parser(name: str, data: bytes):
        parses.append(name)
        return usecases.load_upload(name, data)

    by_entries = cache.UploadCache(max_entries=2, max_bytes=10**9)
    for name, data in files.items():
        by_entries.parse(cache.upload_key(name, data), name, data, parser)
    assert len(by_entries) == 2
    assert by_entries.get(cache.upload_key("raw.csv", files["raw.csv"])) is None  # the oldest went first
    by_entries.parse(cache.upload_key("raw.csv", files["raw.csv"]), "raw.csv", files["raw.csv"], parser)
    assert parses == ["raw.csv", "details.csv", "summary.csv", "raw.csv"] and len(by_entries) == 2

    biggest = max(len(d) for d in files.values())
    by_bytes = cache.UploadCache(max_entries=10, max_bytes=biggest)
    for name, data in files.items():
        by_bytes.parse(cache.upload_key(name, data), name, data, parser)
    assert len(by_bytes) == 1


def test_figure_and_table_caches_are_bounded() -> None:
    made = [cache._cache_of(tables.key_metrics_table, "table"), cache._cache_of(charts.roofline, "figure")]
    for cached in (*made, cache.review_view, cache.bench_view):
        assert cached._info.max_entries is not None and cached._info.ttl is not None
    assert cache._cache_of(charts.roofline, "figure") is made[1]  # one cache per function, made once


def test_a_report_is_keyed_by_identity_and_its_tables_computed_once() -> None:
    reports = bundles.load_bundle_reports(BUNDLE)
    calls = []

    def counted(r):  # noqa: ANN001, ANN202
        calls.append(1)
        return tables.key_metrics_table(r)

    first, second = cache.table(counted, reports), cache.table(counted, list(reports))
    assert len(calls) == 1 and first.equals(second)
    again = bundles.load_bundle_reports(BUNDLE)  # the same content, parsed anew: another key
    assert cache.report_token(again[0][1]) != cache.report_token(reports[0][1])
    assert cache.report_token(reports[0][1]) == cache.report_token(reports[0][1])


def test_review_exports_are_not_built_on_a_plain_visit(monkeypatch, tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    store.import_runs(bundles.bundled_runs(BUNDLE))
    store.close()
    built = []
    monkeypatch.setattr(cache.review_html, "report_html", lambda *a, **k: built.append("html") or "<html></html>")
    monkeypatch.setattr(cache, "export_runs_json", lambda *a, **k: built.append("json") or "[]")
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/7_Review.py").run()
    assert not at.exception
    labels = {b.label for b in at.get("download_button")}
    assert {"Export HTML report", "Export comparison CSV", "Export runs JSON"} <= labels
    assert built == []
    html, runs_json = cache.review_exports(*_comparison_inputs(tmp_path))
    assert html() == "<html></html>" and runs_json() == "[]" and built == ["html", "json"]


def _comparison_inputs(tmp_path: Path):
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    runs = [store.read_run(int(s["id"])) for s in store.list_runs()]
    view = cache.review_view(runs[0], runs[1:], 5.0, False, None)
    return runs[0], runs[1:], view.comparison, 5.0, view.roofline


def test_list_runs_pages_newest_first(tmp_path: Path) -> None:
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    base = bundles.bundled_runs(BUNDLE)[0].to_dict()
    runs = [{**base, "label": f"run {i}", "created_utc": f"2026-11-2{i}T00:00:00Z"} for i in range(5)]
    store.import_runs([export for export in runs])
    everything = store.list_runs()
    assert [r["label"] for r in everything] == ["run 4", "run 3", "run 2", "run 1", "run 0"]
    first, second = store.list_runs(limit=2), store.list_runs(limit=2, offset=2)
    assert [r["label"] for r in first] == ["run 4", "run 3"]
    assert [r["label"] for r in second] == ["run 2", "run 1"]
    assert store.list_runs(limit=2, offset=4)[0]["label"] == "run 0"
    assert store.count_runs() == 5
    assert all(r["n_results"] == len(base["results"]) and r["kernels"] for r in first + second)
    assert "results" not in first[0]
    assert export_runs_json([store.read_run(int(first[0]["id"]))])  # a listed run opens with its results


def test_the_modules_warmed_after_the_first_page_exist() -> None:
    """The background warm-up skips a module it cannot import (the page reports it): a renamed one must fail here."""
    import importlib

    from profiling.app import warm

    for name in warm.WARM_MODULES:
        importlib.import_module(name)


def test_warm_up_imports_wait_for_running_pages_and_a_page_waits_for_one_import(tmp_path: Path, monkeypatch) -> None:
    """The warm-up thread imports only while no page script runs, and a page starting meanwhile waits for that one
    module, then runs before the next: a page and the warm-up importing at once can hand each other half-built
    modules. A module already imported is skipped without waiting, and one that fails leaves the gate open."""
    import sys

    from profiling.app import warm

    (tmp_path / "warm_probe_state.py").write_text(
        "import threading\ngate = None\nseen, order = [], []\nentered, release = threading.Event(), threading.Event()\n"
    )
    (tmp_path / "warm_probe_next.py").write_text("import warm_probe_state as s\ns.order.append('next import')\n")
    (tmp_path / "warm_probe_slow.py").write_text(
        "import warm_probe_state as s\ns.seen.append(s.gate.pages_running())\ns.entered.set()\ns.release.wait(30)\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("warm_probe_state", "warm_probe_slow", "warm_probe_next"):
        monkeypatch.delitem(sys.modules, name, raising=False)
    import warm_probe_state as probe

    gate = probe.gate = warm.ImportGate()
    modules = ["json", "warm_probe_slow", "warm_probe_next"]
    warming = threading.Thread(target=warm.import_between_pages, args=(modules, gate))
    with gate.page():
        warming.start()
        warming.join(0.3)
        assert warming.is_alive() and not probe.entered.is_set()  # waits while a page runs
    assert probe.entered.wait(30) and probe.seen == [0]

    page_ran = threading.Event()

    def page() -> None:
        with gate.page():
            page_ran.set()
            probe.order.append("page")

    later = threading.Thread(target=page)
    later.start()
    later.join(0.3)
    assert not page_ran.is_set()  # a page starting during the import waits for it
    probe.release.set()
    later.join(30)
    warming.join(30)
    assert page_ran.is_set() and not warming.is_alive() and "warm_probe_next" in sys.modules
    assert probe.order == ["page", "next import"]  # the page that waited went before the next import

    with gate.page():  # nothing left to import: no waiting for the page to end
        warm.import_between_pages(modules, gate)
    warm.import_between_pages(["warm_probe_no_such_module"], gate)
    with gate.page():
        assert gate.pages_running() == 1


def test_the_server_start_preloads_the_frames_modules_in_a_fresh_process() -> None:
    """`gemmlens app` starts Streamlit through profiling.app.serve, which first imports what app.py imports, so a
    fresh server's first visitor does not wait for it; a renamed module must fail here."""
    import subprocess
    import sys

    code = (
        "import sys; from profiling.app import serve; serve.preload(); "
        "print(sorted(m for m in serve.FRAME_MODULES if m not in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_a_shared_table_is_one_object_equal_to_the_table() -> None:
    """cache.shared hands every caller the same read-only frame (no copy per visit), the one the function builds,
    and the one cache.table copies."""
    document = bundles.load_bench(BUNDLE)
    shared = cache.shared(tables.bench_frame, document)
    assert cache.shared(tables.bench_frame, document) is shared
    assert shared.equals(tables.bench_frame(document)) and shared.equals(cache.table(tables.bench_frame, document))


def test_a_cached_figure_builds_its_dict_form_once_and_sends_the_same_json() -> None:
    frame = cache.table(tables.bench_frame, bundles.load_bench(BUNDLE))
    fig = cache.figure(charts.tflops_figure, frame)
    assert isinstance(fig, cache.SharedFigure)
    assert fig.to_dict() is fig.to_dict()  # built once: no deep copy per visit
    plain = charts.tflops_figure(frame)  # the figure as st.plotly_chart received it before
    assert type(plain) is go.Figure
    assert pio.to_json(fig.to_dict(), validate=False) == pio.to_json(plain.to_dict(), validate=False)


def test_a_shared_figure_is_sent_as_plotlys_own_json_encoded_once(monkeypatch) -> None:
    frame = cache.table(tables.bench_frame, bundles.load_bench(BUNDLE))
    plain = charts.tflops_figure(frame)
    expected = pio.to_json(plain, validate=False)  # what st.plotly_chart sent for the plain figure
    encoded = []
    real = cache._plotly_to_json
    monkeypatch.setattr(cache, "_plotly_to_json", lambda *a, **k: encoded.append(1) or real(*a, **k))
    fig = cache.figure(charts.tflops_figure, frame)
    sent = [pio.to_json(plotly.tools.return_figure_from_figure_or_data(fig, True), validate=False) for _ in range(3)]
    assert sent == [expected] * 3 and len(encoded) == 1  # the same text, encoded on the first draw only
    # anything else is plotly's own to_json, every time: a plain figure, or other options
    assert pio.to_json(plain, validate=False) == expected and len(encoded) == 2
    assert pio.to_json(fig.to_dict(), validate=False, pretty=True) == pio.to_json(plain, validate=False, pretty=True)


def test_a_page_draws_a_shared_figure_as_the_plain_figure(tmp_path: Path) -> None:
    """The Benchmark page's charts, drawn from shared figures whose JSON is kept, carry plotly's own spec (on the
    newest bundle whose page draws them: a grid run is drawn as the grid's heatmap alone)."""
    bundle, document = next(
        (b, d)
        for b in bundles.discover_bundles()
        if b.bench_files and not shape_grid.is_grid_run(d := bundles.load_bench(b))
    )
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["bundle"] = bundle.name
    at.run()
    at.switch_page("pages/2_Benchmark.py").run()
    at.run()  # a later visit: the kept JSON
    view = cache.bench_view(document)
    specs = [c.proto.spec for c in at.get("plotly_chart")]
    assert not at.exception
    assert pio.to_json(charts.tflops_figure(tables.bench_frame(document)), validate=False) in specs
    assert view.tflops.to_dict().json_form in specs


def seeded_review(tmp_path: Path) -> AppTest:
    """The Review page on a store holding the bundled runs of BUNDLE (three)."""
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    store.import_runs(bundles.bundled_runs(BUNDLE))
    store.close()
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/7_Review.py").run()
    return at


def test_a_review_visit_reads_the_store_revision_once(monkeypatch, tmp_path: Path) -> None:
    at = seeded_review(tmp_path)
    calls = []
    real = RunStore.revision
    monkeypatch.setattr(RunStore, "revision", lambda self: calls.append(1) or real(self))
    at.run()
    assert not at.exception and len(at.dataframe[0].value) == 3 and len(calls) == 1
    at.run()  # the next run reads it again: a write elsewhere shows on the next visit
    assert len(calls) == 2


def test_a_shown_table_is_one_shared_arrow_table_equal_to_the_displayed_frame() -> None:
    reports = [(name, usecases.load_upload(name, (NCU / name).read_bytes())) for name in ("raw.csv",)]
    shown = cache.shown_table(tables.key_metrics_table, reports)
    assert cache.shown_table(tables.key_metrics_table, reports) is shown  # built once, no copy per visit
    assert shown.to_pandas().equals(table_format.display(tables.key_metrics_table(reports)))
    assert len(shown) == 10  # the capture's ten launches
    # one cache per function: the same arguments through cache.figure give the frame itself, not the shown table
    assert isinstance(cache.figure(tables.key_metrics_table, reports), pd.DataFrame)


def test_a_cached_calls_parameters_are_looked_up_once_per_function(monkeypatch) -> None:
    from streamlit import type_util

    looked_up = []
    real = cache._signature_parameters
    monkeypatch.setattr(cache, "_parameters_of", functools.lru_cache(lambda f: looked_up.append(f) or real(f)))

    @st.cache_data
    def scaled(a: int, b: int = 2, _ignored: object = None) -> int:
        return a * b

    assert [scaled(1, 3), scaled(1, 3, object()), scaled(2), scaled(2, 3)] == [3, 3, 4, 6]
    assert len(looked_up) == 1  # one look-up of the signature for every call and argument
    assert [p.name for p in type_util.get_func_parameters(scaled.__wrapped__)] == ["a", "b", "_ignored"]


def test_the_pages_are_made_once_and_each_run_navigates_its_own_copies(monkeypatch, tmp_path: Path) -> None:
    """st.Page resolves its file on disk: the frame makes the pages once per process, and each run hands
    st.navigation copies, since it marks the page it returns on the object (two sessions share none)."""
    import ast

    from profiling.app import ui

    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "runs.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    listed = next(
        n.value for n in ast.parse((ROOT / "app.py").read_text()).body if ast.unparse(n).startswith("PAGE_LIST =")
    )
    listed = ast.literal_eval(listed)
    ui._made_pages.cache_clear()
    for _ in range(2):  # two sessions, each its first run through the frame
        at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
        at.run()
        assert not at.exception and at.title[0].value == "GEMM Lens"
    assert ui._made_pages.cache_info().misses == 1 and ui._made_pages.cache_info().hits >= 1
    made, copies = ui._made_pages(ROOT / "pages", listed), ui.pages(ROOT / "pages", listed)
    assert [p.title for p in copies] == [title for _, title, _ in listed] == [p.title for p in made]
    assert [p.icon for p in copies] == [icon for _, _, icon in listed]
    assert [p._default for p in copies] == [True] + [False] * (len(listed) - 1)
    assert not any(p is q for p, q in zip(made, copies, strict=True))
    assert not any(p._can_be_called for p in made)  # each run marked its own copy only


def test_a_resource_hit_is_the_memos_and_equal_arguments_share_one_entry(monkeypatch) -> None:
    """cache.resource answers a repeated call from its memo, without Streamlit's hashing of the arguments, and
    returns the object st.cache_resource built: the same one for every caller."""
    from streamlit.runtime.caching import cache_utils

    built, hashed = [], []
    real = cache_utils._make_value_key
    monkeypatch.setattr(cache_utils, "_make_value_key", lambda *a, **k: hashed.append(1) or real(*a, **k))

    @cache.resource(max_entries=8)
    def made(a: object, b: float = 1.0, _store: object = None) -> list[object]:
        built.append((a, b))
        return [a, b]

    first = made(("x", 1), 2.0, _store=object())
    assert made(("x", 1), 2.0, _store=object()) is first  # an argument named with _ is not part of the key
    assert len(built) == 1 and len(hashed) == 1  # the hit never reached Streamlit's key
    # equal to Python but not to Streamlit's keys: each its own entry, as with st.cache_resource
    assert made(1, 1.0) == [1, 1.0] and made(True, 1.0) == [True, 1.0] and made(1.0, 1.0) == [1.0, 1.0]
    assert len(built) == 4
    made.clear()
    assert made(("x", 1), 2.0) is not first and len(built) == 5


def test_a_resource_memo_goes_with_a_cache_clear_and_sends_what_it_cannot_key_to_streamlit() -> None:
    built = []

    @cache.resource
    def made(frame: pd.DataFrame | str) -> list[object]:
        built.append(1)
        return [len(frame)]

    kept = made("abc")
    st.cache_resource.clear()  # every resource cache emptied (the tests' fixtures, the app's "Clear caches")
    assert made("abc") is not kept and len(built) == 2
    frame = pd.DataFrame({"a": [1, 2]})
    assert made(frame) is made(frame) and len(built) == 3  # no memo key for a DataFrame: Streamlit's own hit


def test_a_resource_memo_keeps_an_entry_no_longer_than_the_caches_ttl(monkeypatch) -> None:
    now = [1000.0]
    monkeypatch.setattr(cache.time, "monotonic", lambda: now[0])
    built = []

    @cache.resource(ttl=60)
    def made(a: int) -> list[int]:
        built.append(a)
        return [a]

    kept = made(1)
    now[0] += 30
    assert made(1) is kept and built == [1]
    now[0] += 31  # past the memo's ttl: asked of Streamlit's cache again (whose own ttl runs on real time)
    assert made(1) is kept and built == [1]
    assert cache.memo_key([1, ("a", None)], {}) == (list, ((int, 1), (tuple, ((str, "a"), (type(None), None)))))
    with pytest.raises(cache._Unkeyable):
        cache.memo_key({"a": 1}, {})


def test_an_arrow_table_is_serialised_once_while_it_lives() -> None:
    import gc

    import pyarrow as pa
    from streamlit import dataframe_util
    from streamlit.dataframe import lazy_df_source

    table = table_format.arrow(pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]}))
    sent = dataframe_util.convert_arrow_table_to_arrow_bytes(table)
    assert dataframe_util.convert_arrow_table_to_arrow_bytes(table) is sent  # kept, not written again
    assert sent == cache.arrow_bytes._compute(table)  # the bytes Streamlit writes itself
    assert lazy_df_source._has_multi_level_columns(table) is False
    levels = pd.DataFrame([[1, 2]], columns=pd.MultiIndex.from_tuples([("a", "x"), ("a", "y")]))
    assert lazy_df_source._has_multi_level_columns(pa.Table.from_pandas(levels)) is True
    assert lazy_df_source._has_multi_level_columns(levels) is True
    kept = len(cache.arrow_bytes)
    del table
    gc.collect()
    assert len(cache.arrow_bytes) == kept - 1  # freed with its table


def test_the_bundle_pickers_options_are_made_once_per_tuple_of_bundles() -> None:
    from profiling.app import ui

    found = ui.bundles()
    names, labels = ui._picker_options(found)
    assert names == [b.name for b in found] and labels == {b.name: b.label for b in found}
    assert ui._picker_options(found)[0] is names  # the same lists on the next run
    fewer = found[:2]
    assert ui._picker_options(fewer) == ([b.name for b in fewer], {b.name: b.label for b in fewer})


def drawn(node) -> int:
    """The elements and blocks under an AppTest node: each is one message a visit sends (a delta), and Streamlit's
    work per visit grows with them (docs/load-test.md, rounds 9, 11 and 12)."""
    kids = getattr(node, "children", None)
    return sum(1 + drawn(child) for child in kids.values()) if isinstance(kids, dict) else 0


def test_review_and_why_draw_only_what_their_reader_looks_at(tmp_path: Path) -> None:
    """A plain visit of Review (store seeded with the bundled runs) and of Why draws the open section only: the
    counts were 54 and 43 elements before round 12 (every section and the run filters drawn), and Review's 29 before
    round 14 (its tab bar: a block a tab; the time charts). A count above the bound means elements crept back onto
    the default view."""
    at = seeded_review(tmp_path)
    assert not at.exception and at.session_state["review_tab"] == "Compare"
    assert drawn(at.main) <= 26, drawn(at.main)
    assert not at.tabs and at.segmented_control(key="review_tab").options == list(review_view.SECTIONS)
    assert not at.text_input and not [s for s in at.selectbox if s.key == "open_run"]  # filters, Open: closed
    assert {"Export HTML report", "Export comparison CSV", "Export runs JSON"} <= {
        b.label for b in at.get("download_button")
    }
    assert [c.key for c in at.get("plotly_chart")] == ["review_roofline"]  # the time charts: closed
    at.session_state["time_charts_open"] = True  # the expander opened (a reader's click reruns the page)
    at.run()
    assert [c.key for c in at.get("plotly_chart")] == ["review_roofline", "cmp_fig0", "cmp_fig1"]
    # Each section a choice away, drawn alone: By device's runs, Open's run and tables, History's chart
    for section, key in (("By device", "device_runs"), ("Open / delete", "open_run"), ("History", "hist_kernel")):
        at.session_state["review_tab"] = section
        at.run()
        assert not at.exception and at.query_params["tab"] == permalink.slug(section)
        assert [w.key for w in (*at.selectbox, *at.multiselect) if w.key in ("baseline", "candidates", key)] == [key]
    assert at.get("plotly_chart") and at.dataframe  # History's chart and table
    at.session_state["review_tab"] = "Compare"
    at.run()
    assert at.selectbox(key="baseline") and "tab" not in at.query_params
    at.switch_page("pages/8_Why.py").run()
    assert not at.exception and at.session_state["why_tab"] == "Warp\\-stall breakdown"
    assert drawn(at.main) <= 14, drawn(at.main)
    assert at.get("plotly_chart") and not at.dataframe  # the stall chart; no source or step tables


def test_benchmark_indexing_and_details_draw_only_what_their_reader_looks_at() -> None:
    """A plain visit of Benchmark, Indexing and Details (no GPU, the default bundle) draws the default view only:
    the counts were 43, 40 and 43 elements before round 13 (the shape sweep drawn, Indexing's sections one under
    another, an expander a Details rule), and Benchmark's and Indexing's 30 before round 15 (their rows of inputs
    in st.columns: a block a column). A count above the bound means elements crept back onto the default view."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/2_Benchmark.py").run()
    assert not at.exception and drawn(at.main) <= 28, drawn(at.main)
    assert at.dataframe and not [s for s in at.selectbox if s.key == "sweep_source"]  # results; the sweep closed
    at.switch_page("pages/9_Indexing.py").run()
    assert not at.exception and drawn(at.main) <= 23, drawn(at.main)
    assert at.session_state["idx_tab"] == "Matrix view" and len(at.get("plotly_chart")) == 2 and not at.dataframe
    at.switch_page("pages/10_Details.py").run()
    assert not at.exception and drawn(at.main) <= 28, drawn(at.main)
    assert [e.label for e in at.expander] == ["What each rule says"] and at.get("plotly_chart")


def test_occupancy_and_kernels_draw_their_rows_as_one_block_and_only_the_open_code() -> None:
    """A plain visit of Occupancy and of Kernels (no GPU, the default bundle): 26 and 24 elements before round 15
    (Occupancy's inputs and numbers in st.columns, a block a column; the Kernels page's source and diff both sent,
    and the design passage's original inside its closed expander). A count above the bound means elements crept
    back onto the default view."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=120)
    at.run()
    at.switch_page("pages/5_Occupancy.py").run()
    assert not at.exception and drawn(at.main) <= 20, drawn(at.main)
    assert len(at.number_input) == 3 and len(at.get("metric")) >= 3 and len(at.get("plotly_chart")) == 3
    at.switch_page("pages/1_Kernels.py").run()
    assert not at.exception and drawn(at.main) <= 23, drawn(at.main)
    assert len(at.code) == 1 and not at.text  # the source tab's code; the original passage closed
