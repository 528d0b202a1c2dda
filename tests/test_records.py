"""Typed records: BenchResult against the committed results files and the worker's records, RunResult
against the store's columns, SavedRun's dict forms, and every field through worker -> store -> export -> import.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import json
import math
from pathlib import Path
from typing import Any

import pytest

from profiling.commands import json_text
from profiling.device_model import DeviceInfo
from profiling.errors import InvalidInput
from profiling.gpu import worker
from profiling.gpu.jobs import Task
from profiling.runs import convert, export, records, schema
from profiling.runs.records import BenchResult, RunResult, SavedRun, TimeSummary
from profiling.runs.results import ResultsDocument
from profiling.runs.store import RunStore
from profiling.shape import Shape

RESULTS_DIR = Path(__file__).resolve().parents[1] / "results"
BENCH_FILES = sorted(
    p for p in RESULTS_DIR.rglob("*.json") if json.loads(p.read_text()).get("schema") == "gemmlens.bench.v1"
)


def worker_row() -> dict[str, Any]:
    """A result as gpu.runner.run_task reports it for a timed kernel, every field set (key order as sent)."""
    return {
        "kernel": "v5",
        "title": "v5 2D block tiling",
        "operation": "sgemm",
        "m": 4096,
        "n": 2048,
        "k": 1024,
        "status": "ok",
        "error": None,
        "tolerance": 1e-5,
        "config": "sgemm_v5",
        "compile": {
            "arch": "sm_90",
            "backend": "nvrtc",
            "options": ["-std=c++17"],
            "registers": 128,
            "shared_static_bytes": 8192,
            "local_bytes": 16,
            "max_threads_per_block": 256,
            "dynamic_smem_bytes": 1024,
            "log": "ptxas info",
        },
        "launch": {"grid": [32, 16], "block": [256], "dynamic_smem_bytes": 1024, "max_active_blocks_per_sm": 2},
        "rel_error": 1.5e-7,
        "time_ms": {
            "median": 2.0,
            "min": 1.9,
            "max": 2.4,
            "mean": 2.05,
            "stdev": 0.1,
            "p10": 1.95,
            "p90": 2.2,
            "spread_pct": 12.5,
            "samples": 30,
        },
        "nvml": {
            "samples": 12,
            "sm_clock_mhz": {"min": 1755, "median": 1890, "max": 1980},
            "power_w_max": 690.5,
            "temperature_c_max": 61,
            "clock_event_reasons": ["SwPowerCap"],
            "capped": True,
        },
        "tflops": 8.6,
        "pct_peak": 12.9,
        "rel_error_after_timing": 1.5e-7,
        "times_ms": [2.0, 1.9, 2.4, 2.0, 1.95],
        "pct_cublas": 17.0,
        # ncu metrics merged into a bench row (see convert._bench_row_result): the store's ncu columns.
        "metrics": {
            "sm__warps_active.avg.pct_of_peak_sustained_active": 24.5,
            "dram__bytes.sum": 3.0e8,
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": 70,
            "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum": 5,
        },
    }


def bench_document(rows: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "schema": records.BENCH_SCHEMA,
        "created_utc": "2026-11-22T01:23:45Z",
        "tool": {"gemmlens_commit": "abc1234", "cupy": "14.2.0", "python": "3.12.3"},
        "device": {
            "name": "NVIDIA H200",
            "cc": "9.0",
            "driver": "580.159.04",
            "cuda_runtime": 13000,
            "cuda_driver": 13000,
            "max_sm_clock_mhz": 1980,
            "max_mem_clock_mhz": 3201,
        },
        "settings": {"repeats": 30, "warmup": 3, "l2_flush_bytes": 104857600, "tf32": False},
        "results": rows,
    }


# ---------------------------------------------------------------------------------------------
# BenchResult
# ---------------------------------------------------------------------------------------------


def test_committed_results_rows_round_trip_unchanged() -> None:
    """Every row of every committed results file reads as a BenchResult and writes back to the same fields and values,
    so a field the record drops or renames fails here."""
    assert len(BENCH_FILES) >= 3, "the H200 results files are committed under results/"
    seen_fields: set[str] = set()
    for path in BENCH_FILES:
        for row in json.loads(path.read_text())["results"]:
            result = BenchResult.from_dict(row)
            assert result.to_dict() == row, (path, row["kernel"])
            seen_fields |= {f.name for f in dataclasses.fields(result) if getattr(result, f.name) not in (None, {})}
    # The committed rows exercise every field the worker writes (an unknown-key catch-all aside), the error too: a
    # padded-C configuration's refusal at N % 4 == 0 (results/h200-2026-11-28/splitk_128x64/awkward_verify.json).
    assert seen_fields - {"other"} == {f.name for f in dataclasses.fields(BenchResult)} - {"other"}
    assert any(row.get("config", "") is None for path in BENCH_FILES for row in json.loads(path.read_text())["results"])


def test_every_bundled_results_file_reads_once_and_writes_back_byte_for_byte() -> None:
    """A results file read into a ResultsDocument and written as `bench --json` writes it is the same text as the
    file's own JSON written that way: every row, every part (ab, tuning, cluster) and every key order kept."""
    parts = set()
    for path in BENCH_FILES:
        data = json.loads(path.read_text())
        document = ResultsDocument.from_dict(data, str(path))
        assert json_text(document.to_dict()) == json_text(data), path
        assert [r.kernel for r in document.results] == [row["kernel"] for row in data["results"]]
        parts |= {key for key in ("ab", "tuning", "cluster") if getattr(document, key) is not None}
    assert len(BENCH_FILES) >= 50 and parts == {"ab", "tuning", "cluster"}


