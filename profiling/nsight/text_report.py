"""ncu's text output: what `ncu ./app` prints, or `ncu --import R.ncu-rep [--page details] [--print-details all]`.

    [3822] python3.12@127.0.0.1
      void cutlass::Kernel2<...>(T1::Params) (128, 1, 1)x(256, 1, 1), Context 1, Stream 7, Device 0, CC 9.0
        NVTX Push/Pop Stack for Thread 3822: / <default domain> / <0,foreign>
        Section: GPU Speed Of Light Throughput
        ----------------------- ----------- ------------
        Metric Name             Metric Unit Metric Value
        ----------------------- ----------- ------------
        DRAM Frequency                  Ghz         2.62
        ...
        OPT   Est. Speedup: 2.791%
              Out of the 16869440.0 bytes sent to the L2 Compression unit ...

Each launch line (grid x block) starts a launch; each `Section:` a section; a table's columns are where its dashed
rule puts them; rule messages (OPT, INF, WRN, ERR) run until the next blank line. Metric rows go through the same
label, unit and body-item handling as the details CSV (profiling.nsight.layouts), so a report read from its text
and from its CSV gives the same launches and values. Launches get the ids of ncu's `==PROF== Profiling "k" - N`
lines where the text has them, else their order.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from profiling.nsight import report_input
from profiling.nsight.layouts import _add_labelled, _derive, _dims
from profiling.nsight.model import Finding, KernelLaunch, Report

_PROCESS = re.compile(r"^\[(\d+)\]\s+(.+?)@(\S+)\s*$")
_LAUNCH = re.compile(
    r"^\s{1,3}(?P<name>\S.*?) \((?P<grid>[\d, ]+)\)x\((?P<block>[\d, ]+)\)"
    r"(?:, Context (?P<context>\d+))?(?:, Stream (?P<stream>\d+))?(?:, Device (?P<device>\d+))?(?:, CC (?P<cc>[\d.]+))?"
    r"\s*$"
)
_PROF_ID = re.compile(r'^==PROF== Profiling "[^"]*" - (\d+):')
_SECTION = re.compile(r"^\s+Section: (.+?)\s*$")
_RULE = re.compile(r"^\s{2,6}(OPT|INF|WRN|ERR|WARN)\s{2,}(.*?)\s*$")
_SPEEDUP = re.compile(r"^Est\. (Local )?Speedup: ([-+\d.,eE]+)%")
_DASHES = re.compile(r"^\s*-+(?: -+)+\s*$")
_TABLE_NAME = re.compile(r"^\s+Table Name : (.+?)\s*$")
_NVTX_HEAD = re.compile(r"^\s+NVTX (?:Push/Pop|Start/End) (?:Stack|Ranges) for Thread")
# Sub-headings of the roofline charts' tables in `--print-details all`: the CSV's Body Item Label is the title above.
_SUBHEADINGS = {"Peak Work", "Peak Traffic", "Achieved Work", "Achieved Traffic"}
_METRIC_HEADER = ["Metric Name", "Metric Unit", "Metric Value"]


def looks_like_text_report(line: str) -> bool:
    """True for the `[pid] process@host` line that opens each process's launches in ncu's text output."""
    return _PROCESS.match(line.strip("\n")) is not None


class _Reader:
    """The state of one pass over the text: the launch, section and body item being read."""

    def __init__(self, notes: report_input.Notes) -> None:
        self.notes = notes
        self.launches: list[KernelLaunch] = []
        self.prof_ids: list[str] = []
        self.process: str | None = None
        self.launch: KernelLaunch | None = None
        self.section = ""
        self.body = ""
        self.in_nvtx = False
        self.nvtx: list[str] = []
        self.rule: list[str] | None = None
        self.table: list[tuple[int, int]] | None = None
        self.table_rows: list[list[str]] = []
        self.table_state = 0  # 0: none, 1: header expected, 2: second rule expected, 3: rows

    def start_launch(self, match: re.Match[str]) -> None:
        self.finish_launch()
        self.launch = KernelLaunch(
            id=str(len(self.launches)),
            name=match.group("name").strip(),
            grid=_dims(match.group("grid")),
            block=_dims(match.group("block")),
            cc=match.group("cc"),
            device=match.group("device"),
            process=self.process,
        )
        self.launches.append(self.launch)
        self.section, self.body, self.nvtx = "", "", []

    def finish_launch(self) -> None:
        self.finish_rule()
        self.finish_table()
        if self.launch is not None and self.nvtx:
            self.launch.nvtx = " / ".join(self.nvtx)

    def finish_rule(self) -> None:
        if self.rule is None or self.launch is None:
            self.rule = None
            return
        # ncu pads each line of a message to its width; a line that fills it with no space at the end was cut
        # inside a word (a long URL), so it joins the next one without a space.
        kind, joined = self.rule[0], ""
        for part in self.rule[1:]:
            glue = "" if not joined or joined.endswith("\x00") else " "
            joined = joined.rstrip("\x00") + glue + part
        text = " ".join(joined.replace("\x00", "").split())
        speedup_type, speedup = "", None
        match = _SPEEDUP.match(text)
        if match is not None:
            speedup_type = "local" if match.group(1) else "global"
            speedup = report_input_number(match.group(2))
            text = text[match.end() :].strip()
        self.launch.findings.append(
            Finding(
                rule="",
                type=kind,
                description=text,
                section=self.section,
                speedup_type=speedup_type,
                estimated_speedup_pct=speedup,
            )
        )
        self.rule = None

    def finish_table(self) -> None:
        rows, self.table_rows = self.table_rows, []
        self.table, self.table_state = None, 0
        if self.launch is None or not rows:
            return
        header, body = rows[0], rows[1:]
        if header == _METRIC_HEADER:
            for name, unit, value in body:
                _add_labelled(self.launch, self.section, name, unit, value, self.notes, body=self.body)
        else:
            self.launch.tables.setdefault(self.section, []).extend(rows)

    def cells(self, line: str) -> list[str]:
        spans = self.table or []
        out = [line[start:end].strip() for start, end in spans[:-1]]
        out.append(line[spans[-1][0] :].strip() if spans else line.strip())
        return out

    def feed(self, line: str) -> None:
        unstripped = line.rstrip("\n")
        text = unstripped.rstrip()
        if self.table_state:
            self.table_line(text)
            return
        if self.rule is not None:
            if text.strip() and not _RULE.match(text) and not _SECTION.match(text) and not _DASHES.match(text):
                # "\x00" marks a line cut inside a word (see finish_rule).
                self.rule.append(text.strip() + ("\x00" if len(unstripped) >= 100 and unstripped == text else ""))
                return
            self.finish_rule()
            if _DASHES.match(text):
                return  # the rule between two messages, not the top of a table
        if not text.strip():
            self.in_nvtx = False
            return
        if text.startswith("=="):
            match = _PROF_ID.match(text)
            if match is not None:
                self.prof_ids.append(match.group(1))
            elif text.startswith(("==WARNING==", "==WARN==")):
                self.notes.add(text.split("==", 2)[-1].strip(), kind="ncu warnings")
            return
        match = _PROCESS.match(text)
        if match is not None:
            self.finish_launch()
            self.launch, self.process = None, match.group(2)
            return
        match = _LAUNCH.match(text)
        if match is not None and (self.launch is None or not text.startswith("    ")):
            self.start_launch(match)
            return
        if self.launch is None:
            return
        self.launch_line(text)

    def launch_line(self, text: str) -> None:
        if _NVTX_HEAD.match(text):
            self.in_nvtx = True
            return
        match = _SECTION.match(text)
        if match is not None:
            self.in_nvtx = False
            self.section, self.body = match.group(1), ""
            return
        if self.in_nvtx and text.strip().startswith("<"):
            # "<default domain>" names the domain; "<0,foreign>" a range in it (level, name): ranges are kept.
            name = text.strip()[1:-1]
            level, comma, range_name = name.partition(",")
            if comma and level.isdigit():
                self.nvtx.append(range_name)
            return
        self.in_nvtx = False
        match = _RULE.match(text)
        if match is not None:
            self.rule = [match.group(1), match.group(2)]
            return
        if _DASHES.match(text):
            self.table = [(m.start(), m.end()) for m in re.finditer(r"-+", text)]
            self.table_state = 1
            return
        match = _TABLE_NAME.match(text)
        if match is not None:
            self.body = match.group(1)
            return
        stripped = text.strip()
        if stripped.startswith("Warning:"):
            self.notes.once(stripped, stripped)
        elif self.section and stripped not in _SUBHEADINGS:
            self.body = stripped  # a body item's title (`--print-details all`)

    def table_line(self, text: str) -> None:
        if self.table_state == 1:  # the header row
            self.table_rows.append(self.cells(text))
            self.table_state = 2
        elif self.table_state == 2:  # the rule under the header
            self.table_state = 3 if _DASHES.match(text) else 0
            if not self.table_state:
                self.table_rows = []
        elif _DASHES.match(text) or not text.strip():
            self.finish_table()
        else:
            self.table_rows.append(self.cells(text))

    def finish(self) -> list[KernelLaunch]:
        self.finish_launch()
        if len(self.prof_ids) == len(self.launches):
            for launch, launch_id in zip(self.launches, self.prof_ids, strict=True):
                launch.id = launch_id
        return self.launches


def report_input_number(text: str) -> float | None:
    """A printed number ("2.791", "1,024") as a float, or None."""
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def parse_text(lines: Iterator[str], notes: report_input.Notes) -> Report:
    """Read ncu's text output (details page, `--print-details all`, or a profiling run's stdout) into a Report."""
    reader = _Reader(notes)
    for line in lines:
        reader.feed(line)
    launches = reader.finish()
    _derive(launches)
    return Report(launches=launches, layout="text")
