"""What the app computes once per server rather than once per visit: figures and tables keyed by the data they
draw and the page inputs, and parsed uploads keyed by the content hash of their bytes, shared by every session.

Tables are `st.cache_data` (each session gets its own copy, so a page may change it); figures are
`st.cache_resource` (one shared object: st.plotly_chart only reads a figure). Every cache is bounded in entries and
time, so memory comes back when people leave. Objects that Streamlit cannot hash cheaply are keyed by identity
(`report_token`: a parsed ncu report is never changed after it is read) or by content (`run_fingerprint`).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import threading
import time
import uuid
import weakref
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import pandas as pd
import plotly.graph_objects as go
import plotly.io as pio
import pyarrow as pa
import streamlit as st
from streamlit import dataframe_util
from streamlit import type_util as st_type_util
from streamlit.dataframe import lazy_df_source
from streamlit.runtime.caching import cache_resource_api

from profiling import charts
from profiling.analysis.occupancy import OccupancyResult
from profiling.app import table_format, tables
from profiling.app.table_format import arrow
from profiling.charts import review_html
from profiling.device_model import Ceilings, DeviceInfo
from profiling.launch_operations import operations_frame
from profiling.nsight.load import LoadedUpload
from profiling.nsight.model import KernelLaunch
from profiling.nsight.report import Report
from profiling.runs import by_device
from profiling.runs.by_device import GpuIdentity
from profiling.runs.comparison import compare_runs, notes_said_once, side_by_side, unmatched
from profiling.runs.export import export_runs_json
from profiling.runs.records import SavedRun
from profiling.runs.results import ResultsDocument
from profiling.runs.verdict import Comparability, comparability

T = TypeVar("T")
TTL_S = 30 * 60
"""How long a cached table or figure lives unused: long enough for a team's session, short enough to free memory."""
TABLE_ENTRIES = 256
FIGURE_ENTRIES = 128
UPLOAD_ENTRIES = 8
"""Parsed uploads kept for the whole server; with UPLOAD_BYTES, what bounds the memory uploads hold."""
UPLOAD_BYTES = 400 * 10**6
"""Uploaded bytes (the files' sizes) whose parsed reports are kept; the oldest go first past it."""


# ---------------------------------------------------------------------------------------------
# Keys for objects Streamlit cannot hash cheaply
# ---------------------------------------------------------------------------------------------

_tokens: dict[int, tuple[weakref.ref, str]] = {}
_tokens_lock = threading.Lock()


def report_token(report: Report) -> str:
    """A key unique to this report object for as long as it lives (reports are read-only once parsed, and a
    shared upload is one object for every session, so its tables are computed once)."""
    with _tokens_lock:
        entry = _tokens.get(id(report))
        if entry is not None and entry[0]() is report:
            return entry[1]
        token = uuid.uuid4().hex
        key = id(report)

        def forget(ref: weakref.ref, key: int = key) -> None:
            with _tokens_lock:
                if key in _tokens and _tokens[key][0] is ref:
                    del _tokens[key]

        _tokens[key] = (weakref.ref(report, forget), token)
        return token


_fingerprints: dict[int, tuple[weakref.ref, str]] = {}


def run_fingerprint(run: SavedRun) -> str:
    """A saved run's content (every field and result), so an edited label or a re-imported id never hits a stale
    entry. Memoised per object (SavedRun is frozen, and store_cache hands out one object per stored run), so a
    visit does not hash a run of thousands of launch times again."""
    with _tokens_lock:
        entry = _fingerprints.get(id(run))
        if entry is not None and entry[0]() is run:
            return entry[1]
    digest = hashlib.sha1(repr(run).encode()).hexdigest()
    key = id(run)

    def forget(ref: weakref.ref, key: int = key) -> None:
        with _tokens_lock:
            if key in _fingerprints and _fingerprints[key][0] is ref:
                del _fingerprints[key]

    with _tokens_lock:
        _fingerprints[key] = (weakref.ref(run, forget), digest)
    return digest


