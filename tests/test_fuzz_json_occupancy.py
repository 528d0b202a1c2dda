"""Property-based tests (Hypothesis) of what reads user JSON and numbers: the Review page's runs import, `compare`
reading results files, and the occupancy calculator. The property: a result or a GemmLensError (InvalidInput),
never any other exception; and whatever the import accepts, a store saves and the export writes again.

Inputs are arbitrary bytes and JSON, and structured mutations of real documents: the bundled benchmark results
(results/h200-2026-11-22), a runs export of them, and `report --json` of a real ncu capture (cut, duplicated and
shuffled results, values replaced with extremes, NaN, huge numbers, control characters and lone surrogates, deep
nesting, other encodings).

The budget is CI-friendly (GEMMLENS_FUZZ_EXAMPLES examples per test, default 40); for a longer run:
`GEMMLENS_FUZZ_EXAMPLES=2000 pytest tests/test_fuzz_json_occupancy.py --hypothesis-show-statistics`.
"""

from __future__ import annotations

import contextlib
import functools
import io
import json
import os
import tempfile
from pathlib import Path
from typing import Any

import pytest

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import HealthCheck, given, settings  # noqa: E402 - after the skip for environments without it
from hypothesis import strategies as st  # noqa: E402

from profiling import usecases  # noqa: E402
from profiling.analysis.occupancy import supported_ccs, theoretical_occupancy  # noqa: E402
from profiling.cli import main  # noqa: E402
from profiling.errors import GemmLensError  # noqa: E402
from profiling.runs.convert import bench_run, read_run_file  # noqa: E402
from profiling.runs.export import export_runs_json, read_runs_json  # noqa: E402
from profiling.runs.store import RunStore  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
BUNDLE = ROOT / "results" / "h200-2026-11-22"
EXAMPLES = int(os.environ.get("GEMMLENS_FUZZ_EXAMPLES", "40"))
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # two shared cores: timing varies
    database=None,  # no .hypothesis folder in the checkout
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)


# --- real documents ---------------------------------------------------------------------------------------------


@functools.cache
def real_documents() -> dict[str, str]:
    """JSON text of real documents: a bench results file, a runs export of it, and `report --json` of a capture."""
    bench = json.loads((BUNDLE / "bench_1024-4096.json").read_text())
    bench["results"] = bench["results"][:12]  # keeps each example fast; every kind of row is among them
    report = usecases.load_report(ROOT / "tests" / "fixtures" / "ncu" / "raw.csv").to_dict()
    from profiling.commands import json_text  # the `report --json` writer

    return {
        "bench": json.dumps(bench),
        "export": export_runs_json([bench_run(bench, label="h200 1024-4096")]),
        "report": json_text(report),
    }


@functools.cache
def scratch() -> Path:
    """One folder for the whole module (Hypothesis runs many examples per test function)."""
    return Path(tempfile.mkdtemp(prefix="gemmlens-fuzz-"))


@functools.cache
def store() -> RunStore:
    return RunStore(f"sqlite:///{scratch() / 'runs.sqlite'}")


# --- strategies -------------------------------------------------------------------------------------------------

HOSTILE_TEXT = [
    "",
    " ",
    "=cmd|' /C calc'!A0",
    "@SUM(A1)",
    "\ud800",
    "a\udfffb",
    "\x00",
    "\t\r\n",
    "NaN",
    "1e400",
    "-1",
    "0001-01-01T00:00:00+05:00",
    "9999-12-31T23:59:59-01:00",
    "2026-02-30",
    "<b>x</b>",
    "\u202e",
    "k" * 10_000,
]
HOSTILE_NUMBERS = [
    2**31 - 1,
    2**31,
    -(2**31) - 1,
    2**63,
    10**30,
    10**400,
    -1,
    0,
    1e300,
    -1e300,
    5e-324,
    1e30,
    float("nan"),
    float("inf"),
    float("-inf"),
    0.5,
    -0.0,
    True,
    False,
]


def nested(depth: int) -> Any:
    value: Any = 1
    for _ in range(depth):
        value = [value]
    return value


extremes = st.one_of(
    st.none(),
    st.sampled_from(HOSTILE_NUMBERS),
    st.sampled_from(HOSTILE_TEXT),
    st.integers(min_value=-(10**40), max_value=10**40),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.lists(st.integers(), max_size=3),
    st.dictionaries(st.text(max_size=6), st.integers() | st.text(max_size=4) | st.none(), max_size=3),
    st.integers(min_value=50, max_value=600).map(nested),  # deeper than the import allows; json.dumps still writes it
)

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4),
    max_leaves=25,
)


def _paths(doc: Any) -> list[tuple[Any, ...]]:
    """Every place in a JSON document (iteratively: documents nest)."""
    out: list[tuple[Any, ...]] = [()]
    stack: list[tuple[Any, tuple[Any, ...]]] = [(doc, ())]
    while stack:
        value, path = stack.pop()
        items = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
        for key, child in items:
            out.append((*path, key))
            stack.append((child, (*path, key)))
    return out


def _get(doc: Any, path: tuple[Any, ...]) -> Any:
    for key in path:
        doc = doc[key]
    return doc


