"""Tile configurations of the templated v8 kernel (`sgemm_async` in kernels/src/v8_async.cu) for a tuning sweep.

Each entry of `TUNING_CONFIGS` is one template instantiation that compiles without spills (checked by
tests/test_kernel_sources_beyond.py) and whose launch fits an H100/H200 SM at least once. A sweep turns an
entry into a launchable catalog entry with `spec_for(config)` and keeps the fastest verified one per GPU
and size.
"""

from __future__ import annotations

import json
import math
from collections.abc import Collection
from dataclasses import replace
from pathlib import Path

from kernels.catalog import catalog_entry
from kernels.spec import (
    FUSED_SUFFIX,
    PADDED_B_SUFFIX,
    PADDED_C_SUFFIX,
    PADDED_N_SUFFIX,
    SERIAL_SUFFIX,
    TILE_COPY_SUFFIX,
    ZERO_FIRST_SUFFIX,
    KernelSpec,
)
from profiling.device_model import GPU_TABLE, device_slug, table_name_for
from profiling.paths import TUNED_DIR

BASE_KERNEL_ID = "v8-async"
SOURCE = "v8_async.cu"
# The transposed A tile carries 4 floats of padding per K row (v8::APAD in the source).
A_PAD = 4
LANES_PER_WARP = 32
# Registers per thread are capped at 65536 / 512 = 128 by __launch_bounds__(THREADS, 512 / THREADS).
THREADS_PER_SM_TARGET = 512


def smem_bytes(bm: int, bn: int, bk: int, stages: int) -> int:
    """Dynamic shared memory of one block: STAGES x (transposed, padded A slice + B slice), float32."""
    return stages * (bk * (bm + A_PAD) + bk * bn) * 4


