"""v9-splitk (split-K on v9-regdb's register-double-buffered body): its catalog entry and tuning configurations,
the splits it launches, that v9-regdb's own kernels keep their source and names, and how sgemm-auto weighs it
(only where a tuning record measured it, never where it would not split) (CPU; compile checks for spills run with
the other beyond-the-ladder kernels in test_kernel_sources_beyond.py)."""

from __future__ import annotations

import json

import pytest

from kernels import auto, tuning
from kernels.catalog import CATALOG
from kernels.registry import find_kernel, get_kernel
from kernels.spec import SERIAL_MAX_TILES
from profiling.gpu.compile import compile_cache_key
from profiling.gpu.runner import launch_facts
from profiling.nsight.runner import kernel_name_regex
from profiling.shape import Shape

CONFIGS = tuning.V9_SPLITK_TUNING_CONFIGS
DEFAULT = get_kernel("v9-splitk")
# The shapes of the grid this work aims at: few tiles for 132 SMs, deep K.
GRID_SHAPES = [
    (127, 127, 8191),
    (64, 64, 8191),
    (333, 333, 8191),
    (1024, 1024, 8191),
    (64, 4096, 4096),
    (333, 4096, 4096),
    (64, 64, 4096),
    (2048, 2048, 8191),
    (4096, 4096, 333),
    (4096, 4096, 4096),
]


def test_catalog_entry_is_the_first_configuration_and_a_split_k_step_after_v9() -> None:
    first = CONFIGS[0]
    assert (DEFAULT.source, DEFAULT.entry, DEFAULT.previous, DEFAULT.split_k) == (
        "v9_splitk.cu",
        first["entry"],
        "v9-regdb",
        True,
    )
    assert (DEFAULT.params, DEFAULT.dynamic_smem_bytes) == (first["params"], first["dynamic_smem_bytes"])
    assert (DEFAULT.tile_m, DEFAULT.tile_n, DEFAULT.block) == (first["tile_m"], first["tile_n"], first["block"])
    assert [s.id for s in CATALOG if s.split_k] == ["v8-splitk", "v9-splitk"]
    # v9's tuned FFMA order: the catalog default runs v9-regdb's best tile and order (ORDER 3).
    assert first["id"] == "v9-splitk-128x256x16-w64x64-t8x16-s3-o3" and first["params"]["ORDER"] == 3


def test_configurations_are_valid_instantiated_and_resolve_to_v9_splitk() -> None:
    source = DEFAULT.read_source().replace(" ", "")
    assert len({c["id"] for c in CONFIGS}) == len(CONFIGS) >= 3
    for c in CONFIGS:
        p = c["params"]
        assert tuning.v9_problems(p) == [], c["id"]
        assert c["id"].startswith("v9-splitk-") and c["base"] == "v9-splitk"
        function = (
            "sgemm_regdb_streamk_fused"
            if p.get("FUSED")
            else "sgemm_regdb_streamk"
            if p.get("STREAM_K")
            else "sgemm_regdb_splitk_zfirst"
            if p.get("ZERO_FIRST")
            else "sgemm_regdb_splitk_serial"
            if p.get("SERIAL")
            else "sgemm_regdb_splitk"
        )
        assert ("-sk" in c["id"]) == bool(p.get("STREAM_K")) == get_kernel(c["id"]).stream_k
        assert ("-ser" in c["id"] or "-zf" in c["id"]) == bool(p.get("SERIAL")) == get_kernel(c["id"]).serial
        assert ("-zf" in c["id"]) == bool(p.get("ZERO_FIRST"))
        assert c["entry"].startswith(f"{function}<")
        assert c["entry"].replace(" ", "") + "(" in source, f"{c['entry']} is not instantiated in v9_splitk.cu"
        pads_b = bool(p.get("PAD_N") or p.get("PAD_B") or p.get("FUSED"))  # a fused one writes B's copy itself
        assert c["id"].endswith(("-pad", "-pad-tcopy", "-padb", "-fused")) == pads_b == get_kernel(c["id"]).pads_b
        assert c["id"].endswith(("-pad", "-pad-tcopy", "-padc", "-padb")) == get_kernel(c["id"]).pads_n
        assert c["id"].endswith(("-pad", "-pad-tcopy", "-padc", "-fused")) == get_kernel(c["id"]).pads_c
        assert c["id"].endswith("-tcopy") == bool(p.get("TILE_COPY")) == get_kernel(c["id"]).tile_copy
        if p.get("TILE_COPY"):  # where N % 4 != 0 its tile-copy kernel runs at N on the padded copies
            assert c["narrow_entry"].startswith(f"{function}_tilecopy<")
            assert c["narrow_entry"].endswith(f",{p['MIN_BLOCKS']},{p.get('ORDER', 0)}>")
            assert c["narrow_entry"] + "(" in source, f"{c['narrow_entry']} is not instantiated in v9_splitk.cu"
            continue
        assert c["id"].endswith("-fused") == bool(p.get("FUSED")) == get_kernel(c["id"]).fused
        if p.get("PAD_N") or p.get(
            "FUSED"
        ):  # where N % 4 != 0 it runs its 16-byte kernel at N padded, never a narrow one
            assert c["narrow_entry"] is None
            continue
        narrow = (
            f"{function}_padc" if p.get("PAD_C") else f"{function}_padb" if p.get("PAD_B") else f"{function}_narrow"
        )
        assert c["narrow_entry"].startswith(f"{narrow}<") and c["narrow_entry"].endswith(
            f",{p['MIN_BLOCKS']},{p.get('ORDER', 0)}>"
        )
        assert c["narrow_entry"] + "(" in source, f"{c['narrow_entry']} is not instantiated in v9_splitk.cu"
        assert c["dynamic_smem_bytes"] == tuning.smem_bytes(p["BM"], p["BN"], p["BK"], p["STAGES"])
        spec = get_kernel(c["id"])
        assert (spec.source, spec.split_k, spec.previous) == ("v9_splitk.cu", True, "v9-regdb")
        assert find_kernel(c["id"]).id == c["id"]
    assert "v9-splitk" in tuning.tunable_bases()


