"""sgemm-auto (kernels/auto.py): predictions of split-K configurations, the choice across v8-async, v9-regdb and
v8-splitk with the committed tuning records (results/tuning/), the default without a record, the catalog entry and
what the runner launches for it (CPU)."""

from __future__ import annotations

import json
import math
from pathlib import Path
from types import SimpleNamespace

import pytest

from kernels import auto, tuning
from kernels.catalog import CATALOG, kernel_ids
from kernels.registry import find_kernel, get_kernel
from profiling.analysis.explain import ladder_steps
from profiling.gpu.runner import _spec_and_result, launch_facts
from profiling.nsight.runner import kernel_name_regex
from profiling.runs.records import BenchResult
from profiling.runs.results import load_document
from profiling.shape import Shape

H100 = "NVIDIA H100 80GB HBM3"
RECORDS = Path(__file__).resolve().parents[1] / "results" / "tuning"
BIG_SPLIT, SMALL_SPLIT, _ = (c["id"] for c in tuning.SPLITK_TUNING_CONFIGS)


def _measured(device_file: str) -> list[dict]:
    return json.loads((RECORDS / device_file).read_text())["measured"]


def _best_measured(device_file: str, shape: tuple[int, int, int], base: str | None = None) -> dict:
    here = [e for e in _measured(device_file) if (e["m"], e["n"], e["k"]) == shape and base in (None, e["base"])]
    return max(here, key=lambda e: e["tflops"])


# --- the prediction ----------------------------------------------------------------------------------------------


def test_reduction_fill_charges_every_extra_split() -> None:
    assert tuning.split_reduction_fill(1, 16) == 1.0
    # 128 splits of 4 slices of 16 = 64 K each: 64 / (64 + 4 x 127) = 0.112, the ~1/8 measured at 127x127x8191.
    assert tuning.split_reduction_fill(128, 64) == pytest.approx(64 / 572)
    assert tuning.split_reduction_fill(64, 128) > tuning.split_reduction_fill(128, 64)


def test_split_k_shape_efficiency_counts_splits_as_blocks_and_their_reductions() -> None:
    config = tuning.config_by_id(BIG_SPLIT)
    # 127x127x8191: 64 splits of 8 slices (tests/test_splitk_policy.py) -> 64 blocks of 264 slots, 2 per SM: the
    # partial wave lasts sqrt(ceil(64 / 132) / 2); 127^2 of 128^2 useful; 8191 of 64 x 8 x 16 = 8192 K; reductions
    # 128 / (128 + 4 x 63).
    expected = 64 / (264 * math.sqrt(1 / 2)) * (127 / 128) ** 2 * (8191 / 8192) * (128 / (128 + 4 * 63))
    assert tuning.shape_efficiency(config, 127, 127, 8191, 132) == pytest.approx(expected)
    # One split: v8-async's efficiency exactly (its twin), no reduction charged.
    twin = tuning.twin_config(config)
    assert twin is not None and twin["id"] == tuning.TUNING_CONFIGS[0]["id"]
    assert tuning.shape_efficiency(config, 4096, 4096, 4096, 132) == tuning.shape_efficiency(twin, 4096, 4096, 4096)


def test_an_unmeasured_split_k_configuration_is_predicted_from_its_twin() -> None:
    # The committed record holds split-K's own measurements: leave them out to see the twin at work.
    measured = [e for e in _measured("nvidia-h100-80gb-hbm3.json") if e["base"] != "v8-splitk"]
    config = tuning.config_by_id(SMALL_SPLIT)
    twin = tuning.twin_config(config)
    twin_here = next(e for e in measured if e["config"] == twin["id"] and (e["m"], e["n"], e["k"]) == (127, 127, 8191))
    predicted = tuning.predicted_tflops(measured, config, 127, 127, 8191, 132)
    # 4 tiles of 528 slots become 128 blocks: many times the twin's 0.75 TFLOP/s, never above its best anywhere.
    assert 10 * twin_here["tflops"] < predicted < max(e["tflops"] for e in measured if e["config"] == twin["id"])
    # At 4096^3 one split: the twin's own measurement less the zeroing launch.
    at_4096 = tuning.predicted_tflops(measured, config, 4096, 4096, 4096, 132)
    twin_4096 = next(e for e in measured if e["config"] == twin["id"] and e["m"] == e["k"] == 4096)["tflops"]
    assert 0.97 * twin_4096 < at_4096 < twin_4096
    # The 32x32 configuration has no twin: only its own measurements predict it.
    assert tuning.predicted_tflops(measured, tuning.SPLITK_TUNING_CONFIGS[2], 127, 127, 8191, 132) is None