def problems(p: dict[str, int]) -> list[str]:
    """Why a parameter set would fail the kernel's static_asserts (empty when it is valid)."""
    bm, bn, bk, wm, wn, tm, tn, stages, threads = (
        p[k] for k in ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "THREADS")
    )
    out = []
    if threads % LANES_PER_WARP or threads > THREADS_PER_SM_TARGET:
        out.append("THREADS must be whole warps and at most 512")
    if bm % wm or bn % wn or (bm // wm) * (bn // wn) * LANES_PER_WARP != threads:
        out.append("the warp tiles must cover the block tile with one warp each")
    if tm % 4 or tn % 4 or wm % tm or wn % tn or (wm // tm) * (wn // tn) != LANES_PER_WARP:
        out.append("the thread tiles (4x4 fragments) must cover a warp tile with exactly 32 lanes")
    kq = bk // 4
    if bk % 4 or (bm * kq) % threads or threads % kq:
        out.append("the A slice must split evenly into 4-element copies per thread")
    vecs = bn // 4
    if bn % 4 or (bk * vecs) % threads or threads % vecs:
        out.append("the B slice must split evenly into float4 copies per thread")
    if stages < 2:
        out.append("STAGES must be at least 2")
    return out


_TILE_KEYS = ("BM", "BN", "BK", "WM", "WN", "TM", "TN", "STAGES", "THREADS")


# How a configuration id reads, part by part after its base kernel (`_build` writes them in this order).
CONFIG_ID_PARTS: dict[str, str] = {
    "<BM>x<BN>x<BK>": "block tile and K slice",
    "w<WM>x<WN>": "warp tile",
    "t<TM>x<TN>": "thread tile",
    "s<STAGES>": "pipeline stages",
    "c<SPLITS>": "v9-clusterk's cluster size (its K splits)",
    "o<ORDER>": "v9's FFMA order",
    "d<SLICES>": "the K slices a split prefers",
    "fill": "as many K splits as put one block on each SM (cuBLAS's split-K launches)",
    SERIAL_SUFFIX.removeprefix(
        "-"
    ): "serial splits: split 0 stores its partial tile, the others add theirs after it (no zeroing launch)",
    ZERO_FIRST_SUFFIX.removeprefix("-"): "serial splits whose split 0 zeroes its tile first, then every split adds",
    "sk": "stream-K (one wave of blocks sharing all tiles' K slices)",
    PADDED_N_SUFFIX.removeprefix("-"): "where N % 4 != 0, run at N padded to a multiple of 4 on copies of B and C",
    PADDED_C_SUFFIX.removeprefix("-"): "where N % 4 != 0, add into a copy of C padded to a multiple of 4 columns",
    PADDED_B_SUFFIX.removeprefix("-"): "where N % 4 != 0, read B from a copy padded to a multiple of 4 columns",
    TILE_COPY_SUFFIX.removeprefix("-"): "the block completing a tile copies it back from C's padded copy",
    FUSED_SUFFIX.removeprefix("-"): "stream-K in one launch: C zeroed (and B and C padded) by the kernel itself",
}


def config_id_legend() -> str:
    """One sentence saying how a configuration id reads (CONFIG_ID_PARTS)."""
    return (
        "A configuration id reads <base>-"
        + "; -".join(f"{part}: {what}" for part, what in CONFIG_ID_PARTS.items())
        + "."
    )


def _build(
    base: str,
    source: str,
    template: str,
    params: dict[str, int],
    bad: list[str],
    with_min_blocks: bool,
    narrow_template: str | None = None,
) -> dict:
    """A tuning configuration: one instantiation of a templated kernel, described like a catalog entry;
    `narrow_template` names the kernel of the same parameters (its FFMA order always given) launched where
    N % 4 != 0."""
    if bad:
        raise ValueError(f"invalid {template} configuration {params}: {'; '.join(bad)}")
    bm, bn, bk, wm, wn, tm, tn, stages, threads = (params[k] for k in _TILE_KEYS)
    args = [params[k] for k in _TILE_KEYS] + ([params["MIN_BLOCKS"]] if with_min_blocks else [])
    # v9-clusterk's cluster size, a template argument before the FFMA order (absent for every other kernel).
    splits = params.get("SPLITS", 0)
    args += [splits] if splits else []
    # v9's FFMA order (0, the template default, is left out of the entry and the id).
    order = params.get("ORDER", 0)
    args += [order] if order else []
    # A split-K configuration's own split depth (no template argument: the same kernel, split differently).
    deep = params.get("SPLIT_DEEP_SLICES", 0)
    stream_k = params.get("STREAM_K", 0)
    return {
        "id": f"{base}-{bm}x{bn}x{bk}-w{wm}x{wn}-t{tm}x{tn}-s{stages}"
        + (f"-c{splits}" if splits else "")
        + (f"-o{order}" if order else "")
        + (f"-d{deep}" if deep else "")
        + ("-fill" if params.get("SPLIT_FILL") else "")
        + (ZERO_FIRST_SUFFIX if params.get("ZERO_FIRST") else SERIAL_SUFFIX if params.get("SERIAL") else "")
        + ("-sk" if stream_k else "")
        + (PADDED_N_SUFFIX if params.get("PAD_N") else "")
        + (PADDED_C_SUFFIX if params.get("PAD_C") else "")
        + (PADDED_B_SUFFIX if params.get("PAD_B") else "")
        + (TILE_COPY_SUFFIX if params.get("TILE_COPY") else "")
        + (FUSED_SUFFIX if params.get("FUSED") else ""),
        "source": source,
        "entry": f"{template}<{','.join(map(str, args))}>",
        "block": (threads, 1),
        "tile_m": bm,
        "tile_n": bn,
        "grid_order": "cols_x",
        "dynamic_smem_bytes": smem_bytes(bm, bn, bk, stages),
        "params": params,
        "base": base,
        "narrow_entry": (
            f"{narrow_template}<{','.join(map(str, [params[k] for k in _TILE_KEYS] + [params['MIN_BLOCKS'], order]))}>"
            if narrow_template
            else None
        ),
    }


def _config(bm: int, bn: int, bk: int, wm: int, wn: int, tm: int, tn: int, stages: int, threads: int) -> dict:
    params = dict(zip(_TILE_KEYS, (bm, bn, bk, wm, wn, tm, tn, stages, threads), strict=True))
    params["MIN_BLOCKS"] = THREADS_PER_SM_TARGET // threads
    return _build(BASE_KERNEL_ID, SOURCE, "sgemm_async", params, problems(params), with_min_blocks=False)


TUNING_CONFIGS: list[dict] = [
    # The catalog's default: 16-deep slices halve the barriers of BK=8, 3 stages keep 2 blocks per SM.
    _config(128, 128, 16, 64, 32, 8, 8, 3, 256),
    _config(128, 128, 8, 64, 32, 8, 8, 4, 256),
    _config(128, 128, 8, 64, 32, 8, 8, 3, 256),
    _config(128, 128, 16, 32, 64, 8, 8, 3, 256),
    _config(128, 128, 16, 64, 32, 8, 8, 4, 256),
    # Larger block tile, one 512-thread block per SM: less L2 traffic per FMA.
    _config(256, 128, 16, 64, 32, 8, 8, 3, 512),
    # Smaller tiles give more blocks where 128x128 leaves SMs idle (n <= 2048 on 132 SMs).
    _config(128, 64, 8, 64, 32, 8, 8, 4, 128),
    _config(64, 64, 16, 32, 32, 8, 4, 3, 128),
]


# --- v9: register double buffering (`sgemm_regdb` in kernels/src/v9_regdb.cu) ---
# Same tile vocabulary as v8 plus MIN_BLOCKS (the __launch_bounds__ minimum, so one 256-thread block per SM
# may use 255 registers). Kept apart from TUNING_CONFIGS so that v8's sweep and its recorded best stay v8's.

V9_BASE_KERNEL_ID = "v9-regdb"
V9_SOURCE = "v9_regdb.cu"
MAX_THREADS_PER_SM = 2048


def v9_problems(p: dict[str, int]) -> list[str]:
    """Why a v9 parameter set would fail sgemm_regdb's static_asserts (empty when it is valid)."""
    out = [msg for msg in problems(dict(p, STAGES=max(p["STAGES"], 2))) if "STAGES" not in msg]
    if p["STAGES"] < 3:
        out.append("STAGES must be at least 3 (the next slice is copied into the buffer of the slice before)")
    if p["MIN_BLOCKS"] < 1 or p["MIN_BLOCKS"] * p["THREADS"] > MAX_THREADS_PER_SM:
        out.append("MIN_BLOCKS blocks must fit one SM's 2048 threads")
    return out


def _v9_params(
    bm: int,
    bn: int,
    bk: int,
    wm: int,
    wn: int,
    tm: int,
    tn: int,
    stages: int,
    threads: int,
    min_blocks: int,
    order: int = 0,
) -> dict:
    """v9's template parameters: the block, warp and thread tiles, stages and threads, MIN_BLOCKS and a non-default
    FFMA order (v9-regdb and v9-splitk take the same ones)."""
    params = dict(zip(_TILE_KEYS, (bm, bn, bk, wm, wn, tm, tn, stages, threads), strict=True))
    params["MIN_BLOCKS"] = min_blocks
    if order:
        params["ORDER"] = order
    return params


def _v9_config(*tile: int, order: int = 0, narrow: bool = True) -> dict:
    """A v9-regdb configuration; `narrow` False keeps its own kernel's 4-byte path where N % 4 != 0 instead of a
    narrow twin (one whose twin would spill)."""
    params = _v9_params(*tile, order=order)
    template = "sgemm_regdb_ordered" if order else "sgemm_regdb"
    narrow_template = "sgemm_regdb_narrow" if narrow else None
    return _build(V9_BASE_KERNEL_ID, V9_SOURCE, template, params, v9_problems(params), True, narrow_template)


V9_TUNING_CONFIGS: list[dict] = [
    # The catalog's default: 8x16 per thread (128 accumulators), one 256-thread block per SM, 16-deep slices.
    _v9_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1),
    _v9_config(128, 256, 16, 64, 64, 8, 16, 4, 256, 1),
    _v9_config(128, 256, 8, 64, 64, 8, 16, 4, 256, 1),
    _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1),
    # 8-deep slices halve the main loop (1,128 instructions against 2,212): 84-87 % of cuBLAS at 2048-8192^3, but at
    # short K, where a launch after another kernel's code pays for fetching its loop again (the 16-deep tile 9-11 us,
    # results/h200-2026-11-30/icache/), it leads: 100.1-101.0 % of cuBLAS in rounds at the six K = 333 shapes from
    # 1024x4096 and 2048x2048 to 4096x4096 on an H200 (tunerounds/).
    _v9_config(256, 128, 8, 64, 64, 16, 8, 4, 256, 1),
    # v8's 128x128 shape, two blocks per SM (128 registers), with register double buffering added.
    _v9_config(128, 128, 16, 64, 32, 8, 8, 3, 256, 2),
    _v9_config(128, 128, 8, 64, 32, 8, 8, 4, 256, 2),
    # Candidates for the last points to cuBLAS. ORDER 1 / 2 walk the outer product row- / column-wise with every
    # other row / column reversed, which changes the register-reuse pattern of the FFMAs (see the source), and
    # with it the register-bank conflicts that ncu shows as dispatch stalls (cuBLAS 0.10 per issue, v9 0.27).
    _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=1),
    _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=2),
    _v9_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=1),
    _v9_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=2),
    # Round two around the first round's best (256x128x16, ORDER 1: 93-94 % of cuBLAS on the H100): 8-deep slices
    # (half the loop code, twice the barriers) and the 8x4-lane warp shape with ORDER 1. (32-deep slices and a
    # fourth stage with ORDER 1 spill.)
    _v9_config(256, 128, 8, 64, 64, 16, 8, 3, 256, 1, order=1),
    _v9_config(128, 256, 8, 64, 64, 8, 16, 3, 256, 1, order=1),
    _v9_config(256, 128, 16, 128, 32, 16, 8, 3, 256, 1, order=1),
    # Round three: ORDER 3 (rows one from each fragment in turn) and ORDER 4 (the other rows reversed). (A k loop
    # rolled two or four steps per trip, for the instruction-cache stalls, cost 6-10 % of the issue slots in loop
    # overhead or spilled: not kept.)
    _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=3),
    _v9_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4),
    _v9_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=3),
    # Other warp shapes: 4x8 and 8x4 lanes per warp give other shared-memory broadcast patterns.
    _v9_config(128, 256, 16, 32, 128, 8, 16, 3, 256, 1),
    _v9_config(256, 128, 16, 128, 32, 16, 8, 3, 256, 1),
    # Two 128-thread blocks per SM instead of one of 256: a block's barrier no longer idles the whole SM.
    _v9_config(128, 128, 8, 64, 64, 8, 16, 4, 128, 2),
    _v9_config(128, 128, 8, 64, 64, 8, 16, 4, 128, 2, order=1),
    # Round four, for the instruction-cache stalls: ORDER 3 (the tuned best) with 8-deep slices, whose unrolled
    # loop is half the code, and with a fourth stage. (256x128x16 with four stages and ORDER 3 spills.)
    # (Its narrow twin spills 4 bytes on sm_80 under nvcc 13.0: at N % 4 != 0 it keeps its own kernel.)
    _v9_config(128, 256, 8, 64, 64, 8, 16, 3, 256, 1, order=3, narrow=False),
    _v9_config(128, 256, 8, 64, 64, 8, 16, 4, 256, 1, order=3),
    _v9_config(256, 128, 8, 64, 64, 16, 8, 3, 256, 1, order=3),
    _v9_config(128, 256, 16, 64, 64, 8, 16, 4, 256, 1, order=3),
    # Shallow K (333) with a mid-size output: v9-splitk's 64x128 tile without the split and its zeroing launch,
    # where K is too short to split (at 1024x1024x333 v8-async's 64x64 tile reached 81 % of cuBLAS on an H100).
    # (Its 64x64 tile with six blocks per SM spills 24 bytes in this kernel under nvcc 13: left out.)
    _v9_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3),
    # cuBLAS's tile at 4096x333x333 on an H200 (sm80_xmma_gemm_f32f32_f32f32_f32_nn_n_tilesize64x64x8_stage3: 128
    # threads of 8x4, 384 blocks, 39.5 us under ncu against v9-splitk 64x128's 50.0): 64x64 with four warps of 32x32,
    # 96-128 registers, so four blocks fit an SM.
    # (Capped for three blocks per SM instead, 149-167 registers: on an H200 the 16-deep one reached 76.8 % of
    # cuBLAS at 4096x333x333 against this one's 80.6 %, 95.6 against 98.7 % at 4096x127x333, 91.0 against 89.7 % at
    # 1024x333x333, and neither beat sgemm-auto's choice at 107 of the grid's 108 shapes. Its narrow kernel's B
    # copies still share one address register (the same SASS): dropped, results/h200-2026-11-28/b3/. Those copies a
    # warp per K row, which gives each row one address register (V9_B_ROWWISE), read 81.0-83.7 % against this tile's
    # 80.7-80.9 % at 4096x333x333 in three runs, and cuBLAS's four 64x16 warps 78.2 %: results/h200-2026-11-28/
    # v9var/.)
    _v9_config(64, 64, 8, 32, 32, 8, 4, 3, 128, 4),
    _v9_config(64, 64, 16, 32, 32, 8, 4, 3, 128, 4),
    # The 16-deep one in FFMA order 1: at 4096x333x333 it stalled 0.44 warp cycles per issued instruction on
    # dispatch against cuBLAS's 0.08 (ncu, H200). In 30 interleaved rounds on an H200, % of cuBLAS at 4096x333x333 /
    # 2048x333x333 / 4096x127x333 / 1024x333x333, orders 0 to 4: 88.4 / 90.7 / 102.7 / 93.7, ORDER 1 91.5 / 94.5 /
    # 104.3 / 95.3, 2 90.2 / 92.8 / 104.2 / 94.8, 3 88.5 / 91.6 / 103.0 / 94.9, 4 91.7 / 93.2 / 103.4 / 95.5
    # (results/h200-2026-11-29/why_misses/orders.txt).
    _v9_config(64, 64, 16, 32, 32, 8, 4, 3, 128, 4, order=1),
]