def test_function_names_find_the_kernel_and_the_profile_regex_takes_the_zeroing_launch() -> None:
    assert find_kernel("void sgemm_regdb_splitk<128, 256, 16, 64, 64, 8, 16, 3, 256, 1, 3>(const float *)").id == (
        "v9-splitk"
    )
    assert find_kernel("sgemm_regdb").id == "v9-regdb"
    # The kernel launched where N % 4 != 0 is profiled too.
    assert kernel_name_regex(["v9-splitk"]) == ("regex:^(splitk_zero_c|sgemm_regdb_splitk|sgemm_regdb_splitk_narrow)$")
    assert find_kernel("void sgemm_regdb_splitk_narrow<64, 128, 16, 32, 64, 8, 8, 3, 128, 3, 0>(float *)").id == (
        "v9-splitk"
    )
    # Its stream-K kernels (tuning configurations only) are v9-splitk's too, in a capture of sgemm-auto.
    assert find_kernel("void sgemm_regdb_streamk<64, 128, 16, 32, 64, 8, 8, 3, 128, 3>(const float *)").id == (
        "v9-splitk"
    )
    assert find_kernel("sgemm_regdb_streamk_narrow").id == "v9-splitk"
    assert find_kernel("sgemm_regdb_ordered").id == "v9-regdb"


def test_v9_regdb_keeps_its_kernels_and_only_the_split_kernel_splits() -> None:
    """v9_regdb.cu's kernels (and their mangled names in saved captures) are unchanged: the same two templates over
    the shared body with SPLIT left at its default (false); scripts/sass_identity.py checks their machine code."""
    text = (DEFAULT.source_path.parent / "v9_regdb.cu").read_text()
    params = "int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS"
    assert f"template <{params}>\n__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)\nsgemm_regdb(" in text
    assert f"template <{params}, int ORDER>\n__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)\n" in text
    # SPLIT stays false in v9_regdb.cu; its narrow kernel sets only NARROW (the last template argument).
    assert "sgemm_regdb_ordered(" in text and "ORDER, false, 0, true>(A, B, C, M, N, K, smem);" in text
    assert ", true>(" not in text.replace("ORDER, false, 0, true>(", "")
    split = DEFAULT.source_path.read_text()
    body = "regdb_body<{}, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, true"
    assert split.count(body.format("true") + ">(A, B, C, M, N, K, smem);") == 1  # both B copy widths
    assert split.count(body.format("false") + ">(A, B, C, M, N, K, smem);") == 1
    assert split.count(body.format("false") + ", 0, true>(A, B, C, M, N, K, smem);") == 1  # the narrow kernel
    # The stream-K kernels run the body once per segment (SPLIT and STREAM_K); the 16-byte kernel has no 4-byte path.
    # One call in each branch of V9_SK_HYBRID (a measurement build, off as built): each branch's loop calls it once.
    streamk_body = body.format("VEC") + ", 0, NARROW, true, PAD_C, false, false,\n                   PAD_B>("
    hybrid, _, as_built = split.partition("#if V9_SK_HYBRID")[2].partition("#else")
    assert hybrid.count(streamk_body) == 1 and as_built.split("#endif")[0].count(streamk_body) == 1
    assert split.count(streamk_body) == 2
    run = "streamk_run<{}, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, {}>(A, B, C, M, N, K, smem);"
    assert split.count(run.format("true", "false")) == 1 and split.count(run.format("false", "true")) == 1
    # The padded-C kernels: NARROW's B copies with PAD_C's reductions, split and stream-K.
    assert split.count(body.format("false") + ", 0, true, false, true>(A, B, C, M, N,") == 1
    assert split.count(run.format("false", "true, true")) == 1
    # The padded-B kernel: the 16-byte B copies with the narrow reductions into C where it lies.
    assert split.count(run.format("true", "false, false, true")) == 1
    # The fused kernel: the 16-byte body at N rounded up to a multiple of 4, on the copies where N % 4 != 0.
    fused = run.format("true", "false").replace("(A, B, C, M, N, K, smem);", "(A, padded ? Bp : B, padded ? Cp : C,")
    assert split.count(fused) == 1
    # The tile-copy kernel: the 16-byte body at N rounded up to a multiple of 4 on the copies, copying completed tiles
    # after each segment.
    tile_copy = run.format("true", "false").replace("(A, B, C, M, N, K, smem);", "(A, Bp, Cp, M, n4, K, smem,")
    assert split.count(tile_copy + "\n" + " " * 81 + "copy_completed_tile);") == 1
    assert split.count("streamk_run<") == 6


