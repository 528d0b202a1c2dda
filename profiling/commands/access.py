"""`python -m profiling access`: a kernel's indexing made visible, without a GPU.

For one warp of one block in one K step: every memory instruction, the elements and byte addresses its lanes
touch, sectors per request (global) or wavefronts and bank conflicts (shared). Then the whole launch, every
instruction weighted by how often it runs, and (with --compare) beside what Nsight Compute measured.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING

from profiling.commands import print_json, whole_number
from profiling.errors import InvalidInput
from profiling.shape import Shape

if TYPE_CHECKING:
    from profiling.analysis.access import LaunchPrediction

HELP = "which addresses each lane touches: sectors per request, bank conflicts, per warp and per launch (no GPU)"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    # The models load in run(): `--help` names examples, a wrong id lists every model.
    parser.add_argument(
        "--kernel",
        required=True,
        help="catalog kernel with an indexing model (v1 .. v9-regdb, wmma-async) or a tuning id",
    )
    parser.add_argument("--m", type=whole_number("--m"), default=1024, help="rows of C (default 1024)")
    parser.add_argument("--n", type=whole_number("--n"), default=1024, help="columns of C (default 1024)")
    parser.add_argument("--k", type=whole_number("--k"), default=1024, help="the shared dimension (default 1024)")
    parser.add_argument("--block", default="0,0", help="blockIdx.x,blockIdx.y (default 0,0)")
    parser.add_argument(
        "--warp", type=whole_number("--warp", minimum=0), default=0, help="warp within the block (default 0)"
    )
    parser.add_argument(
        "--step", type=whole_number("--step", minimum=0), default=0, help="iteration of the K loop (default 0)"
    )
    parser.add_argument("--lanes", action="store_true", help="print every lane's coordinates and address")
    parser.add_argument("--compare", metavar="REPORT", help="an ncu report (CSV or .ncu-rep) to compare with")
    parser.add_argument("--json", action="store_true", help="print a JSON object")


def _block(text: str) -> tuple[int, int]:
    try:
        x, y = (int(v) for v in text.split(","))
    except ValueError:
        raise InvalidInput(f"--block takes X,Y (two integers), got '{text}'") from None
    return x, y


def run(args: argparse.Namespace) -> int:
    from kernels.indexing import model_for
    from profiling.analysis.access import predict_launch, warp_view, work_problem

    model = model_for(args.kernel)
    if min(args.m, args.n, args.k) < 1:
        raise InvalidInput(f"sizes must be positive, got {args.m}x{args.n}x{args.k}")
    problem = model.spec.size_problem(args.m, args.n, args.k)
    if problem:
        raise InvalidInput(problem)
    shape = Shape(args.m, args.n, args.k)
    problem = work_problem(model, shape)  # at once, before any block is looked at
    if problem:
        raise InvalidInput(problem)
    block, (gx, gy) = _block(args.block), model.grid(shape)
    if not (0 <= block[0] < gx and 0 <= block[1] < gy):
        raise InvalidInput(f"block {block[0]},{block[1]} is outside the grid {gx}x{gy}")
    if not 0 <= args.warp < model.warps_per_block:
        raise InvalidInput(f"warp {args.warp} is outside 0..{model.warps_per_block - 1}")
    if not 0 <= args.step < model.steps(shape):
        raise InvalidInput(f"step {args.step} is outside 0..{model.steps(shape) - 1} (K loop iterations)")
    view = warp_view(model, shape, block, args.warp, args.step)
    prediction = predict_launch(model, shape)
    comparisons = _compare(args.compare, model.spec.id, shape, prediction) if args.compare else None
    if args.json:
        out = view | {"launch": prediction.ratios(), "totals": {c: vars(t) for c, t in prediction.totals.items()}}
        if comparisons is not None:
            out["compare"] = [c.to_dict() for c in comparisons]
        print_json(out)
        return 0
    _print_view(view, args.lanes)
    _print_launch(prediction)
    if comparisons is not None:
        _print_compare(comparisons, args.compare)
    return 0


def _compare(path: str, kernel: str, shape: Shape, prediction: LaunchPrediction) -> list:
    # Lazy: reading a report pulls in the ncu parser, which the plain command does not need.
    from profiling.analysis.access_check import compare_launch, launch_shape
    from profiling.nsight.load import load_report

    report = load_report(path)
    out = []
    for launch in report.launches:
        found = launch_shape(launch, shape.k)
        if found == (kernel, shape):
            out += compare_launch(launch, prediction)
    if not out:
        raise InvalidInput(f"{path} has no launch of {kernel} at {shape.label} to compare with")
    return out


def _print_view(view: dict, lanes: bool) -> None:
    tile, t = view["tile"], view["threads"]
    print(f"{view['kernel']} at {view['shape']['m']}x{view['shape']['n']}x{view['shape']['k']}, grid {view['grid']}")
    print(
        f"block {tuple(view['block'])}: C rows {tile['row0']}..{tile['row0'] + tile['rows'] - 1}, "
        f"columns {tile['col0']}..{tile['col0'] + tile['cols'] - 1}; warp {view['warp']}: threads "
        f"{t['tid'][0]}..{t['tid'][-1]} (threadIdx.x {min(t['x'])}..{max(t['x'])}, "
        f"threadIdx.y {min(t['y'])}..{max(t['y'])}); K step {view['step']} of {view['steps']} "
        f"(k {view['k_range'][0]}..{view['k_range'][1] - 1})"
    )
    for title, records in (("in this K step", view["instructions"]), ("after the K loop", view["epilogue"])):
        print(f"\n{title}:")
        print(f"  {'instruction':<48} {'sass':<20} {'lanes':>5} {'B/lane':>6}  cost")
        for r, count in _grouped(records, lanes):
            label = r["label"] if count == 1 else f"{r['label']} (and {count - 1} like it)"
            print(f"  {label[:48]:<48} {r['sass']:<20} {r['active_lanes']:>5} {r['bytes_per_lane']:>6}  {_cost(r)}")
            if lanes:
                kind = "sectors" if r["space"] == "global" else "banks"
                for lane in (x for x in r["lanes"] if x["active"]):
                    print(
                        f"      lane {lane['lane']:>2}: {r['array']}[{lane['row']}][{lane['col']}] "
                        f"byte {lane['address']} {kind} {lane[kind]}"
                    )


def _cost(r: dict) -> str:
    if r["space"] == "global":
        return f"{r['sectors']} sectors, {r['lines']} lines" if r["requests"] else "no request"
    return (
        f"{r['wavefronts']} wavefronts (ideal {r['ideal_wavefronts']}, "
        f"{r['conflict_degree']}-way, {r['lanes_per_phase']} lanes/phase)"
    )


def _grouped(records: list[dict], keep_all: bool) -> list[tuple[dict, int]]:
    """Instructions of the same form, array, lane count and cost collapsed into one line (unless every lane
    is printed)."""
    if keep_all:
        return [(r, 1) for r in records]
    groups: dict[tuple, list] = {}
    for r in records:
        key = (r["sass"], r["category"], r["array"], r["active_lanes"], _cost(r))
        groups.setdefault(key, [r, 0])[1] += 1
    return [(r, n) for r, n in groups.values()]


def _print_launch(prediction) -> None:
    print(f"\nwhole launch ({prediction.shape.label}, every instruction weighted by how often it runs):")
    names = {
        "global_ld": "global loads",
        "global_st": "global stores",
        "shared_ld": "shared loads",
        "shared_st": "shared stores",
        "ldgsts": "cp.async writes (banks)",
    }
    for cat, t in prediction.totals.items():
        if not t.instructions:
            continue
        if cat.startswith("global"):
            per = t.sectors / t.requests if t.requests else 0
            print(f"  {names[cat]:<24} {t.requests:>14,.0f} requests {t.sectors:>16,.0f} sectors  {per:6.2f} / request")
        else:
            per = t.wavefronts / t.instructions
            conflicts = (t.wavefronts - t.ideal) / t.instructions
            print(
                f"  {names[cat]:<24} {t.instructions:>14,.0f} instr.   {t.wavefronts:>16,.0f} wavefronts "
                f"{per:6.2f} / instruction ({conflicts:.2f} above conflict-free)"
            )


def _print_compare(comparisons: list, path: str) -> None:
    print(f"\npredicted against measured ({path}):")
    for c in comparisons:
        d = c.to_dict()
        diff = f"{d['diff_pct']:+.2f} %" if d["diff_pct"] is not None else "-"
        mark = "" if c.within_tolerance else "   differs"
        print(f"  {d['label']:<44} {c.predicted:>16,.4f} {c.measured:>16,.4f} {diff:>9}  ({c.source}){mark}")