def test_every_bundled_device_reads_typed_and_writes_back_in_its_order() -> None:
    """The GPU of every bundled results file is a DeviceInfo whose every key is a typed field (nothing left over),
    and its JSON form is the file's object, key order included."""
    names = set()
    for path in BENCH_FILES:
        data = json.loads(path.read_text())
        device = ResultsDocument.from_dict(data, str(path)).device
        assert device.other == {} and device.keys == tuple(data["device"]), path
        assert json.dumps(device.to_dict()) == json.dumps(data["device"]), path
        assert isinstance(device.sm_count, int) and isinstance(device.cc, str) and device.name == data["device"]["name"]
        names.add(device.name)
    assert {"NVIDIA H100 80GB HBM3", "NVIDIA H200"} <= names


def test_a_device_keeps_what_it_does_not_type_where_it_was() -> None:
    """A key it does not know, or a value of another type than its field's (a bool is no count), stays in `other`
    and is written back in its place; a description built in code writes its fields in their order."""
    raw = {"name": "GPU", "rack": "r7", "sm_count": "132", "l2_bytes": True, "cc": "9.0", "fp32_peak_tflops": 60}
    device = DeviceInfo.from_dict(raw)
    assert (device.name, device.cc, device.sm_count, device.l2_bytes) == ("GPU", "9.0", None, None)
    assert device.fp32_peak_tflops == 60  # an int is a float's value
    assert device.other == {"rack": "r7", "sm_count": "132", "l2_bytes": True}
    assert json.dumps(device.to_dict()) == json.dumps(raw)
    assert DeviceInfo(cc="8.9", name="L4").to_dict() == {"name": "L4", "cc": "8.9"}
    assert not DeviceInfo().known and not DeviceInfo.from_dict(None).known and DeviceInfo(name="L4").known
    assert DeviceInfo.from_dict({"name": None}).known  # a key read, even empty, is a description


def test_a_saved_run_keeps_its_device_typed_through_the_store(tmp_path: Path) -> None:
    path = BENCH_FILES[0]
    document = ResultsDocument.from_dict(json.loads(path.read_text()), str(path))
    run = convert.bench_run(document, label="device")
    assert run.device == document.device and run.device_name == document.device.name
    store = RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}")
    stored = store.read_run(store.save_run(run))
    assert stored.device.to_dict() == document.device.to_dict() and stored.device.sm_count == document.device.sm_count


def test_a_results_document_refuses_another_schema_in_one_line() -> None:
    with pytest.raises(InvalidInput, match=r'^upload.json is not a GEMM Lens results file \(expected "schema"'):
        ResultsDocument.from_dict({"schema": "gemmlens.run.v1", "results": []}, "upload.json")
    with pytest.raises(InvalidInput, match=r"^result 2 \(v5\) has no size m, n, k$"):
        ResultsDocument.from_dict(bench_document([worker_row(), {"kernel": "v5"}]))


def test_worker_row_round_trips_and_reads_typed() -> None:
    row = worker_row()
    result = BenchResult.from_dict(row)
    assert json.dumps(result.to_dict()) == json.dumps(row)
    assert result.shape == Shape(4096, 2048, 1024) and result.time_ms == TimeSummary(**row["time_ms"])
    assert result.registers == 128 and result.shared_static_bytes == 8192 and result.shared_bytes == 8192 + 1024
    assert result.spill_bytes == 16 and result.sm_clock_mhz == 1890 and result.capped is True
    assert result.clock_event_reasons == ["SwPowerCap"] and result.other == {"metrics": row["metrics"]}