@pytest.mark.parametrize(
    "config_id,shape,grid",
    [
        # 1024x1024: 4 x 8 tiles of 128x256 for 132 SMs -> 4 splits of 2048 K fill 128 of them.
        ("v9-splitk-128x256x16-w64x64-t8x16-s3-o3", (1024, 1024, 8191), (4, 8, 4)),
        # One tile: 64 splits of 8 slices (the geometric mean rule of kernels/splitk_policy.py).
        ("v9-splitk-128x256x16-w64x64-t8x16-s3-o3", (127, 127, 8191), (1, 1, 64)),
        ("v9-splitk-128x256x16-w64x64-t8x16-s3-o3", (64, 4096, 4096), (16, 1, 8)),
        # Enough tiles already: one split (the kernel then only adds a zeroing launch).
        ("v9-splitk-128x256x16-w64x64-t8x16-s3-o3", (4096, 4096, 333), (16, 32, 1)),
        ("v9-splitk-128x128x16-w64x32-t8x8-s3", (333, 4096, 4096), (32, 3, 2)),
        ("v9-splitk-64x64x16-w32x64-t8x8-s3", (127, 127, 8191), (2, 2, 32)),
        ("v9-splitk-64x64x16-w32x64-t8x8-s3", (333, 333, 8191), (6, 6, 22)),
    ],
)
def test_launch_grid_splits_k_where_the_tiles_leave_sms_idle(config_id: str, shape, grid) -> None:
    assert get_kernel(config_id).launch_grid(*shape, sm_count=132) == grid


def _without_v9_splitk(device_file: str) -> list[dict]:
    path = tuning.tuned_record_path("x").parent / device_file
    return [e for e in json.loads(path.read_text())["measured"] if e["base"] != "v9-splitk"]


def test_never_predicted_without_its_own_measurement() -> None:
    measured = _without_v9_splitk("nvidia-h100-80gb-hbm3.json")
    for config in CONFIGS:
        for shape in GRID_SHAPES:
            assert tuning.predicted_tflops(measured, config, *shape, 132) is None, (config["id"], shape)


def test_auto_picks_it_only_where_measured_faster_and_never_with_one_split(monkeypatch) -> None:
    measured = _without_v9_splitk("nvidia-h100-80gb-hbm3.json")
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h100.json", measured))
    before = {shape: auto.auto_choice("NVIDIA H100 80GB HBM3", *shape, sm_count=132) for shape in GRID_SHAPES}
    assert not any(c.config_id.startswith("v9-splitk") for c in before.values())

    fast = dict(base="v9-splitk", m=1024, n=1024, k=8191, config=CONFIGS[0]["id"], tflops=1000.0)
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h100.json", [*measured, fast]))
    at_1024 = auto.auto_choice("NVIDIA H100 80GB HBM3", 1024, 1024, 8191, sm_count=132)
    assert (at_1024.config_id, at_1024.predicted_tflops) == (CONFIGS[0]["id"], pytest.approx(1000.0))
    assert at_1024.label == f"{CONFIGS[0]['id']} (tuning record h100.json)"
    # 4096^3 is 512 of its tiles: one split, so its twin v9-regdb configuration runs, however fast the record says.
    at_4096 = auto.auto_choice("NVIDIA H100 80GB HBM3", 4096, 4096, 4096, sm_count=132)
    assert at_4096.config_id == before[(4096, 4096, 4096)].config_id
    assert tuning.predicted_tflops([fast], CONFIGS[0], 4096, 4096, 4096, 132) is None


