"""Kernel source text as it is compiled: a `.cu` file with the headers of ours it includes inlined.

NVRTC then gets one self-contained text, whatever the working directory, and CuPy's kernel cache (keyed on that
text) sees a change to a header too; nvcc, which compiles the files on disk, finds the headers beside them.
"""

from __future__ import annotations

import re
from pathlib import Path

_LOCAL_INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]+"([^"]+)"[ \t]*$')


def inline_local_includes(path: Path, done: set[Path] | None = None) -> str:
    """The text of `path` with each `#include "name"` of a file beside it replaced by that file's text (once per
    file, recursively), between `#line` markers naming each file, so every line keeps its file and number."""
    done = set() if done is None else done
    out: list[str] = []
    for number, line in enumerate(path.read_text().splitlines(keepends=True), start=1):
        match = _LOCAL_INCLUDE.match(line)
        header = path.parent / match.group(1) if match else None
        if header is None or not header.is_file():
            # An inlined `#pragma once` would warn in the main file; an empty line keeps the numbering.
            out.append("\n" if line.strip() == "#pragma once" else line)
            continue
        if header.resolve() not in done:
            done.add(header.resolve())
            out.append(f'#line 1 "{header.name}"\n')
            out.append(inline_local_includes(header, done).rstrip("\n") + "\n")
        out.append(f'#line {number + 1} "{path.name}"\n')
    return "".join(out)
