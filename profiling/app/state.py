"""What the frame and the pages pass to each other through st.session_state: the keys, and typed accessors.

Widget keys (`key="kernel"` on a selectbox) stay beside their widgets; this module holds the values that one
script writes and another reads, so no page spells a session-state key itself.
"""

from __future__ import annotations

import sys
import tempfile
import uuid
from collections.abc import Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final, Literal

import streamlit as st

from profiling.app.bundles import Bundle
from profiling.app.cache import shared_uploads
from profiling.device_model import DeviceInfo
from profiling.nsight.report import Report
from profiling.nsight.runner import ProfileRun
from profiling.nsight.source import SourcePage
from profiling.runs.results import ResultsDocument

FRAME: Final = "gemmlens_frame"
DEEP_LINK: Final = "gemmlens_deep_link"
SESSION_ID: Final = "gemmlens_session"
UPLOADS: Final = "uploads"
UPLOAD_ERRORS: Final = "upload_errors"
LIVE_BENCH: Final = "live_bench"
LIVE_PROFILE: Final = "live_profile"
DELETE_PENDING: Final = "confirm_delete"
PURGE_PENDING: Final = "confirm_purge"
SAVE_PENDING: Final = "confirm_save_again"
PROFILE_FOLDERS: Final = "profile_folders"
SOURCE_PAGES: Final = "why_source_pages"

JobSlot = Literal["bench_job", "profile_job", "san_job"]
"""The session-state key under which a page keeps the id of its GPU job (one job per slot and session)."""
BENCH_JOB: Final[JobSlot] = "bench_job"
PROFILE_JOB: Final[JobSlot] = "profile_job"
SANITIZE_JOB: Final[JobSlot] = "san_job"

Upload = tuple[str, Report]
"""An uploaded report: (file name, parsed report)."""


@dataclass(frozen=True)
class Frame:
    """What the frame (app.py) found on this run, for the page it runs: the chosen bundle and the GPU."""

    bundle: Bundle | None
    device: DeviceInfo | None
    no_gpu_reason: str | None
    probing: bool


def set_frame(frame: Frame) -> None:
    """Called by app.py before the page runs."""
    st.session_state[FRAME] = frame


def frame() -> Frame:
    """The frame of this run (set by app.py; pages run only inside it).

    A fresh server whose first request is a page's own URL (`/Roofline`) runs that page file without app.py:
    Streamlit falls back to its old `pages/` folder mode until some run has called st.navigation. Then the page
    is noted and app.py is run instead, which sets the frame and goes on to the page (open_deep_link).
    """
    found = st.session_state.get(FRAME)
    if found is None:
        caller = Path(sys._getframe(1).f_globals.get("__file__", ""))
        if caller.parent.name == "pages":
            st.session_state[DEEP_LINK] = caller.name
        # The query string is the link's selection (profiling.app.permalink): switch_page would drop it.
        link = {name: st.query_params.get_all(name) for name in st.query_params}
        st.switch_page(str(Path(__file__).resolve().parents[2] / "app.py"), query_params=link)
    return found


def deep_link() -> str | None:
    """The page file a run without app.py asked for (see frame), once."""
    return st.session_state.pop(DEEP_LINK, None)


def session_id() -> str:
    """A stable id for this browser session (owner of its GPU jobs)."""
    if SESSION_ID not in st.session_state:
        st.session_state[SESSION_ID] = uuid.uuid4().hex[:8]
    return st.session_state[SESSION_ID]


def job_id(slot: JobSlot) -> str | None:
    """The id of this session's last job in `slot`, if any."""
    return st.session_state.get(slot)


def set_job_id(slot: JobSlot, job: str) -> None:
    st.session_state[slot] = job


def uploads() -> dict[str, str]:
    """This session's uploads: file name by "<name>:<content hash>" (the Reports page keeps it in step with its
    file uploader). The parsed uploads live in the server's shared cache (cache.shared_uploads), not here."""
    return st.session_state.setdefault(UPLOADS, {})


def upload_errors() -> dict[str, str]:
    """One-line errors of unreadable uploads, by the same key as `uploads()`."""
    return st.session_state.setdefault(UPLOAD_ERRORS, {})