def test_runner_resolves_a_v9_splitk_configuration_to_a_two_launch_operation() -> None:
    spec = get_kernel(CONFIGS[0]["id"])
    facts = launch_facts(spec, Shape(1024, 1024, 8191), 132)
    assert facts["grid"] == [4, 8, 4] and facts["split_k"] == 4
    assert facts["launches"][0]["kernel"] == "splitk_zero_c"


@pytest.mark.parametrize(
    "config_id,shape,blocks,run",
    [
        # 333x4096: 3 x 16 tiles of 128x256, 512 slices each, shared by one wave of 132 blocks (187 slices each,
        # about 2.7 blocks a tile) where split-K could only fill 96 or 144 of them.
        ("v9-splitk-128x256x16-w64x64-t8x16-s3-o3-sk", (333, 4096, 8191), 132, 187),
        # Three blocks per SM: 396 runs of 42 slices over 64 tiles of 64x128.
        ("v9-splitk-64x128x16-w32x64-t8x8-s3-sk", (4096, 127, 4096), 396, 42),
        # One tile of 512 slices: no run shorter than 4 slices, so 128 blocks rather than a wave of 264.
        ("v9-splitk-128x128x16-w64x32-t8x8-s3-sk", (127, 127, 8191), 128, 4),
        # Two slices in all: one block.
        ("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk", (17, 17, 17), 1, 2),
    ],
)
def test_stream_k_launches_one_wave_of_equal_runs(config_id: str, shape, blocks: int, run: int) -> None:
    spec = get_kernel(config_id)
    assert spec.stream_k and spec.launch_grid(*shape, sm_count=132) == (blocks, 1, 1)
    assert spec.split_count(*shape, sm_count=132) == 1
    facts = launch_facts(spec, Shape(*shape), 132)
    assert facts["stream_k"] == {"blocks": blocks, "slices_per_block": run} and "split_k" not in facts
    # C is zeroed first, as for the splits; then the kernel that runs at N (the narrow one where N % 4 != 0).
    assert [launch["kernel"] for launch in facts["launches"]] == ["splitk_zero_c", spec.launched_at(shape[1]).entry]
    assert facts["launches"][1]["kernel"].startswith("sgemm_regdb_streamk_narrow<" if shape[1] % 4 else "sgemm_")


def test_stream_k_is_predicted_from_its_own_measurement_even_where_split_k_would_not_split() -> None:
    config = tuning.config_by_id("v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk")
    assert config is not None
    assert tuning.predicted_tflops([], config, 4096, 4096, 4096, 132) is None
    at_4096 = dict(base="v9-splitk", m=4096, n=4096, k=4096, config=config["id"], tflops=40.0)
    assert tuning.predicted_tflops([at_4096], config, 4096, 4096, 4096, 132) == pytest.approx(40.0)
    # At 4096x127 the 256x128 tiles waste one column in 128 where they wasted none at 4096^2, and each of the 16
    # tiles is cut into about 9 segments: the prediction is lower, not zero.
    narrow = tuning.predicted_tflops([at_4096], config, 4096, 127, 4096, 132)
    assert narrow is not None and 30.0 < narrow < 40.0 * 127 / 128


def test_stream_k_refuses_more_slices_than_its_32_bit_count_and_auto_passes_it_over(monkeypatch) -> None:
    stream_k = get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s3-sk")
    # 65536^3 on 64x128 tiles: 1024 x 512 tiles x 4096 slices = 2^31 (three 16 GiB matrices fit an H200).
    assert stream_k.size_problem(65536, 65536, 65536) == (
        "v9-splitk-64x128x16-w32x64-t8x8-s3-sk counts its tiles' K slices in 32 bits, and 65536x65536x65536 has "
        "2,147,483,648 of them (the limit is 2,147,483,647); pick a v9-regdb or split-K configuration"
    )
    assert "2,147,483,648 of them" in stream_k.size_problem(65536, 65536, 65535)  # still 4096 slices of 16
    assert stream_k.size_problem(65536, 65536, 65520) is None  # 4095 slices
    assert get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s3").size_problem(65536, 65536, 65536) is None
    # A record that measured the stream-K tile fastest everywhere: sgemm-auto runs it, except where it cannot.
    fast = [dict(base="v9-splitk", m=4096, n=4096, k=4096, config=stream_k.id, tflops=1000.0)]
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h100.json", fast))
    assert auto.auto_choice("NVIDIA H100 80GB HBM3", 8192, 8192, 8192, sm_count=132).config_id == stream_k.id
    huge = auto.auto_choice("NVIDIA H100 80GB HBM3", 65536, 65536, 65536, sm_count=132)
    assert huge.config_id != stream_k.id and huge.source.startswith("default")


PADDED = ["v9-splitk-64x128x16-w32x64-t8x8-s3-d8-pad", "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad"]