def config_by_id(config_id: str) -> dict | None:
    """The v8, v9 or split-K tuning configuration with this id."""
    return next((c for c in all_tuning_configs() if c["id"] == config_id), None)


def spec_for(config: dict) -> KernelSpec:
    """The configuration's base catalog entry (v8-async, v9-regdb, v8-splitk or v9-splitk) re-targeted at it."""
    return replace(
        catalog_entry(config["base"]),
        id=config["id"],
        entry=config["entry"],
        block=tuple(config["block"]),
        tile_m=config["tile_m"],
        tile_n=config["tile_n"],
        grid_order=config["grid_order"],
        dynamic_smem_bytes=config["dynamic_smem_bytes"],
        params=dict(config["params"]),
        narrow_entry=config.get("narrow_entry"),
    )


def tuned_record_path(device_name: str) -> Path:
    """Where the best configuration per size is recorded for a GPU (committed with the results)."""
    return TUNED_DIR / f"{device_slug(device_name)}.json"


def read_tuned_record(device_name: str) -> dict | None:
    """This GPU's tuning record as written (None: no record, or one that is not a JSON object)."""
    try:
        record = json.loads(tuned_record_path(device_name).read_text())
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def record_entries(entries: object, bases: Collection[str]) -> list[dict]:
    """The well-formed entries of a record's `best` or `measured` list: a known configuration of one of `bases`
    at positive integer m, n, k (anything else a hand-edited or older record holds is skipped)."""
    return [
        e
        for e in (entries if isinstance(entries, list) else [])
        if isinstance(e, dict)
        and (config := config_by_id(str(e.get("config", ""))))
        and config["base"] in bases
        and all(isinstance(e.get(d), int) and e[d] > 0 for d in ("m", "n", "k"))
    ]


# Shared memory one SM can give its blocks on sm_90 (228 KB, of which 1 KB per block is reserved).
SHARED_BYTES_PER_SM = 233_472
RESERVED_SHARED_PER_BLOCK = 1024
DEFAULT_SM_COUNT = 132


def blocks_per_sm(config: dict) -> int:
    """Resident blocks of a configuration per SM: its launch-bounds target, capped by shared memory."""
    params = config["params"]
    by_threads = params.get("MIN_BLOCKS") or THREADS_PER_SM_TARGET // params["THREADS"]
    by_smem = SHARED_BYTES_PER_SM // (config["dynamic_smem_bytes"] + RESERVED_SHARED_PER_BLOCK)
    return max(1, min(by_threads, by_smem))


def shape_efficiency(config: dict, m: int, n: int, k: int, sm_count: int = DEFAULT_SM_COUNT) -> float:
    """The share of the launched work that is useful at this shape, in (0, 1].

    Three losses a tile choice causes: the last wave of blocks only partly fills the GPU (wave quantisation),
    edge tiles compute padding past M and N, and the last K slice is padded to the slice depth. A split-K
    configuration launches tiles x splits blocks (spec.split_count), pads each split to whole slices and pays
    for its reductions into C or across its cluster (split_reduction_fill); every other configuration has one split.
    """
    bm, bn, bk = (config["params"][key] for key in ("BM", "BN", "BK"))
    tiles = math.ceil(m / bm) * math.ceil(n / bn)
    per_sm = blocks_per_sm(config)
    if config["params"].get("STREAM_K"):
        return _stream_k_efficiency(config, m, n, k, sm_count, tiles, per_sm)
    splits = config_split_count(config, m, n, k, sm_count)
    blocks = tiles * splits
    full_waves, rest = divmod(blocks, sm_count * per_sm)
    # A partly filled last wave spreads its blocks over the SMs; a block with its SM less shared runs faster, but
    # not per_sm times faster (it hides less latency): take its wave as lasting sqrt(share of the SM it fills).
    last_wave = math.sqrt(math.ceil(rest / sm_count) / per_sm) if rest else 0.0
    wave_fill = blocks / (sm_count * per_sm * (full_waves + last_wave))
    tile_fill = (m * n) / (math.ceil(m / bm) * bm * math.ceil(n / bn) * bn)
    per_split = math.ceil(math.ceil(k / bk) / splits)
    k_fill = k / (splits * per_split * bk)
    return wave_fill * tile_fill * k_fill * split_reduction_fill(splits, per_split * bk, config["base"])


