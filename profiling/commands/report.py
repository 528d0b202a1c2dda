"""`python -m profiling report FILE [--json]`: read any Nsight Compute report and print its launches."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Iterator
from typing import Any

from profiling import metric_names as N
from profiling import usecases
from profiling.commands import json_bytes, json_bytes_as_is
from profiling.nsight import metric_registry as R
from profiling.nsight import metrics as M
from profiling.nsight import report as ncu_report
from profiling.nsight.metric_table import MetricRow, RowFloats
from profiling.nsight.raw_page import collector_paused
from profiling.shape import tflops

HELP = "read an Nsight Compute report (CSV of any page, ncu stdout, or .ncu-rep) and print each launch"


def add_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("file", help="a .csv (raw, details or summary page), ncu stdout, or a .ncu-rep")
    parser.add_argument("--json", action="store_true", help="emit the whole model as JSON")
    parser.add_argument("--ncu", default=None, help="ncu for .ncu-rep files (default: NCU_PATH, PATH...)")


DESCRIPTION_CHARS = 160
SMEM_NOTE = f"note: shared-memory wavefronts: {R.WAVEFRONTS_PER_REQUEST_MEANING}; the conflict rate is {R.CONFLICT_RATE_MEANING}"


def _fmt(shown: float | None, unit: str) -> str:
    if shown is None:
        return "-"
    text = f"{shown:,.0f}" if abs(shown) >= 100 or shown == int(shown) else f"{shown:,.2f}"
    return f"{text}{unit}"


def _first_sentence(text: str) -> str:
    """A finding's description cut to its first sentence (at most DESCRIPTION_CHARS), on one line."""
    flat = " ".join(text.split())
    cut = flat.find(". ")
    line = flat[: cut + 1] if 0 < cut < DESCRIPTION_CHARS else flat
    return line if len(line) <= DESCRIPTION_CHARS else line[: DESCRIPTION_CHARS - 1] + "…"


def _conflicts(launch: ncu_report.KernelLaunch, rate: R.MetricDef, per_request: R.MetricDef) -> str | None:
    """Shared-memory bank conflicts of loads or stores in the registry's words, so that a wide access does not
    read as a conflict: the conflict rate, then wavefronts per request against the ideal for the access width."""
    pct, waves = rate.value(launch), per_request.value(launch)
    parts = []
    if pct is not None:
        parts.append(f"{rate.label} {pct:.1f}%")
    if waves is not None:
        parts.append(f"{per_request.label} {waves:.1f}")
    return "; ".join(parts) if parts else None


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
    noted = False
    for launch in report.launches:
        dims = ""
        if launch.block or launch.grid:
            dims = f" block {launch.block} grid {launch.grid}"
        lines.append(f"[{launch.id}] {launch.label}{dims} cc {launch.cc or '?'}")
        shown = [f"{d.label} {_fmt(d.value(launch), d.unit)}" for d in R.REPORT_LINE]
        lines.append("    " + ", ".join(shown))
        throughput = [(d.label, d.value(launch)) for d in R.THROUGHPUT]
        if any(v is not None for _, v in throughput):
            lines.append("    % of peak: " + ", ".join(f"{label} {_fmt(v, '%')}" for label, v in throughput))
        d = launch.derived
        extras = []
        ident = launch.identity
        tensor = ident.gemm_flops if ident.tensor_core else None
        pipe = next((launch.value(n) for n in N.TENSOR_PIPE_BUSY if launch.value(n) is not None), None)
        rate = tflops(tensor, d.get("seconds"))
        if rate is not None:
            extras.append(f"tensor {rate:.2f} TFLOP/s (2MNK over the duration)")
        elif (fp32 := R.FP32_TFLOPS.value(launch)) is not None:
            extras.append(f"FP32 {fp32:.2f} TFLOP/s")
        if pipe is not None and ident.tensor_core:
            extras.append(f"tensor pipe {pipe:.1f}% of peak")
        if extras:
            lines.append("    " + ", ".join(extras))
        pairs = ((R.LD_CONFLICT_RATE, R.LD_WAVEFRONTS_PER_REQUEST), (R.ST_CONFLICT_RATE, R.ST_WAVEFRONTS_PER_REQUEST))
        conflicts = [text for text in (_conflicts(launch, *pair) for pair in pairs) if text]
        lines.extend(f"    {text}" for text in conflicts)
        noted = noted or bool(conflicts)
        lines.append(f"    {len(launch.metrics)} metrics, {len(launch.findings)} findings")
        lines.extend(_findings(launch))
    if noted:
        lines.append(SMEM_NOTE)
    lines.extend(f"warning: {w}" for w in report.warnings)
    return "\n".join(lines)


