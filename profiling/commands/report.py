"""`python -m profiling report FILE [--json]`: read any Nsight Compute report and print its launches."""

from __future__ import annotations

import argparse

from profiling import usecases
from profiling.commands import print_json
from profiling.nsight import metrics as M
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


THROUGHPUT = (
    ("sm__throughput.avg.pct_of_peak_sustained_elapsed", "SM"),
    ("gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed", "memory"),
    ("gpu__dram_throughput.avg.pct_of_peak_sustained_elapsed", "DRAM"),
)
"""Nsight Compute's "GPU Speed Of Light Throughput": what its users read first, % of each unit's peak."""

DESCRIPTION_CHARS = 160
SMEM_NOTE = (
    "note: a warp's shared-memory access takes 1 wavefront at 32 bits per thread, 2 at 64 and 4 at 128 with no bank "
    "conflict; each conflict adds a wavefront, so the conflict rate, not the wavefront count, says whether banks "
    "collide"
)


def _fmt(value: float | None, scale: float, unit: str) -> str:
    if value is None:
        return "-"
    shown = value * scale
    text = f"{shown:,.0f}" if abs(shown) >= 100 or shown == int(shown) else f"{shown:,.2f}"
    return f"{text}{unit}"


def _first_sentence(text: str) -> str:
    """A finding's description cut to its first sentence (at most DESCRIPTION_CHARS), on one line."""
    flat = " ".join(text.split())
    cut = flat.find(". ")
    line = flat[: cut + 1] if 0 < cut < DESCRIPTION_CHARS else flat
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1] + "…"


def _conflicts(d: dict[str, float], op: str) -> str | None:
    """Shared-memory bank conflicts of loads or stores, worded so that a wide access does not read as a conflict."""
    pct, way = d.get(f"shared_{op}_bank_conflict_pct"), d.get(f"shared_{op}_n_way")
    if pct is None and way is None:
        return None
    name = {"ld": "loads", "st": "stores"}[op]
    parts = []
    if pct is not None:
        parts.append(f"{pct:.1f}% of wavefronts are bank conflicts (ideal 0%)")
    if way is not None:
        parts.append(f"{way:.1f} wavefronts per instruction (ideal 1 to 4, by access width)")
    return f"smem {name}: " + "; ".join(parts)


def _findings(launch: ncu_report.KernelLaunch) -> list[str]:
    """Every finding of a launch, biggest estimated speedup first, those without a figure after them."""
    ordered = sorted(launch.findings, key=lambda f: -(f.estimated_speedup_pct or -1.0))
    lines = []
    for f in ordered:
        gain = f"est. speedup {f.estimated_speedup_pct:.1f}%" if f.estimated_speedup_pct else "no speedup estimate"
        lines.append(f"    - {f.rule} [{f.type or 'rule'}; {gain}]: {_first_sentence(f.description)}")
    return lines


def format_report(report: ncu_report.Report) -> str:
    """A human-readable listing, one block per launch: size and launch, the key metrics, Speed Of Light
    throughput, the FLOP rate (tensor for tensor-core launches), shared-memory conflicts, then every finding."""
    lines = [f"{report.source}: {len(report.launches)} launch(es), {report.layout} layout"]
    for launch in report.launches:
        dims = ""
        if launch.block or launch.grid:
            dims = f" block {launch.block} grid {launch.grid}"
        lines.append(f"[{launch.id}] {ncu_report.launch_label(launch)}{dims} cc {launch.cc or '?'}")
        shown = [f"{label} {_fmt(launch.value(name), s, u)}" for name, label, s, u in _SHOWN]
        lines.append("    " + ", ".join(shown))
        throughput = [(label, launch.value(name)) for name, label in THROUGHPUT]
        if any(v is not None for _, v in throughput):
            lines.append(
                "    throughput (% of peak): " + ", ".join(f"{label} {_fmt(v, 1, '%')}" for label, v in throughput)
            )
        d = launch.derived
        extras = []
        ident = launch.identity
        tensor = ident.gemm_flops if ident.tensor_core else None
        pipe = next((launch.value(n) for n in M.TENSOR_PIPE_BUSY if launch.value(n) is not None), None)
        if tensor is not None and d.get("seconds"):
            extras.append(f"tensor {tensor / d['seconds'] / 1e12:.2f} TFLOP/s (2MNK over the duration)")
        elif "fp32_flops_per_second" in d:
            extras.append(f"FP32 {d['fp32_flops_per_second'] / 1e12:.2f} TFLOP/s")
        if pipe is not None and ident.tensor_core:
            extras.append(f"tensor pipe {pipe:.1f}% of peak")
        if extras:
            lines.append("    " + ", ".join(extras))
        lines.extend(f"    {text}" for text in (_conflicts(d, op) for op in ("ld", "st")) if text)
        lines.append(f"    {len(launch.metrics)} metrics, {len(launch.findings)} findings")
        lines.extend(_findings(launch))
    if any(line.startswith("    smem ") for line in lines):
        lines.append(SMEM_NOTE)
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    report = usecases.load_report(args.file, ncu=args.ncu)
    if args.json:
        print_json(report.to_dict())
    else:
        print(format_report(report))
    return 0