@pytest.mark.parametrize("config_id", PADDED)
def test_a_padded_configuration_runs_its_16_byte_kernel_at_n_padded_to_a_multiple_of_4(config_id: str) -> None:
    spec = get_kernel(config_id)
    twin = get_kernel(config_id.removesuffix("-pad"))
    assert spec.pads_n and not twin.pads_n and spec.params["PAD_N"] == 1
    # Where N % 4 != 0 its twin runs the narrow kernel; it runs the 16-byte one, the twin's entry.
    assert spec.launched_at(127).entry == spec.entry == twin.entry != twin.launched_at(127).entry
    assert (spec.padded_n(127), spec.padded_n(333), spec.padded_n(1), twin.padded_n(127)) == (128, 336, 4, None)
    # Three launches: zero C's copy and pad B's (4096 + 8191 rows of 128 floats, one float4 per thread, at most 8
    # blocks per SM), multiply at N = 128, copy C's 127 columns back (4096 x 127 floats, one per thread: 2032 blocks).
    facts = launch_facts(spec.launched_at(127), Shape(4096, 127, 8191), 132)
    assert facts["padded_n"] == 128 and facts["grid"] == list(twin.launch_grid(4096, 127, 8191, 132))
    assert facts["launches"] == [
        {"kernel": "splitk_zero_c_pad_b", "grid": [1056, 1, 1], "block": [256, 1, 1]},
        {"kernel": spec.entry, "grid": facts["grid"], "block": [*spec.block, 1]},
        {"kernel": "splitk_unpad_c", "grid": [2032, 1, 1], "block": [256, 1, 1]},
    ]
    twin_facts = launch_facts(twin.launched_at(127), Shape(4096, 127, 8191), 132)
    assert "padded_n" not in twin_facts and [x["kernel"] for x in twin_facts["launches"]] == [
        "splitk_zero_c",
        twin.narrow_entry,
    ]
    # The copies are counted in the memory a run needs: 8191 + 4096 rows of 128 floats more than its twin's.
    from profiling.gpu.jobs import device_bytes_needed

    extra = device_bytes_needed(spec, Shape(4096, 127, 8191)) - device_bytes_needed(twin, Shape(4096, 127, 8191))
    assert extra == 4 * (8191 + 4096) * 128
    # A padded configuration shares its entry with its twin but not its compiled kernel, which holds the helpers.
    assert compile_cache_key(spec) != compile_cache_key(twin)
    # ncu's filter takes all three launches.
    regex = kernel_name_regex([config_id])
    assert regex is not None and "splitk_zero_c_pad_b|splitk_unpad_c|sgemm_regdb_" in regex


PADDED_C = ["v9-splitk-64x128x16-w32x64-t8x8-s3-d8-padc", "v9-splitk-64x128x16-w32x64-t8x8-s3-sk-padc"]


@pytest.mark.parametrize("config_id", PADDED_C)
def test_a_padded_c_configuration_adds_into_a_copy_of_c_and_reads_b_where_it_lies(config_id: str) -> None:
    spec = get_kernel(config_id)
    twin = get_kernel(config_id.removesuffix("-padc"))
    assert spec.pads_n and not spec.pads_b and spec.params["PAD_C"] == 1 and spec.padded_suffix == "-padc"
    # Where N % 4 != 0 it runs its padded-C kernel (the twin its narrow one); where N % 4 == 0 it is refused.
    function = twin.entry.split("<", 1)[0]
    assert spec.launched_at(127).entry == spec.narrow_entry == twin.narrow_entry.replace("_narrow<", "_padc<")
    assert spec.narrow_entry.startswith(f"{function}_padc<") and spec.padded_n(333) == 336
    assert spec.size_problem(333, 128, 8191) == (
        f"{config_id} differs from {twin.id} only where N % 4 != 0 (it then pads N to a multiple of 4); "
        f"at N = 128 run {twin.id}"
    )
    # Three launches: zero C's copy (333 rows of 128 floats: 42 blocks of 256 threads, a float4 each), the
    # padded-C kernel on the twin's grid at N = 127, copy C's 127 columns back (333 x 127 floats, one per thread:
    # 166 blocks).
    facts = launch_facts(spec.launched_at(127), Shape(333, 127, 8191), 132)
    assert facts["padded_n"] == 128 and facts["grid"] == list(twin.launch_grid(333, 127, 8191, 132))
    assert facts["launches"] == [
        {"kernel": "splitk_zero_c", "grid": [42, 1, 1], "block": [256, 1, 1]},
        {"kernel": spec.narrow_entry, "grid": facts["grid"], "block": [*spec.block, 1]},
        {"kernel": "splitk_unpad_c", "grid": [166, 1, 1], "block": [256, 1, 1]},
    ]
    assert spec.helper_entries == ("splitk_zero_c", "splitk_unpad_c")
    # Only C's copy is counted in the memory a run needs: 333 rows of 128 floats more than its twin's.
    from profiling.gpu.jobs import device_bytes_needed

    extra = device_bytes_needed(spec, Shape(333, 127, 8191)) - device_bytes_needed(twin, Shape(333, 127, 8191))
    assert extra == 4 * 333 * 128
    assert compile_cache_key(spec) != compile_cache_key(twin)
    assert find_kernel(f"void {spec.narrow_entry}(const float *)").id == "v9-splitk"
    regex = kernel_name_regex([config_id])
    assert regex is not None and "splitk_zero_c|splitk_unpad_c|sgemm_regdb_" in regex and "_padc" in regex


