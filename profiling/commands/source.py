"""`python -m profiling source REPORT [--kernel NAME] [--top N] [--json]`: warp-stall hot spots per source line and
SASS instruction, from ncu's source page (CSV, gzip CSV, or a .ncu-rep where ncu is installed)."""

from __future__ import annotations

import argparse

from profiling.commands import print_json, whole_number
from profiling.errors import InvalidInput
from profiling.nsight import source as S
from profiling.nsight import source_load as SL

HELP = "hottest source lines and SASS instructions of each kernel, from an Nsight Compute source page"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "report",
        help="`ncu --import R --page source --csv --print-source cuda,sass` (or sass) output, .csv or .csv.gz, "
        "or a .ncu-rep (needs ncu)",
    )
    parser.add_argument("--kernel", default=None, help="only kernels whose name contains this (or a catalog id)")
    parser.add_argument(
        "--top", type=whole_number("--top"), default=10, help="lines and instructions shown per kernel (default 10)"
    )
    parser.add_argument("--json", action="store_true", help="print JSON")
    parser.add_argument("--ncu", default=None, help="ncu for .ncu-rep files (default: NCU_PATH, PATH...)")


def _stalls_text(stalls: dict[str, float], total: float, n: int = 4) -> str:
    ranked = sorted(stalls.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{r} {100 * v / total:.0f}%" for r, v in ranked if total)


def format_kernel(kernel: S.KernelSource, top: int) -> str:
    """A kernel's block of the text output."""
    total = kernel.total_samples
    head = f"== {kernel.name}"
    if kernel.catalog_id:
        head += f"  [{kernel.catalog_id}]"
    lines = [
        head,
        f"   {total:,.0f} warp-stall samples over {len(kernel.instructions)} SASS instructions; {kernel.source_note}",
        f"   stalls: {_stalls_text(kernel.stall_totals(), total)}",
    ]
    if kernel.lines:
        lines.append(f"   hottest lines (top {top}):")
        # wf/inst: ncu's "L1 Conflicts Shared N-Way", shared wavefronts per warp instruction (the registry's
        # WAVEFRONTS_PER_INSTRUCTION_MEANING), the line's worst instruction.
        lines.append(f"   {'line':>6} {'samples':>8}  {'dominant stall':<18} {'wf/inst':>7}  source")
        for s in kernel.hottest_lines(top):
            way = f"{s['bank_conflict_n_way']:.0f}" if s["bank_conflict_n_way"] else "-"
            text = s["source"].strip()[:70]
            lines.append(f"   {s['line']:>6} {s['pct']:7.1f}%  {s['dominant_stall'] or '-':<18} {way:>7}  {text}")
    lines.append(f"   hottest instructions (top {top}):")
    for ins in kernel.hottest_instructions(top):
        pct = 100 * ins.samples / total if total else 0.0
        where = f"line {ins.lines[0]}" if ins.lines else ""
        way = ins.counters.get(S.N_WAY)
        extra = f" {way:.0f} shared wavefronts" if way else ""
        lines.append(
            f"   0x{ins.address:x} {pct:6.1f}%  {S.dominant_stall(ins.stalls) or '-':<18} {ins.sass[:48]:<48}"
            f" {where}{extra}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.top < 1:
        raise InvalidInput("--top must be at least 1")
    page = SL.load_source_page(args.report, ncu=args.ncu)
    kernels = page.select(args.kernel)
    if args.json:
        print_json(page.to_dict(top=args.top, name=args.kernel))
        return 0
    print(f"{page.source}: {len(kernels)} kernel(s), {page.view} view")
    for kernel in kernels:
        print(format_kernel(kernel, args.top))
    for warning in page.warnings:
        print(f"warning: {warning}")
    return 0
