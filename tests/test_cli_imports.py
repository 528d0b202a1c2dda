"""Commands that answer at once: `--help`, every `<command> --help` and the GPU-free calculators (`occupancy`,
`access`) run without importing the heavy libraries, which cost a second or more before the first line appears.

Checked the way a person would time it: a fresh interpreter with `python -X importtime`, whose stderr lists
every module imported; the forbidden ones are matched by their top-level package.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiling.cli import COMMANDS

REPO = Path(__file__).resolve().parents[1]
HEAVY = frozenset({"pandas", "numpy", "sqlalchemy", "plotly", "streamlit", "cupy", "pyarrow", "orjson"})


def imported_packages(argv: list[str]) -> tuple[int, str, set[str]]:
    """Exit status, stdout and the top-level packages `python -X importtime -m profiling ARGV` imported."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"} | {"PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "profiling", *argv],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
        timeout=120,
    )
    packages = set()
    for line in done.stderr.splitlines():
        # "import time: self [us] | cumulative | imported package", the name indented by nesting depth
        if line.startswith("import time:") and line.count("|") == 2:
            name = line.rsplit("|", 1)[1].strip()
            if name != "imported package":
                packages.add(name.split(".")[0])
    return done.returncode, done.stdout, packages


def test_the_parser_of_importtime_sees_heavy_imports() -> None:
    """The check itself works: a command that does need pyarrow and numpy is seen importing them."""
    status, _, packages = imported_packages(["report", str(REPO / "tests" / "fixtures" / "ncu" / "raw.csv")])
    assert status == 0
    assert {"pyarrow", "numpy"} <= packages


@pytest.mark.parametrize("page", ["raw.csv", "details.csv", "summary.csv"])
def test_reading_a_report_imports_no_pandas(page: str) -> None:
    """`report FILE [--json]` reads with Arrow and numpy and writes with orjson; importing pandas (which
    pyarrow.array() and to_numpy() of a copy do, to look for its types) would cost half a second of each run."""
    for json_flag in ([], ["--json"]):
        status, out, packages = imported_packages(
            ["report", str(REPO / "tests" / "fixtures" / "ncu" / page), *json_flag]
        )
        assert status == 0 and out
        assert "pandas" not in packages, f"report {page} {' '.join(json_flag)}"
        assert ("orjson" in packages) == bool(json_flag)


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        *([name, "--help"] for name in COMMANDS),
        ["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "64", "--shared-mem", "8192"],
        ["occupancy", "--cc", "8.6", "--threads", "128", "--registers", "255", "--json"],
        ["access", "--kernel", "v3", "--m", "256", "--n", "256", "--k", "256"],
        ["access", "--kernel", "wmma-async", "--m", "272", "--n", "272", "--k", "80", "--lanes", "--json"],
    ],
    ids=lambda argv: " ".join(argv),
)
def test_commands_that_answer_at_once_import_no_heavy_library(argv: list[str]) -> None:
    status, out, packages = imported_packages(argv)
    assert status == 0, out
    assert not packages & HEAVY, f"`gemmlens {' '.join(argv)}` imported {sorted(packages & HEAVY)}"
    if argv == ["--help"]:
        # every command is still listed, in order, but the internal worker (it runs; it is no command for a person)
        assert "{" + ",".join(name for name in COMMANDS if name != "worker") + "}" in out
        assert "worker" not in out
    if argv[0] == "occupancy" and "--cc" in argv and "--json" not in argv:
        assert "occupancy            50.0 %" in out  # 64 registers x 256 threads: 4 blocks, 32 of 64 warps
    if argv[:3] == ["access", "--kernel", "v3"]:
        # the run answers with its numbers, not only without the heavy imports
        assert (
            "shared loads                     32,768 instr.            557,056 wavefronts  17.00 / instruction" in out
        )
