"""A link to what you see: each page's selection in the URL's query string (st.query_params), restored on load.

A page names its widgets' URL parameters once, before each widget (`bind`), and writes them back at its end
(`publish`):

    permalink.bind("baseline", "baseline", ids, parse=int)   # URL parameter, widget key, the valid choices
    base_id = c1.selectbox("Baseline", ids, key="baseline")
    ...
    permalink.publish("review")

`bind` puts the URL's value into the widget's session state before the widget is drawn, once per value the URL
brings (a value this session wrote itself is not applied again, so the reader's own changes stand). A value that
is not among the choices (a run since deleted, a typo, a launch of an upload the colleague does not have) gives a
one-line note and the widget's default. `publish` writes every bound widget's value to the URL, and drops the
page's parameters that no widget drew this run (a panel the reader closed) and parameters the page does not know.

The parameters of each page are listed in PARAMS: that is the link format. Values are plain text; a list is the
parameter repeated (`?candidates=4&candidates=5`).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

from profiling.app.text import md_escape

Page = Literal["reports", "review", "why", "indexing"]

PARAMS: Final[dict[Page, tuple[str, ...]]] = {
    "reports": ("bundle", "tab", "launches"),
    "review": (
        *("device", "kernel", "label", "author", "since", "tab", "baseline", "candidates", "threshold"),
        *("cross_gpu", "open", "history_kernel", "metric"),
    ),
    "why": ("data", "tab", "launches", "scale", "kernel", "step", "base", "cand"),
    "indexing": ("kernel", "beside", "m", "n", "k", "bx", "by", "warp", "kstep", "tab", "instruction"),
}
"""The URL parameters of each page, in the order they appear in a link."""

FRAME_PARAMS: Final = ("bundle",)
"""Parameters the frame (app.py's sidebar) binds on every page."""

_RUN: Final = "permalink_run"
_PUBLISHED: Final = "permalink_published"
_MAX_SHOWN = 60  # characters of a bad value quoted back in the note


@dataclass
class _Bound:
    key: str
    encode: Callable[[Any], str]
    multi: bool
    default: Any
    kept: bool = False


@dataclass
class _Run:
    """What this script run bound, by URL parameter."""

    bound: dict[str, _Bound] = field(default_factory=dict)


def begin() -> None:
    """Start a script run's bindings (app.py calls it before the sidebar, so the frame's parameters count)."""
    st.session_state[_RUN] = _Run()


def _run() -> _Run:
    run = st.session_state.get(_RUN)
    if run is None:
        run = _Run()
        st.session_state[_RUN] = run
    return run


def _published() -> dict[str, str | list[str]]:
    return st.session_state.setdefault(_PUBLISHED, {})


def url_values(name: str) -> list[str]:
    """Every value of the URL parameter `name` (empty when absent)."""
    return list(st.query_params.get_all(name))


def current_params() -> dict[str, list[str]]:
    """The whole query string as a mapping of lists (for st.switch_page, which otherwise drops it)."""
    return {name: url_values(name) for name in st.query_params}


def encode_value(value: Any) -> str:
    """One value as URL text: booleans as 1/0, whole floats without a fraction, the rest as str()."""
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def parse_bool(text: str) -> bool:
    """1/0, true/false, yes/no, on/off (ValueError otherwise)."""
    low = text.strip().lower()
    if low in ("1", "true", "yes", "on"):
        return True
    if low in ("0", "false", "no", "off"):
        return False
    raise ValueError(text)


def decode(
    name: str,
    texts: Sequence[str],
    options: Collection[Any] | None,
    parse: Callable[[str], Any] = str,
    multi: bool = False,
) -> tuple[Any, list[str]]:
    """The value the URL texts of parameter `name` select, and the texts that select nothing (not parsed by
    `parse`, or not among `options`; None allows any parsed value). For a single value the last text counts;
    returns (None, bad) when it is bad. For `multi`, the good values in order, without repeats."""
    good: list[Any] = []
    bad: list[str] = []
    for text in texts if multi else texts[-1:]:
        try:
            value = parse(text)
        except (ValueError, TypeError):
            bad.append(text)
            continue
        if options is not None and value not in options:
            bad.append(text)
        elif value not in good:
            good.append(value)
    if multi:
        return good, bad
    return (good[0] if good else None), bad


def bad_note(name: str, bad: Sequence[str]) -> str:
    """The one line a reader sees for URL values that select nothing."""
    shown = ", ".join(f"“{md_escape(t[:_MAX_SHOWN])}”" for t in bad[:3]) + (" …" if len(bad) > 3 else "")
    return (
        f"This link's {md_escape(name)} {shown} is not among the choices here (deleted, renamed, or only in the "
        "sender's session): showing the default instead."
    )


def bind(
    name: str,
    key: str,
    options: Collection[Any] | None = None,
    *,
    parse: Callable[[str], Any] = str,
    encode: Callable[[Any], str] = encode_value,
    multi: bool = False,
    default: Any = None,
    kept: bool = False,
) -> str:
    """Tie the widget `key` to the URL parameter `name` for this run; call it just before drawing the widget (or
    as its `key=` argument: it returns `key`).

    A URL value this session did not write itself is applied to the widget when it is among `options` (or, for
    `multi`, each of its values that is); otherwise a one-line note says so and the widget keeps its default.
    A widget at `default` (a fixed default, not one that follows the data) stays out of the link. `kept`: the
    widget is not drawn this run (a closed section's, its value kept by ui.keep_choices), and the value it holds
    stays in the link all the same."""
    _run().bound[name] = _Bound(key, encode, multi, default, kept)
    texts = url_values(name)
    published = _published().get(name)
    if not texts or (published is not None and (texts if multi else texts[-1]) == published):
        return key  # no link value, or our own: the reader may have changed the widget since
    value, bad = decode(name, texts, options, parse, multi)
    if bad:
        st.warning(bad_note(name, bad), icon=":material/link_off:")
    if value is not None and not (multi and not value):
        st.session_state[key] = value
    return key


def _drawn(key: str) -> bool:
    """Whether the widget `key` was drawn in this script run (a panel the reader closed draws none)."""
    ctx = get_script_run_ctx()
    return key in st.session_state and (ctx is None or key in ctx.shared.widget_user_keys_this_run)


def selection(page: Page) -> dict[str, str | list[str]]:
    """The URL text of every parameter bound to a widget drawn this run that belongs to `page` (or to the frame,
    when the page lists it), from the widget's value; empty values and fixed defaults are left out."""
    out: dict[str, str | list[str]] = {}
    bound = _run().bound
    for name in PARAMS[page]:
        spec = bound.get(name)
        if spec is None or not (_drawn(spec.key) or (spec.kept and spec.key in st.session_state)):
            continue
        value = st.session_state[spec.key]
        if value is None or (isinstance(value, str | list) and not value) or (value == spec.default):
            continue
        if spec.multi:
            out[name] = [spec.encode(v) for v in value]
        else:
            out[name] = spec.encode(value)
    return out


def publish(page: Page) -> None:
    """Write this run's selection on `page` to the URL: bound parameters set, everything else dropped."""
    wanted = selection(page)
    current = current_params()
    for name in current:
        if name not in wanted:
            del st.query_params[name]
    changed = {
        name: value
        for name, value in wanted.items()
        if current.get(name) != (value if isinstance(value, list) else [value])
    }
    if changed:  # one message to the browser for them all: each parameter set alone sends the whole query string
        st.query_params.update(changed)
    st.session_state[_PUBLISHED] = dict(wanted)


def slug(label: str) -> str:
    """A tab label as URL text: "Open / delete" -> "open-delete"."""
    return "-".join("".join(c if c.isalnum() else " " for c in label.lower()).split())


def bind_tabs(name: str, key: str, labels: Sequence[str]) -> None:
    """bind() for st.tabs(labels, key=key, on_change="rerun"): the link names a tab by its slug; the first tab
    is the default and stays out of the link."""
    by_slug = {slug(label): label for label in labels}
    bind(name, key, labels, parse=lambda text: by_slug.get(text.strip().lower(), text), encode=slug, default=labels[0])


def tabs(name: str, key: str, labels: Sequence[str]) -> Sequence[Any]:
    """st.tabs(labels) tied to the URL parameter `name` (bind_tabs); switching tabs reruns, so the link follows.
    The labels are Markdown, escaped like any text (the tab's state is the escaped label)."""
    shown = [md_escape(label) for label in labels]
    bind_tabs(name, key, shown)
    return st.tabs(shown, key=key, on_change="rerun")


def open_tab(name: str, key: str, labels: Sequence[str]) -> tuple[Sequence[Any], int]:
    """tabs(), and the index of the open one: the one tab a page that draws only what the reader looks at fills."""
    shown = tabs(name, key, labels)
    return shown, next(i for i, tab in enumerate(shown) if tab.open)


def sections(name: str, key: str, labels: Sequence[str], label: str = "Section") -> str:
    """A section switcher tied to the URL parameter `name` as tabs() is (bind_tabs: the link names a section by its
    slug, the first is the default and stays out of the link), for a page that draws only the chosen section:
    st.tabs sends a block per tab besides the tab bar's own, where this sends one element (st.segmented_control,
    one choice always made). Choosing reruns, so the link follows. Returns the chosen label (escaped Markdown, as
    tabs() keeps it in the session)."""
    shown = [md_escape(text) for text in labels]
    bind_tabs(name, key, shown)
    choice = st.segmented_control(
        label, shown, default=shown[0], required=True, key=key, label_visibility="collapsed", on_change="rerun"
    )
    return choice if choice in shown else shown[0]


def parse_run_id(text: str) -> int:
    """A run id: "12", or a run as the Review page shows it ("#12 label"); ValueError otherwise."""
    head = text.strip().split(" ", 1)[0].removeprefix("#")
    return int(head)


def bind_run(name: str, key: str, ids: Collection[int], multi: bool = False, kept: bool = False) -> str:
    """bind() for a widget choosing saved runs by id (parse_run_id); returns `key`."""
    return bind(name, key, ids, parse=parse_run_id, multi=multi, kept=kept)


def parse_percent(text: str) -> float:
    """A percentage 0..100 (ValueError otherwise)."""
    value = float(text)
    if not 0.0 <= value <= 100.0:
        raise ValueError(text)
    return value


def unknown(page: Page, names: Collection[str]) -> list[str]:
    """The parameter names of a link that `page` does not know (neither its own nor the frame's)."""
    return [n for n in names if n not in PARAMS[page] and n not in FRAME_PARAMS]


def check(page: Page) -> None:
    """At the top of `page`: a one-line note for link parameters it does not know (they are dropped)."""
    names = unknown(page, list(st.query_params))
    if names:
        listed = ", ".join(f"“{md_escape(n[:_MAX_SHOWN])}”" for n in names[:5])
        st.warning(
            f"This link has parameters this page does not know ({listed}): they are ignored. "
            f"It knows: {', '.join(PARAMS[page])}.",
            icon=":material/link_off:",
        )