_documents: dict[int, tuple[weakref.ref, str]] = {}


def document_fingerprint(document: ResultsDocument) -> str:
    """A results document's content, memoised per object: ui.bench_document and ui.results_file hand out one shared
    object per file (read-only), and a live run's document lives in its session, so a visit does not hash every
    result row again to find its tables."""
    with _tokens_lock:
        entry = _documents.get(id(document))
        if entry is not None and entry[0]() is document:
            return entry[1]
    digest = hashlib.sha1(repr(document).encode()).hexdigest()
    key = id(document)

    def forget(ref: weakref.ref, key: int = key) -> None:
        with _tokens_lock:
            if key in _documents and _documents[key][0] is ref:
                del _documents[key]

    with _tokens_lock:
        _documents[key] = (weakref.ref(document, forget), digest)
    return digest


HASH_FUNCS: dict[Any, Callable[[Any], Any]] = {
    Report: report_token,
    SavedRun: run_fingerprint,
    ResultsDocument: document_fingerprint,
    KernelLaunch: report_token,  # a launch of a parsed report: read-only, keyed by identity as its report is
    # Small frozen records of plain values: their repr is their content. Streamlit's own hashing walks an object's
    # __reduce__ field by field, which cost the Overview and Occupancy pages ~2 ms a visit.
    Ceilings: repr,
    DeviceInfo: repr,
    OccupancyResult: repr,
}


# ---------------------------------------------------------------------------------------------
# A memo in front of st.cache_resource
# ---------------------------------------------------------------------------------------------

_PLAIN = frozenset({str, int, bool, bytes, type(None)})


class _Unkeyable(Exception):
    """An argument the memo cannot key cheaply: the call goes to Streamlit's cache as it is."""


def memo_key(value: Any, hash_funcs: dict[Any, Callable[[Any], Any]]) -> Any:
    """A cheap key equal for equal arguments: plain values as themselves (with their type, so 1, 1.0 and True
    differ as they do in Streamlit's keys), floats by their exact bits, tuples and lists item by item, and a type of
    `hash_funcs` by its hash function. Raises _Unkeyable for anything else."""
    kind = type(value)
    if kind in _PLAIN:
        return kind, value
    if kind is float:
        return kind, value.hex()
    hasher = hash_funcs.get(kind)
    if hasher is not None:
        return kind, hasher(value)
    if kind is tuple or kind is list:
        return kind, tuple(memo_key(item, hash_funcs) for item in value)
    raise _Unkeyable


def _current_caches() -> Any:
    """Streamlit's table of resource caches, which `st.cache_resource.clear()` replaces with a new one: what tells a
    memo entry made before a clear. None where this Streamlit has no such table (the memo then stays out)."""
    return getattr(cache_resource_api._resource_caches, "_function_caches", None)


