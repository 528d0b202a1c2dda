"""Results per GPU model (profiling.runs.by_device) and the Review page's "By device" tab, on real measurements.

The mixed run is built the way a Dask sweep over an H100 and an H200 builds one: real results of each GPU
(results/h100-2026-11-22/tuning_shapes.json, results/h200-2026-11-22/tuning_shapes.json: same kernels and sizes),
each tagged with its host and GPU as profiling.cluster.share tags a worker's results, gathered by
profiling.cluster.sweep.cluster_document, loaded by convert.bench_run and saved to and read back from the run store.
The tags are a derived input: the H100's GPU fields are the real Dask run's (results/h100-2026-11-24/cluster1), the
H200's are its bench file's device with a host name of ours (that file names no host).
"""

from __future__ import annotations

import copy
import json
import statistics
from pathlib import Path
from typing import Any

import pytest
import streamlit as st
from streamlit.testing.v1 import AppTest

from profiling.cluster.sweep import cluster_document
from profiling.gpu.jobs import BenchSettings
from profiling.runs import by_device
from profiling.runs.convert import bench_run, read_run_file
from profiling.runs.records import SavedRun
from profiling.runs.store import RunStore

ROOT = Path(__file__).resolve().parents[1]
H100_FILE = ROOT / "results" / "h100-2026-11-22" / "tuning_shapes.json"
H200_FILE = ROOT / "results" / "h200-2026-11-22" / "tuning_shapes.json"
CLUSTER_FILE = ROOT / "results" / "h100-2026-11-24" / "cluster1" / "cluster.json"
H100, H200 = "H100 80GB HBM3", "H200"
SPEEDUP = f"{H200} / {H100} speedup"


def load(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text())


def gpu_fields(worker: str, host: str, device: dict[str, Any]) -> dict[str, Any]:
    """A Dask GPU worker's identity as profiling.cluster.share.where_am_i and the GPU child report it."""
    return {"host": host, "worker": worker, **device}


def tag(rows: list[dict[str, Any]], gpu: dict[str, Any]) -> list[dict[str, Any]]:
    """Results as run_share tags them: the host and the GPU that ran them (task_index left out: not read here)."""
    return [{**copy.deepcopy(r), "host": gpu["host"], "gpu": gpu} for r in rows]


def sweep_run(shares: list[tuple[list[dict[str, Any]], dict[str, Any]]], store: RunStore) -> SavedRun:
    """One run of every share's results, through cluster_document, bench_run and the store."""
    results = [row for rows, gpu in shares for row in tag(rows, gpu)]
    gpus = [gpu for _, gpu in shares]
    doc = cluster_document(results, gpus, BenchSettings(repeats=20), "2026-11-24T13:47:34Z", {"spec": "test"})
    run_id = store.save_run(bench_run(doc, label="mixed sweep"))
    return store.read_run(run_id)


def real_h100_gpu() -> dict[str, Any]:
    return load(CLUSTER_FILE)["cluster"]["gpus"][0]


def mixed_shares() -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    h200_device = load(H200_FILE)["device"]
    return [
        (load(H100_FILE)["results"], real_h100_gpu()),
        (load(H200_FILE)["results"], gpu_fields("gpu0", "h200-vm", h200_device)),
    ]


def medians(path: Path) -> dict[tuple[str, str], float]:
    """Median time per (kernel, "MxNxK") read straight from a results file (no project code)."""
    times: dict[tuple[str, str], list[float]] = {}
    for r in load(path)["results"]:
        times.setdefault((r["kernel"], f"{r['m']}x{r['n']}x{r['k']}"), []).append(r["time_ms"]["median"])
    return {key: statistics.median(values) for key, values in times.items()}


@pytest.fixture
def store(tmp_path: Path) -> RunStore:
    with RunStore(f"sqlite:///{tmp_path / 'runs.sqlite'}") as opened:
        yield opened


