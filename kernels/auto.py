"""sgemm-auto: the catalog's fastest SGEMM configuration for a GPU and a shape, chosen across kernels.

With a tuning record for the GPU (results/tuning/<gpu>.json, `measured`), every configuration of v8-async, v9-regdb,
v8-splitk, v9-splitk and v9-clusterk is scored by kernels.tuning.predicted_tflops at the asked shape (a v8-splitk
configuration the record never measured is predicted from its v8-async twin; a v9-splitk or v9-clusterk one counts
only where the record measured it) and the highest wins. At a shape the record swept, only the configurations it
measured there compete, each at its measurement. Without a record, a default by shape (default_config_id). The
runner swaps the chosen configuration in at launch; the result's `config` names it and where the choice came from
(AutoChoice.label).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from kernels.tuning import (
    SPLITK_BASE,
    SPLITK_TUNING_CONFIGS,
    TUNING_CONFIGS,
    V9_BASE_KERNEL_ID,
    V9_SPLITK_BASE,
    V9_TUNING_CONFIGS,
    _sm_count,
    all_tuning_configs,
    config_by_id,
    config_split_count,
    nvrtc_mismatch,
    predicted_tflops,
    read_tuned_record,
    record_entries,
    recorded_nvrtc,
    tuned_record_path,
)

AUTO_KERNEL_ID = "sgemm-auto"
# Not v9-clusterk: on an H100 it lost to v9-splitk at every narrow shape it was built for, and a record that measured
# it only at those shapes made the prediction pick it at 1024x1024x4096, where it ran at 55 % of cuBLAS.
AUTO_BASES = ("v8-async", V9_BASE_KERNEL_ID, SPLITK_BASE, V9_SPLITK_BASE)

# The defaults without a record: v9's catalog tile (128x256, one block per SM) for large M x N; v8's 64x64 tile (four
# blocks per SM) where 128x256 tiles would leave most SMs idle; split-K on 64x64 tiles where even those do not give
# every SM a block and K is deep enough to split.
DEFAULT_LARGE = V9_TUNING_CONFIGS[0]["id"]
DEFAULT_SMALL = next(c["id"] for c in TUNING_CONFIGS if (c["params"]["BM"], c["params"]["BN"]) == (64, 64))
DEFAULT_SPLIT = next(c["id"] for c in SPLITK_TUNING_CONFIGS if (c["params"]["BM"], c["params"]["BN"]) == (64, 64))


@dataclass(frozen=True)
class AutoChoice:
    """The configuration sgemm-auto runs at one shape, its predicted TFLOP/s (None for a default) and why."""

    config_id: str
    predicted_tflops: float | None
    source: str
    # Where the record measured the choice with another NVRTC than the run's (kernels.tuning.nvrtc_mismatch).
    nvrtc_note: str | None = None

    @property
    def label(self) -> str:
        """What a result records in `config`: "<config id> (tuning record <file>)" or "(default, ...)", with the
        NVRTC note after a semicolon where there is one."""
        return f"{self.config_id} ({self.source}{'; ' + self.nvrtc_note if self.nvrtc_note else ''})"


def default_config_id(m: int, n: int, k: int, sm_count: int) -> str:
    """The configuration by shape alone: v9 128x256 once its tiles fill at least half the SMs; else v8 64x64 where
    its tiles reach every SM or K is too shallow to split (one split); else split-K on 64x64 tiles."""
    large = config_by_id(DEFAULT_LARGE)
    assert large is not None
    if math.ceil(m / large["tile_m"]) * math.ceil(n / large["tile_n"]) * 2 >= sm_count:
        return DEFAULT_LARGE
    if math.ceil(m / 64) * math.ceil(n / 64) >= sm_count:
        return DEFAULT_SMALL
    split = config_by_id(DEFAULT_SPLIT)
    assert split is not None
    return DEFAULT_SPLIT if config_split_count(split, m, n, k, sm_count) > 1 else DEFAULT_SMALL


def record_measurements(device_name: str) -> tuple[str, list[dict]] | None:
    """The file name of this GPU's tuning record and its valid `measured` entries of the auto bases (None: no
    readable record)."""
    record = read_tuned_record(device_name)
    if record is None:
        return None
    return tuned_record_path(device_name).name, [
        e
        for e in record_entries(record.get("measured"), AUTO_BASES)
        if isinstance(e.get("tflops"), int | float) and e["tflops"] > 0
    ]


def _predictions(measured: list[dict], m: int, n: int, k: int, sms: int) -> dict[str, float]:
    """Every auto configuration's predicted TFLOP/s at m x n x k (predicted_tflops; one that cannot run it left out)."""
    return {
        config["id"]: tflops
        for config in all_tuning_configs()
        if config["base"] in AUTO_BASES and (tflops := predicted_tflops(measured, config, m, n, k, sms)) is not None
    }


def _measured_at(measured: list[dict], m: int, n: int, k: int) -> set[str]:
    """The configurations the record measured at exactly m x n x k."""
    return {e["config"] for e in measured if (e["m"], e["n"], e["k"]) == (m, n, k)}


def _contenders(here: set[str], scores: dict[str, float]) -> list[tuple[float, str]]:
    """(predicted TFLOP/s, configuration) of those that compete for sgemm-auto's choice at a shape: where the record
    swept it (`here`, the configurations measured there, not empty), only those; elsewhere every scored one."""
    return [(t, cid) for cid, t in scores.items() if not here or cid in here]


