"""The captured fixtures themselves: no file is a copy of another, and the README accounts for every one."""

from __future__ import annotations

import hashlib
from pathlib import Path

FIXTURES = Path(__file__).parent / "fixtures"


def _files() -> list[Path]:
    return sorted(p for p in FIXTURES.rglob("*") if p.is_file() and p.name != "README.md")


def test_no_two_fixtures_are_byte_identical() -> None:
    """A copy under another name (auto_units.csv was details.csv) pretends to test a second tool output."""
    by_digest: dict[str, list[str]] = {}
    for path in _files():
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        by_digest.setdefault(digest, []).append(str(path.relative_to(FIXTURES)))
    copies = [names for names in by_digest.values() if len(names) > 1]
    assert copies == [], f"byte-identical fixtures: {copies}"
    assert len(by_digest) >= 20


def test_readme_names_every_fixture() -> None:
    """Each fixture is described in tests/fixtures/README.md, or in the README.md of its own folder (the
    hand-made hostile corpus has its own)."""
    top = (FIXTURES / "README.md").read_text()

    def readme_for(path: Path) -> str:
        own = path.parent / "README.md"
        return own.read_text() if path.parent != FIXTURES and own.is_file() else top

    missing = [str(p.relative_to(FIXTURES)) for p in _files() if f"`{p.name}`" not in readme_for(p)]
    assert missing == [], f"fixtures the README does not describe (name them in backticks): {missing}"


def test_measured_facts_match_their_captures() -> None:
    """docs/measured-facts.md quotes these peaks from the H200 ladder capture; the tests use the same numbers."""
    from profiling.nsight.load import load_report

    launch = load_report(FIXTURES / "ncu" / "raw.csv").launches[1]
    value = {name: metric.value for name, metric in launch.metrics.items()}
    assert value["sm__sass_thread_inst_executed_op_ffma_pred_on.sum.peak_sustained"] == 16896
    assert value["dram__bytes.sum.peak_sustained"] == 1504
    assert round(value["sm__cycles_elapsed.avg.per_second"] / 1e7) == 198  # 1.98 GHz
    assert round(value["dram__cycles_elapsed.avg.per_second"] / 1e6) == 3199  # 3.1995 GHz
    facts = (Path(__file__).parents[1] / "docs" / "measured-facts.md").read_text()
    for quoted in ("16,896 inst/cycle", "1,504 byte/cycle", "3.1995 GHz", "sm__maxwarps_per_active_cycle_pct"):
        assert quoted in facts
    failed = (FIXTURES / "ncu" / "err_failed_to_find_metric.txt").read_text()
    assert "Failed to find metric regex:^sm__maxwarps_per_active_cycle_pct" in failed and "exit=9" in failed