PADDED_B = ["v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-padb"]


@pytest.mark.parametrize("config_id", PADDED_B)
def test_a_padded_b_configuration_reads_a_copy_of_b_and_adds_into_c_where_it_lies(config_id: str) -> None:
    spec = get_kernel(config_id)
    twin = get_kernel(config_id.removesuffix("-padb"))
    assert spec.pads_n and spec.pads_b and not spec.pads_c and spec.params["PAD_B"] == 1
    assert spec.padded_suffix == "-padb" and spec.padded_n(127) == 128 and spec.padded_n(128) is None
    assert spec.launched_at(127).entry == spec.narrow_entry == twin.narrow_entry.replace("_narrow<", "_padb<")
    assert spec.size_problem(4096, 128, 4096) == (
        f"{config_id} differs from {twin.id} only where N % 4 != 0 (it then pads N to a multiple of 4); "
        f"at N = 128 run {twin.id}"
    )
    # Two launches: C zeroed where it lies and B's copy written (4096 x 127 + 4096 x 128 floats, a float4 a thread:
    # 1020 blocks of 256), then the padded-B kernel on the twin's grid at N = 127; nothing copied back.
    facts = launch_facts(spec.launched_at(127), Shape(4096, 127, 4096), 132)
    assert facts["padded_n"] == 128 and facts["grid"] == list(twin.launch_grid(4096, 127, 4096, 132))
    assert facts["launches"] == [
        {"kernel": "splitk_zero_c_pad_b", "grid": [1020, 1, 1], "block": [256, 1, 1]},
        {"kernel": spec.narrow_entry, "grid": facts["grid"], "block": [*spec.block, 1]},
    ]
    assert spec.helper_entries == ("splitk_zero_c", "splitk_zero_c_pad_b")
    assert spec.operation_entries(127) == ("splitk_zero_c_pad_b", spec.narrow_entry)
    # Only B's copy is counted in the memory a run needs: 4096 rows of 128 floats more than its twin's.
    from profiling.gpu.jobs import device_bytes_needed

    extra = device_bytes_needed(spec, Shape(4096, 127, 4096)) - device_bytes_needed(twin, Shape(4096, 127, 4096))
    assert extra == 4 * 4096 * 128
    assert compile_cache_key(spec) != compile_cache_key(twin)
    assert find_kernel(f"void {spec.narrow_entry}(const float *)").id == "v9-splitk"
    regex = kernel_name_regex([config_id])
    assert regex is not None and "splitk_zero_c_pad_b|sgemm_regdb_" in regex and "_padb" in regex


TILE_COPY = ["v9-splitk-64x128x16-w32x64-t8x8-s3-sk-pad-tcopy"]


@pytest.mark.parametrize("config_id", TILE_COPY)
def test_a_tile_copy_configuration_pads_b_and_c_and_copies_c_back_in_its_multiply(config_id: str) -> None:
    spec = get_kernel(config_id)
    padded = get_kernel(config_id.removesuffix("-tcopy"))
    twin = get_kernel(config_id.removesuffix("-pad-tcopy"))
    assert spec.tile_copy and spec.pads_b and spec.pads_c and not spec.launches_copy_back and padded.launches_copy_back
    assert spec.padded_suffix == "-pad-tcopy" and spec.padded_n(127) == 128
    assert spec.launched_at(127).entry == spec.narrow_entry == twin.narrow_entry.replace("_narrow<", "_tilecopy<")
    assert spec.size_problem(4096, 128, 4096) == (
        f"{config_id} differs from {twin.id} only where N % 4 != 0 (it then pads N to a multiple of 4); "
        f"at N = 128 run {twin.id}"
    )
    # Two launches: C's copy zeroed and B's written (4096 + 4096 rows of 128 floats, a float4 a thread: 1024 blocks
    # of 256), then the tile-copy kernel on the padded configuration's grid; nothing after it.
    facts = launch_facts(spec.launched_at(127), Shape(4096, 127, 4096), 132)
    assert facts["padded_n"] == 128 and facts["grid"] == list(padded.launch_grid(4096, 127, 4096, 132))
    assert facts["launches"] == [
        {"kernel": "splitk_zero_c_pad_b", "grid": [1024, 1, 1], "block": [256, 1, 1]},
        {"kernel": spec.narrow_entry, "grid": facts["grid"], "block": [*spec.block, 1]},
    ]
    assert spec.helper_entries == ("splitk_zero_c", "splitk_zero_c_pad_b")
    # Both copies are counted, as for the padded configuration.
    from profiling.gpu.jobs import device_bytes_needed

    shape = Shape(4096, 127, 4096)
    assert device_bytes_needed(spec, shape) == device_bytes_needed(padded, shape)
    # Its per-tile counts are serial_tile_arrivals: at most 16,384 tiles (of 256x128 or 64x128 at N padded).
    tile_rows = 16385 * spec.tile_m
    assert spec.size_problem(tile_rows, 127, 64) == (
        f"{config_id} counts the slices added to at most 16,384 tiles, and {tile_rows}x127x64 has 16,385; run "
        f"{padded.id}, which copies C back in a launch of its own"
    )
    assert spec.size_problem(16384 * spec.tile_m, 127, 64) is None
    regex = kernel_name_regex([config_id])
    assert regex is not None and "splitk_zero_c_pad_b|sgemm_regdb_" in regex and "_tilecopy" in regex


