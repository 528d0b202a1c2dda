"""Kernel sources as they are compiled: shared headers inlined with every line keeping its file and number."""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest

from kernels.catalog import CATALOG
from kernels.sources import inline_local_includes
from kernels.spec import SRC_DIR

HEADER = "cp_async.cuh"
USERS = ["v8-async", "v8-splitk", "v9-regdb", "v9-splitk", "wmma-async"]
V8_BODY = "v8_body.cuh"  # the v8 kernels' shared body, which includes cp_async.cuh
_LINE = re.compile(r'^#line (\d+) "([^"]+)"$')


def _origins(text: str) -> list[tuple[str, int, str]]:
    """(file, line number, text) of each line of a compiled text, following its #line markers as a compiler does."""
    out, name, number = [], None, 1
    for line in text.splitlines():
        marker = _LINE.match(line)
        if marker:
            number, name = int(marker.group(1)), marker.group(2)
            continue
        out.append((name, number, line))
        number += 1
    return out


@pytest.mark.parametrize("spec", [s for s in CATALOG if s.source], ids=lambda s: s.id)
def test_every_compiled_line_is_the_line_of_its_file(spec) -> None:
    text = spec.read_source()
    assert "#include" not in text, "NVRTC gets no include path: our headers must be inlined"
    for name, number, line in _origins(text):
        lines = (SRC_DIR / (name or spec.source)).read_text().splitlines()
        expected = lines[number - 1]
        assert line == ("" if expected == "#pragma once" else expected), f"{spec.id}: {name}:{number}"


@pytest.mark.parametrize("kernel_id", USERS)
def test_cp_async_helpers_come_from_the_one_header(kernel_id: str) -> None:
    spec = next(s for s in CATALOG if s.id == kernel_id)
    on_disk = spec.source_path.read_text()
    through = {"v8_": V8_BODY, "v9_": "v9_body.cuh"}.get(spec.source[:3], HEADER)
    assert f'#include "{through}"' in on_disk and "cp.async.commit_group" not in on_disk
    compiled = spec.read_source()
    assert compiled.count("namespace cp_async {") == 1 and compiled.count("cp.async.commit_group") == 1
    assert compiled.startswith(on_disk.split("\n", 1)[0]), "the file's opening comment stays first"


def test_only_the_header_defines_the_cp_async_helpers() -> None:
    defining = sorted(p.name for p in SRC_DIR.iterdir() if "cp.async.commit_group" in p.read_text())
    assert defining == [HEADER]


def test_a_header_is_inlined_once_and_nested_headers_resolve(tmp_path: Path) -> None:
    (tmp_path / "inner.cuh").write_text("#pragma once\nint inner;\n")
    (tmp_path / "outer.cuh").write_text('#pragma once\n#include "inner.cuh"\nint outer;\n')
    (tmp_path / "k.cu").write_text('// k\n#include "outer.cuh"\n#include "inner.cuh"\n#include <mma.h>\nint k;\n')
    text = inline_local_includes(tmp_path / "k.cu")
    assert text.count("int inner;") == 1 and "int outer;" in text and "#include <mma.h>" in text
    origins = {line: (name, number) for name, number, line in _origins(text) if line.startswith("int")}
    assert origins == {"int inner;": ("inner.cuh", 2), "int outer;": ("outer.cuh", 3), "int k;": ("k.cu", 5)}


def _longest_common_run(a: str, b: str) -> int:
    """Lines in the longest run of consecutive lines two texts share (stripped; blank lines count)."""
    x, y = [ln.strip() for ln in a.splitlines()], [ln.strip() for ln in b.splitlines()]
    return difflib.SequenceMatcher(None, x, y, autojunk=False).find_longest_match(0, len(x), 0, len(y)).size


def test_v8_async_and_v8_splitk_share_one_body_from_the_header() -> None:
    """v8-splitk was a copy of v8-async's kernel with the K range and the epilogue changed; both now call
    v8_body.cuh's sgemm_body with a policy, so neither file repeats the other (scripts/sass_identity.py showed
    the machine code unchanged)."""
    specs = {s.id: s for s in CATALOG if s.id in ("v8-async", "v8-splitk")}
    files = [specs[i].source_path.read_text() for i in ("v8-async", "v8-splitk")]
    assert _longest_common_run(*files) <= 5
    for spec in specs.values():
        compiled = spec.read_source()
        assert compiled.count(f'#line 1 "{V8_BODY}"') == 1 and compiled.count("void sgemm_body(") == 1
        assert "sgemm_body<" in spec.source_path.read_text()
    body = (SRC_DIR / V8_BODY).read_text()
    assert "for (int t = 0; t < k_tiles; ++t)" in body and "Policy::store4" in body