def json_pieces(report: ncu_report.Report) -> Iterator[tuple[bytes | memoryview, ...]]:
    """`report --json` as strict JSON in UTF-8, one tuple of pieces per launch (and one for the head and the
    tail): the document Report.to_dict() gives, without holding it whole (a 100 MB raw page makes a JSON text
    several times its size), written compactly by orjson (json_bytes); a raw page's metrics go from its float
    table straight into text (MetricRow.json_members). A launch's pieces are not joined: on a page of 100,000
    columns each launch is megabytes of text, and a writer can take them as they are."""
    yield (json_bytes({"source": report.source, "layout": report.layout})[:-1], b',"launches":[')
    known: dict[tuple[Any, ...], bytes] = {}
    for i, launch in enumerate(report.launches):
        head = _launch_head(launch, known)
        if isinstance(launch.metrics, MetricRow):
            members = launch.metrics.json_members(json_bytes)
        else:
            members = json_bytes({k: m.to_dict() for k, m in launch.metrics.items()})[1:-1]
        yield (b",\n" if i else b"\n", memoryview(head)[:-1], b',"metrics":{', members, b"}}")
    yield (b"\n],", memoryview(json_bytes({"warnings": report.warnings}))[1:], b"\n")


def _launch_head(launch: ncu_report.KernelLaunch, known: dict[tuple[Any, ...], bytes] | None = None) -> bytes:
    """The launch's JSON object without its metrics (to_dict(metrics=False)) as json_bytes writes it; a raw page's
    derived values go from their float table straight into text, as its metrics do. `known` keeps the text of the
    members from "name" to "identity" per launch of a report that has them alike (a kernel launched thousands of
    times), so that only the id, the derived values and the attributes are written for each launch."""
    derived = launch.derived
    members = derived.json_members(M.DERIVED_UNITS) if isinstance(derived, RowFloats) else None
    if members is not None and known is not None and not (launch.findings or launch.unmapped or launch.tables):
        head = _head_from_parts(launch, members, known)
        if head is not None:
            return head
    import orjson

    data = launch.to_dict(metrics=False, derived=False)
    if members is not None:
        data["derived"] = orjson.Fragment(b"{" + members + b"}")
        head = json_bytes_as_is(data)
        if head is not None:
            return head
    data["derived"] = launch.derived_dict()
    return json_bytes(data)


def _head_from_parts(
    launch: ncu_report.KernelLaunch, derived: bytes | memoryview, known: dict[tuple[Any, ...], bytes]
) -> bytes | None:
    """_launch_head of a launch without findings, unmapped rows and tables, put together from the texts of its id,
    its members from "name" to "identity" (kept in `known`), its derived values and attributes; None where orjson
    does not take one of them as it is (json_bytes cleans those)."""
    ident = launch.identity
    key = (launch.name, launch.block, launch.grid, launch.cc, launch.device, launch.process, launch.invocations)
    key += (launch.nvtx, ident)
    try:
        middle = known.get(key)
    except TypeError:  # an identity that cannot be hashed
        return None
    if middle is None:
        data = launch.to_dict(metrics=False, derived=False)
        for name in ("id", "derived", "findings", "unmapped", "attributes", "tables"):
            del data[name]
        whole = json_bytes_as_is(data)
        if whole is None:
            return None
        middle = whole[1:-1]
        if len(known) < 10_000:
            known[key] = middle
    launch_id, attributes = json_bytes_as_is(launch.id), json_bytes_as_is(launch.attributes)
    if launch_id is None or attributes is None:
        return None
    return b"".join(
        (
            b'{"id":',
            launch_id,
            b",",
            middle,
            b',"derived":{',
            derived,
            b'},"findings":[],"unmapped":{},"attributes":',
            attributes,
            b',"tables":{}}',
        )
    )


def json_chunks(report: ncu_report.Report) -> Iterator[bytes]:
    """json_pieces joined: one chunk of bytes per launch, with a head and a tail."""
    for pieces in json_pieces(report):
        yield b"".join(pieces)


def run(args: argparse.Namespace) -> int:
    with collector_paused():  # the command makes a few objects per launch and no cycles; it exits when done
        report = usecases.load_report(args.file, ncu=args.ncu)
        if args.json:
            sys.stdout.flush()
            out = getattr(sys.stdout, "buffer", None)  # bytes as they are; a stream of text only where there is none
            write = out.write if out is not None else (lambda piece: sys.stdout.write(bytes(piece).decode()))
            for pieces in json_pieces(report):
                for piece in pieces:
                    write(piece)
        else:
            print(format_report(report))
    return 0