def test_own_split_k_measurements_win_over_the_twin() -> None:
    measured = [e for e in _measured("nvidia-h100-80gb-hbm3.json") if e["base"] != "v8-splitk"] + [
        {"base": "v8-splitk", "m": 127, "n": 127, "k": 8191, "config": SMALL_SPLIT, "tflops": 3.0}
    ]
    config = tuning.config_by_id(SMALL_SPLIT)
    assert tuning.predicted_tflops(measured, config, 127, 127, 8191, 132) == pytest.approx(3.0)


# --- the choice with the committed records ------------------------------------------------------------------------


@pytest.mark.parametrize("device,file", [(H100, "nvidia-h100-80gb-hbm3.json"), ("NVIDIA H200", "nvidia-h200.json")])
def test_choice_with_the_committed_records(device: str, file: str) -> None:
    def choice(*shape: int) -> auto.AutoChoice:
        c = auto.auto_choice(device, *shape)
        assert c.label == f"{c.config_id} (tuning record {file})" and c.predicted_tflops
        return c

    def base(c: auto.AutoChoice) -> str:
        return tuning.config_by_id(c.config_id)["base"]

    # Large shapes: the configuration the record measured fastest there (a v9 one), whatever kernel.
    for shape in ((4096, 4096, 4096), (8192, 8192, 8192), (4096, 4096, 333)):
        best = _best_measured(file, shape)
        assert best["base"] == "v9-regdb" and choice(*shape).config_id == best["config"], shape
    # One or four tiles for 132 SMs with K = 8191 or 65536: split-K (v8's or v9's body), far above anything unsplit
    # the record measured there.
    for shape in ((127, 127, 8191), (64, 64, 65536)):
        picked = choice(*shape)
        assert (
            base(picked) in tuning.SPLIT_K_BASES
            and tuning.config_split_count(tuning.config_by_id(picked.config_id), *shape) > 16
        ), shape
    unsplit = [
        e
        for e in _measured(file)
        if e["base"] not in (*tuning.SPLIT_K_BASES, tuning.V9_CLUSTERK_BASE)
        and (e["m"], e["n"], e["k"]) == (127, 127, 8191)
    ]
    assert choice(127, 127, 8191).predicted_tflops > 10 * max(e["tflops"] for e in unsplit)
    # 1024^3: not v9's 128x256 / 256x128 tiles unsplit, which give 32 blocks for 132 SMs (the issue's complaint).
    at_1024 = tuning.config_by_id(choice(1024, 1024, 1024).config_id)
    assert (
        at_1024["tile_m"] * at_1024["tile_n"] <= 128 * 128 or tuning.config_split_count(at_1024, 1024, 1024, 1024) > 1
    )
    # A swept shape runs the configuration measured fastest there, even where another one's prediction from other
    # shapes is higher (v8-async 128x128 scaled from K = 4096 to 1024x4096x333: 46.6 TFLOP/s predicted on the H200,
    # 36.1 measured by the grid, against v9-regdb 128x256's 41.9 measured there).
    # (A v9-splitk configuration that launches one split there is never a candidate: predicted_tflops gives None.)
    for shape in ((1024, 4096, 333), (64, 64, 4096), (127, 127, 4096), (2048, 1024, 333)):
        runnable = [
            e
            for e in _measured(file)
            if (e["m"], e["n"], e["k"]) == shape
            and e["base"] in auto.AUTO_BASES
            and tuning.predicted_tflops([e], tuning.config_by_id(e["config"]), *shape, 132) is not None
        ]
        best = max(runnable, key=lambda e: e["tflops"])
        picked = choice(*shape)
        assert picked.config_id == best["config"] and picked.predicted_tflops == pytest.approx(best["tflops"]), shape