def resource(
    func: Callable | None = None,
    *,
    ttl: float | None = None,
    max_entries: int | None = None,
    show_spinner: bool | str = False,
    hash_funcs: dict[Any, Callable[[Any], Any]] | None = None,
) -> Any:
    """st.cache_resource with a memo in front: a hit costs a dictionary look-up instead of Streamlit's hashing of
    every argument (0.25-0.35 ms a hit, dozens of hits a visit). The memo keys the arguments as `memo_key` does,
    skips those named with a leading underscore (as Streamlit does), holds at most `max_entries` for at most `ttl`
    seconds from when it kept it (so an object Streamlit has dropped lives at most that much longer), and is emptied
    by `.clear()` and by `st.cache_resource.clear()`. An argument it cannot key sends the call to Streamlit's cache, so
    what is cached and what a call returns are as with st.cache_resource."""

    def wrap(f: Callable) -> Callable:
        cached = st.cache_resource(
            f, ttl=ttl, max_entries=max_entries, show_spinner=show_spinner, hash_funcs=hash_funcs
        )
        names = list(inspect.signature(f).parameters)
        skipped = frozenset(i for i, name in enumerate(names) if name.startswith("_"))
        hashers = dict(hash_funcs or {})
        memo: OrderedDict[Any, tuple[Any, float, Any]] = OrderedDict()
        lock = threading.RLock()  # an entry dropped here may free objects whose weak-reference callbacks take locks

        @functools.wraps(f)
        def call(*args: Any, **kwargs: Any) -> Any:
            caches = _current_caches()
            try:
                key = (
                    tuple(memo_key(a, hashers) for i, a in enumerate(args) if i not in skipped),
                    tuple(sorted((k, memo_key(v, hashers)) for k, v in kwargs.items() if not k.startswith("_"))),
                )
            except _Unkeyable:
                return cached(*args, **kwargs)
            if caches is None:
                return cached(*args, **kwargs)
            now = time.monotonic()
            with lock:
                entry = memo.get(key)
                if entry is not None and entry[2] is caches and entry[1] > now:
                    memo.move_to_end(key)
                    return entry[0]
            value = cached(*args, **kwargs)
            with lock:
                memo[key] = (value, now + ttl if ttl is not None else float("inf"), caches)
                memo.move_to_end(key)
                while max_entries is not None and len(memo) > max_entries:
                    memo.popitem(last=False)
            return value

        def clear() -> None:
            with lock:
                memo.clear()
            cached.clear()

        call.clear = clear  # type: ignore[attr-defined]
        call._info = getattr(cached, "_info", None)  # type: ignore[attr-defined]  # Streamlit's bounds, as before
        return call

    return wrap(func) if func is not None else wrap


_CLEARABLE: list[Any] = []
"""Every table and figure cache of this module: what `clear_shared` empties once nobody is connected."""


def _table(func: Callable) -> Callable:
    cached = st.cache_data(func, max_entries=TABLE_ENTRIES, ttl=TTL_S, show_spinner=False, hash_funcs=HASH_FUNCS)
    _CLEARABLE.append(cached)
    return cached


class FigureDict(dict):
    """A SharedFigure's dict form, which also keeps its JSON once st.plotly_chart has encoded it (`figure_json`)."""

    __slots__ = ("json_form",)


class SharedFigure(go.Figure):
    """A figure held by a shared cache, which nobody changes once it is built: its dict form, what st.plotly_chart
    (and to_html) sends, is built once, and so is its JSON (`figure_json`). A plain go.Figure deep-copies and
    re-encodes all its data on every call, which was most of a chart's server time per visit."""

    def to_dict(self) -> dict[str, Any]:
        built = self.__dict__.get("_dict_form")
        if built is None:
            built = self._dict_form = FigureDict(super().to_dict())
        return built


_plotly_to_json = pio.to_json


def figure_json(
    fig: Any, validate: bool = True, pretty: bool = False, remove_uids: bool = True, engine: str | None = None
) -> str:
    """plotly.io.to_json, which st.plotly_chart calls on every draw with a figure's dict form: a SharedFigure's
    (a FigureDict, never changed) is encoded once and its text kept, instead of walking every point again per
    visit. Anything else, or other options, is plotly's own to_json."""
    if type(fig) is FigureDict and not validate and not pretty and remove_uids and engine is None:
        try:
            return fig.json_form
        except AttributeError:
            fig.json_form = _plotly_to_json(fig, validate=False)
            return fig.json_form
    return _plotly_to_json(fig, validate=validate, pretty=pretty, remove_uids=remove_uids, engine=engine)


# Streamlit looks plotly.io.to_json up on each draw: the one place where a shared figure's JSON can be kept.
pio.to_json = figure_json


