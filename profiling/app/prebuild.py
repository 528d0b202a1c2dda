"""`python -m profiling.app.prebuild`: build every derived table of the bundled data into the cache folder
(profiling.app.precompute), at install or deploy time, so no server's first visitor pays for it."""

from __future__ import annotations

import sys

from profiling.app import indexing, why
from profiling.app.precompute import cache_root


def prebuild() -> list[str]:
    """Build (or find) every derived table set of the bundled data; one line per set."""
    built = [f"indexing measured ({len(indexing.bundled_measured_frame())} rows)"]
    built += [f"source page {p.name} ({len(why.source_tables(p)['instructions'])} instructions)"
              for p in why.bundled_source_pages()]  # fmt: skip
    return built


def main() -> int:
    for line in prebuild():
        print(f"  {line}")
    print(f"derived tables in {cache_root()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