def test_only_a_padded_stream_k_configuration_copies_c_back_tile_by_tile() -> None:
    with pytest.raises(ValueError, match="a tile-copy configuration is a padded stream-K one"):
        tuning._v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, pad_n=True, tile_copy=True)
    with pytest.raises(ValueError, match="a tile-copy configuration is a padded stream-K one"):
        tuning._v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True, tile_copy=True)


def test_only_a_stream_k_configuration_padding_nothing_else_pads_b_alone() -> None:
    with pytest.raises(ValueError, match="stream-K one that pads nothing else"):
        tuning._v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, pad_b=True)
    with pytest.raises(ValueError, match="stream-K one that pads nothing else"):
        tuning._v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True, pad_c=True, pad_b=True)


SERIAL = ["v9-splitk-64x64x16-w32x64-t8x8-s3-d8-ser", "v9-splitk-64x128x16-w32x64-t8x8-s3-d8-ser-padc"]


def test_serial_splits_launch_no_zeroing_of_c() -> None:
    spec, padded = (get_kernel(config_id) for config_id in SERIAL)
    twin = get_kernel(SERIAL[0].replace("-ser", ""))
    assert spec.serial and padded.serial and not twin.serial and padded.pads_n and not padded.pads_b
    # The same tile and split as its twin, one launch: the serial kernel, or its narrow twin where N % 4 != 0.
    assert spec.launch_grid(333, 127, 4096, 132) == twin.launch_grid(333, 127, 4096, 132) == (2, 6, 32)
    assert spec.entry == "sgemm_regdb_splitk_serial<64,64,16,32,64,8,8,3,64,6>"
    assert spec.operation_entries(128) == (spec.entry,) and spec.helper_entries == ()
    assert spec.operation_entries(127) == ("sgemm_regdb_splitk_serial_narrow<64,64,16,32,64,8,8,3,64,6,0>",)
    assert twin.operation_entries(127) == ("splitk_zero_c", twin.narrow_entry)
    facts = launch_facts(spec.launched_at(127), Shape(333, 127, 4096), 132)
    assert facts["split_k"] == 32 and facts["launches"] == [
        {"kernel": spec.narrow_entry, "grid": [2, 6, 32], "block": [64, 1, 1]}
    ]
    # Padded C: the serial padded-C kernel stores into C's copy, then the copy back (333 x 127 floats: 166 blocks).
    assert padded.operation_entries(127) == (
        "sgemm_regdb_splitk_serial_padc<64,128,16,32,64,8,8,3,128,3,0>",
        "splitk_unpad_c",
    )
    assert padded.helper_entries == ("splitk_unpad_c",)
    facts = launch_facts(padded.launched_at(127), Shape(333, 127, 8191), 132)
    assert [(x["kernel"], x["grid"]) for x in facts["launches"]] == [
        (padded.narrow_entry, [1, 6, 64]),
        ("splitk_unpad_c", [166, 1, 1]),
    ]
    # Its arrival counts hold 16384 tiles: more are refused with the twin to run instead.
    assert spec.size_problem(8256, 8192, 333) == (
        "v9-splitk-64x64x16-w32x64-t8x8-s3-d8-ser counts the splits of at most 16,384 tiles, and 8256x8192x333 has "
        "16,512; run v9-splitk-64x64x16-w32x64-t8x8-s3-d8, which zeroes C first"
    )
    assert spec.size_problem(8192, 8192, 333) is None  # 128 x 128 tiles of 64x64: exactly the limit
    # One limit: the kernel's count array is the size the host checks against.
    assert f"constexpr int SERIAL_MAX_TILES = {SERIAL_MAX_TILES};" in spec.read_source()


