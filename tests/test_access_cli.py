"""`python -m profiling access` (profiling/commands/access.py), through its run() (CPU only)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import pytest

from profiling.commands import access
from profiling.errors import InvalidInput

WHY_1024 = Path(__file__).resolve().parent.parent / "results/h100-2026-11-22/ncu_why_1024_raw.csv"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> str:
    parser = argparse.ArgumentParser()
    access.add_arguments(parser)
    assert access.run(parser.parse_args(list(argv))) == 0
    return capsys.readouterr().out


def test_text_shows_the_warp_and_the_whole_launch(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--kernel", "v4", "--block", "1,2", "--warp", "3", "--step", "5")
    assert "block (1, 2): C rows 128..255, columns 256..383; warp 3: threads 96..127" in out
    assert "K step 5 of 128 (k 40..47)" in out
    assert "aTile[a_col + 0][a_row] =" in out and "8 wavefronts (ideal 1, 8-way, 32 lanes/phase)" in out
    assert "2 wavefronts (ideal 2, 1-way, 16 lanes/phase)" in out  # the B reads: lane pairs, half-warps
    assert "16 sectors" in out and "32 sectors" in out
    assert "shared loads" in out and "5.00 / instruction (2.00 above conflict-free)" in out


def test_lanes_print_coordinates_addresses_and_sectors(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--kernel", "v1", "--m", "64", "--n", "64", "--k", "64", "--lanes")
    assert "lane  1: A[1][0] byte 256 sectors [8]" in out  # threadIdx.x walks rows: 256 bytes apart
    out = run(capsys, "--kernel", "v1-coalesced", "--m", "64", "--n", "64", "--k", "64", "--lanes")
    assert "lane  1: B[0][1] byte 4 sectors [0]" in out


def test_json_has_lanes_and_launch_figures(capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(run(capsys, "--kernel", "wmma-async", "--m", "144", "--n", "272", "--k", "48", "--json"))
    assert data["grid"] == [2, 2] and data["steps"] == 2
    ldsm = [i for i in data["instructions"] if i["sass"].startswith("LDSM")]
    assert ldsm and all(i["wavefronts"] == 4 and i["conflict_degree"] == 1 for i in ldsm)
    assert len(ldsm[0]["lanes"]) == 32 and set(ldsm[0]["lanes"][0]) >= {"row", "col", "address", "banks"}
    assert data["launch"]["shared_ld_wavefronts_per_instruction"] == 4.0


def test_compare_puts_measured_beside_predicted(capsys: pytest.CaptureFixture[str]) -> None:
    out = run(capsys, "--kernel", "tiled-32", "--compare", str(WHY_1024))
    assert "shared store wavefronts / instruction" in out and "differs" in out
    data = json.loads(run(capsys, "--kernel", "v3", "--compare", str(WHY_1024), "--json"))
    assert data["compare"] and all(c["within_tolerance"] for c in data["compare"])
    with pytest.raises(InvalidInput, match="no launch of v3 at 512x1024x1024"):
        run(capsys, "--kernel", "v3", "--m", "512", "--compare", str(WHY_1024))


@pytest.mark.parametrize(
    "argv,message",
    [
        (["--kernel", "cublas"], "no indexing model for 'cublas'"),
        (["--kernel", "v99"], "unknown kernel 'v99'"),
        (["--kernel", "v3", "--block", "8,0"], "outside the grid 8x8"),
        (["--kernel", "v3", "--block", "x"], "--block takes X,Y"),
        (["--kernel", "v3", "--warp", "8"], "warp 8 is outside 0..7"),
        (["--kernel", "v3", "--step", "128"], "step 128 is outside 0..127"),
        (["--kernel", "v3", "--m", "0"], "--m must be a whole number >= 1"),
        (["--kernel", "wmma-addmm", "--m", "100"], "multiples of 16"),
    ],
)
def test_bad_input_is_one_line(capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        run(capsys, *argv)


def test_registered_in_the_cli_it_answers_bad_input_in_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from profiling import cli

    monkeypatch.setattr(cli, "COMMANDS", (*cli.COMMANDS, "access"))
    assert cli.main(["access", "--kernel", "v2", "--m", "33", "--n", "40", "--k", "9"]) == 0
    assert "K step 0 of 1 (k 0..8)" in capsys.readouterr().out
    assert cli.main(["access", "--kernel", "v2", "--warp", "99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: warp 99") and err.count("\n") == 1


def test_tile_map_gives_the_matrix_view_of_a_block() -> None:
    from kernels.indexing import model_for
    from profiling.analysis.access import tile_map
    from profiling.shape import Shape

    view = tile_map(model_for("v3"), Shape(200, 300, 50), (1, 2))
    assert view["tile"] == {"row0": 128, "col0": 256, "rows": 128, "cols": 128}
    assert view["a_rows"] == [128, 200] and view["b_cols"] == [256, 300]
    first = view["threads"][0]  # tid 0: threadIdx.x 0 -> rows 128..135, threadIdx.y 0 -> columns 256..263
    assert sorted(set(first["rows"])) == list(range(128, 136)) and sorted(set(first["cols"])) == list(range(256, 264))
    assert sum(len(t["rows"]) for t in view["threads"]) == 72 * 44  # only elements inside C