def test_h200_1024_cube_runs_the_split_measured_fastest_there_in_rounds() -> None:
    """At 1024³ the H200's record had measured only v8-async and v9-regdb, so sgemm-auto ran v8-async's 64x64 tile:
    72.7 % of cuBLAS in the whole-catalog benchmark of 2026-12-01 (tunerounds_1024/catalog_1024_before.json), where
    v9-splitk read 102.8 %. The shape's candidates swept together in interleaved rounds (tunerounds_1024/) put
    v9-splitk's serial 64x128 split first; sgemm-auto then read 112.5 % in the same call and 112.4 % in the catalog
    benchmark run again (catalog/bench_1024.json, the bundle the app shows)."""
    day = RECORDS.parent / "h200-2026-12-01"
    picked = auto.auto_choice("NVIDIA H200", 1024, 1024, 1024)
    assert picked.config_id == "v9-splitk-64x128x16-w32x64-t8x8-s4-d8-ser"
    assert picked.predicted_tflops == pytest.approx(37.53, abs=0.01)

    def at_1024(*parts: str) -> dict[str, BenchResult]:
        path = day.joinpath(*parts)
        return {r.kernel: r for r in load_document(path).results if r.shape == Shape(1024, 1024, 1024)}

    swept = at_1024("tunerounds_1024", "tune.json")
    assert round(swept[picked.config_id].pct_cublas, 1) == 114.9
    assert round(swept["v8-async-64x64x16-w32x32-t8x4-s3"].pct_cublas, 1) == 74.9
    for parts, config, pct in (
        (("tunerounds_1024", "catalog_1024_before.json"), "v8-async-64x64x16-w32x32-t8x4-s3", 72.7),
        (("tunerounds_1024", "sgemm_auto_after.json"), picked.config_id, 112.5),
        (("catalog", "bench_1024.json"), picked.config_id, 112.4),
    ):
        ran = at_1024(*parts)["sgemm-auto"]
        assert ran.config == f"{config} (tuning record nvidia-h200.json)" and round(ran.pct_cublas, 1) == pct, parts


def test_h200_k1024_shapes_run_the_tile_measured_fastest_there_in_rounds() -> None:
    """Beyond issue 31's grid, at 4096x4096x1024 sgemm-auto ran v9-regdb's 8-deep 256x128 tile (predicted from the
    K = 333 shapes, where it is the fastest): 85.0 % of cuBLAS (results/h200-2026-12-01/beyond/). Swept there in
    interleaved rounds (tunerounds_k1024/), the 128x256x16 tile in FFMA order 3 read 96.6 %, and sgemm-auto 97.0 %
    afterwards. At 2048x2048x1024 the rounds put v9-splitk's stream-K 256x128 tile 0.3 points ahead of that tile (96.0
    against 95.7 %); one launch after another it read 92.2 % against v9-regdb's 96.4 %."""
    day = RECORDS.parent / "h200-2026-12-01"

    def pct(path: Path, kernel: str, shape: Shape) -> tuple[str | None, float]:
        row = next(r for r in load_document(path).results if r.kernel == kernel and r.shape == shape)
        return row.config, round(row.pct_cublas, 1)

    big, small = Shape(4096, 4096, 1024), Shape(2048, 2048, 1024)
    assert auto.auto_choice("NVIDIA H200", 4096, 4096, 1024).config_id == "v9-regdb-128x256x16-w64x64-t8x16-s3-o3"
    assert auto.auto_choice("NVIDIA H200", 2048, 2048, 1024).config_id == "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk"
    record = "(tuning record nvidia-h200.json)"
    assert pct(day / "beyond" / "check.json", "sgemm-auto", big) == (
        f"v9-regdb-256x128x8-w64x64-t16x8-s4 {record}",
        85.0,
    )
    swept = day / "tunerounds_k1024" / "tune.json"
    assert pct(swept, "v9-regdb-128x256x16-w64x64-t8x16-s3-o3", big)[1] == 96.6
    assert pct(swept, "v9-regdb-256x128x8-w64x64-t16x8-s4", big)[1] == 86.0
    assert pct(swept, "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk", small)[1] == 96.0
    assert pct(swept, "v9-regdb-128x256x16-w64x64-t8x16-s3-o3", small)[1] == 95.7
    after = day / "tunerounds_k1024" / "sgemm_auto_after.json"
    assert pct(after, "sgemm-auto", big) == (f"v9-regdb-128x256x16-w64x64-t8x16-s3-o3 {record}", 97.0)
    assert pct(after, "sgemm-auto", small)[1] == 92.2 and pct(after, "v9-regdb", small)[1] == 96.4