class IdentityMemo:
    """`compute(obj)` once per live object, for objects never changed once built (an Arrow table): kept while the
    object lives, dropped when it is freed. Objects that take no weak reference are computed on each call."""

    def __init__(self, compute: Callable[[Any], Any]) -> None:
        self._compute = compute
        self._entries: dict[int, tuple[weakref.ref, Any]] = {}
        self._lock = threading.RLock()  # a collection inside the lock may free an object and call _forget

    def __call__(self, obj: Any) -> Any:
        key = id(obj)
        entry = self._entries.get(key)
        if entry is not None and entry[0]() is obj:
            return entry[1]
        value = self._compute(obj)
        try:
            ref = weakref.ref(obj, functools.partial(self._forget, key))
        except TypeError:
            return value
        with self._lock:
            self._entries[key] = (ref, value)
        return value

    def _forget(self, key: int, ref: weakref.ref) -> None:
        with self._lock:
            if key in self._entries and self._entries[key][0] is ref:
                del self._entries[key]

    def __len__(self) -> int:
        return len(self._entries)


# st.dataframe serialises an Arrow table to IPC bytes, and reads its pandas metadata (JSON) to see whether its
# columns have several levels, on every draw. The pages draw shared tables (shown_table, the views' `table`
# fields) that never change, so each is serialised and read once while it lives (the Why page's table of all SASS
# instructions is 350 KB). A table made for one draw is freed, and its entry with it, after the draw.
arrow_bytes = IdentityMemo(dataframe_util.convert_arrow_table_to_arrow_bytes)
dataframe_util.convert_arrow_table_to_arrow_bytes = arrow_bytes

_multi_level_columns = lazy_df_source._has_multi_level_columns
_multi_level_of_table = IdentityMemo(_multi_level_columns)


def multi_level_columns(data: object) -> bool:
    """lazy_df_source._has_multi_level_columns, once per Arrow table (a DataFrame's columns may change: asked
    each time)."""
    if type(data) is pa.Table:
        return _multi_level_of_table(data)
    return _multi_level_columns(data)


lazy_df_source._has_multi_level_columns = multi_level_columns


_signature_parameters = st_type_util.get_func_parameters


_parameters_of = functools.lru_cache(maxsize=1024)(_signature_parameters)


def func_parameters(func: Callable[..., Any]) -> list[inspect.Parameter]:
    """streamlit.type_util.get_func_parameters, once per function: Streamlit's caches call it (inspect.signature)
    for every positional argument of every cached call, to learn which arguments to hash, and a page makes dozens
    of cached calls per visit. A function's parameters never change; Streamlit's own telemetry caches them the same
    way (metrics_util._get_arg_keywords_cached). Callers only read the list. An unhashable callable is looked up
    each time, as before."""
    try:
        return _parameters_of(func)
    except TypeError:
        return _signature_parameters(func)


st_type_util.get_func_parameters = func_parameters


def share_figures(value: Any) -> Any:
    """`value` with every go.Figure in it (itself, in a tuple or list, or a dataclass field) made a SharedFigure in
    place: the same object, only its dict form kept."""
    if type(value) is go.Figure:
        value.__class__ = SharedFigure  # the same fields; SharedFigure adds no state but the kept dict
    elif isinstance(value, tuple | list):
        for item in value:
            share_figures(item)
    elif dataclasses.is_dataclass(value) and not isinstance(value, type):
        for f in dataclasses.fields(value):
            share_figures(getattr(value, f.name))
    return value


def _figure(func: Callable) -> Callable:
    @functools.wraps(func)
    def build(*args: Any, **kwargs: Any) -> Any:
        return share_figures(func(*args, **kwargs))

    cached = resource(build, max_entries=FIGURE_ENTRIES, ttl=TTL_S, hash_funcs=HASH_FUNCS)
    _CLEARABLE.append(cached)
    return cached


shared_cache = _figure
"""For other modules' views (figures, tables as drawn): one read-only object per key shared by every session, its
figures made SharedFigure, emptied with the others when nobody is connected."""


