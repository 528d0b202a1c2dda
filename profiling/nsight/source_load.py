"""Open a source page of any kind: a CSV export (plain or gzip), or a `.ncu-rep` read by the ncu-report wheel (no
ncu); then give our catalog kernels' lines the text of their `.cu` file."""

from __future__ import annotations

import os
from pathlib import Path

from kernels.catalog import CATALOG
from kernels.spec import KernelSpec
from profiling.nsight import ncu_rep
from profiling.nsight.load import check_report_file
from profiling.nsight.source import (
    UNOPENED,
    KernelSource,
    SourcePage,
    parse_source_bytes,
    short_name,
)

# Beside a bundled capture: the catalog's .cu files as they were when it was compiled, where they changed since.
COMPILED_SOURCES_DIR = "compiled_sources"


def merge_views(cuda_sass: SourcePage, sass: SourcePage) -> SourcePage:
    """One page from the two views of one report: each kernel from cuda,sass where it is there (it has the
    lines), else from sass (kernels without -lineinfo, such as cuBLAS's, are only there). Sections are paired
    in report order by name, so repeated launches of one kernel stay apart."""
    remaining = list(cuda_sass.kernels)
    merged: list[KernelSource] = []
    for kernel in sass.kernels:
        if remaining and remaining[0].name == kernel.name:
            merged.append(remaining.pop(0))
        else:
            merged.append(kernel)
    merged.extend(remaining)
    return SourcePage(
        kernels=merged,
        view="cuda,sass+sass",
        source=cuda_sass.source or sass.source,
        warnings=cuda_sass.warnings + sass.warnings,
    )


def read_source_file(path: str | os.PathLike[str]) -> SourcePage:
    """A source-page CSV (plain or .gz); ReportError with one line when unreadable."""
    path = Path(path)
    check_report_file(path, "source pages")
    return parse_source_bytes(path.read_bytes(), source=str(path))


def load_source_page(path: str | os.PathLike[str], ncu: str | None = None, timeout_s: float = 300) -> SourcePage:
    """A source page from a CSV export, or from a `.ncu-rep` through the ncu-report wheel (`ncu` and `timeout_s`
    are kept for callers that pass them and are not used: no process is started).

    Our catalog's kernels get their `.cu` lines attached (see attach_catalog_source).
    """
    path = Path(path)
    if path.is_file() and ncu_rep.is_ncu_rep(path):
        check_report_file(path, "reports")
        page = ncu_rep.read_source_page(path)
    else:
        page = read_source_file(path)
    compiled = path.parent / COMPILED_SOURCES_DIR
    attach_catalog_source(page, compiled if compiled.is_dir() else None)
    return page


def _file_name(file: str) -> str:
    """The name of a source-page line's file (ncu writes Windows paths with backslashes); "" when unnamed."""
    return Path(file.replace("\\", "/")).name if file else ""


def _header_name(file: str, src_dir: Path, source: str) -> str:
    """The kernels/src file a source-page line belongs to: a header of ours by its name, else `source`."""
    name = _file_name(file)
    return name if name.endswith(".cuh") and (src_dir / name).is_file() else source


def _is_ours(file: str, src_dir: Path | None, source: str) -> bool:
    """Whether a source-page line's file is a kernel file or header of ours (by name), or unnamed."""
    name = _file_name(file)
    return not name or src_dir is None or name == source or (src_dir / name).is_file()


def catalog_spec_for(function_name: str) -> KernelSpec | None:
    """The catalog kernel a profiled function is: its template arguments decide among entries of one name
    (sgemm_tiled<8/16/32>); a tuning configuration of a templated kernel falls back to the first entry."""
    short = short_name(function_name)
    base = short.split("<", 1)[0]
    fallback = None
    for spec in CATALOG:
        # A kernel's N % 4 != 0 twin (narrow_entry) is the same catalog kernel.
        for entry in (e.replace(" ", "") for e in (spec.entry, spec.narrow_entry) if e):
            if entry == short:
                return spec
            if fallback is None and entry.split("<", 1)[0] == base:
                fallback = spec
    return fallback


def attach_catalog_source(page: SourcePage, compiled_sources: Path | None = None) -> None:
    """Give each kernel's lines their text: the catalog's `.cu` file for our kernels, else what ncu embedded.

    The page's line numbers are those of the file CuPy compiled (`KernelSpec.read_source` pastes our headers in
    between `#line` markers, so a kernel file's lines keep their numbers and a header's lines are named by the
    header: ncu lists them in a section of that file, and they read that header, e.g. v8_body.cuh for v8-async).
    A capture made before a kernel file changed keeps the files as compiled in `compiled_sources/` beside it;
    those win over today's file.
    """
    for kernel in page.kernels:
        spec = catalog_spec_for(kernel.name)
        kernel.catalog_id = spec.id if spec else None
        if not kernel.lines:
            kernel.source_note = kernel.source_note or "SASS only (no line information in this view)"
            continue
        # Lines of a CUDA header that ncu could read (__ldcg's in sm_32_intrinsics.hpp) keep ncu's text; the rest
        # decide whether ncu embedded our files too.
        src_dir = spec.source_path.parent if spec is not None and spec.source_path is not None else None
        source = spec.source if spec is not None else ""
        foreign = [ln.text not in ("", UNOPENED) and not _is_ours(ln.file, src_dir, source) for ln in kernel.lines]
        embedded = any(ln.text and ln.text != UNOPENED for ln, f in zip(kernel.lines, foreign, strict=True) if not f)
        if spec is None or spec.source_path is None or embedded:
            kernel.source_note = "source as embedded by ncu" if embedded else "no source text (file not readable)"
            continue
        kept = compiled_sources / spec.source if compiled_sources is not None else None
        as_compiled = kept is not None and kept.is_file()
        texts: dict[str, list[str]] = {}
        beyond = []
        for ln, is_foreign in zip(kernel.lines, foreign, strict=True):
            if is_foreign:
                continue
            # A line of a header of ours (v8_body.cuh holds the v8 kernels' body) reads that header; any other
            # line the kernel's own file, as the page names the file CuPy compiled.
            name = _header_name(ln.file, spec.source_path.parent, spec.source)
            if name not in texts:
                mine = compiled_sources / name if as_compiled and compiled_sources is not None else None
                path = mine if mine is not None and mine.is_file() else spec.source_path.parent / name
                texts[name] = path.read_text().splitlines()
            text_lines = texts[name]
            if ln.line > len(text_lines):
                beyond.append(ln.line)
            ln.file = f"kernels/src/{name}"
            ln.text = text_lines[ln.line - 1] if ln.line <= len(text_lines) else ""
        kernel.source_note = f"kernels/src/{spec.source} " + (
            "(catalog, as compiled for this capture)" if as_compiled else "(catalog)"
        )
        if beyond:
            page.warnings.append(
                f"{spec.id}: lines {beyond[:3]} lie past the end of kernels/src/{spec.source}; the source changed "
                "since this capture, so line texts may be off"
            )
