"""The command line on hostile use: a closed stdout (`| head`), numeric options that are not finite and positive,
and `--json` output that strict JSON parsers (jq, JavaScript's JSON.parse) accept."""

from __future__ import annotations

import argparse
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from profiling import cli, commands
from profiling.cli import main

REPO = Path(__file__).resolve().parents[1]
FOREIGN_RAW = REPO / "tests" / "fixtures" / "foreign" / "raw.csv"
NCU_RAW = REPO / "tests" / "fixtures" / "ncu" / "raw.csv"


def _strict_loads(text: str) -> object:
    def refuse(name: str) -> None:
        raise ValueError(f"non-standard JSON constant {name}")

    return json.loads(text, parse_constant=refuse)


# --- a closed stdout ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "--json", str(FOREIGN_RAW)],  # more than a pipe buffer: breaks while printing
        ["report", str(NCU_RAW)],  # small: breaks on the final flush
        ["occupancy", "--cc", "9.0", "--threads", "256", "--registers", "64"],
    ],
)
def test_a_reader_that_goes_away_ends_the_command_quietly(argv: list[str]) -> None:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "profiling", *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=REPO, env=env
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.readline()  # `| head -1`
    proc.stdout.close()
    err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) in (0, 141)  # 0 when it had finished writing before the reader left
    assert err == ""


def test_broken_pipe_inside_main_gives_141(monkeypatch: pytest.MonkeyPatch) -> None:
    def closed_pipe(args: argparse.Namespace) -> int:
        raise BrokenPipeError

    monkeypatch.setattr("profiling.commands.report.run", closed_pipe)
    assert main(["report", "x.csv"]) == 141


# --- numeric options ------------------------------------------------------------------------------------------


def _numeric_options() -> list[tuple[str, str]]:
    """(command, option) for every option of every command that takes a number."""
    out = []
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, command_parser in sub.choices.items():
        for action in command_parser._actions:
            if action.type is None or not action.option_strings:
                continue
            assert action.type not in (int, float), f"{name} {action.option_strings[0]}: use a profiling.commands type"
            out.append((name, action.option_strings[-1]))
    return out


NUMERIC_OPTIONS = _numeric_options()


def test_every_numeric_option_is_found() -> None:
    found = {f"{c} {o}" for c, o in NUMERIC_OPTIONS}
    assert {
        "bench --timeout",
        "bench --repeats",
        "bench --warmup",
        "bench --max-seconds",
        "tune --repeats",
        "tune --timeout",
        "ceilings --timeout",
        "profile --timeout",
        "sanitize --timeout",
        "compare --threshold",
        "compare --fail-if-slower",
        "occupancy --threads",
        "occupancy --registers",
        "occupancy --shared-mem",
        "occupancy --carveout",
    } <= found


@pytest.mark.parametrize("command,option", NUMERIC_OPTIONS)
@pytest.mark.parametrize("value", ["nan", "inf", "-1", "1e999", "x", "", "-0.5"])
def test_numeric_options_refuse_what_is_not_finite_and_positive(
    command: str, option: str, value: str, capsys: pytest.CaptureFixture[str]
) -> None:
    required = {
        "compare": ["a.json", "b.json"],
        "occupancy": ["--cc", "9.0", "--threads", "256", "--registers", "64"],
        "profile": ["--kernels", "v5", "--sizes", "256"],
        "sanitize": ["--kernel", "v5"],
    }.get(command, [])
    assert main([command, *required, f"{option}={value}"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"error: {option} must be ") and err.count("\n") == 1


ZERO_MEANS_SOMETHING = (
    "--warmup",
    "--shared-mem",
    "--carveout",
    "--threshold",
    "--fail-if-slower",
    "--warp",
    "--step",
    "--rest",  # no rest: pairs back to back, the default
)


@pytest.mark.parametrize("command,option", [(c, o) for c, o in NUMERIC_OPTIONS if o not in ZERO_MEANS_SOMETHING])
def test_numeric_options_refuse_zero_where_it_means_nothing(
    command: str, option: str, capsys: pytest.CaptureFixture[str]
) -> None:
    required = {"occupancy": ["--cc", "9.0", "--threads", "256", "--registers", "64"]}.get(command, [])
    assert main([command, *required, f"{option}=0"]) == 2
    assert capsys.readouterr().err.startswith(f"error: {option} must be ")


# --- strict JSON ----------------------------------------------------------------------------------------------


def test_json_text_writes_null_for_non_finite_numbers_and_keeps_the_unit() -> None:
    data = {"metrics": {"a": {"value": math.nan, "unit": "ns"}, "b": {"value": math.inf, "unit": "byte"}}, "c": 1.5}
    back = _strict_loads(commands.json_text(data))
    assert back == {"metrics": {"a": {"value": None, "unit": "ns"}, "b": {"value": None, "unit": "byte"}}, "c": 1.5}


def test_report_json_is_strict_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["report", "--json", str(FOREIGN_RAW)]) == 0
    data = _strict_loads(capsys.readouterr().out)
    # The capture holds NaN for derived_tempMetric4: the parser treats a value that is not finite as missing
    # and says so once (json_text's null for NaN is tested above, for writers that hold NaN themselves).
    assert "derived_tempMetric4" not in data["launches"][0]["metrics"]
    assert any("derived_tempMetric4" in w for w in data["warnings"])


def test_a_json_file_that_cannot_be_written_is_one_line(tmp_path: Path) -> None:
    with pytest.raises(commands.InvalidInput, match="cannot write"):
        commands.write_json(tmp_path / "missing" / "out.json", {"a": 1})


def test_help_lists_the_public_commands_in_one_style() -> None:
    """`--help` does not offer the internal worker (it still runs), and every command's line starts the same way:
    lower case, no closing full stop."""
    text = cli.build_parser().format_help()
    assert "worker" not in text
    public = [c for c in cli.COMMANDS if c != "worker"]
    assert "{" + ",".join(public) + "}" in text
    parser = cli.build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {a.dest: a.help for a in sub._choices_actions}
    assert sorted(helps) == sorted(public)
    for name, line in helps.items():
        assert line[0].islower() and not line.endswith("."), (name, line)
    assert cli.build_parser().parse_args(["worker", "--job", "x.json"]).command == "worker"