def uploaded_reports() -> list[Upload]:
    """The uploaded reports in upload order (source pages are apart: uploaded_source_pages). One the shared cache
    has dropped is parsed again when the Reports page next sees it in its uploader."""
    return [(n, r) for n, r in _uploaded() if isinstance(r, Report)]


def uploaded_source_pages() -> list[tuple[str, SourcePage]]:
    """The uploaded source-page exports (`--page source --csv`) in upload order, for the source view."""
    return [(n, p) for n, p in _uploaded() if isinstance(p, SourcePage)]


def _uploaded() -> list[tuple[str, Any]]:
    cached = shared_uploads()
    found = [(name, cached.get(key)) for key, name in (st.session_state.get(UPLOADS) or {}).items()]
    return [(name, parsed) for name, parsed in found if parsed is not None]


def source_pages() -> dict[str, Any]:
    """Source pages handed to the Why page this session, by file name (profiling.app.why.offer_source_page)."""
    return st.session_state.setdefault(SOURCE_PAGES, {})


REPORT_FILES_CHANGED: Final = "report_files_changed"


def mark_report_files_changed() -> None:
    """The Reports page's uploader callback. A module function, not a lambda in the page: a callback's globals stay
    referenced after its session has gone, and a page's globals hold every report it showed."""
    st.session_state[REPORT_FILES_CHANGED] = True


def live_bench() -> ResultsDocument | None:
    """The results document of this session's last finished benchmark."""
    return st.session_state.get(LIVE_BENCH) or None


def set_live_bench(document: ResultsDocument) -> None:
    st.session_state[LIVE_BENCH] = document


def live_profile() -> ProfileRun | None:
    """This session's last finished ncu profile."""
    return st.session_state.get(LIVE_PROFILE)


def set_live_profile(run: ProfileRun) -> None:
    """Show `run` from now on; the report folders of earlier profiles are removed (the newest folder stays too: it
    may belong to a profile still queued)."""
    st.session_state[LIVE_PROFILE] = run
    folders = _profile_folders()
    _drop_profile_folders(keep={run.report_path.parent, *(Path(f.name) for f in folders[-1:])})


def new_profile_folder() -> Path:
    """A fresh folder for the next ncu report of this session. Folders of earlier profiles go now, except the one
    whose report is shown; the rest go when the session ends (its state is collected) or the server stops."""
    live = live_profile()
    _drop_profile_folders(keep={live.report_path.parent} if live is not None else set())
    # TemporaryDirectory removes its folder when collected or at exit, so none outlives the session.
    folder = tempfile.TemporaryDirectory(prefix="gemmlens-profile-")
    _profile_folders().append(folder)
    return Path(folder.name)


def _profile_folders() -> list[tempfile.TemporaryDirectory]:
    return st.session_state.setdefault(PROFILE_FOLDERS, [])


def _drop_profile_folders(keep: Collection[Path]) -> None:
    kept = []
    for folder in _profile_folders():
        if Path(folder.name) in keep:
            kept.append(folder)
        else:
            folder.cleanup()
    st.session_state[PROFILE_FOLDERS] = kept


def delete_pending() -> int | None:
    """The saved run whose deletion waits for the reader's confirmation."""
    return st.session_state.get(DELETE_PENDING)


def set_delete_pending(run_id: int | None) -> None:
    if run_id is None:
        st.session_state.pop(DELETE_PENDING, None)
    else:
        st.session_state[DELETE_PENDING] = run_id


def purge_pending() -> bool:
    """Whether purging the trash waits for the admin's confirmation."""
    return bool(st.session_state.get(PURGE_PENDING))


def set_purge_pending(pending: bool) -> None:
    st.session_state[PURGE_PENDING] = pending


def save_pending() -> str | None:
    """The save (by its button's key) that waits for the reader's answer: its runs are in the store already."""
    return st.session_state.get(SAVE_PENDING)


def set_save_pending(key: str | None) -> None:
    if key is None:
        st.session_state.pop(SAVE_PENDING, None)
    else:
        st.session_state[SAVE_PENDING] = key
