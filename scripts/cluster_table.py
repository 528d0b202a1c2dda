"""Issue 14's table from the `cluster` stage of scripts/gpu_check.sh: the tuning sweep on one GPU against both GPUs.

Usage: python scripts/cluster_table.py DIR   (DIR holds wall.json, one_gpu0.json, one_gpu1.json, two_gpus.json)

Prints the wall-clock ratio (one GPU over two, target >= 1.8x), whether verification is identical, and how the
per-configuration timings of GPU0 and GPU1 agree (target within 3 %); writes DIR/summary.json.
"""

from __future__ import annotations

import json
import statistics
import sys
from pathlib import Path


def _load(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def _by_task(document: dict | None) -> dict[tuple[str, int, int, int], dict]:
    rows = (document or {}).get("results", [])
    return {(r["kernel"], r["m"], r["n"], r["k"]): r for r in rows}


def _median_ms(row: dict | None) -> float | None:
    return ((row or {}).get("time_ms") or {}).get("median")


def _gap_pct(a: float | None, b: float | None) -> float | None:
    return None if not a or not b else 100.0 * abs(b - a) / a


def main(folder: str) -> int:
    where = Path(folder)
    wall = _load(where / "wall.json") or {}
    one0, one1, two = (_load(where / f"{n}.json") for n in ("one_gpu0", "one_gpu1", "two_gpus"))
    if one0 is None or two is None:
        print(
            f"missing results in {where}: one_gpu0.json {'ok' if one0 else 'missing'}, two_gpus.json "
            f"{'ok' if two else 'missing'}; see the .txt logs there"
        )
        return 1
    cluster = two.get("cluster", {})
    single_s, cluster_s = wall.get("one_gpu0_s"), wall.get("two_gpus_s")
    startup = cluster.get("startup_s") or 0.0
    ratio = single_s / cluster_s if single_s and cluster_s else None
    ratio_up = single_s / (cluster_s - startup) if single_s and cluster_s and cluster_s > startup else None
    print(f"repeats per configuration: {wall.get('repeats')}; compile warm-up {wall.get('warm_s')} s")
    print(
        f"one GPU (GPU0): {single_s} s; two GPUs (--cluster local-gpus): {cluster_s} s, of which {startup:.1f} s "
        f"starting the local cluster; sweep alone {cluster.get('sweep_s')} s"
    )
    print(
        f"wall-clock ratio: {ratio:.2f}x end to end; {ratio_up:.2f}x with the cluster already up (target >= 1.8x)"
        if ratio and ratio_up
        else "wall-clock ratio: n/a"
    )
    print(f"results per GPU worker: {cluster.get('results_per_gpu')}")
    for gpu in cluster.get("gpus", []):
        print(
            f"  {gpu.get('worker')}: {gpu.get('host')} {gpu.get('name')} {gpu.get('uuid') or gpu.get('pci_bus_id')} "
            f"driver {gpu.get('driver')}, max SM clock {gpu.get('max_sm_clock_mhz')} MHz"
        )

    a, b, c = _by_task(one0), _by_task(one1), _by_task(two)
    keys = list(a)
    same_tasks = set(a) == set(c) and (not b or set(a) == set(b))
    statuses = {k: (a[k]["status"], (b.get(k) or {}).get("status"), (c.get(k) or {}).get("status")) for k in keys}
    identical = same_tasks and all(s0 == s2 and (s1 is None or s1 == s0) for s0, s1, s2 in statuses.values())
    ok = sum(1 for s in statuses.values() if s[0] == "ok")
    worst = max((r.get("rel_error") or 0.0) / (r.get("tolerance") or 1.0) for d in (a, b, c) for r in d.values())
    print(
        f"verification identical: {'yes' if identical else 'NO'} ({ok} of {len(keys)} ok on GPU0; statuses "
        f"GPU0/GPU1/cluster agree for every configuration; worst error {worst:.3f} of its tolerance)"
    )

    print(
        f"\n{'configuration':<40} {'size':>6} {'GPU0 ms':>9} {'GPU1 ms':>9} {'gap %':>6} {'cluster ms':>10} {'on':>5}"
    )
    gaps, cluster_gaps = [], []
    for k in keys:
        t0, t1, tc = _median_ms(a[k]), _median_ms(b.get(k)), _median_ms(c.get(k))
        gap = _gap_pct(t0, t1)
        on = ((c.get(k) or {}).get("gpu") or {}).get("worker", "-")
        reference = t1 if on == "gpu1" and t1 else t0  # the cluster's timing against the same GPU's single run
        if gap is not None:
            gaps.append(gap)
        if _gap_pct(reference, tc) is not None:
            cluster_gaps.append(_gap_pct(reference, tc))
        fmt = lambda v: f"{v:.4f}" if v else "-"  # noqa: E731
        print(
            f"{k[0]:<40} {k[1]:>6} {fmt(t0):>9} {fmt(t1):>9} {(f'{gap:.2f}' if gap is not None else '-'):>6} "
            f"{fmt(tc):>10} {on:>5}"
        )
    within = sum(g <= 3.0 for g in gaps)
    if gaps:
        print(
            f"\nGPU0 vs GPU1 per configuration: {within} of {len(gaps)} within 3 % ({100 * within / len(gaps):.0f} %); "
            f"median gap {statistics.median(gaps):.2f} %, largest {max(gaps):.2f} %"
        )
    if cluster_gaps:
        print(
            f"cluster vs single run on the same GPU: median gap {statistics.median(cluster_gaps):.2f} %, "
            f"largest {max(cluster_gaps):.2f} %"
        )
    best = two.get("tuning", {}).get("by_gpu_type", {})
    for gpu, entries in best.items():
        for e in entries:
            print(f"best on {gpu} at {e['m']}: {e['config']} {e['tflops']:.1f} TFLOP/s")
    summary = {
        "one_gpu_s": single_s,
        "two_gpus_s": cluster_s,
        "cluster_startup_s": startup,
        "sweep_s": cluster.get("sweep_s"),
        "ratio_end_to_end": ratio,
        "ratio_cluster_up": ratio_up,
        "verification_identical": identical,
        "configs_compared": len(gaps),
        "within_3pct": within,
        "median_gap_pct": statistics.median(gaps) if gaps else None,
        "max_gap_pct": max(gaps) if gaps else None,
        "results_per_gpu": cluster.get("results_per_gpu"),
    }
    (where / "summary.json").write_text(json.dumps(summary, indent=1))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        raise SystemExit(2)
    raise SystemExit(main(sys.argv[1]))