def test_short_worker_records_keep_their_keys() -> None:
    """The parent's own records (a failed, timed-out or cancelled task, the ceilings job) keep their keys; only
    config is always written (null: no catalog entry point ran)."""
    failed = {"kernel": "v9", "m": 64, "n": 64, "k": 64, "status": "failed", "error": "timed out after 60 s"}
    ceilings = {"kernel": "ceilings", "m": 1, "n": 1, "k": 1, "status": "ok", "error": None, "ceilings": {"a": 1}}
    refused = {
        "kernel": "v8",
        "title": "v8",
        "operation": "sgemm",
        "m": 100,
        "n": 64,
        "k": 64,
        "status": "refused",
        "error": "m must be a multiple of 128",
        "tolerance": 1e-5,
        "config": "sgemm_v8",
    }
    nan_reference = {**refused, "kernel": "cublas-hgemm", "status": "ok", "error": None, "rel_error": math.nan}
    for row in (refused, nan_reference, {**nan_reference, "config": None}):
        assert json.dumps(BenchResult.from_dict(row).to_dict()) == json.dumps(row)
    for row in (failed, ceilings):
        written = BenchResult.from_dict(row).to_dict()
        assert written == {**row, "config": None} and list(written)[:7] == [*list(row)[:6], "config"]


def test_the_parents_own_records_are_bench_results() -> None:
    task = Task("v9-regdb", 64, 32, 16)
    failed = worker._failed(task, "timed out after 60 s; the worker was killed")
    cancelled = worker._failed(task, "cancelled", status="cancelled")
    assert failed == {
        "kernel": "v9-regdb",
        "m": 64,
        "n": 32,
        "k": 16,
        "status": "failed",
        "error": "timed out after 60 s; the worker was killed",
        "config": None,
    }
    assert cancelled == {**failed, "status": "cancelled", "error": "cancelled"}
    assert BenchResult.from_dict(failed).to_dict() == failed


def test_bad_benchmark_rows_are_refused_in_one_line() -> None:
    cases = [
        ([1, 2], "result 3 is not an object"),
        ({"m": 1, "n": 1, "k": 1}, "result 3 has no kernel name"),
        ({"kernel": "v1", "m": 1, "n": 1}, r"result 3 \(v1\) has no size m, n, k"),
    ]
    for row, message in cases:
        with pytest.raises(InvalidInput, match=message) as info:
            BenchResult.from_dict(row, "result 3")
        assert "\n" not in str(info.value)


# ---------------------------------------------------------------------------------------------
# RunResult and SavedRun
# ---------------------------------------------------------------------------------------------


def test_result_fields_are_the_store_columns() -> None:
    columns = {c.name for c in schema.ResultRow.__table__.columns}
    assert set(records.RESULT_FIELDS) == columns - {"id", "run_id", "position", *records.JSON_PARTS}
    assert records.RESULT_FIELDS[:3] == ("kernel", "size_label", "m")


def test_run_result_cleans_and_sizes() -> None:
    result = RunResult.from_dict(
        {
            "kernel": " v3 ",
            "m": 64.0,
            "n": "32",
            "k": 16,
            "status": None,
            "registers": 95.6,
            "tflops": math.inf,
            "metrics": {"a": "1.5", "b": "x"},
        }
    )
    assert result.kernel == "v3" and (result.m, result.n, result.k) == (64, 32, 16) and result.status == "ok"
    assert result.registers == 96 and result.tflops is None and result.metrics == {"a": 1.5, "b": None}
    assert result.shape == Shape(64, 32, 16) and result.size == "64x32x16" == records.size_text(result)
    unsized = RunResult(kernel="k", size_label="#2")
    assert unsized.shape is None and unsized.size == "#2" == records.size_text(unsized.to_dict())
    assert RunResult.from_dict(result.to_dict()) == result