def test_a_mixed_h100_h200_run_groups_by_model(store: RunStore) -> None:
    run = sweep_run(mixed_shares(), store)
    results = by_device.device_results([run])
    assert by_device.several_gpus(results)
    assert [g.model for g in by_device.gpus_of(results)] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    h100_uuid = real_h100_gpu()["cuda_visible_devices"]
    assert by_device.gpus_of(results)[0].gpu == h100_uuid  # the real run pinned its worker by UUID

    table = by_device.by_device_table([run])
    h100_ms, h200_ms = medians(H100_FILE), medians(H200_FILE)
    assert set(h100_ms) == set(h200_ms) and len(table) == len(h100_ms) == 112  # one row per kernel and size
    assert not table.duplicated(["kernel", "size"]).any()
    for model in (H100, H200):
        assert {f"{model} {c}" for c in ("time (ms)", "TFLOP/s", "% of cuBLAS", "verified", "GPUs")} <= set(table)
        assert (table[f"{model} GPUs"] == 1).all() and not table[f"{model} GPUs disagree"].any()
        assert table[f"{model} verified"].all()
    rows = table.set_index(["kernel", "size"])
    for key, ms in h100_ms.items():
        assert rows.loc[key, f"{H100} time (ms)"] == pytest.approx(ms, rel=1e-12)
        assert rows.loc[key, SPEEDUP] == pytest.approx(ms / h200_ms[key], rel=1e-12)
    # % of cuBLAS against cuBLAS on the same GPU: what each GPU's own bench run recorded
    for path, model in ((H100_FILE, H100), (H200_FILE, H200)):
        for r in load(path)["results"]:
            key = (r["kernel"], f"{r['m']}x{r['n']}x{r['k']}")
            assert rows.loc[key, f"{model} % of cuBLAS"] == pytest.approx(r["pct_cublas"], rel=1e-9)
    # within a kernel, the smallest problem first
    cublas = table[table["kernel"] == "cublas"]["size"].tolist()
    assert cublas[0] == "127x127x8191" and cublas[-1] == "8192x8192x8192"


def test_two_single_gpu_runs_group_as_the_mixed_run_does(store: RunStore) -> None:
    """Without per-result GPU fields each result is its run's device: an H100 run and an H200 run side by side."""
    separate = by_device.by_device_table([read_run_file(H100_FILE), read_run_file(H200_FILE)])
    mixed = by_device.by_device_table([sweep_run(mixed_shares(), store)])
    assert list(separate.columns) == list(mixed.columns)
    assert separate[["kernel", "size"]].equals(mixed[["kernel", "size"]])
    assert separate[SPEEDUP].to_numpy() == pytest.approx(mixed[SPEEDUP].to_numpy(), rel=1e-12)
    one = by_device.device_results([read_run_file(H100_FILE)])
    assert not by_device.several_gpus(one) and len(by_device.gpus_of(one)) == 1


@pytest.mark.parametrize(("change", "flagged"), [(1.05, True), (1.02, False)])
def test_two_gpus_of_one_model_are_one_group(store: RunStore, change: float, flagged: bool) -> None:
    """Two H100s, simulated (a derived input): the real Dask run's results and a copy of them on a second GPU (another
    UUID, PCI bus id and worker), the copy's v8-async 4096³ time changed by `change` and its v9-regdb 2048³ marked
    as failing verification."""
    real = load(CLUSTER_FILE)
    gpu = real_h100_gpu()
    twin = gpu | {"worker": "gpu1", "cuda_visible_devices": "GPU-twin-of-02bc6bda", "pci_bus_id": "0000:00:07.0"}
    rows = real["results"]
    copied = copy.deepcopy(rows)
    for r in copied:
        if (r["kernel"], r["m"]) == ("v8-async", 4096):
            r["time_ms"]["median"] *= change
            r["times_ms"] = [t * change for t in r["times_ms"]]
            r["tflops"] /= change
        if (r["kernel"], r["m"]) == ("v9-regdb", 2048):
            r["status"] = "wrong"
    run = sweep_run([(rows, gpu), (copied, twin)], store)
    results = by_device.device_results([run])
    assert by_device.several_gpus(results) and {g.model for g in by_device.gpus_of(results)} == {real["device"]["name"]}

    table = by_device.by_device_table([run]).set_index(["kernel", "size"])
    assert len(table) == 6 and (table[f"{H100} GPUs"] == 2).all()
    assert not any(c.endswith("speedup") for c in table.columns)  # one model: nothing to divide by
    changed = ("v8-async", "4096x4096x4096")
    assert table[f"{H100} GPUs disagree"].tolist() == [key == changed and flagged for key in table.index]
    ms = next(r["time_ms"]["median"] for r in rows if (r["kernel"], r["m"]) == ("v8-async", 4096))
    assert table.loc[changed, f"{H100} time (ms)"] == pytest.approx(statistics.median([ms, ms * change]))
    assert table[f"{H100} verified"].tolist() == [key != ("v9-regdb", "2048x2048x2048") for key in table.index]


# ---------------------------------------------------------------------------------------------
# The Review page
# ---------------------------------------------------------------------------------------------