def auto_choice(
    device_name: str, m: int, n: int, k: int, sm_count: int | None = None, nvrtc: str | None = None
) -> AutoChoice:
    """What sgemm-auto runs on this GPU at m x n x k: the configuration with the highest predicted TFLOP/s from the
    GPU's tuning record (predicted_tflops: none for a configuration that cannot run the shape; at a swept shape only
    the configurations measured there), or default_config_id where the record is missing or measured none of the
    auto bases. `nvrtc`, the version this run builds with, gets a note where the record measured the choice with
    another (nvrtc_mismatch)."""
    sms = sm_count or _sm_count(device_name)
    found = record_measurements(device_name)
    if found and found[1]:
        name, measured = found
        # A measurement beats a prediction: where the record swept this very shape, only the configurations it
        # measured here compete (a v8-splitk one predicted from its v8-async twin at 64x64x4096 was 1.8x too high,
        # a v8-async one scaled from K = 4096 to 1024x4096x333 1.3x), each scored by its measurement here.
        here = _measured_at(measured, m, n, k)
        scored = _contenders(here, _predictions(measured, m, n, k, sms))
        if scored:
            tflops, config_id = max(scored)
            note = nvrtc_mismatch(recorded_nvrtc(measured, config_id, m, n, k), nvrtc)
            return AutoChoice(config_id, tflops, f"tuning record {name}", note)
    why = f"tuning record {found[0]} measured none of {', '.join(AUTO_BASES)}" if found else "no tuning record for"
    reason = why if found else f"{why} {device_name}"
    return AutoChoice(default_config_id(m, n, k, sms), None, f"default, {reason}")


# Measurements within this fraction of the best at a shape do not settle sgemm-auto's choice there: on an H200 the
# sweep's 10 launches put a configuration 3 % ahead at 127x127x8191 (12.91 against 12.54 TFLOP/s), and the grid's 30
# measured it at 11.5 (results/h200-2026-11-29/grid_zf/). Measured again one after another they misordered again;
# timed together in interleaved rounds (tune --interleaved) they did not (results/h200-2026-11-30/).
CLOSE_CALL_MARGIN = 0.03


def close_calls(
    device_name: str, shapes: list[tuple[int, int, int]], margin: float = CLOSE_CALL_MARGIN
) -> list[tuple[tuple[int, int, int], list[str]]]:
    """Of `shapes`, those where the GPU's tuning record measured two or more configurations within `margin` of the
    best it measured there, each with those configurations, fastest first: the choices auto_choice makes on a
    difference its sweep cannot resolve, to measure again with more launches (empty without a record)."""
    out: list[tuple[tuple[int, int, int], list[str]]] = []
    for shape, here, scores in _swept_shapes_scored(device_name, shapes):
        ranked = sorted(_contenders(here, scores), reverse=True)
        close = [cid for t, cid in ranked if t >= ranked[0][0] * (1 - margin)]
        if len(close) > 1:
            out.append((shape, close))
    return out


def _swept_shapes_scored(
    device_name: str, shapes: list[tuple[int, int, int]]
) -> Iterator[tuple[tuple[int, int, int], set[str], dict[str, float]]]:
    """Each of `shapes` the GPU's tuning record swept, with the configurations it measured there and every auto
    configuration's predicted TFLOP/s there (nothing without a record)."""
    found = record_measurements(device_name)
    if not found:
        return
    measured, sms = found[1], _sm_count(device_name)
    for m, n, k in shapes:
        if here := _measured_at(measured, m, n, k):
            yield (m, n, k), here, _predictions(measured, m, n, k, sms)


def _outbidding(here: set[str], scores: dict[str, float]) -> tuple[tuple[float, str], list[tuple[float, str]]]:
    """(auto_choice's score and configuration, the configurations never measured here predicted above it, highest
    first) at one swept shape; the choice is (0.0, "") where none measured here can run it."""
    chosen = max(_contenders(here, scores), default=(0.0, ""))
    return chosen, sorted(((t, cid) for cid, t in scores.items() if cid not in here and t > chosen[0]), reverse=True)


def prediction_gaps(device_name: str, shapes: list[tuple[int, int, int]]) -> dict[tuple[int, int, int], float]:
    """Of `shapes`, those the GPU's tuning record swept, but where a configuration it never measured there is
    predicted faster than everything it did measure, each with how far: the best such prediction over the best
    measurement there, less 1 (0.74 at 1024³ on the H200 before that shape's sweep of 2026-12-01, where sgemm-auto
    read 72.7 % of cuBLAS). auto_choice cannot run that configuration there, so only a sweep of it at the shape can
    say which is right (empty without a record)."""
    gaps: dict[tuple[int, int, int], float] = {}
    for shape, here, scores in _swept_shapes_scored(device_name, shapes):
        (best_here, _), above = _outbidding(here, scores)
        if best_here > 0 and above:
            gaps[shape] = above[0][0] / best_here - 1
    return gaps


def outbid_sweeps(device_name: str, limit: int = 8) -> list[tuple[tuple[int, int, int], list[str]]]:
    """Every shape the GPU's tuning record swept where prediction_gaps finds a gap, each with what to sweep there
    together to close it: the `limit` configurations never measured there predicted highest above its measurements,
    then auto_choice's configuration there (empty without a record)."""
    found = record_measurements(device_name)
    if not found:
        return []
    shapes = sorted({(e["m"], e["n"], e["k"]) for e in found[1]})
    out: list[tuple[tuple[int, int, int], list[str]]] = []
    for shape, here, scores in _swept_shapes_scored(device_name, shapes):
        (best_here, chosen), above = _outbidding(here, scores)
        if best_here > 0 and above:
            out.append((shape, [cid for _, cid in above[:limit]] + [chosen]))
    return out


def predicted_only_shapes(device_name: str, shapes: list[tuple[int, int, int]]) -> list[tuple[int, int, int]]:
    """The shapes among `shapes` that prediction_gaps lists, in their order."""
    return list(prediction_gaps(device_name, shapes))