def _stream_k_efficiency(config: dict, m: int, n: int, k: int, sm_count: int, tiles: int, per_sm: int) -> float:
    """shape_efficiency of a stream-K configuration: its blocks (one wave at most) take equal runs of slices, so the
    losses are SMs left without a block, edge tiles, the last slice's padding and the reductions of the segments
    that each tile is cut into (about blocks / tiles + 1 where blocks outnumber tiles)."""
    bm, bn, bk = (config["params"][key] for key in ("BM", "BN", "BK"))
    slices = math.ceil(k / bk)
    spec = spec_for(config)
    blocks = spec.launch_grid(m, n, k, sm_count)[0]
    wave_fill = math.sqrt(min(1.0, blocks / (sm_count * per_sm)))
    tile_fill = (m * n) / (math.ceil(m / bm) * bm * math.ceil(n / bn) * bn)
    run = math.ceil(spec.tile_slices(m, n, k) / blocks)
    segments = max(1, math.ceil(blocks / tiles) + (1 if blocks > tiles else 0))
    reduction = split_reduction_fill(segments, min(run, slices) * bk) if blocks > tiles else 1.0
    return wave_fill * tile_fill * (k / (slices * bk)) * reduction


def _sm_count(device_name: str) -> int:
    row = table_name_for(device_name)
    return GPU_TABLE[row].sm_count if row else DEFAULT_SM_COUNT


def _log_distance(entry: dict, m: int, n: int, k: int) -> float:
    """How far apart two shapes are, per dimension on a log scale (a 4096x4096x333 is not 1024^3)."""
    return sum(abs(math.log(entry[d]) - math.log(v)) for d, v in (("m", m), ("n", n), ("k", k)))


def predicted_tflops(entries: list[dict], config: dict, m: int, n: int, k: int, sm_count: int) -> float | None:
    """A configuration's expected TFLOP/s at a shape: its measurement at the nearest swept shape, scaled by how
    much of the launched work is useful there against here (shape_efficiency). A v8-splitk configuration that was
    never measured is predicted from its v8-async twin (predicted_split_k_tflops); a v9-splitk or v9-clusterk one
    only from its own measurements, and a v9-splitk one not at all where it would launch a single split (a stream-K
    one always adds its segments into C: it is predicted at every shape). None where the configuration cannot run
    the shape (KernelSpec.size_problem)."""
    if spec_for(config).size_problem(m, n, k) is not None:
        return None
    own = [e for e in entries if e.get("config") == config["id"] and e.get("tflops")]
    single_split = config_split_count(config, m, n, k, sm_count) == 1 and not config["params"].get("STREAM_K")
    if config["base"] == V9_SPLITK_BASE and single_split:
        return None
    if not own:
        return predicted_split_k_tflops(entries, config, m, n, k, sm_count) if config["base"] == SPLITK_BASE else None
    nearest = min(own, key=lambda e: _log_distance(e, m, n, k))
    here = shape_efficiency(config, nearest["m"], nearest["n"], nearest["k"], sm_count)
    there = shape_efficiency(config, m, n, k, sm_count)
    return float(nearest["tflops"]) * there / here


def tuned_config_id(device_name: str, base_kernel: str, m: int, n: int, k: int) -> str | None:
    """The configuration of `base_kernel` to run on this GPU at m x n x k, from its tuning record (None: no record).

    A record with every configuration's measurements ("measured") picks the configuration with the highest
    predicted TFLOP/s at this shape (predicted_tflops), so a size between or outside the swept ones gets tiles
    that fill the GPU; an older record with only "best" falls back to the best at the nearest swept shape.
    """
    choice = tuned_choice(device_name, base_kernel, m, n, k)
    return choice[0] if choice else None


def tuned_choice(
    device_name: str, base_kernel: str, m: int, n: int, k: int, running: str | None = None
) -> tuple[str, str | None] | None:
    """tuned_config_id's configuration, with nvrtc_mismatch's note for a run built by NVRTC `running` (None where
    the record measured it with that NVRTC or does not say), from one read of the record (None: no choice)."""
    record = read_tuned_record(device_name)
    if record is None:
        return None
    measured = record_entries(record.get("measured"), {base_kernel})
    if measured:
        sm_count = _sm_count(device_name)
        scored = [
            (tflops, config_id)
            for config_id in dict.fromkeys(e["config"] for e in measured)
            if (tflops := predicted_tflops(measured, config_by_id(config_id), m, n, k, sm_count)) is not None
        ]
        if not scored:
            return None
        config_id = max(scored)[1]
        return config_id, nvrtc_mismatch(recorded_nvrtc(measured, config_id, m, n, k), running)
    best = record_entries(record.get("best"), {base_kernel})
    if not best:
        return None
    return min(best, key=lambda b: _log_distance(b, m, n, k))["config"], None


def measured_per_shape(results: list[dict]) -> list[dict]:
    """Every verified configuration result of a sweep, in the record's form (what tuned_config_id predicts from)."""
    return [
        {"base": config["base"], "m": r["m"], "n": r["n"], "k": r["k"], "config": r["kernel"], "tflops": r["tflops"]}
        for r in results
        if r.get("status") == "ok" and r.get("tflops") and (config := config_by_id(r["kernel"])) is not None
    ]


def recorded_nvrtc(measured: list[dict], config_id: str, m: int, n: int, k: int) -> list[str]:
    """The NVRTC versions that built `config_id` where the record measured it (its `nvrtc` members, sorted): its
    measurements at m x n x k where there are any, else all of them. Empty where none says (records before
    2026-12-01 did not)."""
    own = [e for e in measured if e.get("config") == config_id]
    here = [e for e in own if (e.get("m"), e.get("n"), e.get("k")) == (m, n, k)] or own
    return sorted({str(e["nvrtc"]) for e in here if e.get("nvrtc")})


# How nvrtc_mismatch's note starts, in a result's `config` after its configuration (nvrtc_note_in finds it there).
NVRTC_NOTE_START = "measured with NVRTC "


def nvrtc_mismatch(recorded: list[str], running: str | None) -> str | None:
    """What to tell a run that builds its kernels with NVRTC `running` about a choice measured with the `recorded`
    versions (recorded_nvrtc): None where either is unknown or `running` is among them. It matters: NVRTC 13.2
    built v9-regdb's tuned tile 5 points slower than 13.0 on an H200 (results/h200-2026-12-01/nvrtc/), enough to
    change which configuration is fastest."""
    if not running or not recorded or running in recorded:
        return None
    return (
        f"{NVRTC_NOTE_START}{' and '.join(recorded)}, this run builds with {running}: "
        "a compiler change can reorder the configurations, so sweep them again with tune under this NVRTC"
    )


def nvrtc_note_in(config_text: str | None) -> str | None:
    """The nvrtc_mismatch note a result's `config` carries (from its start to the closing parenthesis), or None."""
    if not config_text or NVRTC_NOTE_START not in config_text:
        return None
    return config_text[config_text.index(NVRTC_NOTE_START) :].removesuffix(")")


