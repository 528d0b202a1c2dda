"""Streamlit helpers every page shares: cached loaders, the GPU banner, the job panel and safe text.

User-supplied text (kernel names, file names, labels) only reaches the page through st.text,
st.code, st.dataframe or `show_error`/`safe_md`, which escape Markdown and HTML.
"""

from __future__ import annotations

import copy
import functools
import os
import threading
from collections.abc import Callable, Collection, Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import streamlit as st

from profiling import usecases
from profiling.app import auth, cache, permalink, state, table_format, tables
from profiling.app.bundles import Bundle, indexed_bundles, load_bench, load_bundle_reports, load_results_file
from profiling.app.gpu_queue import GpuJob, GpuJobQueue
from profiling.app.text import md_escape
from profiling.cluster.app import work_per_gpu
from profiling.device_model import DeviceInfo
from profiling.errors import GemmLensError, first_line
from profiling.gpu import env as gpu_env
from profiling.nsight import report as ncu_report
from profiling.runs.results import ResultsDocument
from profiling.team.roles import SERVER

if TYPE_CHECKING:
    from profiling.runs.store import RunStore

GPU_SWITCH = "GEMMLENS_GPU"
"""Set to "off" to serve bundled measurements only (a shared review server, or tests)."""


# ---------------------------------------------------------------------------------------------
# Cached resources and data
# ---------------------------------------------------------------------------------------------


@cache.resource
def gpu_queue() -> GpuJobQueue:
    """The one GPU job queue of this server, shared by every browser session (with sign-in configured, only
    identities whose role allows it may queue jobs)."""
    return GpuJobQueue(require_identity=auth.sign_in_configured())


@cache.resource
def nvcc_facts_cache() -> dict[tuple[str, str], Any]:
    """nvcc compile facts computed so far, per (kernel id, arch), shared by every session."""
    return {}


@cache.resource(show_spinner=False)
def bundles() -> tuple[Bundle, ...]:
    """The committed results folders, newest first: one shared tuple of frozen Bundles, which the frame reads on
    every page run (a copy out of st.cache_data, unpickled per call, was a few ms of every visit)."""
    return tuple(indexed_bundles())


@cache.resource(show_spinner=False)
def bundles_shown() -> Any:
    """The Overview's table of the bundles (tables.bundles_table) as drawn, Arrow, once per process like bundles()."""
    return table_format.arrow(table_format.display(tables.bundles_table(bundles())))


@cache.resource(show_spinner=False)
def bench_document(bundle_name: str) -> ResultsDocument:
    """The merged results document of one bundle: one shared object, read-only (its tables are cached by its
    memoised fingerprint, cache.document_fingerprint, instead of hashing every row on each visit)."""
    return load_bench(_bundle(bundle_name))


@cache.resource(show_spinner=False)
def results_file(path: str) -> ResultsDocument:
    """One committed results document (e.g. a tuning sweep) by path: one shared object, read-only."""
    return load_results_file(Path(path))


@cache.resource(show_spinner=False)
def bundle_reports(bundle_name: str) -> list[tuple[str, ncu_report.Report]]:
    """The ncu captures of one bundle, parsed once per server (read-only afterwards)."""
    return load_bundle_reports(_bundle(bundle_name))


def _bundle(name: str) -> Bundle:
    for b in bundles():
        if b.name == name:
            return b
    raise KeyError(name)


@cache.resource(show_spinner=False)
def _store(url: str, require_actor: bool) -> RunStore:
    # Imported here: SQLAlchemy and the schema take a second to load, which only pages that use the store pay.
    from profiling.runs.store import RunStore

    return RunStore(url, require_actor=require_actor)


def keep_choices(choices: Mapping[str, Collection[Any] | None]) -> None:
    """Keep the values of the widgets `choices` names (key -> the values still offered, None: any) through a run that
    does not draw them: a page that draws only its open tab calls this before the tabs. Streamlit forgets a widget's
    value in a run that does not draw it, and keeps a value set through session state. A value no longer offered
    (a run since deleted, another data set's launch) is dropped, so the widget takes its default instead of
    refusing it; from a list, the values still offered stay."""
    for key, offered in choices.items():
        if key not in st.session_state:
            continue
        value = st.session_state[key]
        if isinstance(value, list):
            value = [v for v in value if offered is None or v in offered]
            kept = bool(value)
        else:
            kept = offered is None or value in offered
        if kept:
            st.session_state[key] = value
        else:
            del st.session_state[key]


