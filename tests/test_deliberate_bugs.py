"""scripts/deliberate_bugs.py still targets the code: each bug's text is found exactly once."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location("deliberate_bugs", ROOT / "scripts" / "deliberate_bugs.py")
deliberate_bugs = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(deliberate_bugs)


@pytest.mark.parametrize("bug", deliberate_bugs.BUGS, ids=lambda b: str(b[0]))
def test_each_bug_applies_to_the_current_code(bug) -> None:
    number, what, path, original, broken = bug
    assert (ROOT / path).read_text().count(original) == 1, f"bug {number} ({what}) no longer matches {path}"
    assert broken != original


def test_bug_numbers_are_unique() -> None:
    numbers = [bug[0] for bug in deliberate_bugs.BUGS]
    assert len(numbers) == len(set(numbers)) >= 10


def test_every_bug_has_its_targeted_test_files() -> None:
    assert set(deliberate_bugs.TARGETED) == {bug[0] for bug in deliberate_bugs.BUGS}
    assert len(deliberate_bugs.BUGS) == 24
    for files in deliberate_bugs.TARGETED.values():
        assert files and all((ROOT / f).is_file() for f in files)