def tunable_bases() -> list[str]:
    """Catalog ids whose tile configuration the sweep chooses."""
    return list(dict.fromkeys(c["base"] for c in all_tuning_configs()))


def best_per_size(results: list[dict]) -> list[dict]:
    """The fastest verified configuration of each tunable kernel at each size (ties go to the first)."""
    best: dict[tuple[str, int, int, int], dict] = {}
    for r in results:
        config = config_by_id(r["kernel"])
        if r["status"] != "ok" or not r.get("tflops") or config is None:
            continue
        key = (config["base"], r["m"], r["n"], r["k"])
        if key not in best or r["tflops"] > best[key]["tflops"]:
            best[key] = r
    return [
        {
            "base": base,
            "m": m,
            "n": n,
            "k": k,
            "config": r["kernel"],
            "tflops": r["tflops"],
            "pct_cublas": r.get("pct_cublas"),
        }
        for (base, m, n, k), r in sorted(best.items())
    ]


# --- v8-splitk: split-K (`sgemm_splitk` in kernels/src/v8_splitk.cu) ---
# v8-async's tile vocabulary and static_asserts; each configuration is the twin of a v8-async one (same template
# arguments), so that a GPU whose record has no split-K measurement yet predicts it from the twin's.

SPLITK_BASE = "v8-splitk"
SPLITK_SOURCE = "v8_splitk.cu"
# K depth (elements) that one more split's reduction into a C element costs, as if the split were that much deeper:
# v8-splitk's 128 splits of 64 at 127x127x8191 ran at about 1/8 of what its wave fill alone predicts (on an
# H100), which this reproduces (64 / (64 + 4 x 127) = 0.11). Rough: it also absorbs the short pipelines.
REDUCTION_K_PER_SPLIT = 4.0
# The zeroing launch before a split-K multiply: a launch's latency plus writing C at about 3 TB/s.
ZERO_LAUNCH_SECONDS = 2e-6
ZERO_BYTES_PER_SECOND = 3e12


def _splitk_config(bm: int, bn: int, bk: int, wm: int, wn: int, tm: int, tn: int, stages: int, threads: int) -> dict:
    params = dict(zip(_TILE_KEYS, (bm, bn, bk, wm, wn, tm, tn, stages, threads), strict=True))
    params["MIN_BLOCKS"] = THREADS_PER_SM_TARGET // threads
    return _build(SPLITK_BASE, SPLITK_SOURCE, "sgemm_splitk", params, problems(params), with_min_blocks=False)


SPLITK_TUNING_CONFIGS: list[dict] = [
    # The catalog's default (v8-async's default tile): 2 blocks per SM.
    _splitk_config(128, 128, 16, 64, 32, 8, 8, 3, 256),
    # Smaller tiles, 4 blocks per SM: 127x127 is 4 tiles instead of 1, so each needs a quarter of the splits.
    _splitk_config(64, 64, 16, 32, 32, 8, 4, 3, 128),
    # One warp per 32x32 tile, 16 blocks per SM: the most tiles for a small M x N (no v8-async twin: predicted only
    # from its own measurements). 2 stages: 16 blocks of 3 would not fit sm_80's 164 KB of shared memory. 128x64 and 64x128 with 128 threads spill under the 128-register cap (nvcc 13).
    _splitk_config(32, 32, 16, 32, 32, 8, 4, 2, 32),
]


# --- v9-splitk: split-K on v9's register-double-buffered body (`sgemm_regdb_splitk` in kernels/src/v9_splitk.cu) ---
# v9-regdb's tile vocabulary and static_asserts. Predicted only from its own measurements (never from a v9-regdb
# twin), and never where it would not split: with one split it is its unsplit twin plus a zeroing launch.

V9_SPLITK_BASE = "v9-splitk"
V9_SPLITK_SOURCE = "v9_splitk.cu"
SPLIT_K_BASES = (SPLITK_BASE, V9_SPLITK_BASE)


def _v9_splitk_config(
    *tile: int,
    order: int = 0,
    deep_slices: int = 0,
    fill: bool = False,
    stream_k: bool = False,
    pad_n: bool = False,
    pad_c: bool = False,
    pad_b: bool = False,
    tile_copy: bool = False,
    serial: bool = False,
    zero_first: bool = False,
    fused: bool = False,
) -> dict:
    """A v9-splitk configuration; `deep_slices` (when set) replaces the split rule's preferred depth of a split in
    slices (the same kernel, fewer and deeper splits: its id ends in -d<slices>); `fill` splits it for one block per
    SM instead (-fill); `stream_k` makes it the stream-K kernel of the same tile (sgemm_regdb_streamk: one wave of
    blocks sharing all tiles' K slices; id ends in -sk);
    `pad_n` makes it run its 16-byte kernel where N % 4 != 0, on copies of B and C padded to N rounded up to a
    multiple of 4 (KernelSpec.pads_n; id ends in -pad), and only there; `pad_c` makes it add into a copy of C
    padded that way while its padded-C kernel reads B where it lies (KernelSpec.pads_b false; id ends in -padc);
    `pad_b` (stream-K only) makes its padded-B kernel read a copy of B padded that way and add into C where it lies
    (KernelSpec.pads_c false; id ends in -padb); `tile_copy` (stream-K with `pad_n`) makes the block that completes
    a tile copy it back from C's copy, instead of a launch after the multiply (KernelSpec.tile_copy; -pad-tcopy);
    `serial` makes split 0 store its partial tile and the others add after it, with no zeroing launch
    (sgemm_regdb_splitk_serial; KernelSpec.serial; id has -ser after its depth); `zero_first` makes them serial
    splits whose split 0 zeroes its tile before its main loop, after which every split adds
    (sgemm_regdb_splitk_zfirst; -zf in place of -ser); `fused` makes a stream-K configuration one launch that zeroes
    C, and where N % 4 != 0 pads B and C and copies C back, itself (sgemm_regdb_streamk_fused; KernelSpec.fused; id
    ends in -fused)."""
    params = _v9_params(*tile, order=order)
    if deep_slices:
        params["SPLIT_DEEP_SLICES"] = deep_slices
    if fill:
        params["SPLIT_FILL"] = 1
    if stream_k:
        params["STREAM_K"] = 1
    if pad_n:
        params["PAD_N"] = 1
    if pad_c:
        params["PAD_C"] = 1
    if pad_b:
        if not stream_k or fused or pad_n or pad_c:
            raise ValueError("a padded-B configuration is a stream-K one that pads nothing else")
        params["PAD_B"] = 1
    if tile_copy:
        if not (stream_k and pad_n) or fused:
            raise ValueError("a tile-copy configuration is a padded stream-K one, not fused")
        params["TILE_COPY"] = 1
    if serial or zero_first:
        params["SERIAL"] = 1
    if zero_first:
        params["ZERO_FIRST"] = 1
    if fused:
        params["FUSED"] = 1
    template = (
        "sgemm_regdb_streamk_fused"
        if fused
        else "sgemm_regdb_streamk"
        if stream_k
        else "sgemm_regdb_splitk_zfirst"
        if zero_first
        else "sgemm_regdb_splitk_serial"
        if serial
        else "sgemm_regdb_splitk"
    )
    return _build(
        V9_SPLITK_BASE,
        V9_SPLITK_SOURCE,
        template,
        params,
        v9_problems(params),
        True,
        narrow_template=f"{template}_tilecopy"
        if tile_copy
        else None
        if pad_n or fused
        else f"{template}_padc"
        if pad_c
        else f"{template}_padb"
        if pad_b
        else f"{template}_narrow",
    )