def run_store() -> RunStore:
    """The run store at GEMMLENS_DB_URL / GEMMLENS_DB_PATH (opened and migrated once per URL); with sign-in
    configured, it refuses writes that name no signed-in identity."""
    from profiling.runs.store import default_db_url

    return _store(default_db_url(), auth.sign_in_configured())


# ---------------------------------------------------------------------------------------------
# GPU presence
# ---------------------------------------------------------------------------------------------


def gpu_switched_off() -> str | None:
    """Why GPU work is disabled by configuration or impossible at a glance, or None (then probe)."""
    if os.environ.get(GPU_SWITCH, "").strip().lower() in ("off", "0", "no", "false"):
        return f"GPU work is switched off ({GPU_SWITCH}=off)"
    return gpu_env.no_gpu_device_nodes()


@cache.resource
def _probe_state() -> dict[str, Any]:
    """The server's one GPU probe: its queue job id, then its outcome."""
    return {"lock": threading.Lock(), "job": None, "outcome": None}


def device_status(timeout_s: float = 30.0) -> tuple[DeviceInfo | None, str | None, bool]:
    """(device, why there is none, still probing). The probe is a device_info worker job queued once per
    server and never waited for: pages render at once and call `rerun_when_probed()` while it runs."""
    off = gpu_switched_off()
    if off:
        return None, off, False
    state, queue = _probe_state(), gpu_queue()
    with state["lock"]:
        if state["outcome"] is not None:
            return (*state["outcome"], False)
        job = queue.get(state["job"])
        if job is None:
            job = queue.submit("device query", SERVER, usecases.device_info_job(timeout_s))
            state["job"] = job.id
        if not job.finished_state:
            return None, None, True
        if job.state == "done" and job.result:
            state["outcome"] = (job.result, None)
        else:
            state["outcome"] = (None, job.error or "the GPU worker did not answer")
        return (*state["outcome"], False)


def reprobe() -> None:
    """Forget the probe's outcome so the next device_status() looks for a GPU again."""
    state = _probe_state()
    with state["lock"]:
        state["job"], state["outcome"] = None, None


def rerun_when_probed() -> None:
    """While the GPU probe runs: a notice that refreshes itself and reruns the page when the probe ends."""

    @st.fragment(run_every=0.5)
    def waiting() -> None:
        if not device_status()[2]:
            st.rerun()
        st.caption("Looking for a GPU…")

    waiting()


def pages(folder: Path, listed: tuple[tuple[str, str, str], ...]) -> list[Any]:
    """st.Page of each (file in `folder`, title, icon) of `listed`, the first the default, for st.navigation: fresh
    copies of pages made once per process (st.Page resolves its file on disk, a stat per folder of the path). A copy
    per run, because st.navigation marks the page it returns, on the object, as the one this run may call."""
    return [copy.copy(page) for page in _made_pages(folder, listed)]


@functools.cache
def _made_pages(folder: Path, listed: tuple[tuple[str, str, str], ...]) -> tuple[Any, ...]:
    # functools, not st.cache_resource: nothing to clear, and the arguments are hashed as plain tuples.
    return tuple(
        st.Page(folder / file, title=title, icon=icon, default=i == 0) for i, (file, title, icon) in enumerate(listed)
    )


def current_bundle() -> Bundle | None:
    """The bundled data set chosen in the sidebar (newest by default); None when none is committed."""
    found = bundles()
    if not found:
        return None
    names, labels = _picker_options(found)
    permalink.bind("bundle", "bundle", names)
    choice = st.sidebar.selectbox(
        "Bundled measurements",
        names,
        key="bundle",
        format_func=labels.__getitem__,
        help="Real measurements committed under results/: each <device>-<date>/ folder, and each run in it with a "
        "benchmark (auto_round3/, wgmma_store/, ...); the newest first.",
    )
    return found[names.index(choice)] if choice in names else found[0]


