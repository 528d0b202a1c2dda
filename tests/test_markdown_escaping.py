"""User text never renders as Markdown: a run label or device name such as `[phish](http://evil.example)` shows as
those characters, not as a link or an image.

Two checks: every Streamlit call of the pages and profiling/app/ that renders Markdown gets only literal text,
numbers and text passed through the one escaping helper (profiling.app.text.md_escape) — read from the source
tree, so a new unescaped call fails here — and the Review page, given runs with hostile labels and device names,
shows them escaped in its warnings and captions.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from streamlit.testing.v1 import AppTest

from profiling.app import text, ui

ROOT = Path(__file__).resolve().parents[1]
SOURCES = sorted([ROOT / "app.py", *(ROOT / "pages").glob("*.py"), *(ROOT / "profiling" / "app").glob("*.py")])

# Streamlit calls whose text (first argument, or the keyword) renders as Markdown: body text and widget labels.
MARKDOWN_CALLS = {
    "markdown",
    "caption",
    "write",
    "warning",
    "info",
    "error",
    "success",
    "toast",
    "title",
    "header",
    "subheader",
    "expander",
    "lazy_expander",  # ui.lazy_expander: an st.expander drawn into only while open
    "popover",
    "metric",
    "button",
    "download_button",
    "checkbox",
    "toggle",
    "radio",
    "selectbox",
    "multiselect",
    "select_slider",
    "slider",
    "text_input",
    "text_area",
    "number_input",
    "date_input",
    "file_uploader",
    "page_link",
    "tabs",
    "progress",
    "status",
}
MARKDOWN_KEYWORDS = {"label", "body", "text", "help", "caption", "captions"}
# Each returns escaped Markdown.
ESCAPERS = {"md_escape", "safe_md", "markdown_table", "gpus_line", "comment_line", "bad_note"}
NUMBER_FORMATTERS = {"_fmt", "si"}  # a number and its unit, as text
NUMERIC_SPEC = re.compile(r"[,_]?(\.\d+)?[dfgeEn%]$|^,$")

# Interpolated values that are not user text: numbers, and names this program makes (catalog text is the project's
# own Markdown; path.name is a file of a committed bundle or of a profile this server ran; an A/B pair holds catalog
# ids, which the worker checked; a comment's c['at'] is the store's own ISO UTC time of the comment, made by
# iso_utc from a DateTime column). Each entry was reviewed;
# anything else must go through the escaping helper.
NOT_USER_TEXT = {
    "why_view.SECTION_KEY",
    "why_view.SECTIONS",
    # Indexing's tab labels and key, the Benchmark sweep's and Review's time charts' expander labels: literal text
    # of their modules
    "SECTION_KEY",
    "SECTIONS",
    "SWEEP_LABEL",
    "TIME_CHARTS",
    "n_results",
    "run_id",
    "chosen",
    "place",
    "TOLERANCE_PCT",
    "RUNS_SHOWN",
    "total",
    "sel.warp",
    "sel.block",
    "sel.shape.m",
    "sel.shape.n",
    "sel.shape.k",
    "gx",
    "gy",
    "model.warps_per_block",
    "steps",
    "arch",
    "what",
    "kernel_id",
    "spec.previous",
    "spec.source",
    "spec.title",
    "spec.adds",
    "spec.design_doc",
    "i",
    "n",
    "line",
    "key",
    "bundle.date",
    "static.arch",
    "static.tool",
    "result.tool",
    "result.errors or 0",
    "who.role",
    "when",
    "live.metric_set",
    "live.clock_control",
    "kernel.total_samples",
    "sel.other",
    "kid",
    "RULE",
    "limit",
    "AUDIT_ROWS",
    "usecases.MAX_UPLOAD_MIB",
    "base.ncu_theoretical_pct",
    "acc.category.replace('_', ' ')",
    "list(VALUE_TITLES)",
    "path.name",
    "pair['a']",
    "pair['b']",
    "PARAMS[page]",
    "FILTERS[name]",
    "c['at']",
    # Details' rule titles and descriptions, escaped once per launch where they are built (details_view._rule_texts)
    # and joined into one Markdown text each
    "rules_list_md(shown.rules)",
    "rule_descriptions_md(shown.rules)",
    # ui.lazy_expander's label, handed on to st.expander: its callers' labels are checked as an expander's are
    "label_md",
    # the shape grid's legend of a heatmap cell: literal text and the target's numbers (profiling/app/shape_grid.py)
    "CELLS_CAPTION",
}


class Checker:
    """Finds the parts of Markdown-rendering arguments that could carry user text unescaped in one source file. A
    local name is as safe as every value assigned to it in the enclosing function (or, in a page, the script)."""

    def __init__(self, tree: ast.Module) -> None:
        self.scope_of: dict[ast.AST, ast.AST] = {}
        self.assigned: dict[ast.AST, dict[str, list[ast.AST]]] = {}
        self._index(tree, tree)

    def _index(self, node: ast.AST, scope: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            inner = child if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)) else scope
            self.scope_of[child] = inner
            if isinstance(child, ast.Assign):
                for target in child.targets:
                    if isinstance(target, ast.Name):
                        self.assigned.setdefault(scope, {}).setdefault(target.id, []).append(child.value)
            self._index(child, inner)

    def unescaped(self, node: ast.AST, scope: ast.AST, seen: frozenset[str] = frozenset()) -> list[str]:
        """The parts of an argument that could carry user text into Markdown unescaped (empty: safe)."""

        def check(n: ast.AST) -> list[str]:
            return self.unescaped(n, scope, seen)

        if isinstance(node, ast.Constant):
            return []
        if isinstance(node, ast.JoinedStr):
            return [bad for part in node.values for bad in check(part)]
        if isinstance(node, ast.FormattedValue):
            spec = ast.unparse(node.format_spec)[2:-1] if node.format_spec else ""
            return [] if spec and NUMERIC_SPEC.search(spec) else check(node.value)
        if isinstance(node, ast.BinOp):
            return check(node.left) + check(node.right)
        if isinstance(node, ast.IfExp):
            return check(node.body) + check(node.orelse)
        if isinstance(node, (ast.List, ast.Tuple)):
            return [bad for e in node.elts for bad in check(e)]
        if isinstance(node, (ast.GeneratorExp, ast.ListComp)):
            return check(node.elt)
        if isinstance(node, ast.Call):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if called in ESCAPERS or called in NUMBER_FORMATTERS or called == "len":
                return []
            if called == "join" and isinstance(func, ast.Attribute) and isinstance(func.value, ast.Constant):
                return [bad for arg in node.args for bad in check(arg)]
        if ast.unparse(node) in NOT_USER_TEXT:
            return []
        if isinstance(node, ast.Name) and node.id not in seen:
            values = self.assigned.get(scope, {}).get(node.id, [])
            if values:
                return [bad for v in values for bad in self.unescaped(v, scope, seen | {node.id})]
        return [ast.unparse(node)]

    def findings(self, path: Path, tree: ast.Module) -> list[str]:
        found = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                for arg in markdown_arguments(node):
                    for bad in self.unescaped(arg, self.scope_of.get(node, tree)):
                        found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {bad}")
        return found


def callee_names(func: ast.AST) -> set[str]:
    """The Streamlit function names a call may reach: `st.caption`, `col.metric`, `(st.warning if x else st.caption)`.
    `write` counts only on st and st.sidebar (a file's write is not Markdown)."""
    if isinstance(func, ast.Attribute):
        if func.attr == "write" and ast.unparse(func.value) not in ("st", "st.sidebar"):
            return set()
        return {func.attr}
    if isinstance(func, ast.IfExp):
        return callee_names(func.body) | callee_names(func.orelse)
    return set()


def markdown_arguments(call: ast.Call) -> list[ast.AST]:
    """The arguments of `call` that Streamlit renders as Markdown."""
    names = callee_names(call.func) & MARKDOWN_CALLS
    if not names:
        return []
    keywords = {k.arg: k.value for k in call.keywords}
    shown = [] if "progress" in names else list(call.args[:1])  # st.progress(value, text=...)
    if names & {"write", "tabs"}:  # every argument of st.write; every tab label
        shown = list(call.args)
    escaped_options = (
        isinstance(keywords.get("format_func"), (ast.Name, ast.Attribute))
        and ast.unparse(keywords["format_func"]).rsplit(".", 1)[-1] in ESCAPERS
    )
    if "radio" in names and not escaped_options:  # radio options render Markdown
        shown += list(call.args[1:2]) + ([keywords["options"]] if "options" in keywords else [])
    return shown + [v for k, v in keywords.items() if k in MARKDOWN_KEYWORDS]


def unescaped_calls() -> list[str]:
    found = []
    for path in SOURCES:
        tree = ast.parse(path.read_text(), str(path))
        found += Checker(tree).findings(path, tree)
    return found


def test_one_escaping_helper() -> None:
    assert ui.safe_md is text.md_escape


def test_every_markdown_call_escapes_what_it_interpolates() -> None:
    assert unescaped_calls() == []


def test_the_check_catches_an_unescaped_label() -> None:
    source = """
st.warning(f"{candidate.label}: {guard.label()}")
st.caption(f"{md_escape(run.label)} {n:.1f}")
shown = md_escape(device) if device else "no GPU"
st.info(f"on {shown}")
later = run.notes
st.markdown("Notes: " + later)
st.radio("Show", list(sources), format_func=ui.safe_md)
st.radio("Show", list(sources))
"""
    tree = ast.parse(source)
    assert Checker(tree).findings(ROOT / "example.py", tree) == [
        "example.py:2: candidate.label",
        "example.py:2: guard.label()",
        "example.py:7: run.notes",
        "example.py:9: list(sources)",
    ]


CORPUS_FILE = ROOT / "tests" / "fixtures" / "hostile" / "handmade_markdown_in_labels.runs.json"
# Markdown that would render as a link, an image or HTML: an unescaped "](" or "![", a raw tag, or a bare URL or
# e-mail address (GitHub-flavoured Markdown links those even when every character is escaped).
LIVE_MARKDOWN = re.compile(r"(?<!\\)\]\((?!\\)|(?<!\\)!(?<!\\)\[|(?<!\\)<[a-z]|(?i:https?|www)\\?[:.]|\w@")


def rendered_markdown(at: AppTest) -> list[str]:
    """The Markdown source of every text element and label of the page (what the browser renders)."""
    out = []
    for kind in ("markdown", "caption", "warning", "info", "error", "success", "title", "header", "subheader"):
        out.extend(str(e.value) for e in getattr(at, kind))
    for kind in ("expander", "button", "selectbox", "multiselect", "checkbox", "radio", "tabs"):
        out.extend(str(e.label) for e in getattr(at, kind))
    return out


def test_review_shows_hostile_labels_and_device_names_as_text(offline_app) -> None:
    """The corpus file: an export whose second run has a label, notes and device name of Markdown links, an image
    and HTML. Imported on the Review page, its not-comparable warning names it, escaped."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.session_state["add_runs"] = True  # the Add runs expander open: it is drawn into only while open
    at.run()
    at.switch_page("pages/7_Review.py").run()
    at.file_uploader(key="import_json").set_value(
        (CORPUS_FILE.name, CORPUS_FILE.read_bytes(), "application/json")
    ).run()
    next(b for b in at.button if b.label == "Import").click().run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], at.error.values)
    at.multiselect(key="candidates").set_value([2]).run()
    assert not at.exception, [e.value for e in at.exception]
    (warning,) = [w for w in at.warning.values if "phish" in w]  # different GPU models: not comparable
    assert warning.startswith("\\[phish\\]\\(http\u2060\\:")  # shown as "[phish](http://", but no link
    live = [s for s in rendered_markdown(at) if LIVE_MARKDOWN.search(s)]
    assert live == []