def test_h200_record_leaves_no_swept_shape_to_a_prediction_far_above_its_measurements() -> None:
    """At a swept shape sgemm-auto runs only what the record measured there, so a configuration predicted far above
    those measurements and never measured there is a choice nobody made: at 1024³ v9-splitk's 128x128 tile was
    predicted at 43.2 TFLOP/s against the 24.8 measured, and sgemm-auto read 72.7 % of cuBLAS until the shape was
    swept (tunerounds_1024/). Every swept shape of the H200's record is now within 4 % of its predictions, but
    64x64x65536, where the measured choice (v8-splitk) read 125.8-127.0 % of cuBLAS (results/h200-2026-11-24/).
    2048³'s gap of 1.2 % (the 4-stage tuned tile, never measured there) closed when it was swept there in rounds
    (results/h200-2026-12-01/nvrtcstamp/: 47.21 TFLOP/s, under the 47.45 of the stream-K tile chosen)."""
    measured = auto.record_measurements("NVIDIA H200")[1]
    shapes = sorted({(e["m"], e["n"], e["k"]) for e in measured})
    gaps = {shape: round(gap, 3) for shape, gap in auto.prediction_gaps("NVIDIA H200", shapes).items()}
    assert gaps == {
        (64, 64, 65536): 0.247,
        (2048, 2048, 333): 0.015,
        (4096, 64, 333): 0.04,
        (4096, 1024, 333): 0.022,
    }


def test_outbid_sweeps_name_what_to_sweep_at_every_swept_shape_with_a_gap() -> None:
    """gpu_check.sh's outbid stage sweeps what scripts/grid_report.py --outbid lists: every shape a record swept,
    in the grid or not, where configurations never measured there are predicted above its measurements, with the
    8 predicted highest and sgemm-auto's choice there last. On the H100's record that takes in 1024³, where 7
    v9-splitk configurations are predicted above the v9-splitk 128x256 tile it measured (the gap the H200's record
    had until 2026-12-01); on the H200's, the four shapes of prediction_gaps."""
    h100 = dict(auto.outbid_sweeps(H100))
    assert len(h100) == 19 and (1024, 1024, 1024) in h100
    assert h100[(1024, 1024, 1024)][0] == "v9-splitk-128x128x16-w64x32-t8x8-s3" and len(h100[(1024, 1024, 1024)]) == 8
    assert h100[(1024, 1024, 1024)][-1] == auto.auto_choice(H100, 1024, 1024, 1024).config_id
    assert {base for ids in h100.values() for base in {tuning.config_by_id(i)["base"] for i in ids}} <= set(
        auto.AUTO_BASES
    )
    h200 = auto.outbid_sweeps("NVIDIA H200")
    shapes = sorted({(e["m"], e["n"], e["k"]) for e in auto.record_measurements("NVIDIA H200")[1]})
    assert [shape for shape, _ in h200] == list(auto.prediction_gaps("NVIDIA H200", shapes))
    assert dict(h200)[(2048, 2048, 333)] == [
        "v8-async-128x128x8-w64x32-t8x8-s4",
        "v8-async-128x128x8-w64x32-t8x8-s3",
        "v9-regdb-256x128x8-w64x64-t16x8-s4",
    ]
    assert auto.outbid_sweeps("NVIDIA A100-SXM4-80GB") == []


def test_the_shapes_where_only_a_prediction_stands() -> None:
    """The H100's record never measured v8-async or v8-splitk at 17 small grid shapes where one of their
    configurations is predicted above everything measured there (gpu_check.sh's sweeppred stage sweeps them); the
    H200's sweep of 2026-11-28 measured them, leaving one shape. Shapes the record never swept are not listed."""
    small = [(64, 64, 333), (127, 127, 4096), (1024, 64, 333), (4096, 64, 333), (4096, 4096, 4096), (100, 100, 100)]
    assert auto.predicted_only_shapes(H100, small) == [(64, 64, 333), (127, 127, 4096), (1024, 64, 333)]
    assert auto.predicted_only_shapes("NVIDIA H200", small) == [(4096, 64, 333)]
    assert auto.predicted_only_shapes("NVIDIA A100-SXM4-80GB", small) == []


