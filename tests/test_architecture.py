"""The shape of the tree: no import circle between files of profiling/ and kernels/, nor between their packages (the
layers), no re-exported names, no page over ~120 lines. Modules have no line cap: one is split where it holds two
ideas, not to stay under a number."""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("profiling", "kernels")
MAX_PAGE_LINES = 120


def module_files() -> dict[str, Path]:
    """Every module of our packages by dotted name (a package by its own name, for its __init__.py)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
            found[name] = path
    return found


def imported_modules(source: str, importer: str, known: Iterable[str], is_package: bool = False) -> set[str]:
    """Our modules that `source` (the module `importer`; `is_package` for an __init__.py) imports anywhere: at
    module level, inside functions or under TYPE_CHECKING. `from P import x` counts as importing P (for a package,
    its __init__.py) and also P.x when that is a module; `import a.b` counts as importing a.b."""
    known = set(known)
    out: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out.update(alias.name for alias in node.names if alias.name in known)
        elif isinstance(node, ast.ImportFrom):
            if node.level:  # relative: from the importer's package
                base = importer.split(".")
                base = base[: len(base) - node.level + (1 if is_package else 0)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            if module in known:
                out.add(module)
            out.update(f"{module}.{alias.name}" for alias in node.names if f"{module}.{alias.name}" in known)
    out.discard(importer)
    return out


def import_graph() -> dict[str, set[str]]:
    files = module_files()
    return {
        name: imported_modules(path.read_text(), name, files, is_package=path.name == "__init__.py")
        for name, path in files.items()
    }


def circles(graph: Mapping[str, set[str]]) -> list[list[str]]:
    """The strongly connected groups of more than one module (Tarjan), each sorted, sorted by first name."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in sorted(graph.get(node, ())):
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            group = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                group.append(top)
                if top == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return sorted(found)


SUBPACKAGES = ("analysis", "app", "charts", "cluster", "commands", "gpu", "nsight", "runs", "team")


def package_of(module: str) -> str:
    """The package a module belongs to for the layer check: kernels, a sub-package of profiling
    (profiling.nsight), or a module at the top of profiling (profiling.shape, profiling.identity) on its own."""
    parts = module.split(".")
    if parts[0] == "kernels":
        return "kernels"
    if len(parts) >= 2 and parts[1] in SUBPACKAGES:
        return ".".join(parts[:2])
    return module


def package_graph(graph: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """Package -> the packages its modules import (itself left out)."""
    out: dict[str, set[str]] = {}
    for module, imported in graph.items():
        source = package_of(module)
        out.setdefault(source, set()).update(package_of(m) for m in imported if package_of(m) != source)
    return out


def lines(path: Path) -> int:
    return len(path.read_text().splitlines())


def test_the_circle_finder_and_import_reader_see_what_they_must() -> None:
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set(), "c": {"b"}}) == []
    known = {"kernels", "kernels.tuning", "kernels.catalog", "profiling.errors"}
    source = "from kernels import tuning\ndef f():\n    import profiling.errors\n    from . import catalog\n"
    assert imported_modules(source, "kernels.registry", known) == {
        "kernels",
        "kernels.tuning",
        "profiling.errors",
        "kernels.catalog",
    }


def test_the_graph_covers_the_packages() -> None:
    graph = import_graph()
    assert {"kernels", "kernels.registry", "profiling.usecases", "profiling.nsight.report"} <= set(graph)
    assert "kernels.registry" in graph["kernels"]  # kernels/__init__.py re-exports get_kernel
    assert "profiling.nsight.report" in graph["profiling.nsight.load"]


def test_no_import_circle_between_files() -> None:
    graph = import_graph()
    found = circles(graph)
    described = ["; ".join(f"{m} -> {', '.join(sorted(graph[m] & set(group)))}" for m in group) for group in found]
    assert found == [], "import circles:\n" + "\n".join(described)


def test_no_import_circle_between_packages() -> None:
    """The layers: errors, paths, shape, metric_names and device_model at the bottom, then kernels, identity and
    launch_operations, runs, gpu, nsight, analysis, charts, and the commands and the app on top. A module may
    import from its own layer or below; a circle between packages means one import runs up the layers."""
    graph = import_graph()
    packages = package_graph(graph)
    found = circles(packages)
    described = []
    for group in found:
        for a in group:
            for b in sorted(packages[a] & set(group)):
                edges = sorted(
                    f"{m} -> {d}" for m in graph if package_of(m) == a for d in graph[m] if package_of(d) == b
                )
                described.append(f"{a} -> {b}: {', '.join(edges[:3])}")
    assert found == [], "import circles between packages:\n" + "\n".join(described)


def test_the_package_check_sees_an_upward_import() -> None:
    graph = {"kernels.tuning": {"profiling.analysis.x"}, "profiling.analysis.x": {"kernels.catalog"}}
    assert circles(package_graph(graph)) == [["kernels", "profiling.analysis"]]


def re_exports(source: str) -> list[str]:
    """Imports that only pass a name on: `from M import *`, `from M import x as x` (the explicit re-export form), and
    an import kept though unused (`# noqa: F401`)."""
    found = []
    lines = source.splitlines()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.ImportFrom):
            kept = any("noqa: F401" in lines[n - 1] for n in range(node.lineno, (node.end_lineno or node.lineno) + 1))
            found += [
                f"from {node.module} import {a.name}" + (f" as {a.asname}" if a.asname else "")
                for a in node.names
                if a.name == "*" or a.asname == a.name or kept
            ]
    return found


@pytest.mark.parametrize("name", sorted(module_files()), ids=str)
def test_no_module_passes_on_another_modules_names(name: str) -> None:
    """Each name is imported from the module that owns it: a moved name leaves no alias behind, so two import paths
    never name one fact."""
    assert re_exports(module_files()[name].read_text()) == [], f"{name} re-exports names; import them from their owner"