_picker: tuple[tuple[Bundle, ...], list[str], dict[str, str]] | None = None


def _picker_options(found: tuple[Bundle, ...]) -> tuple[list[str], dict[str, str]]:
    """(the bundles' names, name -> label) for the sidebar's picker, made once per tuple of bundles (bundles() hands
    out one shared tuple): every page run drew the picker, and formatting each of fifty labels again was a tenth of
    its cost. Holding the tuple keeps its identity from being reused by another."""
    global _picker
    held = _picker
    if held is not None and held[0] is found:
        return held[1], held[2]
    names = [b.name for b in found]
    labels = {b.name: b.label for b in found}  # one look-up per option, not a scan of the bundles
    _picker = (found, names, labels)
    return names, labels


def lazy_expander(label_md: str, key: str, holding: bool = False) -> Any | None:
    """st.expander(label_md) (escaped Markdown) for a part few readers open, built and sent only while it is open: the
    expander itself is drawn on every visit, closed by default, and opening or closing it reruns the page. Returns
    the expander while it is open (draw into it), None while it is closed. A closed expander's content cost a visit
    as much as a shown one's. `holding`: its content holds what the reader gave it (a file picked, a question
    waiting for an answer), which a run that drew nothing would drop: returned closed too."""
    box = st.expander(label_md, key=key, on_change="rerun")
    return box if box.open or holding else None


def bundled_caption(bundle: Bundle | None) -> None:
    """A caption saying exactly which committed measurements are shown."""
    if bundle is None:
        st.warning("No bundled measurements found under results/.")
    else:
        st.caption(f"Bundled real measurements: {safe_md(bundle.label)}")


def no_capture_notice(bundle: Bundle | None) -> None:
    """What Profile and Reports say when there is no ncu capture to show: the chosen bundle has none."""
    where = (
        f"The bundled measurements chosen in the sidebar ({safe_md(bundle.label)}) hold no ncu capture. "
        if bundle
        else ""
    )
    with_one = [b for b in bundles() if b.ncu_groups]
    other = f" or choose bundled measurements with one, such as {safe_md(with_one[0].label)}" if with_one else ""
    st.info(f"{where}Upload an ncu report on the Reports page{other}.")


def needs_gpu_notice(what: str, bundle: Bundle | None, reason: str | None) -> None:
    """The explanation Benchmark and Profile show when they cannot run here."""
    where = f" Showing bundled measurements from {safe_md(bundle.device_name)} on {bundle.date}." if bundle else ""
    st.info(f"{what} needs a CUDA GPU in this machine (no GPU found: {safe_md(first_line(reason))}).{where}")


# ---------------------------------------------------------------------------------------------
# Safe text
# ---------------------------------------------------------------------------------------------


safe_md = md_escape
"""User text escaped for any Markdown-rendering element: the one helper (profiling.app.text.md_escape), under the
name the pages use."""


def show_error(message: object) -> None:
    """A one-line error box; the message (which may contain file or kernel names) is escaped."""
    st.error(safe_md(first_line(message)))


@contextmanager
def user_errors() -> Iterator[None]:
    """A GemmLensError raised inside (bad input, a failed save) shows as a one-line error box and the page goes
    on below the block; anything else, st.stop() and st.rerun() included, passes through."""
    try:
        yield
    except GemmLensError as exc:
        show_error(exc)


# ---------------------------------------------------------------------------------------------
# Jobs
# ---------------------------------------------------------------------------------------------


def queue_sidebar() -> None:
    """Sidebar line: what holds the GPU and how many jobs wait."""
    queue = gpu_queue()
    running, waiting = queue.running(), queue.waiting()
    if running is None and not waiting:
        st.sidebar.caption("GPU queue: idle")
        return
    text = f"GPU queue: running {safe_md(running.label)} for {safe_md(running.owner)}" if running else "GPU queue:"
    st.sidebar.caption(f"{text}; {len(waiting)} waiting")


