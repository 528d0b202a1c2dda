"""`python -m profiling.app.prebuild`: build every derived table of the bundled data into the cache folder
(profiling.app.precompute), at install or deploy time, so no server's first visitor pays for it."""

from __future__ import annotations

import sys

from profiling.app import details_view, indexing, why
from profiling.app.bundles import indexed_bundles
from profiling.app.precompute import cache_root


def prebuild() -> list[str]:
    """Build (or find) every derived table set of the bundled data; one line per set."""
    found = indexed_bundles()
    built = [f"bundle index ({len(found)} bundles)"]
    built.append(f"indexing measured ({len(indexing.bundled_measured_frame())} rows)")
    built += [
        f"source page {p.name} ({len(why.source_tables(p)['instructions'])} instructions)"
        for p in why.bundled_source_pages()
    ]
    built += [
        f"report {rep.name} ({len(details_view.bundled_ncu_rep(rep).launches)} launches)"
        for b in found
        for rep in b.ncu_reps
    ]
    return built


def main() -> int:
    for line in prebuild():
        print(f"  {line}")
    print(f"derived tables in {cache_root()}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
