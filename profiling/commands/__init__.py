"""The CLI's commands, one module each (HELP, add_arguments, run), and what they share: progress lines, the
numeric option types, and strict JSON output."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from profiling.commands.outputs import (
    check_output_file,
    check_store_writable,
    keep_elsewhere,
    write_output,
)
from profiling.errors import GemmLensError, InvalidInput, error_line
from profiling.runs.values import jsonable

if TYPE_CHECKING:  # the CLI's start-up loads the results module only for the commands that write one
    from profiling.runs.results import ResultsDocument


def print_progress(progress: float | None = None, message: str | None = None, item: object = None) -> None:
    """A use case's progress lines on stderr, so stdout keeps only the result."""
    if message:
        print(f"  {message}", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Numeric options: argparse types that refuse NaN, infinities, zero and negatives with the option named.
# They raise InvalidInput (which argparse lets through), so cli.main prints one line and exits with status 2.
# ---------------------------------------------------------------------------------------------


def _number(flag: str, text: str, what: str, integer: bool) -> float:
    try:
        return int(text) if integer else float(text)
    except ValueError:
        raise InvalidInput(f"{flag} must be {what}, not {text!r}") from None


def seconds(flag: str) -> Callable[[str], float]:
    """A time limit: a finite number of seconds above zero."""
    what = "a positive number of seconds"

    def convert(text: str) -> float:
        value = _number(flag, text, what, integer=False)
        if not (math.isfinite(value) and value > 0):
            raise InvalidInput(f"{flag} must be {what}, got {text}")
        return value

    return convert


def seconds_between(flag: str, low: float, high: float) -> Callable[[str], float]:
    """A duration from `low` to `high` seconds (zero allowed where `low` is 0)."""
    what = f"a number of seconds between {low:g} and {high:g}"

    def convert(text: str) -> float:
        value = _number(flag, text, what, integer=False)
        if not (math.isfinite(value) and low <= value <= high):
            raise InvalidInput(f"{flag} must be {what}, got {text}")
        return value

    return convert


def whole_number(flag: str, minimum: int = 1, maximum: int | None = None) -> Callable[[str], int]:
    """A count or size in whole units from `minimum` (1: a repeat count or block size; 0: bytes, warm-ups) up to
    `maximum`, when there is one."""
    what = f"a whole number >= {minimum}" if maximum is None else f"between {minimum} and {maximum}"

    def convert(text: str) -> int:
        value = int(_number(flag, text, what, integer=True))
        if value < minimum or (maximum is not None and value > maximum):
            raise InvalidInput(f"{flag} must be {what}, got {value}")
        return value

    return convert


def percentage(flag: str) -> Callable[[str], float]:
    """A threshold in percent: finite and >= 0."""
    what = "a percentage >= 0"

    def convert(text: str) -> float:
        value = _number(flag, text, what, integer=False)
        if not (math.isfinite(value) and value >= 0):
            raise InvalidInput(f"{flag} must be {what}, not {text}")
        return value

    return convert


def add_cluster_argument(parser: argparse.ArgumentParser) -> None:
    """`--cluster local-gpus|tcp://HOST:8786` (profiling.cluster): without it the command runs as it always has."""
    # Checked where the cluster is opened (profiling.cluster.local.check_cluster), which is the first thing a cluster
    # run does; no argparse type, since the CLI's typed options are its numeric ones (tests/test_cli_strict.py).
    parser.add_argument(
        "--cluster",
        default=None,
        metavar="local-gpus|tcp://HOST:8786",
        help="fan the work out over Dask: one worker per GPU of this machine (local-gpus) or a running scheduler "
        "(docs/scale-out.md)",
    )


def print_cluster_summary(document: ResultsDocument) -> None:
    """One line on where a cluster run ran: GPU workers, results per GPU, sweep and start-up seconds."""
    cluster = document.cluster
    if cluster:
        per_gpu = ", ".join(f"{name} {n}" for name, n in cluster.get("results_per_gpu", {}).items())
        print(
            f"cluster {cluster.get('scheduler')}: {cluster.get('gpu_workers')} GPU workers ({per_gpu}); sweep "
            f"{cluster.get('sweep_s', 0):.1f} s after {cluster.get('startup_s', 0):.1f} s start-up"
        )


def save_document(document: ResultsDocument, label: str) -> None:
    """`--save LABEL`: the results document as one run of the run store (GEMMLENS_DB_URL or the local SQLite file);
    a cluster run's results keep their host and GPU."""
    from profiling.runs.convert import bench_run
    from profiling.runs.store import open_store

    with open_store() as store:
        run_id = store.save_run(bench_run(document, label=label))
        print(f"  saved as run {run_id} in {store.display_url}", file=sys.stderr)


def check_outputs(json_path: str | None, save_label: str | None) -> None:
    """Before any GPU work: the `--json` file can be written and the run store opens for `--save` (both were
    checked only after the work, and a bad path lost the results)."""
    check_output_file(json_path, "--json")
    if save_label:
        check_store_writable("--save")


def keep_results(document: ResultsDocument, json_path: str | None, save_label: str | None) -> None:
    """After the work: write `--json`, then `--save`. Whatever fails, the results are kept (the --json file, or a
    file in the temporary folder) and one line says so (InvalidInput, exit status 2)."""
    problems = []
    if json_path:
        try:
            write_json(json_path, document.to_dict())
        except InvalidInput as exc:
            problems.append(str(exc))
    if save_label:
        try:
            save_document(document, save_label)
        except GemmLensError as exc:
            kept = json_path if json_path and not problems else keep_elsewhere(json_text(document.to_dict()) + "\n")
            problems.append(f"could not save the run ({error_line(exc)}); the results were kept in {kept}")
    if problems:
        raise InvalidInput("; ".join(problems))


# ---------------------------------------------------------------------------------------------
# JSON output
# ---------------------------------------------------------------------------------------------


def json_text(data: Any, indent: int | None = 1) -> str:
    """Strict JSON (RFC 8259) of `data`: NaN and infinities become null, units and other keys stay, so jq and
    JavaScript's JSON.parse read what `--json` writes."""
    return json.dumps(jsonable(data), indent=indent, allow_nan=False)


def _orjson_plain() -> int:
    """orjson's options for json_bytes: dataclasses, dates and subclasses of str, int, dict and list are not
    written as orjson would, but go to jsonable."""
    import orjson

    return orjson.OPT_PASSTHROUGH_DATACLASS | orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS


def json_bytes_as_is(data: Any) -> bytes | None:
    """json_bytes(data) where orjson takes `data` as it is, without jsonable, else None; `data` may hold pieces
    of JSON text as orjson.Fragment (which jsonable would not keep)."""
    import orjson

    try:
        return orjson.dumps(data, option=_orjson_plain())
    except TypeError:  # orjson.JSONEncodeError: data json_bytes would clean first
        return None


def json_bytes(data: Any) -> bytes:
    """`data` as compact strict JSON in UTF-8, written by orjson (several times faster than json_text, for output
    of hundreds of MB): the same values as json_text (NaN and infinities null, text valid Unicode), without the
    spaces after `,` and `:`, and non-ASCII text as itself rather than `\\u` escapes. Objects orjson does not take
    as they are (dataclasses, dates, numpy scalars) and data it refuses (a lone surrogate, a key that is no string,
    an integer beyond 64 bits) go through jsonable first."""
    import orjson

    try:
        return orjson.dumps(data, default=jsonable, option=_orjson_plain())
    except TypeError:  # orjson.JSONEncodeError
        clean = jsonable(data)
    try:
        return orjson.dumps(clean)
    except TypeError:  # an integer beyond 64 bits, which Python's json writes
        return json.dumps(clean, allow_nan=False).encode()


def print_json(data: Any, indent: int = 1) -> None:
    """`--json` output on stdout (see json_text)."""
    print(json_text(data, indent))


def write_json(path: str | Path, data: Any) -> None:
    """A `--json FILE` document (see json_text); when it cannot be written, the document is kept in the temporary
    folder and one line names both (profiling.commands.outputs.write_output)."""
    write_output(path, json_text(data) + "\n")
