"""Write docs/foreign-layouts.md: each layout of the foreign program's report (tests/fixtures/foreign) -> launches
found -> whether its names and values agree with the raw page of the same report.

    python scripts/foreign_layouts.py [--out docs/foreign-layouts.md]
"""

from __future__ import annotations

import argparse
import gzip
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from profiling.analysis.roofline import launch_points  # noqa: E402
from profiling.errors import ReportError  # noqa: E402
from profiling.nsight import layout_check  # noqa: E402
from profiling.nsight.report import Report, parse_report_bytes  # noqa: E402
from profiling.nsight.source import parse_source_bytes  # noqa: E402

FOREIGN = ROOT / "tests" / "fixtures" / "foreign"
WHY = ROOT / "results" / "h100-2026-11-22"
# (file, layout as exported, whether it is the same report as raw.csv)
LAYOUTS: tuple[tuple[str, str, bool], ...] = (
    ("raw.csv", "`--csv --page raw`", True),
    ("details.csv", "`--csv --page details`", True),
    ("details_names.csv", "`--csv --page details --print-metric-name name`", True),
    ("details_all.csv.gz", "`--csv --page details --print-details all`", True),
    ("summary.csv", "`--csv --print-summary per-kernel`", True),
    ("details_text.txt", "text, `--import R` (details page)", True),
    ("details_all_text.txt.gz", "text, `--page details --print-details all`", True),
    ("run_stdout.txt", "text, `ncu ./app` stdout (a second run)", False),
)


# The second capture (tests/fixtures/foreign/base_units): ncu's base units against its own default-unit raw page.
BASE_UNIT_LAYOUTS: tuple[tuple[str, str], ...] = (
    ("base_units/raw_base_units.csv", "`--csv --page raw --print-units base`"),
    ("base_units/details_base_units.csv", "`--csv --page details --print-units base`"),
    ("base_units/details_all_base_units.csv.gz", "`--csv --page details --print-details all --print-units base`"),
    ("base_units/details_text_base_units.txt", "text, `--import R --print-units base`"),
)


def read(name: str) -> bytes:
    data = (FOREIGN / name).read_bytes()
    return gzip.decompress(data) if name.endswith(".gz") else data


def table() -> str:
    raw = parse_report_bytes(read("raw.csv"), source="raw.csv")
    lines = [
        "| layout | file | launches found | names agree with raw | values agree with raw page (compared) |",
        "| --- | --- | --- | --- | --- |",
    ]
    for name, layout, same_report in LAYOUTS:
        report = parse_report_bytes(read(name), source=name)
        found = layout_check.compare(raw, report, names_only=not same_report)
        launches = f"{found.launches} of {found.reference_launches}"
        if report.layout == "summary":
            launches += f" ({len(report.launches)} kernels)"
        if same_report:
            verdict = f"{'yes' if found.values_agree else 'no'} ({found.compared:,} values)"
            if found.disagreements:
                verdict += f"; first: {found.disagreements[0]}"
        else:
            verdict = "not compared: another run of the program, so other measurements"
        lines.append(f"| {layout} | {name} | {launches} | {'yes' if found.names_agree else 'no'} | {verdict} |")
    second = parse_report_bytes(read("base_units/raw.csv"), source="base_units/raw.csv")
    for name, layout in BASE_UNIT_LAYOUTS:
        report = parse_report_bytes(read(name), source=name)
        found = layout_check.compare(second, report)
        verdict = f"{'yes' if found.values_agree else 'no'} ({found.compared:,} values, against base_units/raw.csv)"
        if found.disagreements:
            verdict += f"; first: {found.disagreements[0]}"
        quirks = sorted({q.split(" ", 2)[2].split(":")[0] for q in found.ncu_quirks})
        if quirks:
            verdict += f"; {len(found.ncu_quirks)} values of ncu's own base-unit errors left out ({', '.join(quirks)})"
        launches = f"{found.launches} of {found.reference_launches}"
        lines.append(f"| {layout} | {name} | {launches} | {'yes' if found.names_agree else 'no'} | {verdict} |")
    try:
        parse_report_bytes(read("source_sass.csv.gz"), source="source_sass.csv.gz")
        refused = "read as a report (wrong)"
    except ReportError as exc:
        refused = f"`report` refuses it: {exc}"
    page = parse_source_bytes(read("source_sass.csv.gz"), source="source_sass.csv.gz")
    lines.append(
        f"| `--csv --page source --print-source sass` | source_sass.csv.gz | {len(page.kernels)} kernel sections "
        f"| - | a source page, not metrics: {refused} |"
    )
    return "\n".join(lines)


def derived_lines() -> list[str]:
    out = []
    for name in ("ncu_why_1024_raw.csv", "ncu_why_4096_raw.csv"):
        report: Report = parse_report_bytes((WHY / name).read_bytes(), source=name)
        points = launch_points(report)
        sources = layout_check.derived_sources(report)
        levels = ", ".join(f"{lv} {n}" for lv, n in points.groupby("level").size().items()) or "none"
        out.append(f"- results/h100-2026-11-22/{name}: {len(report.launches)} launches, roofline points: {levels}.")
        out.extend(f"  - `{target}` = {formula}" for target, formula in sources.items())
    return out


def document() -> str:
    return "\n".join(
        [
            "# Layouts of one foreign report",
            "",
            "Generated by `python scripts/foreign_layouts.py` from tests/fixtures/foreign (a PyTorch/cuBLASLt/Triton "
            "program on an H100, ncu 2025.3.1, `--set full`, 17 launches). Values are compared in base units to the "
            "precision ncu printed them (profiling/nsight/layout_check.py); a summary's averages, minima and maxima "
            "are compared with its kernels' launches on the raw page. The `--print-units auto` exports of this "
            "report were byte-identical to the plain ones and are not kept. The `--print-units base` rows come from "
            "a second capture of the same program (tests/fixtures/foreign/base_units, 11:50 UTC) and are compared "
            "with that capture's own default-unit raw page.",
            "",
            table(),
            "",
            "## Metrics derived where the report lacks them",
            "",
            *derived_lines(),
            "",
        ]
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "docs" / "foreign-layouts.md"))
    args = parser.parse_args()
    Path(args.out).write_text(document())
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