def test_close_calls_list_the_configurations_measured_within_the_margin_of_the_best(monkeypatch) -> None:
    """The H200's record at 127x127x8191 after its close calls were timed together in 30 interleaved rounds
    (results/h200-2026-11-30/closecalls_rounds/; the record as session 30's first call left it, closecalls_recheck/,
    which measured other shapes again): the 64x64 padded-C split at 12.26 TFLOP/s, then 12.19, 12.04 and the
    zero-first split at 12.03 (1.9 % under it) are inside CLOSE_CALL_MARGIN; v8-splitk's 64x64 split at 11.52 (6.0 %
    under) is not. At 333x127x4096 the zero-first split leads the rest by more than that; a shape the record never
    swept is left out."""
    monkeypatch.setattr(tuning, "TUNED_DIR", RECORDS.parent / "h200-2026-11-30" / "closecalls_recheck")
    assert auto.CLOSE_CALL_MARGIN == 0.03
    shapes = [(127, 127, 8191), (333, 127, 4096), (100, 100, 100)]
    close = [
        "v9-splitk-64x64x16-w32x64-t8x8-s3-d8-padc",
        "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-padc",
        "v9-splitk-128x64x8-w64x32-t8x8-s5-padc",
        "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf",
    ]
    assert auto.close_calls("NVIDIA H200", shapes) == [((127, 127, 8191), close)]
    # At 4096x64x333 a configuration the record never measured there is predicted above all it did (the one
    # predicted-only shape above): only the measured ones are a close call.
    assert auto.close_calls("NVIDIA H200", [(4096, 64, 333)])[0][1] == [
        "v9-splitk-64x128x16-w32x64-t8x8-s4-fill-ser",
        "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf",
        "v9-splitk-64x128x16-w32x64-t8x8-s3-d8",
        "v9-splitk-64x64x16-w32x64-t8x8-s3-d8-ser",
        "v9-splitk-64x128x16-w32x64-t8x8-s4-d8-ser",
    ]
    wider = auto.close_calls("NVIDIA H200", shapes[:1], margin=0.062)  # 11.52 is 6.04 % under, 11.49 6.28 %
    assert wider[0][1] == [*close, "v8-splitk-64x64x16-w32x32-t8x4-s3"]
    assert auto.close_calls("NVIDIA A100-SXM4-80GB", shapes) == []