def submit_job(slot: state.JobSlot, label: str, fn: Callable[[GpuJob], Any]) -> None:
    """Queue `fn` on the GPU as this session's job in `slot` (job_panel(slot) then shows it). With sign-in the
    job is the signed-in identity's (the queue checks its role); without, this browser session's."""
    owner = auth.current_identity() if auth.sign_in_configured() else None
    state.set_job_id(slot, gpu_queue().submit(label, owner or state.session_id(), fn).id)


def job_panel(slot: state.JobSlot) -> GpuJob | None:
    """Show this session's job in `slot` (queued place, progress, Cancel) and return it.

    While the job is queued or running the panel refreshes itself every second; when it finishes the
    whole page reruns once so the results appear.
    """
    queue = gpu_queue()
    job = queue.get(state.job_id(slot))
    if job is None:
        return None
    if job.finished_state:
        _job_outcome(job)
        return job

    @st.fragment(run_every=1.0)
    def live() -> None:
        current = queue.get(job.id)
        if current is None or current.finished_state:
            st.rerun()
            return
        place = queue.position(current.id)
        if current.state == "queued":
            running = queue.running()
            ahead = f"; the GPU is running {safe_md(running.label)} for {safe_md(running.owner)}" if running else ""
            st.info(f"Queued: {place} job(s) ahead of yours{ahead}. It starts when the GPU is free.")
        else:
            st.progress(current.progress, text=safe_md(f"{current.label}: {current.message}"))
            per_gpu = work_per_gpu(current)  # a job on a Dask cluster: the results each GPU has returned
            done_where = (
                "; results per GPU: " + ", ".join(f"{g} {n}" for g, n in sorted(per_gpu.items())) if per_gpu else ""
            )
            st.caption(f"running for {current.elapsed_s:.0f} s{safe_md(done_where)}")
        if st.button("Cancel", key=f"cancel-{current.id}"):
            queue.cancel(current.id)
            st.rerun()

    live()
    return job


def job_result(slot: state.JobSlot) -> Any | None:
    """job_panel(slot), then the job's result once it has finished well (None before that, or on failure)."""
    job = job_panel(slot)
    return job.result if job is not None and job.state == "done" else None


def _job_outcome(job: GpuJob) -> None:
    if job.state == "failed":
        show_error(f"{job.label} failed: {job.error}")
    elif job.state == "cancelled":
        st.warning(f"{safe_md(job.label)} was cancelled; {len(job.partial)} result(s) arrived before it stopped.")
    if job.events:
        with st.expander(f"Job log ({len(job.events)} lines)", expanded=False):
            st.text("\n".join(job.events[-200:]))


# ---------------------------------------------------------------------------------------------
# Data sources shared by the Roofline, Occupancy and Reports pages
# ---------------------------------------------------------------------------------------------


def bench_sources(bundle: Bundle | None) -> dict[str, ResultsDocument]:
    """Results documents available in this session: this session's benchmark run, then the bundled one."""
    out: dict[str, ResultsDocument] = {}
    live = state.live_bench()
    if live:
        out["benchmark run (this session)"] = live
    if bundle is not None and bundle.bench_files:
        out[f"bundled benchmark: {bundle.label}"] = bench_document(bundle.name)
    for path in bundle.other_results if bundle is not None else ():
        out[f"bundled {path.name}: {bundle.label}"] = results_file(str(path))
    return out


def uploaded_reports() -> tuple[list[tuple[str, ncu_report.Report]], list[str]]:
    """This session's uploaded reports with the pages of one capture merged (raw and details uploaded together hold
    the same launches: each is shown once), and a note per merge (ncu_report.merge_pages)."""
    return cache.figure(ncu_report.merge_pages, state.uploaded_reports())


def report_sources(bundle: Bundle | None) -> dict[str, list[tuple[str, ncu_report.Report]]]:
    """ncu reports available in this session: uploads, this session's profile, then the bundled captures."""
    out: dict[str, list[tuple[str, ncu_report.Report]]] = {}
    uploads, _ = uploaded_reports()
    if uploads:
        out["uploaded reports"] = uploads
    live = state.live_profile()
    if live is not None:
        out["ncu profile (this session)"] = [(live.report_path.name, live.report)]
    for name, report in bundle_reports(bundle.name) if bundle is not None else ():
        out[f"bundled ncu capture {name}: {bundle.label}"] = [(name, report)]
    return out