@st.composite
def mutated(draw: st.DrawFn, name: str) -> str:
    """A real document with 1 to 4 structured mutations, as JSON text (sometimes cut short)."""
    doc = json.loads(real_documents()[name])
    for _ in range(draw(st.integers(1, 4))):
        path = draw(st.sampled_from(_paths(doc)))
        if not path:
            doc = draw(extremes) if draw(st.integers(0, 9)) == 0 else doc
            continue
        parent, key = _get(doc, path[:-1]), path[-1]
        action = draw(st.sampled_from(["replace", "replace", "replace", "delete", "duplicate", "shuffle", "cut"]))
        target = parent[key]
        if action == "replace":
            parent[key] = draw(extremes)
        elif action == "delete":
            del parent[key]
        elif action == "duplicate" and isinstance(target, list) and target:
            target.extend(json.loads(json.dumps(target[: draw(st.integers(1, len(target)))])))
        elif action == "shuffle" and isinstance(target, list):
            parent[key] = draw(st.permutations(target))
        elif action == "cut" and isinstance(target, list):
            del target[draw(st.integers(0, len(target))) :]
    text = json.dumps(doc)  # NaN and Infinity as Python writes them; lone surrogates as \ud800 escapes
    if draw(st.integers(0, 9)) == 0:
        text = text[: draw(st.integers(0, len(text)))]
    return text


def encoded(text: str, encoding: str) -> bytes:
    return text.encode(encoding, "surrogatepass" if encoding.startswith("utf") else "replace")


encodings = st.sampled_from(["utf-8", "utf-8", "utf-8-sig", "utf-16", "utf-32", "latin-1", "cp1252"])


# --- the runs import (Review page) ----------------------------------------------------------------------------


def import_then_save_and_export(data: bytes) -> None:
    try:
        runs = read_runs_json(data, "fuzz.json")
    except GemmLensError:
        return
    try:
        store().import_runs(runs)
    except GemmLensError:
        pass
    export_runs_json(runs)  # what the import accepted, the export writes (strict JSON)


@FUZZ
@given(st.binary(max_size=2000))
def test_import_of_arbitrary_bytes(data: bytes) -> None:
    import_then_save_and_export(data)


@FUZZ
@given(json_values)
def test_import_of_arbitrary_json(value: Any) -> None:
    import_then_save_and_export(json.dumps(value).encode())
    import_then_save_and_export(json.dumps({"schema": "gemmlens.runs.v1", "runs": [value]}).encode())


@FUZZ
@given(st.sampled_from(["export", "bench"]).flatmap(mutated), encodings)
def test_import_of_mutated_real_documents(text: str, encoding: str) -> None:
    import_then_save_and_export(encoded(text, encoding))


# --- compare --------------------------------------------------------------------------------------------------


def compare_files(text_a: bytes, text_b: bytes | None = None) -> int:
    a = scratch() / "a.json"
    a.write_bytes(text_a)
    b = scratch() / "b.json"
    b.write_bytes(text_b if text_b is not None else text_a)
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["compare", str(a), str(b), "--fail-if-slower", "5"])
    assert status in (0, 1, 2), status
    if status == 2:
        assert err.getvalue().startswith("error: ") and err.getvalue().count("\n") == 1, err.getvalue()
    return status


@FUZZ
@given(st.sampled_from(["export", "bench", "report"]).flatmap(mutated), encodings)
def test_compare_of_a_mutated_real_document_with_itself(text: str, encoding: str) -> None:
    compare_files(encoded(text, encoding))


@FUZZ
@given(st.sampled_from(["export", "bench", "report"]).flatmap(mutated))
def test_compare_of_a_mutated_candidate_with_the_real_baseline(text: str) -> None:
    compare_files(real_documents()["bench"].encode(), text.encode("utf-8", "surrogatepass"))


@FUZZ
@given(st.binary(max_size=2000) | json_values.map(lambda v: json.dumps(v).encode()))
def test_compare_of_arbitrary_files(data: bytes) -> None:
    compare_files(data)


@FUZZ
@given(st.sampled_from(["export", "bench", "report"]).flatmap(mutated))
def test_a_results_file_reads_as_a_run_or_one_line(text: str) -> None:
    path = scratch() / "one.json"
    path.write_text(text, encoding="utf-8", errors="surrogatepass")
    try:
        run = read_run_file(path)
    except GemmLensError as exc:
        assert "\n" not in str(exc)
        return
    export_runs_json([run])


# --- the occupancy calculator ---------------------------------------------------------------------------------

whole_or_odd = st.one_of(
    st.integers(min_value=-(2**70), max_value=2**70),
    st.integers(min_value=0, max_value=2048),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 32, 255, 256, 1024, 1025, 2**31, 2**63, 10**30, 256.0, 256.5, True, None, "256", "x"]),
)


@FUZZ
@given(
    cc=st.sampled_from(supported_ccs()) | st.sampled_from(["", "9", "9.00", " 8.0 ", "nan", "1e400", "x"]) | st.text(),
    threads=whole_or_odd,
    registers=whole_or_odd,
    shared_mem=whole_or_odd,
    carveout=st.none() | whole_or_odd,
)
def test_occupancy_is_a_result_or_invalid_input(
    cc: Any, threads: Any, registers: Any, shared_mem: Any, carveout: Any
) -> None:
    try:
        result = theoretical_occupancy(cc, threads, registers, shared_mem, carveout)
    except GemmLensError as exc:
        assert "\n" not in str(exc)
        return
    assert 0 < result.active_warps_per_sm <= result.max_warps_per_sm
    assert 0 < result.occupancy_pct <= 100
    json.dumps(result.to_dict(), allow_nan=False)


@FUZZ
@given(
    st.lists(
        st.sampled_from(["nan", "inf", "-1", "0", "1e999", "256", "99999999999999999999", "x", "", "8.0"]),
        min_size=4,
        max_size=4,
    )
)
def test_the_occupancy_command_on_odd_arguments(values: list[str]) -> None:
    cc, threads, registers, smem = values
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        argv = ["occupancy", f"--cc={cc}", f"--threads={threads}", f"--registers={registers}", f"--shared-mem={smem}"]
        status = main(argv)
    assert status in (0, 2) and (status == 0 or err.getvalue().count("\n") == 1)
