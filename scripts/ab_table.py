"""Interval width against repeats for one A/B pair, interleaved (bench --ab) and back-to-back (bench --kernels A,B).

Usage: python scripts/ab_table.py DIR   (DIR holds ab_<size>_r<repeats>.json and seq_<size>_r<repeats>.json, as the
`verdicts` stage of scripts/gpu_check.sh writes them). Prints a Markdown table.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from profiling.abtest import ab_summary  # noqa: E402


def main(folder: Path) -> int:
    rows = []
    for ab_path in sorted(folder.glob("ab_*_r*.json"), key=lambda p: int(re.search(r"_r(\d+)", p.name).group(1))):
        repeats = int(re.search(r"_r(\d+)", ab_path.name).group(1))
        ab = json.loads(ab_path.read_text())
        a, b = ab["ab"]["a"], ab["ab"]["b"]
        seq_path = folder / ab_path.name.replace("ab_", "seq_")
        cells = {}
        for name, doc, paired in (("interleaved", ab, True), ("back-to-back", None, False)):
            if doc is None:
                if not seq_path.exists():
                    continue
                doc = json.loads(seq_path.read_text())
            summary = ab_summary(doc, a, b, paired=paired, threshold_pct=2.0)
            for _, s in summary.iterrows():
                cells.setdefault(s["size"], {})[name] = s
        for size, sides in cells.items():
            row = [str(repeats), size]
            for name in ("interleaved", "back-to-back"):
                s = sides.get(name)
                if s is None or s["verdict"] == "n/a":
                    row += ["-"] * 4
                else:
                    row += [f"{s['B/A']:.4f}", s["interval"], f"±{s['half-width %']:.2f} %", s["verdict"]]
            rows.append(row)
        pair = f"B = {b} against A = {a}"
    head = [
        "repeats",
        "size",
        "interleaved B/A",
        "interval",
        "half-width",
        "verdict",
        "back-to-back B/A",
        "interval",
        "half-width",
        "verdict",
    ]
    print(f"# Interval width against repeats: {pair if rows else 'no A/B files'}\n")
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for row in rows:
        print("| " + " | ".join(row) + " |")
    return 0 if rows else 1


if __name__ == "__main__":
    sys.exit(main(Path(sys.argv[1] if len(sys.argv) > 1 else ".")))