def test_default_without_a_record(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    gpu = "NVIDIA A100-SXM4-80GB"

    def default(*shape: int) -> str:
        c = auto.auto_choice(gpu, *shape, sm_count=132)
        assert c.label == f"{c.config_id} (default, no tuning record for {gpu})" and c.predicted_tflops is None
        return c.config_id

    v9, v8_small, split = auto.DEFAULT_LARGE, auto.DEFAULT_SMALL, auto.DEFAULT_SPLIT
    assert get_kernel(v9).entry == get_kernel("v9-regdb").entry == get_kernel("sgemm-auto").entry
    assert v8_small.startswith("v8-async-64x64") and split.startswith("v8-splitk-64x64")
    # v9 128x256 tiles: 4096^2 -> 32 x 16 = 512 >= 132 / 2; 4096x4096x333 the same.
    assert default(4096, 4096, 4096) == default(4096, 4096, 333) == default(2048, 2048, 2048) == v9
    # 1024^2 -> 8 x 4 = 32 v9 tiles (x2 < 132) but 16 x 16 = 256 64x64 tiles; 333x4096: 3 x 16 = 48, 6 x 64 = 384.
    assert default(1024, 1024, 1024) == default(333, 4096, 4096) == v8_small
    # 127x127: 2 x 2 = 4 tiles of 64x64 < 132, K = 8191 splits 32 ways; 17^3 has 2 slices: no split, v8.
    assert default(127, 127, 8191) == default(64, 64, 65536) == split
    assert default(17, 17, 17) == default(1, 1, 1) == v8_small
    # A record that measured none of the three kernels says so.
    tuning.tuned_record_path(gpu).write_text(json.dumps({"device": gpu, "best": [], "measured": []}))
    c = auto.auto_choice(gpu, 127, 127, 8191, sm_count=132)
    assert c.config_id == split and "tuning record nvidia-a100-sxm4-80gb.json measured none of" in c.label


# --- the catalog entry and the runner --------------------------------------------------------------------------------


def test_catalog_entry_is_listed_but_not_a_ladder_rung() -> None:
    spec = get_kernel("sgemm-auto")
    assert "sgemm-auto" in kernel_ids() and spec.group == "beyond" and spec.operation == "sgemm"
    assert spec.previous is None and all("sgemm-auto" not in step for step in ladder_steps())
    assert [s.id for s in CATALOG if s.chooses_at_launch] == ["sgemm-auto"]
    assert spec.title.startswith("tuned SGEMM")
    # It borrows v9-regdb's entry, but a profiled sgemm_regdb is v9-regdb, and ncu filters sgemm-auto by NVTX only.
    assert find_kernel("sgemm_regdb").id == "v9-regdb" and find_kernel("sgemm-auto 1024x1024x1024").id == "sgemm-auto"
    assert kernel_name_regex(["sgemm-auto"]) is None


def _session(name: str) -> SimpleNamespace:
    return SimpleNamespace(device={"name": name, "cc": "9.0", "sm_count": 132})


def test_runner_launches_the_choice_under_the_auto_id() -> None:
    shape = Shape(127, 127, 8191)
    spec, result = _spec_and_result(_session(H100), "sgemm-auto", shape)
    choice = auto.auto_choice(H100, 127, 127, 8191, 132)
    assert spec.id == result.kernel == "sgemm-auto" and spec.split_k and result.status == "ok"
    # N = 127: the configuration's N % 4 != 0 twin where it has one.
    assert spec.entry == (get_kernel(choice.config_id).narrow_entry or get_kernel(choice.config_id).entry)
    assert result.config == choice.label and result.config.endswith("(tuning record nvidia-h100-80gb-hbm3.json)")
    assert launch_facts(spec, shape, 132)["split_k"] == spec.split_count(127, 127, 8191, 132) > 1
    big = _spec_and_result(_session(H100), "sgemm-auto", Shape(4096, 4096, 4096))[0]
    assert not big.split_k and big.entry.startswith(("sgemm_regdb<", "sgemm_regdb_ordered<"))


def test_runner_default_and_the_other_entries_unchanged(tmp_path, monkeypatch) -> None:
    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    spec, result = _spec_and_result(_session("NVIDIA B200"), "sgemm-auto", Shape(4096, 4096, 4096))
    assert result.config == f"{auto.DEFAULT_LARGE} (default, no tuning record for NVIDIA B200)"
    assert spec.entry == get_kernel("v9-regdb").entry
    # v8-splitk, v9-regdb and v8-async still run their own (or their own tuned) configurations; at N = 127 v9-regdb's
    # is its narrow twin, and the result names it.
    for kernel_id in ("v8-splitk", "v9-regdb", "v8-async"):
        spec, result = _spec_and_result(_session("NVIDIA B200"), kernel_id, Shape(127, 127, 8191))
        assert spec.entry == get_kernel(kernel_id).launched_at(127).entry and result.config == spec.entry
    assert result.config == "sgemm_async<128,128,16,64,32,8,8,3,256>"
    spec, result = _spec_and_result(_session("NVIDIA B200"), "v9-regdb", Shape(127, 127, 8191))
    assert result.config == "sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>"


def test_a_choice_measured_with_another_nvrtc_says_so(tmp_path, monkeypatch) -> None:
    """NVRTC 13.2 built v9-regdb's tuned tile 5 points slower than 13.0 on an H200 (results/h200-2026-12-01/nvrtc/):
    a run that builds with another NVRTC than the sweep's is told, in the result's `config`, for sgemm-auto and for
    a tuned kernel; the same NVRTC, or a record that does not say, adds nothing."""
    from profiling import usecases

    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    gpu, tile, other = "GPU X", tuning.V9_TUNING_CONFIGS[0]["id"], tuning.V9_TUNING_CONFIGS[1]["id"]

    def result(kernel: str, m: int, tflops: float) -> dict:
        return {"kernel": kernel, "m": m, "n": m, "k": m, "status": "ok", "tflops": tflops, "pct_cublas": 90.0}

    usecases.write_tuning_record(gpu, "t1", [result(tile, 4096, 49.6), result(other, 4096, 47.0)], "13.0")
    usecases.write_tuning_record(gpu, "t2", [result(tile, 2048, 44.0)], "12.9")
    note = "measured with NVRTC 13.0, this run builds with 13.2: a compiler change can reorder the configurations"
    choice = auto.auto_choice(gpu, 4096, 4096, 4096, 132, "13.2")
    assert choice.config_id == tile and choice.nvrtc_note is not None and choice.nvrtc_note.startswith(note)
    assert choice.label == f"{tile} (tuning record gpu-x.json; {choice.nvrtc_note})"
    assert auto.auto_choice(gpu, 4096, 4096, 4096, 132, "13.0").label == f"{tile} (tuning record gpu-x.json)"
    assert auto.auto_choice(gpu, 4096, 4096, 4096, 132).nvrtc_note is None
    # At 2048^3 the tile was measured by 12.9 alone; at a shape never swept, every measurement of it counts.
    assert auto.auto_choice(gpu, 2048, 2048, 2048, 132, "13.0").nvrtc_note.startswith("measured with NVRTC 12.9,")
    assert tuning.recorded_nvrtc(_measured_in(tmp_path), tile, 3072, 3072, 3072) == ["12.9", "13.0"]
    assert auto.auto_choice(gpu, 3072, 3072, 3072, 132, "12.9").nvrtc_note is None
    # A sweep whose NVRTC is unknown (a cluster's other GPU type, a record before 2026-12-01): nothing is made up.
    usecases.write_tuning_record(gpu, "t3", [result(tile, 1024, 20.0)])
    assert "nvrtc" not in next(e for e in _measured_in(tmp_path) if e["m"] == 1024)
    assert auto.auto_choice(gpu, 1024, 1024, 1024, 132, "13.2").nvrtc_note is None

    session = SimpleNamespace(device={"name": gpu, "cc": "9.0", "sm_count": 132, "nvrtc": "13.2"})
    assert _spec_and_result(session, "sgemm-auto", Shape(4096, 4096, 4096))[1].config == choice.label
    tuned = _spec_and_result(session, "v9-regdb", Shape(4096, 4096, 4096))[1].config
    assert tuned == f"{tile} ({choice.nvrtc_note})" and tuned.split(" ")[0] == tile
    session.device["nvrtc"] = "13.0"
    assert _spec_and_result(session, "v9-regdb", Shape(4096, 4096, 4096))[1].config == tile


def _measured_in(folder: Path) -> list[dict]:
    return json.loads((folder / "gpu-x.json").read_text())["measured"]


def test_a_run_built_by_another_nvrtc_is_told_under_its_table(tmp_path, monkeypatch, capsys) -> None:
    """The note sits in `config`, which the terminal table does not show: `bench` prints it once under its table
    with the results it concerns (results.compiler_notes), and results without one add nothing."""
    from profiling import usecases
    from profiling.cli import main
    from profiling.runs.results import ResultsDocument, compiler_notes

    monkeypatch.setattr(tuning, "TUNED_DIR", tmp_path)
    gpu, tile = "GPU X", tuning.V9_TUNING_CONFIGS[0]["id"]
    result = {"kernel": tile, "m": 4096, "n": 4096, "k": 4096, "status": "ok", "tflops": 49.6, "pct_cublas": 96.0}
    usecases.write_tuning_record(gpu, "t1", [result], "13.0")
    session = SimpleNamespace(device={"name": gpu, "cc": "9.0", "sm_count": 132, "nvrtc": "13.2"})
    ran = [_spec_and_result(session, kid, Shape(4096, 4096, 4096))[1] for kid in ("cublas", "sgemm-auto", "v9-regdb")]
    document = ResultsDocument(results=ran, created_utc="t")
    note = (
        "measured with NVRTC 13.0, this run builds with 13.2: a compiler change can reorder the configurations, "
        "so sweep them again with tune under this NVRTC"
    )
    assert compiler_notes(document) == {
        note: [f"sgemm-auto 4096x4096x4096 ran {tile}", f"v9-regdb 4096x4096x4096 ran {tile}"]
    }
    assert tuning.nvrtc_note_in(ran[1].config) == tuning.nvrtc_note_in(ran[2].config) == note
    assert tuning.nvrtc_note_in(ran[0].config) is None and tuning.nvrtc_note_in(None) is None

    monkeypatch.setattr(usecases, "run_benchmark", lambda plan, progress: document)
    assert main(["bench", "--kernels", "sgemm-auto,v9-regdb", "--sizes", "4096"]) == 0
    assert capsys.readouterr().out.splitlines()[-3:] == [
        f"note: the tuning record's choices below were {note}",
        f"  sgemm-auto 4096x4096x4096 ran {tile}",
        f"  v9-regdb 4096x4096x4096 ran {tile}",
    ]
    session.device["nvrtc"] = "13.0"
    same = [_spec_and_result(session, kid, Shape(4096, 4096, 4096))[1] for kid in ("sgemm-auto", "v9-regdb")]
    assert compiler_notes(ResultsDocument(results=same)) == {}