V9_SPLITK_TUNING_CONFIGS: list[dict] = [
    # The catalog's default: v9's tuned tile (128x256, ORDER 3, one block per SM), for M x N of a few dozen tiles.
    _v9_splitk_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=3),
    # 128x128, two blocks per SM (128 registers): twice the tiles.
    _v9_splitk_config(128, 128, 16, 64, 32, 8, 8, 3, 256, 2),
    # Smaller tiles for small M x N (127x127 is 2 or 4 tiles instead of 1, so each needs fewer splits), still 8x8
    # per thread; 3 and 6 blocks per SM (4 and 8 spill under 128 registers).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6),
    # cuBLAS's tile at narrow, deep-K shapes (ncu on an H100: 128x128x8, 3 stages, four warps of 64x64 at
    # 4096x127x4096, split 8 ways): 8x16 per thread in 128-thread blocks, two per SM. (16-deep slices spill.)
    _v9_splitk_config(128, 128, 8, 64, 64, 8, 16, 3, 128, 2),
    _v9_splitk_config(128, 128, 8, 64, 64, 8, 16, 4, 128, 2),
    # Fewer, deeper splits of the same kernels: cuBLAS splits 1024x127x4096 8 ways (512 K each) where the default
    # rule takes 16 splits of 256; 32 slices of 16 (or 64 of 8) per split give the same.
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=32),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=32),
    _v9_splitk_config(128, 128, 8, 64, 64, 8, 16, 3, 128, 2, deep_slices=64),
    # Shallower splits of the small tiles: with K = 333 (21 slices) the default depth of 16 slices never splits, so
    # 1024x1024x333 runs 256 tiles of 64x64 on 132 SMs of 6 blocks each; 8 slices a split doubles the blocks.
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8),
    # Deep K over a narrow N (127, 333), where 64x128 is the best tile at 84-89 % of cuBLAS: a fourth stage to hide
    # more of the copy latency. (The tile turned to 128x64 spills 12 bytes on sm_80 under 168 registers.)
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, deep_slices=8),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, deep_slices=32),
    # Stream-K (one wave of blocks, each an equal run of all tiles' K slices): the large tiles where tiles x splits
    # cannot fill a wave (333x4096 is 48 tiles of 128x256 for 132 SMs: 2 splits leave 36 idle, 3 make 1.1 waves);
    # 256x128 for N of 127 or 333, 128x256 for M of 127 or 333.
    _v9_splitk_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, order=3, stream_k=True),
    _v9_splitk_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4, stream_k=True),
    _v9_splitk_config(128, 128, 16, 64, 32, 8, 8, 3, 256, 2, stream_k=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True),
    # Where N % 4 != 0, the 16-byte kernel at N rounded up to a multiple of 4, on padded copies of B and C: the tiles
    # that lead at N of 127 and 333. The narrow kernels' 4-byte copies of B and reductions into C cost them most of
    # what they miss there (an H200 probe: the 256x128 stream-K tile reached 46.2 TFLOP/s at 4096x128x8191 and 39.8
    # at 4096x127x8191; 64x128 stream-K 23.9 at 333x128x8191 and 16.8 at 333x127x8191).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8, pad_n=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8, pad_n=True),
    _v9_splitk_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4, stream_k=True, pad_n=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True, pad_n=True),
    # The same tiles with C alone padded: at deep K, B is the large operand (K x N) and its copy the padded
    # operation's largest cost, while the reductions into C's unaligned rows are what the narrow kernels lose most
    # (B padded alone, 333x127x8191 on an H200: 71.4 % of cuBLAS, against 76.1 % narrow and 83 % with both; C
    # alone 86 %). Where M >= 1024 padding both stays ahead (each column of B is read by many tiles).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8, pad_c=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8, pad_c=True),
    _v9_splitk_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4, stream_k=True, pad_c=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True, pad_c=True),
    # Two ways to drop the copy back of the padded stream-K operation, which took 7.3 of 110.6 us at 4096x127x4096 on
    # an H200 while the multiply alone matched cuBLAS (results/h200-2026-11-30/padlaunch/). Measured on an H200 beside
    # their twins padding B and C and cuBLAS in 30 interleaved rounds (session 33, padbalone/ and tilecopy/):
    # - B alone padded, the partial tiles added into C where it lies (-padb): at 4096x127x4096 the multiply took
    #   112.1 us alone against 101.3, the unaligned reductions costing more than the launch they save (86.2 against
    #   90.4 % of cuBLAS); 84.9-99.5 % against 93.8-100 % at the other N = 127 shapes but 4096x127x8191 (64x128 tile,
    #   91.8 against 91.5). The 256x128 tile is kept, the best measured at 4096x333x4096: 94.5 % against 94.0.
    # - The block completing a tile copies it back (-pad-tcopy): with 16 tiles of 256x128 at 4096x127x4096, 16 SMs
    #   copy at the end and the multiply took 108.3 us alone (89.4 against 90.8 %). The 64x128 tile, with four times
    #   the tiles and so the copying blocks, is kept: ahead of its twin at 4096x127x4096 (90.7 against 90.1 %),
    #   4096x127x8191 (91.8 / 91.4), 2048x127x4096 (95.6 / 94.5) and 4096x333x4096 (90.4 / 89.0), behind at 1024x127x8191
    #   (99.1 / 99.6) and 333x127x8191 (85.7 / 86.5). Since its twin's launches after the first are programmatic
    #   (session 34) and its own segment loop became streamk_run's (session 35), it leads at none of the six
    #   (tilecopy_hook/): 90.5 against 90.6 % at 4096x127x4096, 89.2 / 88.9 at 4096x333x4096 (intervals overlapping),
    #   behind by 1.1-4.1 points at the other four. It stays a configuration for the record; the sweeps measure it.
    _v9_splitk_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4, stream_k=True, pad_b=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, stream_k=True, pad_n=True, tile_copy=True),
    # Serial splits of the tiles that lead where M x N is a handful of tiles and K is deep (333x127, 127x127) or M
    # or N is large and K shallow (333x4096x333): there the zeroing launch before the multiply is a tenth of the
    # operation (2.4-2.9 us of 24-37 us on an H100). The sweep decides where: they lose where a handful of tiles has
    # dozens of splits each (v9_splitk.cu).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8, serial=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8, serial=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, deep_slices=8, serial=True),
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8, pad_c=True, serial=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8, pad_c=True, serial=True),
    # cuBLAS's schedule at 333x127x4096 and 333x127x8191 on an H200 (cutlass_80_simt_sgemm_128x64_8x5: 128x64 tiles
    # of 8-deep slices, five stages, four warps, one block per SM, 6 tiles split 22 ways onto exactly 132 SMs, 120
    # registers), where the 64x64 split 32 ways reaches 81-83 % of it: one block per SM, so the split rule fills the
    # 132 SMs once. No spills on sm_80 or sm_90.
    _v9_splitk_config(128, 64, 8, 64, 32, 8, 8, 5, 128, 1),
    _v9_splitk_config(128, 64, 8, 64, 32, 8, 8, 5, 128, 1, serial=True),
    _v9_splitk_config(128, 64, 8, 64, 32, 8, 8, 5, 128, 1, pad_c=True),
    # cuBLAS's split-K launches at 333x127x4096 (6 tiles x 22 splits, 132 blocks; ncu on an H200): one block per
    # SM. The 64x128 four-stage tile split that way (the default rule takes 18 splits there, leaving 24 SMs idle)
    # reached 86.6 % of cuBLAS at 333x127x4096 and 86.7 % at 333x127x8191 against 80.9 and 73.6 % (three stages:
    # 85.2 and 85.7 %). cuBLAS's 256x64 tile at 4096x64x4096 (16 x 8 blocks; ORDER 3, as the default order spills
    # 4 bytes on sm_90) reached 76.6 % there against 90.1 % for the 64x64 split 8 ways: not kept
    # (results/h200-2026-11-29/why_misses/).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, fill=True),
    # The grid's last misses on an H200 (grid_fill/), where a zeroing launch of 2.0-2.3 us comes before a 15-68 us
    # multiply: the one-block-per-SM split (333x127x4096 87.6 %, 333x127x8191 88.9, 1024x127x4096 89.6) and the
    # 64x64 split 8 ways (4096x64x4096 89.6), with serial splits instead. Swept at the whole grid (grid_serial/): the
    # second took 4096x64x4096 to 93.0 %; the first led only at K = 333 (4096x64x333 90.0 -> 98.4 %), and at
    # 333x127x4096, 22 splits a tile waiting for split 0, fell to 78.5 % against 86.6 % with the zeroing launch.
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, fill=True, serial=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=32, serial=True),
    # FFMA ORDER 3 on the one-block-per-SM split, 30 launches each on an H200 against ORDER 0: 333x127x8191 85.6 ->
    # 87.1 % of cuBLAS, 1024x127x4096 89.2 -> 90.8, the other four shapes where it leads within 0.6 points (ORDER 1
    # and 4 lower; results/h200-2026-11-29/fill_orders/).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, order=3, fill=True),
    # Serial splits lose where each tile has dozens of splits (above): split 0 zeroing its tile first keeps the
    # additions of all splits at once and still drops the zeroing launch. The grid after them (grid_zf/, H200):
    # 333x127x4096 86.2 -> 93.6 %, 1024x127x4096 89.8 -> 93.5, 333x127x8191 87.1 -> 91.7, 4096x64x4096 93.0 -> 93.3.
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 4, 128, 3, order=3, fill=True, zero_first=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=32, zero_first=True),
    # The padded-C splits 8 slices deep that lead at 127x127x8191 (H200, 30 interleaved rounds: 64x64 91.9 % of
    # cuBLAS, 64x128 91.4 %; results/h200-2026-11-30/closecalls_rounds/) are three launches there: C's copy zeroed,
    # the multiply, the copy back. Zero-first splits drop the first. The same shape's grid read the 64x64 split at
    # 93.0 % in one run and 86.7 % in the next (cuBLAS 19.0 us both times). Measured beside their twins in 30
    # interleaved rounds (results/h200-2026-11-30/ab_zfpadc/), they are no faster: 127x127x8191 93.0 and 93.5 % of
    # cuBLAS against 93.5 and 93.4 %; 333x127x8191 90.5 and 86.4 against 90.1 and 87.5. Kept for the sweep to choose
    # (one launch fewer wherever they run), and chosen at 127x127x8191 (grid_zfpadc/: 91.6 %); the 64x128 one since
    # every auto configuration was timed there in rounds (session 31, tunerounds_low/: 101.1 % of cuBLAS).
    _v9_splitk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, deep_slices=8, pad_c=True, zero_first=True),
    _v9_splitk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, deep_slices=8, pad_c=True, zero_first=True),
    # Stream-K in one launch: at 4096x127x4096 on an H200 the padded 256x128 stream-K multiply alone took 101.1 us
    # against cuBLAS's 101.2, the whole operation 110.6 (the padding launch 6.5 us alone, the copy back 7.3;
    # results/h200-2026-11-30/padlaunch/). The kernel does both itself, and zeroes C where nothing is padded, behind
    # barriers over its cooperatively launched grid. Measured (fused/, 30 interleaved rounds with cuBLAS), it is
    # slower at every shape: 4096x127x4096 119.8 us against 111.2 for the three launches (84.5 against 91.0 % of
    # cuBLAS), 4096x127x8191 211.4 against 195.5, 1024x127x8191 70.3 against 65.2; the 64x128 and 128x256 tiles fused
    # lost 1.8-9.7 us to their twins too. At 4096x128x4096, where it only zeroes C, it took 109.3 us against the
    # multiply's 101.3 alone. The cooperative launch and its two barriers, timed without the work, cost 3.7 us over a
    # plain launch (session 33, coopprobe/), less than half of that. With 8 loads in flight a thread in its copy
    # phases (fused_inflight/) it took 117.8 us against its twin's 112.7 at 4096x127x4096 and 201.8 against 196.2 at
    # 4096x127x8191, but 71.8 against 66.4 at 2048x127x4096: still slower everywhere. Dropped from the sweep but for
    # this tile, kept for the record.
    _v9_splitk_config(256, 128, 16, 64, 64, 16, 8, 3, 256, 1, order=4, stream_k=True, fused=True),
]


