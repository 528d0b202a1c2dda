"""Saved results side by side per GPU model: one row per kernel and size, one column group per model.

A sweep over a Dask cluster lands in one run whose results each name the host and GPU that produced them
(profiling.cluster.share tags `host` and `gpu`, kept in the result's `extra`); a run from one GPU names its device
once, in the run. Either way each result gets a GPU identity (GpuIdentity): its model, and what tells it from
another GPU of that model. GPUs of one model are one group: per kernel and size, the median over its GPUs (each GPU
first reduced to the median of its own results), with how many GPUs contributed and a flag where they disagree.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import pandas as pd

from kernels.registry import operation_of
from profiling.runs.records import RunResult, SavedRun, as_run
from profiling.runs.values import finite_number

DISAGREE_PCT = 3.0
"""GPUs of one model whose median times for a kernel and size differ by more than this (slowest over fastest)
are flagged: the same chip should time the same kernel within a few per cent."""
UNKNOWN_MODEL = "unknown GPU"
RESULT_COLUMNS = [
    "run_id",
    "kernel",
    "size",
    "flop_volume",
    "model",
    "gpu",
    "status",
    "time_ms",
    "tflops",
    "pct_cublas",
]
MODEL_COLUMNS = [
    "kernel",
    "size",
    "flop_volume",
    "model",
    "gpus",
    "time_ms",
    "tflops",
    "pct_cublas",
    "verified",
    "disagree",
    "spread_pct",
]


@dataclass(frozen=True, order=True)
class GpuIdentity:
    """One GPU: its model name, and `gpu`, what tells it from another of that model ("" when nothing does)."""

    model: str
    gpu: str = ""

    @property
    def label(self) -> str:
        return f"{self.model} ({self.gpu})" if self.gpu else self.model


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _uuid(gpu: Mapping[str, Any]) -> str:
    """The GPU's UUID; a Dask GPU worker pinned by UUID (CUDA_VISIBLE_DEVICES=GPU-...) names it there too."""
    pinned = _text(gpu.get("cuda_visible_devices"))
    return _text(gpu.get("uuid")) or (pinned if pinned.startswith(("GPU-", "MIG-")) else "")


def result_gpu(run: SavedRun, result: RunResult) -> GpuIdentity:
    """The GPU that produced `result`: the result's own host and GPU fields where a cluster sweep tagged them,
    else the run's device. A UUID identifies a GPU alone; without one, the host with the PCI bus id (or the Dask
    worker). A PCI bus id alone does not tell machines apart (every cloud VM here reports 0000:00:06.0), so two
    runs naming only that are taken for one GPU of their model."""
    tagged = result.extra.get("gpu")
    if isinstance(tagged, Mapping) and tagged:
        source, host = tagged, _text(result.extra.get("host")) or _text(tagged.get("host"))
    else:
        source = run.device.to_dict()  # the same keys as a cluster's tagged GPU
        host = _text(source.get("host"))
    model = _text(source.get("name")) or _text(run.device_name) or UNKNOWN_MODEL
    uuid = _uuid(source)
    if uuid:
        return GpuIdentity(model, uuid)
    where = _text(source.get("pci_bus_id")) or _text(source.get("worker"))
    return GpuIdentity(model, "/".join(p for p in (host, where) if p))


def device_results(runs: Iterable[SavedRun | Mapping[str, Any]]) -> pd.DataFrame:
    """One row per result of the runs: run_id, kernel, size, flop_volume (M*N*K, for ordering), model, gpu (see
    result_gpu), status, time_ms (median), tflops and pct_cublas: 100 x the library reference's median time over
    the result's, both measured on the same GPU (the run's own pct_cublas may come from another GPU of the model)."""
    rows = []
    for run in map(as_run, runs):
        for r in run.results:
            gpu = result_gpu(run, r)
            op = operation_of(r.kernel, r.extra.get("operation"))
            shape = r.shape
            rows.append(
                {
                    "run_id": run.id,
                    "kernel": r.kernel,
                    "size": r.size,
                    "flop_volume": shape.m * shape.n * shape.k if shape else None,
                    "model": gpu.model,
                    "gpu": gpu.gpu,
                    "status": r.status,
                    "time_ms": finite_number(r.time_median_ms),
                    "tflops": finite_number(r.tflops),
                    "reference": op.reference_id if op else None,
                }
            )
    frame = pd.DataFrame(rows, columns=[*RESULT_COLUMNS[:-1], "reference"])
    frame["time_ms"] = pd.to_numeric(frame["time_ms"], errors="coerce")
    frame["tflops"] = pd.to_numeric(frame["tflops"], errors="coerce")
    ok = frame[(frame["kernel"] == frame["reference"]) & (frame["status"] == "ok")]
    reference_ms = ok.groupby(["model", "gpu", "kernel", "size"])["time_ms"].median()
    keys = zip(frame["model"], frame["gpu"], frame["reference"], frame["size"], strict=True)
    ref = pd.Series([reference_ms.get(k, float("nan")) for k in keys], index=frame.index, dtype=float)
    frame["pct_cublas"] = 100.0 * ref / frame["time_ms"]
    return frame[RESULT_COLUMNS]