def test_zero_first_splits_launch_no_zeroing_of_c_and_name_their_twin_when_refused() -> None:
    """Zero-first splits: split 0 zeroes its tile in the GEMM launch itself, so the operation is that one launch, its
    splits as many as its twin's (the one-block-per-SM rule: 132 // 6 tiles = 22 at 333x127x4096)."""
    spec = get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf")
    twin = get_kernel("v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill")
    assert spec.serial and spec.params["ZERO_FIRST"] == 1 and not twin.serial
    assert spec.launch_grid(333, 127, 4096, 132) == twin.launch_grid(333, 127, 4096, 132) == (1, 6, 22)
    assert spec.operation_entries(127) == ("sgemm_regdb_splitk_zfirst_narrow<64,128,16,32,64,8,8,4,128,3,3>",)
    assert spec.operation_entries(128) == ("sgemm_regdb_splitk_zfirst<64,128,16,32,64,8,8,4,128,3,3>",)
    assert twin.operation_entries(127) == ("splitk_zero_c", "sgemm_regdb_splitk_narrow<64,128,16,32,64,8,8,4,128,3,3>")
    assert spec.size_problem(8256, 16384, 333) == (
        "v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill-zf counts the splits of at most 16,384 tiles, and 8256x16384x333 "
        "has 16,512; run v9-splitk-64x128x16-w32x64-t8x8-s4-o3-fill, which zeroes C first"
    )
    # The kernel zeroes where it would otherwise store: split 0 adds like the others (v9_body.cuh).
    body = (DEFAULT.source_path.parent / "v9_body.cuh").read_text()
    assert "                add = ZERO_FIRST;\n" in body


def test_a_padded_configuration_runs_only_where_n_is_not_a_multiple_of_4(monkeypatch) -> None:
    padded = get_kernel(PADDED[1])
    assert padded.size_problem(4096, 128, 8191) == (
        "v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk-pad differs from v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk only "
        "where N % 4 != 0 (it then pads N to a multiple of 4); at N = 128 run v9-splitk-256x128x16-w64x64-t16x8-s3-o4-sk"
    )
    assert padded.size_problem(4096, 127, 8191) is None
    # Measured fastest at a narrow shape, it is predicted (and sgemm-auto runs it) there, never at N % 4 == 0.
    config = tuning.config_by_id(padded.id)
    fast = [dict(base="v9-splitk", m=4096, n=127, k=8191, config=padded.id, tflops=1000.0)]
    assert tuning.predicted_tflops(fast, config, 4096, 128, 8191, 132) is None
    assert tuning.predicted_tflops(fast, config, 4096, 127, 8191, 132) == pytest.approx(1000.0)
    monkeypatch.setattr(auto, "record_measurements", lambda device: ("h200.json", fast))
    assert auto.auto_choice("NVIDIA H200", 4096, 127, 8191, sm_count=132).config_id == padded.id
    assert auto.auto_choice("NVIDIA H200", 4096, 128, 8191, sm_count=132).config_id != padded.id


def test_zero_first_padded_c_splits_launch_the_multiply_and_the_copy_back_only() -> None:
    """Zero-first splits into C's padded copy: split 0 zeroes its tile of the copy, so where N % 4 != 0 the operation
    is the multiply and the copy back (no zeroing launch), and where N % 4 == 0 the zero-first kernel alone."""
    spec = get_kernel("v9-splitk-64x64x16-w32x64-t8x8-s3-d8-zf-padc")
    twin = get_kernel("v9-splitk-64x64x16-w32x64-t8x8-s3-d8-padc")
    assert spec.serial and spec.params["ZERO_FIRST"] == 1 and spec.pads_n and not spec.pads_b
    assert spec.operation_entries(127) == (
        "sgemm_regdb_splitk_zfirst_padc<64,64,16,32,64,8,8,3,64,6,0>",
        "splitk_unpad_c",
    )
    assert spec.operation_entries(128) == ("sgemm_regdb_splitk_zfirst<64,64,16,32,64,8,8,3,64,6>",)
    assert twin.operation_entries(127) == (
        "splitk_zero_c",
        "sgemm_regdb_splitk_padc<64,64,16,32,64,8,8,3,64,6,0>",
        "splitk_unpad_c",
    )
    # 127x127x8191: 2 x 2 tiles of 64 splits 8 slices deep, as its twin; the copy back of 127 x 127 floats.
    facts = launch_facts(spec.launched_at(127), Shape(127, 127, 8191), 132)
    assert [(x["kernel"], x["grid"]) for x in facts["launches"]] == [
        (spec.narrow_entry, [2, 2, 64]),
        ("splitk_unpad_c", [64, 1, 1]),
    ]
    assert spec.launch_grid(127, 127, 8191, 132) == twin.launch_grid(127, 127, 8191, 132)