# --- v9-clusterk: split-K inside a thread-block cluster (`sgemm_regdb_clusterk` in kernels/src/v9_clusterk.cu) ---
# v9-regdb's tile vocabulary plus SPLITS, the cluster size: the K splits per tile at every shape (gridDim.z), a
# template parameter rather than a per-shape rule, so each split count is a configuration of its own and the tuning
# sweep measures which one a shape wants. Predicted only from its own measurements, as v9-splitk.

V9_CLUSTERK_BASE = "v9-clusterk"
V9_CLUSTERK_SOURCE = "v9_clusterk.cu"
# Cluster sizes the kernel instantiates (8 is the portable maximum of a thread-block cluster).
CLUSTER_SPLITS = (2, 4, 8)
# The partial tile's rows are padded by 4 floats in shared memory (v9::CPAD in v9_body.cuh).
C_PAD = 4
# K depth (elements) that the cluster's reduction costs each split, as if the split were that much deeper: writing
# the partial tile to shared memory, two cluster barriers and BM x BN / SPLITS sums of SPLITS float4 loads over
# distributed shared memory per block, whatever SPLITS is. Rough and not yet measured (v8-splitk's atomics cost
# REDUCTION_K_PER_SPLIT for every further split instead).
CLUSTER_REDUCTION_K = 8.0


def clusterk_smem_bytes(bm: int, bn: int, bk: int, stages: int) -> int:
    """Dynamic shared memory of a v9-clusterk block: the pipeline's stages, or the padded BM x (BN + C_PAD) float
    partial tile that reuses them after the main loop, whichever is larger."""
    return max(smem_bytes(bm, bn, bk, stages), bm * (bn + C_PAD) * 4)


def v9_clusterk_problems(p: dict[str, int]) -> list[str]:
    """Why a v9-clusterk parameter set would fail its static_asserts or not fit an SM (empty when it is valid)."""
    out = v9_problems(p)
    splits = p.get("SPLITS", 0)
    if splits not in CLUSTER_SPLITS:
        out.append(f"SPLITS (the cluster size) must be one of {', '.join(map(str, CLUSTER_SPLITS))}")
    elif p["BM"] % splits:
        out.append("BM must divide by SPLITS: each block of a cluster sums whole rows of the tile")
    smem = clusterk_smem_bytes(p["BM"], p["BN"], p["BK"], p["STAGES"])
    if p["MIN_BLOCKS"] * (smem + RESERVED_SHARED_PER_BLOCK) > SHARED_BYTES_PER_SM:
        out.append(f"MIN_BLOCKS blocks of {smem} B of shared memory must fit one SM's")
    return out


