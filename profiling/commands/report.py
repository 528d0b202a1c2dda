"""`python -m profiling report FILE [--json]`: read any Nsight Compute report and print its launches."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import print_json
from profiling.nsight import report as ncu_report

HELP = "Read an Nsight Compute report (CSV of any page, ncu stdout, or .ncu-rep) and print each launch"

_SHOWN = (
    ("gpu__time_duration.sum", "duration", 1e-3, "us"),
    ("launch__registers_per_thread", "regs", 1, ""),
    ("sm__maximum_warps_per_active_cycle_pct", "theor.occ", 1, "%"),
    ("sm__warps_active.avg.pct_of_peak_sustained_active", "ach.occ", 1, "%"),
    ("dram__bytes.sum", "dram", 1e-6, "MB"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .csv (raw, details or summary page), ncu stdout, or a .ncu-rep")
    parser.add_argument("--json", action="store_true", help="emit the whole model as JSON")
    parser.add_argument("--ncu", default=None, help="ncu for .ncu-rep files (default: NCU_PATH, PATH...)")


def _fmt(value: float | None, scale: float, unit: str) -> str:
    if value is None:
        return "-"
    shown = value * scale
    text = f"{shown:,.0f}" if abs(shown) >= 100 or shown == int(shown) else f"{shown:,.2f}"
    return f"{text}{unit}"


def format_report(report: ncu_report.Report) -> str:
    """A short human-readable listing: one block per launch."""
    lines = [f"{report.source}: {len(report.launches)} launch(es), {report.layout} layout"]
    for launch in report.launches:
        dims = ""
        if launch.block or launch.grid:
            dims = f" block {launch.block} grid {launch.grid}"
        lines.append(f"[{launch.id}] {ncu_report.launch_label(launch)}{dims} cc {launch.cc or '?'}")
        shown = [f"{label} {_fmt(launch.value(name), s, u)}" for name, label, s, u in _SHOWN]
        lines.append("    " + ", ".join(shown))
        d = launch.derived
        extras = []
        if "fp32_flops_per_second" in d:
            extras.append(f"FP32 {d['fp32_flops_per_second'] / 1e12:.2f} TFLOP/s")
        for op in ("ld", "st"):
            if f"shared_{op}_bank_conflict_pct" in d:
                way = d.get(f"shared_{op}_n_way")
                extras.append(
                    f"smem {op} conflicts {d[f'shared_{op}_bank_conflict_pct']:.1f}%"
                    + (f" ({way:.1f}-way)" if way is not None else "")
                )
        if extras:
            lines.append("    " + ", ".join(extras))
        lines.append(f"    {len(launch.metrics)} metrics, {len(launch.findings)} findings")
        for finding in launch.findings:
            if finding.estimated_speedup_pct:
                lines.append(f"    - {finding.rule}: est. speedup {finding.estimated_speedup_pct:.1f}%")
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = usecases.load_report(args.file, ncu=args.ncu)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))
    return 0
