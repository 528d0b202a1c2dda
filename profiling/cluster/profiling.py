"""Nsight Compute and compute-sanitizer on a Dask cluster.

ncu serializes the kernels it profiles within a process (each launch is replayed alone), so the way to use more
GPUs is more ncu processes: the (kernel, size) tasks are dealt over the GPU workers, one ncu process per worker
covers that worker's share on its own GPU, and the reports are merged into one Report with a launch per task, in
plan order, each launch naming the host and GPU worker it ran on. ncu cannot merge `.ncu-rep` files, so each
worker's file is kept beside the output (`run.gpu0.ncu-rep`, ...). A share whose ncu fails leaves a warning; the
run fails only when every share does.
"""

from __future__ import annotations

import dataclasses
import json
import tempfile
import time
from pathlib import Path
from typing import Any

from profiling.cluster.share import where_am_i
from profiling.cluster.sweep import deal
from profiling.errors import NcuError, error_line
from profiling.gpu.jobs import BenchSettings, Job, Task
from profiling.nsight import runner as ncu_runner
from profiling.nsight.load import load_ncu_rep
from profiling.nsight.model import KernelLaunch, Report
from profiling.nsight.sanitizer import SanitizerResult
from profiling.nsight.tools import explain_failure, query_metrics, require_ncu, run_tool, validate_metric_names
from profiling.usecases import ProfilePlan, Progress, SanitizerPlan, run_sanitizer, silent


@dataclasses.dataclass
class ClusterProfile:
    """A profile over the cluster: the merged report, each worker's .ncu-rep, the ncu seconds per worker."""

    report: Report
    report_paths: list[Path]
    seconds: dict[str, float]
    wall_s: float
    metric_set: str
    clock_control: str


def profile_share(tasks: list[dict[str, int | str]], plan: ProfilePlan) -> dict[str, Any]:
    """On a GPU worker: one ncu process over these tasks; returns where it ran, the Report and the .ncu-rep bytes."""
    place = where_am_i()
    exe = require_ncu(plan.ncu)
    extras = validate_metric_names(plan.extra_metrics, query_metrics(exe)) if plan.extra_metrics else []
    kernel_ids = list(dict.fromkeys(str(t["kernel"]) for t in tasks))
    with tempfile.TemporaryDirectory(prefix="gemmlens-ncu-") as tmp:
        job = Job(op="profile", tasks=[Task(**t) for t in tasks], settings=BenchSettings(repeats=1, warmup=1))
        job_path = Path(tmp) / "job.json"
        job_path.write_text(json.dumps(job.to_dict()))
        report_path = Path(tmp) / "share.ncu-rep"
        command = ncu_runner.build_profile_command(
            exe,
            job_path,
            report_path,
            kernel_ids,
            plan.metric_set,
            extras,
            plan.clock_control,  # type: ignore[arg-type]
        )
        result = run_tool(command, timeout_s=plan.timeout_s)
        if result.timed_out or result.returncode != 0 or not report_path.is_file():
            raise NcuError(explain_failure(result))
        report = load_ncu_rep(report_path, ncu=exe)
        return {"place": place, "report": report, "rep": report_path.read_bytes(), "seconds": result.seconds}


def _range_key(launch: KernelLaunch) -> tuple[str, int, int, int]:
    """(kernel id, m, n, k) of the worker's range a launch ran in, as the plan's tasks name them."""
    ident = launch.identity
    if ident.kernel_id is None or ident.shape is None:
        return ("", 0, 0, 0)
    return ident.kernel_id, ident.shape.m, ident.shape.n, ident.shape.k


def _merge(shares: list[dict[str, Any]], order: list[tuple[str, int, int, int]], source: str) -> Report:
    """One Report from the workers': launches in plan order (by their NVTX range), renumbered, tagged with where."""
    launches, warnings = [], []
    for share in shares:
        place = share["place"]
        warnings += share["report"].warnings
        for launch in share["report"].launches:
            where = {"host": place["host"], "gpu_worker": place["worker"], "ncu_id": launch.id}
            if place.get("cuda_visible_devices"):
                where["cuda_visible_devices"] = place["cuda_visible_devices"]
            launches.append(dataclasses.replace(launch, attributes={**launch.attributes, **where}))
    rank = {key: i for i, key in enumerate(order)}
    launches.sort(key=lambda launch: rank.get(_range_key(launch), len(rank)))
    launches = [dataclasses.replace(launch, id=str(i)) for i, launch in enumerate(launches)]
    return Report(launches=launches, layout=shares[0]["report"].layout, source=source, warnings=warnings)


def run_profile(plan: ProfilePlan, cluster: Any, progress: Progress = silent) -> ClusterProfile:
    """Profile the plan's kernels x shapes with one ncu process per GPU worker; merge the reports (see module)."""
    from distributed import as_completed

    from profiling.cluster.usecases import connected

    tasks = [{"kernel": k, "m": s.m, "n": s.n, "k": s.k} for s in plan.shapes for k in plan.kernel_ids]
    order = [(str(t["kernel"]), int(t["m"]), int(t["n"]), int(t["k"])) for t in tasks]
    started = time.monotonic()
    with connected(cluster) as (client, info):
        shares = deal(len(tasks), len(info.gpu_workers))
        futures = {
            client.submit(
                profile_share,
                [tasks[i] for i in share],
                plan,
                pure=False,
                resources={"GPU": 1},
                workers=[info.gpu_workers[s]],
                allow_other_workers=True,
            ): s
            for s, share in enumerate(shares)
        }
        progress(0.05, f"ncu on {len(shares)} GPU workers, {len(tasks)} launches")
        done, failures = [], []
        for future in as_completed(futures):
            try:
                done.append(future.result())
                progress(len(done) / len(shares), f"ncu finished on {done[-1]['place']['worker']}")
            except Exception as exc:  # noqa: BLE001 - one worker's ncu failing leaves the others' launches
                failures.append(f"share {futures[future]}: {error_line(exc, limit=300)}")
    if not done:
        raise NcuError("ncu failed on every GPU worker: " + "; ".join(failures))
    out = plan.report_path if plan.report_path.suffix == ".ncu-rep" else Path(f"{plan.report_path}.ncu-rep")
    paths = []
    for share in done:
        path = out.with_name(f"{out.name.removesuffix('.ncu-rep')}.{share['place']['worker']}.ncu-rep")
        path.write_bytes(share["rep"])
        paths.append(path)
    report = _merge(done, order, str(out))
    report.warnings += [f"ncu failed for {f}" for f in failures]
    seconds = {share["place"]["worker"]: round(share["seconds"], 2) for share in done}
    return ClusterProfile(report, paths, seconds, time.monotonic() - started, plan.metric_set, plan.clock_control)


def run_sanitizer_on(plan: SanitizerPlan, cluster: Any, progress: Progress = silent) -> tuple[SanitizerResult, dict]:
    """compute-sanitizer on one GPU worker of the cluster; returns its result and where it ran."""
    from profiling.cluster.usecases import connected

    with connected(cluster) as (client, info):
        progress(0.1, f"compute-sanitizer --tool {plan.tool} on a GPU worker of {info.scheduler}")
        future = client.submit(_sanitize_here, plan, pure=False, resources={"GPU": 1})
        return future.result()


def _sanitize_here(plan: SanitizerPlan) -> tuple[SanitizerResult, dict]:
    return run_sanitizer(plan), where_am_i()