def _v9_clusterk_config(*tile: int, splits: int, order: int = 0) -> dict:
    params = _v9_params(*tile, order=order)
    params["SPLITS"] = splits
    bad = v9_clusterk_problems(params)
    config = _build(V9_CLUSTERK_BASE, V9_CLUSTERK_SOURCE, "sgemm_regdb_clusterk", params, bad, True)
    config["dynamic_smem_bytes"] = clusterk_smem_bytes(*(params[k] for k in ("BM", "BN", "BK", "STAGES")))
    return config


V9_CLUSTERK_TUNING_CONFIGS: list[dict] = [
    # The catalog's default: v9-splitk's 64x128 tile (3 blocks per SM), 4 splits: narrow M or N, deep K.
    _v9_clusterk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, splits=4),
    _v9_clusterk_config(64, 128, 16, 32, 64, 8, 8, 3, 128, 3, splits=8),
    # 64x64, 6 blocks per SM, 8 splits: the most blocks for a small M x N (127x127 is 4 tiles, 32 blocks).
    _v9_clusterk_config(64, 64, 16, 32, 64, 8, 8, 3, 64, 6, splits=8),
    # 128x128, two blocks per SM (128 registers; the 67.6 KB partial tile is larger than the pipeline's stages).
    _v9_clusterk_config(128, 128, 16, 64, 32, 8, 8, 3, 256, 2, splits=2),
    _v9_clusterk_config(128, 128, 16, 64, 32, 8, 8, 3, 256, 2, splits=4),
    # v9's tuned tile (128x256, ORDER 3, one block per SM; a 133 KB partial tile) for M x N of a few dozen tiles.
    _v9_clusterk_config(128, 256, 16, 64, 64, 8, 16, 3, 256, 1, splits=2, order=3),
    # cuBLAS's tile at narrow, deep-K shapes (128x128x8, four warps of 64x64, 8x16 per thread, two blocks per SM),
    # which it splits 8 ways at 1024x127x4096 and 4096x127x4096 (v9-splitk's configurations of it).
    _v9_clusterk_config(128, 128, 8, 64, 64, 8, 16, 3, 128, 2, splits=4),
    _v9_clusterk_config(128, 128, 8, 64, 64, 8, 16, 3, 128, 2, splits=8),
]


def all_tuning_configs() -> list[dict]:
    """Every tuning configuration: v8-async's, v9-regdb's, v8-splitk's, v9-splitk's and v9-clusterk's."""
    return (
        TUNING_CONFIGS
        + V9_TUNING_CONFIGS
        + SPLITK_TUNING_CONFIGS
        + V9_SPLITK_TUNING_CONFIGS
        + V9_CLUSTERK_TUNING_CONFIGS
    )


def a_coalesced_geometry(params: dict[str, int]) -> tuple[int, int, int]:
    """(lanes on k, rows one copy of the block covers, row copies a thread) of the coalesced A copy: v9_body.cuh's
    A_KL, A_PASS_ROWS and A_ROW_COPIES."""
    lanes_on_k = min(params["BK"], 8)
    pass_rows = params["THREADS"] // lanes_on_k
    return lanes_on_k, pass_rows, params["BM"] // pass_rows


def narrow_copies_a_coalesced(params: dict[str, int]) -> bool:
    """Whether a v9 configuration's narrow kernel (N % 4 != 0) copies A with a warp on 4 rows x 8 consecutive k:
    kernels/src/v9_body.cuh's `A_COALESCED = NARROW && TM * TN <= 64 && A_ROW_COPIES <= 4`, one 32-byte sector per
    row and copy, where the other kernels' 4-k groups fetch two sectors of each of 8 rows for 16 bytes of them."""
    return params["TM"] * params["TN"] <= 64 and a_coalesced_geometry(params)[2] <= 4


def a_coalesced_ids() -> list[str]:
    """The v9-regdb and v9-splitk configurations whose narrow kernel copies A coalesced (narrow_copies_a_coalesced).
    The padded-B and tile-copy kernels launched where N % 4 != 0 run the 16-byte body (NARROW false), so they do not."""
    configs = V9_TUNING_CONFIGS + V9_SPLITK_TUNING_CONFIGS
    narrow = [
        c for c in configs if c.get("narrow_entry") and not (c["params"].get("PAD_B") or c["params"].get("TILE_COPY"))
    ]
    return [c["id"] for c in narrow if narrow_copies_a_coalesced(c["params"])]


def config_split_count(config: dict, m: int, n: int, k: int, sm_count: int = DEFAULT_SM_COUNT) -> int:
    """The K splits a configuration launches at m x n x k (1 unless it is a split-K one)."""
    if config["base"] not in (*SPLIT_K_BASES, V9_CLUSTERK_BASE):
        return 1
    return spec_for(config).split_count(m, n, k, sm_count)


def split_reduction_fill(splits: int, split_depth: int, base: str = SPLITK_BASE) -> float:
    """The share of a split-K launch's time spent multiplying rather than reducing the splits (1 for one split):
    with atomics into C each split of `split_depth` K is charged REDUCTION_K_PER_SPLIT more K for every other split
    adding into the same element; in a cluster (`base` v9-clusterk) each split is charged CLUSTER_REDUCTION_K."""
    if splits <= 1:
        return 1.0
    if base == V9_CLUSTERK_BASE:
        return split_depth / (split_depth + CLUSTER_REDUCTION_K)
    return split_depth / (split_depth + REDUCTION_K_PER_SPLIT * (splits - 1))


def twin_config(config: dict) -> dict | None:
    """The v8-async configuration with a split-K configuration's template arguments (its multiply without splits)."""
    keys = (*_TILE_KEYS, "MIN_BLOCKS")
    return next((c for c in TUNING_CONFIGS if all(c["params"][p] == config["params"][p] for p in keys)), None)


def predicted_split_k_tflops(entries: list[dict], config: dict, m: int, n: int, k: int, sm_count: int) -> float | None:
    """A split-K configuration's expected TFLOP/s from its v8-async twin's measurement at the nearest shape: scaled
    by the useful share of the work here (with the splits, shape_efficiency) against the twin's there, never above
    the twin's best measurement anywhere (splitting fills the GPU, it does not make a tile faster), plus the time
    of the zeroing launch. None when the twin was not measured either."""
    twin = twin_config(config)
    measured = [e for e in entries if twin and e.get("config") == twin["id"] and e.get("tflops")]
    if not twin or not measured:
        return None
    nearest = min(measured, key=lambda e: _log_distance(e, m, n, k))
    there = shape_efficiency(twin, nearest["m"], nearest["n"], nearest["k"], sm_count)
    rate = float(nearest["tflops"]) * shape_efficiency(config, m, n, k, sm_count) / there
    rate = min(rate, max(float(e["tflops"]) for e in measured)) * 1e12
    seconds = 2 * m * n * k / rate + ZERO_LAUNCH_SECONDS + 4 * m * n / ZERO_BYTES_PER_SECOND
    return 2 * m * n * k / seconds / 1e12