@pytest.fixture
def db_path(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Path:
    """No GPU work, a fresh run store in tmp_path, and no cached state from earlier tests."""
    monkeypatch.setenv("GEMMLENS_GPU", "off")
    monkeypatch.setenv("GEMMLENS_DB_PATH", str(tmp_path / "app.sqlite"))
    monkeypatch.delenv("GEMMLENS_DB_URL", raising=False)
    st.cache_data.clear()
    st.cache_resource.clear()
    return tmp_path / "app.sqlite"


def review_page(tab: str = "By device") -> AppTest:
    """The Review page on section `tab` (By device by default: it is drawn only while chosen)."""
    at = AppTest.from_file(str(ROOT / "app.py"), default_timeout=60)
    at.run()
    at.switch_page("pages/7_Review.py").run()
    assert not at.exception, [e.value for e in at.exception]
    if tab != "Compare":
        at.session_state["review_tab"] = tab
        at.run()
        assert not at.exception, [e.value for e in at.exception]
    return at


def device_tables(at: AppTest) -> list[Any]:
    return [d.value for d in at.dataframe if any(str(c).endswith("GPUs") for c in d.value.columns)]


def test_review_page_shows_a_mixed_run_by_device(db_path: Path) -> None:
    with RunStore(f"sqlite:///{db_path}") as store:
        sweep_run(mixed_shares(), store)
    at = review_page()
    assert at.segmented_control(key="review_tab").options[1] == "By device"
    [table] = device_tables(at)
    assert len(table) == 112 and SPEEDUP in table.columns
    assert not table.astype(str).isin(["None", "nan", "NaN"]).any().any()
    caption = " ".join(c.value for c in at.main.caption).replace("\\", "")
    assert "Results from 2 GPUs" in caption and "NVIDIA H200: 1 GPU (h200-vm/0000:00:06.0)" in caption
    [chart] = [json.loads(c.proto.spec) for c in at.get("plotly_chart") if "per GPU model" in c.proto.spec]
    assert [t["name"] for t in chart["data"]] == ["NVIDIA H100 80GB HBM3", "NVIDIA H200"]
    assert all(t["type"] == "bar" for t in chart["data"]) and chart["layout"]["barmode"] == "group"
    assert chart["layout"]["legend"]["title"]["text"] == "GPU model"
    assert "TFLOP/s" in chart["layout"]["xaxis"]["title"]["text"]  # horizontal bars: a tuning sweep's 100+ pairs
    assert "kernel and size" in chart["layout"]["yaxis"]["title"]["text"]
    assert all(len(t["y"][0]) == len(t["y"][1]) == 112 for t in chart["data"])  # (kernel, size) per bar


def test_review_page_by_device_of_two_runs_and_of_one_gpu(db_path: Path) -> None:
    with RunStore(f"sqlite:///{db_path}") as store:
        h100 = store.save_run(read_run_file(H100_FILE))
        h200 = store.save_run(read_run_file(H200_FILE))
    at = review_page()
    # the Compare tab's runs by default: the pair with the most kernels and sizes in common, one run per GPU model
    assert sorted(at.multiselect(key="device_runs").value) == [h100, h200]
    [table] = device_tables(at)
    assert len(table) == 112 and SPEEDUP in table.columns
    at.multiselect(key="device_runs").set_value([h100]).run()
    assert not at.exception and device_tables(at) == []  # one GPU: a line, no table
    assert any("come from one GPU" in c.value for c in at.main.caption)
    # a new Compare selection is followed again
    at.session_state["review_tab"] = "Compare"
    at.run()
    at.selectbox(key="baseline").set_value(h200).run()
    at.multiselect(key="candidates").set_value([h100]).run()
    at.session_state["review_tab"] = "By device"
    at.run()
    assert not at.exception and sorted(at.multiselect(key="device_runs").value) == [h100, h200]
    assert len(device_tables(at)) == 1


def test_the_by_device_tab_is_drawn_only_when_open_and_keeps_its_choice(db_path: Path) -> None:
    with RunStore(f"sqlite:///{db_path}") as store:
        h100 = store.save_run(read_run_file(H100_FILE))
        h200 = store.save_run(read_run_file(H200_FILE))
    at = review_page("Compare")
    assert at.session_state["review_tab"] == "Compare"
    assert not [w for w in at.multiselect if w.key == "device_runs"] and device_tables(at) == []
    assert not [c for c in at.get("plotly_chart") if "per GPU model" in c.proto.spec]
    at.session_state["review_tab"] = "By device"
    at.run()
    assert sorted(at.multiselect(key="device_runs").value) == [h100, h200] and len(device_tables(at)) == 1
    at.multiselect(key="device_runs").set_value([h200]).run()
    at.session_state["review_tab"] = "Compare"
    at.run()
    at.session_state["review_tab"] = "By device"
    at.run()
    assert not at.exception and at.multiselect(key="device_runs").value == [h200]
