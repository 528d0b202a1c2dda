"""`python -m profiling sass --kernel ID [--arch sm_90] [--json] [--listing]`: static SASS and instruction mix of a
catalog kernel, compiled here as the launcher compiles it (NVRTC with CuPy's options, or nvcc for the sm_90a
kernels) and disassembled (no GPU needed)."""

from __future__ import annotations

import argparse

from kernels import get_kernel
from profiling.analysis import sass as A
from profiling.commands import print_json

HELP = "static SASS of a catalog kernel: instruction mix of its main loop and SASS per CUDA line (no GPU)"

_SHOWN = (
    ("FFMA", "ffma"),
    ("HMMA", "hmma"),
    ("LDS (all widths)", "lds"),
    ("LDS.128", "lds_128"),
    ("LDSM (ldmatrix)", "ldsm"),
    ("STS", "sts"),
    ("LDG", "ldg"),
    ("LDGSTS (cp.async)", "ldgsts"),
    ("BAR", "bar"),
)


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--kernel", required=True, help="catalog id (v5, v9-regdb, wmma-async...)")
    parser.add_argument("--arch", default="sm_90", help="target architecture (default sm_90)")
    parser.add_argument("--json", action="store_true", help="print JSON (with the SASS per line)")
    parser.add_argument("--listing", action="store_true", help="also print the SASS under each CUDA line")


def format_static(static: A.StaticSass, listing: bool = False) -> str:
    whole, loop = static.mix.to_dict(), static.loop_mix.to_dict() if static.loop_mix else None
    out = [
        f"{static.kernel_id}: {static.entry} for {static.arch} ({static.function.name}, {static.compiler}, {static.tool})"
    ]
    out.append(f"  {'':<20} {'kernel':>8} {'main loop':>10}")
    out.append(f"  {'instructions':<20} {whole['total']:>8} {loop['total'] if loop else '-':>10}")
    for label, key in _SHOWN:
        if whole[key] or (loop and loop[key]):
            out.append(f"  {label:<20} {whole[key]:>8} {loop[key] if loop else '-':>10}")
    if loop:
        ratio = loop["math_per_shared_load"]
        math = "HMMA" if loop["hmma"] else "FFMA"
        out.append(f"  {math} per shared load in the main loop: {f'{ratio:.1f}' if ratio else '-'}")
        lines = static.loop_lines()
        out.append(f"  main loop: lines {lines[0]}-{lines[-1]}" if lines else "  main loop: no line information")
        if rewrites := static.loop_address_rewrites():
            out.append(
                f"  cp.async copies whose address registers are rewritten within {A.ADDRESS_REWRITE_WINDOW} "
                f"instructions (the write waits on the long scoreboard until the copy has read them): {len(rewrites)}"
            )
            out.extend(f"    {copy.text}  ->  {write.text}" for copy, write in rewrites)
    else:
        out.append("  no loop found (no backward branch around the FMAs)")
    if listing:
        for (file, line), instructions in static.function.by_source_line().items():
            where = f"{file}:{line}" if file.endswith(".cuh") else f"{line:5d}"
            out.append(f"{where}  {static.line_text(file, line).strip()}")
            out.extend(
                f"         {i.offset:05x}  {i.predicate + ' ' if i.predicate else ''}{i.text}" for i in instructions
            )
    return "\n".join(out)


def run(args: argparse.Namespace) -> int:
    static = A.static_sass(get_kernel(args.kernel), arch=args.arch)
    if args.json:
        print_json(static.to_dict(listing=True))
    else:
        print(format_static(static, listing=args.listing))
    return 0