def test_the_re_export_check_sees_both_forms() -> None:
    assert re_exports("from profiling.device_model import *\nfrom profiling.paths import tool_path as tool_path\n") == [
        "from profiling.device_model import *",
        "from profiling.paths import tool_path as tool_path",
    ]
    assert re_exports("from profiling.paths import tool_path as find_tool\nimport json\n") == []
    assert re_exports("from kernels.spec import KernelSpec  # noqa: F401\n") == ["from kernels.spec import KernelSpec"]


def test_a_launchs_identity_is_read_from_the_launch() -> None:
    """A launch's catalog id, size and label come from `launch.identity` and `launch.label`; the report module keeps
    no second set of lookups beside them."""
    from profiling.nsight import report

    assert [n for n in ("match_catalog", "nvtx_shape", "launch_label") if hasattr(report, n)] == []
    assert not (ROOT / "profiling/analysis/device_model.py").exists()
    assert not (ROOT / "profiling/analysis/operations.py").exists()


@pytest.mark.parametrize("path", [ROOT / "app.py", *sorted((ROOT / "pages").glob("*.py"))], ids=lambda p: p.name)
def test_no_page_over_the_limit(path: Path) -> None:
    assert lines(path) <= MAX_PAGE_LINES, f"{path.name} has {lines(path)} lines (limit {MAX_PAGE_LINES})"


# Public functions with `dict[str, Any]` in their signature that other packages call: raw JSON where it is read or
# written, each named with the boundary it stands at. Everything else takes and returns typed objects
# (ResultsDocument, DeviceInfo, SavedRun, BenchResult, Report).
JSON_BOUNDARIES = {
    ("profiling.analysis.ceilings", "load_cached"): "the per-device ceilings cache file",
    ("profiling.analysis.ceilings", "save_cached"): "the per-device ceilings cache file",
    ("profiling.analysis.ceilings", "record_ceilings"): "a ceilings record of that file",
    ("profiling.analysis.ceilings", "recorded_measurements"): "the ceilings files, cached and bundled",
    ("profiling.analysis.launch_compare", "comparison_document"): "the compare-launches --json output",
    ("profiling.app.review_view", "listed_runs"): "the store's run summaries",
    ("profiling.gpu.worker", "run_job"): "the worker's pipe",
    ("profiling.runs.results", "bench_results"): "the worker's result lines",
    ("profiling.runs.results", "build_document"): "the job settings, as the worker's pipe carries them",
}


def dict_any_signatures(sources: Mapping[str, str], needle: str = "dict[str, Any]") -> dict[tuple[str, str], set[str]]:
    """(module, function) -> the modules of other packages that call it, for each public top-level function with
    `needle` in its signature. A call is found through imports: `from M import f`, or `M.f` with M an imported
    module. Pages and app.py count as packages of their own."""
    trees = {name: ast.parse(text) for name, text in sources.items()}
    marked = {
        (name, node.name)
        for name, tree in trees.items()
        for node in tree.body
        if isinstance(node, ast.FunctionDef)
        and not node.name.startswith("_")
        and needle in ast.unparse(node.args) + " -> " + (ast.unparse(node.returns) if node.returns else "")
    }
    found: dict[tuple[str, str], set[str]] = {}
    for user, tree in trees.items():
        modules: dict[str, str] = {}
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                modules.update({a.asname or a.name: a.name for a in node.names if a.name in trees})
            elif isinstance(node, ast.ImportFrom) and node.module:
                for a in node.names:
                    if f"{node.module}.{a.name}" in trees:
                        modules[a.asname or a.name] = f"{node.module}.{a.name}"
                    elif (node.module, a.name) in marked:
                        found.setdefault((node.module, a.name), set()).add(user)
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id in modules:
                if (modules[node.value.id], node.attr) in marked:
                    found.setdefault((modules[node.value.id], node.attr), set()).add(user)
    crossing = {key: {u for u in users if package_of(u) != package_of(key[0])} for key, users in found.items()}
    return {key: users for key, users in crossing.items() if users}


def test_no_dict_any_crosses_a_package_boundary_but_raw_json() -> None:
    sources = {name: path.read_text() for name, path in module_files().items()}
    sources |= {f"pages.{p.stem}": p.read_text() for p in (ROOT / "pages").glob("*.py")}
    sources["app"] = (ROOT / "app.py").read_text()
    found = dict_any_signatures(sources)
    unexpected = [
        f"{m}.{f}, called from {', '.join(sorted(u))}" for (m, f), u in found.items() if (m, f) not in JSON_BOUNDARIES
    ]
    assert not unexpected, "dict[str, Any] crosses a package boundary; pass a typed object:\n" + "\n".join(unexpected)
    assert set(found) == set(JSON_BOUNDARIES), "a boundary listed here no longer takes raw JSON: drop it"


def test_the_dict_any_check_sees_both_call_forms() -> None:
    sources = {
        "profiling.runs.a": "def f(x: dict[str, Any]) -> None: ...\ndef g() -> dict[str, Any]: ...\ndef _h(x: dict[str, Any]): ...\n",
        "profiling.runs.b": "from profiling.runs.a import f\n",  # the same package: not a crossing
        "profiling.app.c": "from profiling.runs import a\na.g()\na._h()\n",
        "profiling.app.d": "from profiling.runs.a import f\n",
    }
    sources["profiling.runs"] = ""
    assert dict_any_signatures(sources) == {
        ("profiling.runs.a", "f"): {"profiling.app.d"},
        ("profiling.runs.a", "g"): {"profiling.app.c"},
    }