def gpus_of(results: pd.DataFrame) -> list[GpuIdentity]:
    """The distinct GPUs of device_results(), sorted by model and identity."""
    return sorted({GpuIdentity(m, g) for m, g in zip(results["model"], results["gpu"], strict=True)})


def several_gpus(results: pd.DataFrame) -> bool:
    """Whether device_results() came from more than one GPU (by UUID, host and PCI bus id) or GPU model."""
    return len(gpus_of(results)) > 1


def per_model(results: pd.DataFrame, disagree_pct: float = DISAGREE_PCT) -> pd.DataFrame:
    """device_results() reduced to one row per kernel, size and GPU model (MODEL_COLUMNS): each GPU's median over
    its own results first, then the median over the model's GPUs. `gpus`: GPUs with a time; `verified`: every
    result of the model passed verification (status ok); `spread_pct`: slowest GPU over fastest, less one;
    `disagree`: spread_pct above disagree_pct."""
    keys = ["kernel", "size", "model"]
    per_gpu = results.groupby([*keys, "gpu"], sort=False, dropna=False).agg(
        flop_volume=("flop_volume", "first"),
        time_ms=("time_ms", "median"),
        tflops=("tflops", "median"),
        pct_cublas=("pct_cublas", "median"),
        verified=("status", lambda s: bool((s == "ok").all())),
    )
    timed = per_gpu["time_ms"].notna()
    grouped = per_gpu.groupby(level=keys, sort=False)
    out = grouped.agg(
        flop_volume=("flop_volume", "first"),
        time_ms=("time_ms", "median"),
        tflops=("tflops", "median"),
        pct_cublas=("pct_cublas", "median"),
        verified=("verified", "all"),
        slowest=("time_ms", "max"),
        fastest=("time_ms", "min"),
    )
    out["gpus"] = timed.groupby(level=keys, sort=False).sum().astype(int)
    out["spread_pct"] = 100.0 * (out["slowest"] / out["fastest"] - 1.0)
    out["disagree"] = (out["gpus"] > 1) & (out["spread_pct"] > disagree_pct)
    return out.reset_index()[MODEL_COLUMNS]


def short_model(model: str) -> str:
    """A model name short enough for a column header: "NVIDIA H100 80GB HBM3" -> "H100 80GB HBM3"."""
    return model.removeprefix("NVIDIA ").strip() or model


def speedup_column(model: str, baseline: str) -> str:
    return f"{short_model(model)} / {short_model(baseline)} speedup"


def by_device_table(
    runs: Iterable[SavedRun | Mapping[str, Any]],
    *,
    baseline_model: str | None = None,
    disagree_pct: float = DISAGREE_PCT,
) -> pd.DataFrame:
    """The results of `runs` side by side per GPU model: one row per (kernel, size), smallest problem first within
    a kernel; for each model (short name M) the columns "M time (ms)", "M TFLOP/s", "M % of cuBLAS" (on the same
    GPU), "M verified", "M GPUs" (how many contributed) and "M GPUs disagree" (their times differ by more than
    disagree_pct); with two models or more, "M / B speedup" for each model M other than the baseline B (its time
    over M's: above 1, M is faster). The baseline is `baseline_model`, else the first model by name."""
    return models_table(per_model(device_results(runs), disagree_pct), baseline_model)


_FIELDS = (
    ("time_ms", "time (ms)"),
    ("tflops", "TFLOP/s"),
    ("pct_cublas", "% of cuBLAS"),
    ("verified", "verified"),
    ("gpus", "GPUs"),
    ("disagree", "GPUs disagree"),
)


def models_table(models_frame: pd.DataFrame, baseline_model: str | None = None) -> pd.DataFrame:
    """per_model() pivoted to one row per (kernel, size) and one column group per model (see by_device_table)."""
    models = sorted(models_frame["model"].unique())
    baseline = baseline_model if baseline_model in models else (models[0] if models else None)
    order = models_frame.drop_duplicates(["kernel", "size"]).sort_values(
        ["kernel", "flop_volume", "size"], na_position="last"
    )
    table = order[["kernel", "size"]].reset_index(drop=True)
    index = pd.MultiIndex.from_frame(table[["kernel", "size"]])
    for model in models:
        part = models_frame[models_frame["model"] == model].set_index(["kernel", "size"])
        for field, title in _FIELDS:
            values = part[field].reindex(index)
            if field == "gpus":  # no result of this model at this kernel and size: no GPU contributed
                values = values.fillna(0).astype(int)
            table[f"{short_model(model)} {title}"] = values.to_numpy()
    for model in models:
        if baseline is not None and model != baseline:
            base_ms = pd.to_numeric(table[f"{short_model(baseline)} time (ms)"], errors="coerce")
            other_ms = pd.to_numeric(table[f"{short_model(model)} time (ms)"], errors="coerce")
            table[speedup_column(model, baseline)] = base_ms / other_ms
    return table