@functools.cache
def _cache_of(func: Callable, kind: str) -> Callable:
    """The one Streamlit cache of `func` (made on first use, then reused): module-level functions only."""
    return _figure(func) if kind == "figure" else _table(func)


def table(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`func(*args, **kwargs)` computed once per server for these arguments and handed to each session as its own
    copy (st.cache_data: a page may change it). Any table function of profiling/ is cached this way where it is
    called, `cache.table(tables.findings_table, reports)`: a new table needs no wrapper here."""
    return _cache_of(func, "table")(*args, **kwargs)


def shared(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`func(*args, **kwargs)` computed once per server for these arguments and shared read-only by every session
    (st.cache_resource), for a table a page only reads (whether it is empty, a column's values): `table` would copy
    it out of st.cache_data, unpickling every row, on every visit. The same cache as `figure(func, ...)`."""
    return _cache_of(func, "figure")(*args, **kwargs)


def figure(func: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`func(*args, **kwargs)` built once per server for these arguments and shared read-only by every session, its
    figures made SharedFigure (st.cache_resource). Any figure function of profiling/charts is cached this way where
    it is called, `cache.figure(charts.roofline, points, ceilings, title)`: a new chart needs no wrapper here."""
    return _cache_of(func, "figure")(*args, **kwargs)


@functools.cache
def _shown_cache(func: Callable) -> Callable:
    @functools.wraps(func)
    def build(*args: Any, **kwargs: Any) -> Any:
        return arrow(table_format.display(func(*args, **kwargs)))

    build.__qualname__ = f"{func.__qualname__}.shown"  # Streamlit keys a cache by name: not `figure(func)`'s
    return _figure(build)


def shown_table(func: Callable[..., pd.DataFrame], *args: Any, **kwargs: Any) -> Any:
    """`func(*args, **kwargs)` as the pages draw a table (table_format.display, then Arrow), built once per server for
    these arguments and shared read-only: a visit neither copies the table out of a cache nor formats it again.
    `len()` of the result is its number of rows."""
    return _shown_cache(func)(*args, **kwargs)


def clear_shared() -> None:
    """Drop every cached table and figure and every parsed upload: called when nobody has been connected for a
    while (profiling.app.memory), so the server's memory returns to idle; the next visitor rebuilds what they see."""
    for cached in _CLEARABLE:
        cached.clear()
    shared_uploads().clear()


# ---------------------------------------------------------------------------------------------
# Views with logic of their own (tables and figures of one function each go through `table` and `figure`)
# ---------------------------------------------------------------------------------------------

Reports = Sequence[tuple[str, Report]]


@_table
def ab_table(document: ResultsDocument) -> pd.DataFrame:
    """abtest.ab_summary of an interleaved A/B document, cached."""
    from profiling.abtest import ab_summary

    pair = document.ab or {}
    return ab_summary(document, pair["a"], pair["b"], paired=True, threshold_pct=2.0)


@_table
def operations_table(reports: Reports) -> pd.DataFrame:
    """Operations of more than one launch in the reports (profiling.launch_operations), cached."""
    frames = [operations_frame(report.launches) for _, report in reports]
    frames = [f for f in frames if not f.empty]
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


@dataclass(frozen=True)
class BenchView:
    """A results document's results table (as drawn) and its two figures, shared by every session (read-only) and
    keyed by the document's memoised fingerprint: a visit hashes neither the document nor its frame."""

    table: Any
    tflops: go.Figure
    pct_cublas: go.Figure


@_figure
def bench_view(document: ResultsDocument) -> BenchView:
    """tables.bench_table (displayed, as Arrow), charts.tflops_figure and charts.pct_cublas_figure of
    tables.bench_frame(document), cached."""
    frame = tables.bench_frame(document)
    table = arrow(table_format.display(tables.bench_table(frame)))
    return BenchView(table=table, tflops=charts.tflops_figure(frame), pct_cublas=charts.pct_cublas_figure(frame))


@dataclass(frozen=True)
class RooflineView:
    """A roofline as the Roofline page draws it, shared by every session (read-only) and keyed by the data's source
    objects (reports by identity, a results document by its memoised fingerprint) and the ceilings: a visit hashes
    neither the points nor their table."""

    empty: bool
    """No point to plot (no FLOP counts or times): the page says so instead of drawing."""
    figure: go.Figure | None
    table: Any
    """tables.roofline_table as drawn (table_format.display, as Arrow)."""


def _roofline_view(points: pd.DataFrame, ceilings: Ceilings, unnamed: str = "device") -> RooflineView:
    if points.empty:
        return RooflineView(empty=True, figure=None, table=None)
    title = f"Roofline — {ceilings.device_name or unnamed}"
    return RooflineView(
        empty=False,
        figure=charts.roofline(points, ceilings, title),
        table=arrow(table_format.display(tables.roofline_table(points, ceilings))),
    )


@_figure
def report_roofline_view(reports: Reports, ceilings: Ceilings, unnamed: str = "device") -> RooflineView:
    """The hierarchical roofline of ncu reports (charts.report_roofline_points), cached; `unnamed` stands in the
    title for ceilings without a device name."""
    return _roofline_view(charts.report_roofline_points(reports), ceilings, unnamed)


@_figure
def bench_roofline_view(document: ResultsDocument, size: str, ceilings: Ceilings) -> RooflineView:
    """The algorithmic roofline of a results document at one size (charts.bench_roofline_points), cached."""
    return _roofline_view(charts.bench_roofline_points(tables.bench_frame(document), size), ceilings)


@dataclass(frozen=True)
class ReviewView:
    """Everything the Review page draws for one comparison, computed once per runs, threshold and ceilings and
    shared by every session (read-only): a visit hashes the runs' memoised fingerprints, not their tables."""

    comparison: pd.DataFrame
    side: pd.DataFrame
    table: Any
    """The side-by-side rows as shown (tables.side_by_side_plain of the rows without the repeated note, as Arrow)."""
    note: str
    """The note every time row shares, said once above the table ('' when none)."""
    guards: tuple[tuple[str, Comparability], ...]
    """(candidate label, what differs from the baseline) for each candidate."""
    unmatched: Any
    """Kernel/size pairs in one run only, ready to show (as Arrow; len() is their number)."""
    roofline: go.Figure
    figures: tuple[go.Figure, ...]


@_figure
def review_view(
    baseline: SavedRun, candidates: list[SavedRun], threshold_pct: float, cross_gpu: bool, ceilings: Ceilings | None
) -> ReviewView:
    """The Review page's comparison of `baseline` with `candidates` (see ReviewView), cached."""
    compared = compare_runs(baseline, candidates, threshold_pct=threshold_pct, cross_gpu=cross_gpu)
    side = side_by_side(compared)
    shown, note = notes_said_once(side) if not side.empty else (side, "")
    only = pd.concat([unmatched(baseline, c).assign(candidate=c.label) for c in candidates], ignore_index=True)
    return ReviewView(
        comparison=compared,
        side=side,
        table=arrow(tables.side_by_side_plain(shown)) if not side.empty else side,
        note=note or "",
        guards=tuple((c.label, comparability(baseline, c, cross_gpu=cross_gpu)) for c in candidates),
        unmatched=arrow(table_format.display(only.rename(columns={"only_in": "only in"}))) if not only.empty else only,
        roofline=charts.review_roofline(baseline, candidates, ceilings),
        figures=tuple(charts.comparison_figures(baseline, candidates, compared)),
    )


@_figure
def run_tables(run: SavedRun) -> tuple[Any, Any]:
    """(tables.run_info_table, tables.run_results_table) of a saved run as drawn (table_format.display, then Arrow)."""
    return arrow(table_format.display(tables.run_info_table(run))), arrow(
        table_format.display(tables.run_results_table(run))
    )


@_table
def device_groups(runs: list[SavedRun]) -> tuple[list[GpuIdentity], pd.DataFrame, pd.DataFrame]:
    """(the GPUs, by_device.per_model, by_device.models_table) of the runs' results, cached."""
    results = by_device.device_results(runs)
    models = by_device.per_model(results)
    return by_device.gpus_of(results), models, by_device.models_table(models)


def review_exports(
    baseline: SavedRun,
    candidates: Sequence[SavedRun],
    compared: pd.DataFrame,
    threshold_pct: float,
    roof: go.Figure,
    comments: Sequence[dict[str, Any]] = (),
) -> tuple[Callable[[], str], Callable[[], str]]:
    """(HTML report, runs JSON) as callables for st.download_button's `data`: built when the reader clicks, not
    on every visit (Streamlit runs them on their own thread and keeps no bytes in the session meanwhile)."""
    candidates = list(candidates)

    def html() -> str:
        return review_html.report_html(
            baseline, candidates, compared, threshold_pct=threshold_pct, extra_figures=[roof], comments=comments
        )

    def runs_json() -> str:
        return export_runs_json([baseline, *candidates])

    return html, runs_json


# ---------------------------------------------------------------------------------------------
# Parsed uploads, shared by every session
# ---------------------------------------------------------------------------------------------


def upload_key(name: str, content: bytes) -> str:
    """The key of an upload: its name and the SHA-256 of its bytes (the same file uploaded twice is one entry)."""
    return f"{name}:{hashlib.sha256(content).hexdigest()[:24]}"


class UploadCache:
    """Parsed uploads by `upload_key`, least recently used first out, bounded by entries and by the uploaded
    bytes behind them. The same file uploaded by several sessions at once is parsed once: the others wait for
    that parse and share its report (read-only)."""

    def __init__(self, max_entries: int = UPLOAD_ENTRIES, max_bytes: int = UPLOAD_BYTES) -> None:
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.parses = 0
        self._entries: OrderedDict[str, tuple[LoadedUpload, int]] = OrderedDict()
        self._pending: dict[str, threading.Lock] = {}
        self._lock = threading.Lock()

    def get(self, key: str) -> LoadedUpload | None:
        """The parsed report of `key`, or None when it was never parsed or has been dropped."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            self._entries.move_to_end(key)
            return entry[0]

    def parse(self, key: str, name: str, content: bytes, parser: Callable[[str, bytes], LoadedUpload]) -> LoadedUpload:
        """The report of `key`, parsed with `parser(name, content)` unless this or another session already has;
        a parse error (GemmLensError) passes through and nothing is kept."""
        report = self.get(key)
        if report is not None:
            return report
        with self._lock:
            lock = self._pending.setdefault(key, threading.Lock())
        with lock:
            report = self.get(key)
            if report is not None:
                return report
            try:
                report = parser(name, content)
                with self._lock:
                    self.parses += 1
                    self._entries[key] = (report, len(content))
                    self._evict()
            finally:
                with self._lock:
                    self._pending.pop(key, None)
            return report

    def _evict(self) -> None:
        while len(self._entries) > self.max_entries or (
            len(self._entries) > 1 and sum(size for _, size in self._entries.values()) > self.max_bytes
        ):
            self._entries.popitem(last=False)

    def clear(self) -> None:
        """Drop every parsed upload (sessions keep only keys: a page that needs one parses it again)."""
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


@resource
def shared_uploads() -> UploadCache:
    """The server's one cache of parsed uploads."""
    return UploadCache()


def parse_upload(key: str, name: str, content: bytes) -> LoadedUpload:
    """The parsed report of an upload (usecases.load_upload, run in a child process: upload_parse), shared across
    sessions by `key`, and across server processes through the folder of parsed uploads on disk."""
    from profiling.app.upload_parse import parse_shared

    return shared_uploads().parse(key, name, content, functools.partial(parse_shared, key))