def test_saved_run_dict_forms() -> None:
    run = convert.bench_run(bench_document([worker_row()]), label="  monday  ", author="ann", notes="n")
    assert run.label == "monday" and run.created == dt.datetime(2026, 11, 22, 1, 23, 45) and run.id is None
    assert run.device_name == "NVIDIA H200" and run.device_cc == "9.0" and run.settings["repeats"] == 30
    portable = run.to_dict()
    assert list(portable) == [
        "schema",
        "label",
        "author",
        "notes",
        "created_utc",
        "kind",
        "device",
        "catalog_commit",
        "meta",
        "results",
    ]
    assert SavedRun.from_dict(portable) == run
    stored = dataclasses.replace(run, id=7, saved=dt.datetime(2026, 11, 23))
    as_stored = stored.to_dict()
    assert as_stored["id"] == 7 and as_stored["saved_utc"] == "2026-11-23T00:00:00Z"
    assert as_stored["device_name"] == "NVIDIA H200" and stored.to_dict(store_fields=False) == portable
    assert SavedRun.from_dict(as_stored) == stored and SavedRun.from_dict(as_stored).detached() == run
    # An unreadable save time in a hand-made record is not worth refusing it: the store sets its own.
    assert SavedRun.from_dict({**as_stored, "saved_utc": "last week"}).saved is None
    assert records.normalize_run(as_stored) == portable


# ---------------------------------------------------------------------------------------------
# Every field through worker -> record -> store -> export -> import
# ---------------------------------------------------------------------------------------------


def _report() -> dict[str, Any]:
    """A `report --json` document with one launch: the fields only a profile run fills (size_label, derived)."""
    metrics = {
        "gpu__time_duration.sum": {"value": 2.5e6, "unit": "nsecond"},
        "launch__registers_per_thread": {"value": 96, "unit": "register/thread"},
        "launch__shared_mem_per_block_static": {"value": 16384, "unit": "byte"},
        "sm__warps_active.avg.pct_of_peak_sustained_active": {"value": 31.5, "unit": "%"},
        "l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum": {"value": 1000, "unit": ""},
        "dram__bytes.sum": {"value": 2.0e8, "unit": "byte"},
    }
    return {
        "launches": [
            {
                "id": 0,
                "name": "sgemm_v3(float const*, float*)",
                "size_label": "the 1024 run",
                "cc": "9.0",
                "device": "NVIDIA H200",
                "metrics": metrics,
                "derived": {"ai_dram": 5.4},
            }
        ],
        "layout": "raw",
        "warnings": ["w"],
    }


def test_every_field_survives_store_export_and_import(tmp_path: Path) -> None:
    """Worker dict -> BenchResult -> results file -> SavedRun -> store -> export JSON -> import -> store.

    Every RunResult and SavedRun field is set to a non-default value by one of the two runs, so a field
    dropped anywhere on the way fails the equality below."""
    row = worker_row()
    wrong = {**row, "kernel": "v6", "status": "wrong", "error": "relative error 0.2 exceeds tolerance 1e-05"}
    document = bench_document([BenchResult.from_dict(r).to_dict() for r in (row, wrong)])
    bench = convert.bench_run(json.loads(json.dumps(document)), label="bench", author="ann", notes="why")
    profile = convert.report_run(
        _report(),
        label="profile",
        author="bo",
        notes="ncu",
        catalog_commit="def5678",
        created_utc="2026-11-20T08:00:00Z",
        meta={"source": "x.ncu-rep"},
    )
    # The test data reaches every field (else dropping that field would go unnoticed).
    for fields, objects in (
        (dataclasses.fields(RunResult), [r for run in (bench, profile) for r in run.results]),
        (dataclasses.fields(SavedRun), [bench, profile]),
    ):
        for f in fields:
            if f.name in ("id", "saved"):
                continue
            default = None if f.default_factory is dataclasses.MISSING else f.default_factory()
            default = f.default if f.default is not dataclasses.MISSING else default
            assert any(getattr(o, f.name) not in (None, default) for o in objects), f.name
    result = bench.results[0]
    assert (result.time_median_ms, result.time_min_ms, result.time_max_ms) == (2.0, 1.9, 2.4)
    assert (result.occupancy_pct, result.bank_conflicts, result.dram_bytes) == (24.5, 75.0, 3.0e8)
    assert result.metrics["nvml.power_w_max"] == 690.5 and result.extra == {
        k: v for k, v in row.items() if k != "times_ms"
    }
    assert result.times_ms == (2.0, 1.9, 2.4, 2.0, 1.95)

    with RunStore(f"sqlite:///{tmp_path / 'a.sqlite'}") as a:
        ids = [a.save_run(bench), a.save_run(profile)]
        stored = a.read_runs(ids)
        assert [SavedRun.from_dict(a.get_run(i)) for i in ids] == stored
    text = export.export_runs_json(stored)
    with RunStore(f"sqlite:///{tmp_path / 'b.sqlite'}") as b:
        copies = b.read_runs(b.import_runs(export.read_runs_json(text)))
    for original, after_store, copy in zip((bench, profile), stored, copies, strict=True):
        assert after_store.detached() == original
        assert copy.detached() == original
        assert copy.saved is not None and after_store.id is not None
