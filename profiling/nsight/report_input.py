"""Report input as a stream of lines: text encodings, ncu's lines around the CSV, the header, and CSV records.

Nothing here holds a whole report: bytes and files are decoded chunk by chunk, the header search reads up to the
header only (however much a chatty program printed before it), and the body is handed on record by record.
"""

from __future__ import annotations

import codecs
import csv
import io
import re
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from profiling.errors import ReportError

SNIFF_BYTES = 65536
"""How much of a file's start is looked at to tell its encoding (and a binary file) apart."""
MAX_FIELD_CHARS = 200 * 1000 * 1000
"""csv's field limit (131,072 by default): one cell may be as long as the largest report read."""
if csv.field_size_limit() < MAX_FIELD_CHARS:
    csv.field_size_limit(MAX_FIELD_CHARS)  # process-wide, so set once here; only ever raised
MAX_COLUMNS = 100_000
"""A header with more columns is not ncu's (and each column costs memory in every row)."""
MAX_NOTES_PER_KIND = 20
"""Warnings of one kind (bad rows, say) kept per report; the rest are counted."""

_NCU_LINE = re.compile(r"^\s*==(PROF|WARNING|ERROR|WARN|INFO)==")
_BOMS: tuple[tuple[bytes, str, str], ...] = (
    (codecs.BOM_UTF32_LE, "utf-32", "UTF-32"),  # before UTF-16 LE: its BOM starts the same way
    (codecs.BOM_UTF32_BE, "utf-32", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8-sig", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16", "UTF-16"),
)
_EXPORT_HINT = "export CSV with `ncu --import report.ncu-rep --csv --page raw > report.csv`"


class SourcePageGiven(ReportError):
    """The file is an ncu source page (`--page source --csv`), not a metrics page: read it with
    profiling.nsight.source (`python -m profiling source`)."""


# The first line of a source-page export: a sass view's section starts with the kernel's name alone, a cuda,sass
# view's with the file and the function (ncu's warnings may come first).
_SOURCE_PAGE_STARTS = ('"Kernel Name",', '"File Path",', '"Function Name",')


# The line that opens a process's launches in ncu's text output ("[3822] python3.12@127.0.0.1").
_TEXT_PROCESS = re.compile(r"^\[\d+\]\s+\S.*@\S+$")


@dataclass
class TextStart:
    """find_header's answer for ncu's text output: the line it starts with (the rest is still to be read), and
    ncu's ==ERROR== lines before it."""

    line: str
    errors: str = ""


def _is_source_page_start(stripped: str) -> bool:
    if not stripped.startswith(_SOURCE_PAGE_STARTS):
        return False
    try:
        cells = next(csv.reader([stripped]), [])
    except csv.Error:
        return False
    return 2 <= len(cells) <= 3 and not any(cell.strip() for cell in cells[2:])


class Notes:
    """A report's warnings in the order found; each kind is kept MAX_NOTES_PER_KIND times, then counted."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._counts: dict[str, int] = {}
        self._once: set[str] = set()

    def add(self, text: str, kind: str = "") -> None:
        count = self._counts.get(kind, 0) + 1
        self._counts[kind] = count
        if not kind or count <= MAX_NOTES_PER_KIND:
            self.lines.append(text)

    def once(self, key: str, text: str) -> None:
        """Add `text` the first time `key` is seen (one warning per metric, not per cell)."""
        if key not in self._once:
            self._once.add(key)
            self.add(text, kind="once")

    def finish(self) -> list[str]:
        for kind, count in self._counts.items():
            if kind and count > MAX_NOTES_PER_KIND:
                self.lines.append(f"... and {count - MAX_NOTES_PER_KIND} more warnings like these ({kind})")
        return self.lines


# ---------------------------------------------------------------------------------------------
# gzip
# ---------------------------------------------------------------------------------------------

GZIP_MAGIC = b"\x1f\x8b"
_GUNZIP_STEP = 1 << 20


def gunzip(data: bytes, name: str, limit: int) -> bytearray:
    """The bytes a gzip file unpacks to, every member of it (`cat a.gz b.gz` is one valid gzip file), read as a
    stream and refused with one line once they pass `limit` bytes (a 2 MB file can unpack to gigabytes).

    ReportError for a damaged or cut file, and for bytes after the last member that are no gzip member.
    """
    out = bytearray()
    rest = memoryview(data)
    members = 0
    while len(rest):
        if members and not any(rest[:4096]) and not bytes(rest).strip(b"\x00"):
            break  # zero padding after the last member (tape and block devices add it), as gzip allows
        if bytes(rest[:2]) != GZIP_MAGIC:
            raise ReportError(f"{name} is a damaged gzip file (bytes after member {members} are no gzip member)")
        unpacker = zlib.decompressobj(wbits=16 + zlib.MAX_WBITS)
        pending = bytes(rest)
        try:
            while pending and not unpacker.eof:
                out += unpacker.decompress(pending, _GUNZIP_STEP)
                pending = unpacker.unconsumed_tail
                if len(out) > limit:
                    raise ReportError(
                        f"{name} unpacks to over {limit / 1e6:.0f} MB; reports that large are not read (export fewer "
                        "kernels or metrics)"
                    )
        except zlib.error as exc:
            raise ReportError(f"{name} is a damaged gzip file ({exc})") from None
        if not unpacker.eof:
            raise ReportError(f"{name} is a damaged gzip file (cut: it ends inside member {members + 1})")
        members += 1
        rest = memoryview(unpacker.unused_data)
    return out  # not bytes(out): that would hold the report twice


# ---------------------------------------------------------------------------------------------
# Encodings and lines
# ---------------------------------------------------------------------------------------------


def sniff_encoding(head: bytes, name: str) -> str:
    """The codec to read a report with, from its first bytes; ReportError for a binary file.

    UTF-8 (with or without a BOM), UTF-16 and UTF-32 with a BOM, and UTF-16 without one (told by its zero bytes)
    are text; anything else with NUL bytes is binary.
    """
    for bom, codec, _ in _BOMS:
        if head.startswith(bom):
            return codec
    if b"\x00" not in head:
        return "utf-8"
    sample = head[: len(head) - len(head) % 2]
    even, odd = sample[0::2], sample[1::2]
    if sample and odd.count(0) >= 0.9 * len(odd) and even.count(0) <= 0.1 * len(even):
        return "utf-16-le"
    if sample and even.count(0) >= 0.9 * len(even) and odd.count(0) <= 0.1 * len(odd):
        return "utf-16-be"
    raise ReportError(
        f"{name} is a binary file (NUL bytes; not UTF-8 or UTF-16 text), not an Nsight Compute CSV; upload a "
        f".ncu-rep with that extension or {_EXPORT_HINT}"
    )


def encoding_label(codec: str) -> str:
    """'utf-16-le' -> 'UTF-16 LE' (for messages)."""
    return codec.upper().replace("-SIG", "").replace("-LE", " LE").replace("-BE", " BE")


def decoded_lines(binary: BinaryIO, codec: str) -> Iterator[str]:
    """Lines of a binary stream decoded chunk by chunk, "\\r\\n" and "\\r" ends read as "\\n".

    A byte that is not valid in `codec` raises UnicodeDecodeError where it is met.
    """
    text = io.TextIOWrapper(binary, encoding=codec, errors="strict", newline=None)
    try:
        # Not `yield from text`: closing this generator would then close the wrapper, and with it the stream.
        for line in text:  # noqa: UP028
            yield line
    finally:
        text.detach()  # the caller owns the binary stream (it may read it again as Latin-1)


def text_lines(text: str) -> Iterator[str]:
    """Lines of a str one at a time (no list of them, no second copy), "\\r\\n" and "\\r" ends read as "\\n"."""
    pos, end = 0, len(text)
    while pos < end:
        cut = text.find("\n", pos)
        cut = end if cut < 0 else cut + 1
        line = text[pos:cut]
        pos = cut
        if "\r" in line:
            yield from line.replace("\r\n", "\n").replace("\r", "\n").splitlines(keepends=True)
        else:
            yield line


# ---------------------------------------------------------------------------------------------
# Header and records
# ---------------------------------------------------------------------------------------------


def _is_header(stripped: str) -> bool:
    return stripped.startswith('"ID",') or (
        stripped.startswith('"') and '"Kernel Name"' in stripped and "," in stripped
    )


def find_header(lines: Iterator[str], name: str, notes: Notes) -> list[str] | TextStart:
    """Read `lines` up to the CSV header and return its cells; ncu's warnings before it go to `notes`. ncu's text
    output (no CSV) gives TextStart; a source-page export raises SourcePageGiven.

    The whole stream is searched (a program may print any amount before ncu's CSV), and nothing before the
    header is kept but ncu's warnings and its first errors. ReportError when there is no header.
    """
    errors: list[str] = []
    error_chars = 0
    seen_text = False
    seen_csv = False
    for number, line in enumerate(lines, start=1):
        stripped = line.strip().lstrip("\ufeff")
        if not stripped:
            continue
        seen_text = True
        if stripped.startswith(("==WARNING==", "==WARN==")):
            notes.add(stripped.split("==", 2)[-1].strip(), kind="ncu warnings")
            continue
        if stripped.startswith("==ERROR=="):
            # ncu splits one failure over several lines ("An error was reported by the driver:", "LaunchFailed").
            detail = stripped.split("==ERROR==", 1)[1].strip()
            if detail and error_chars < 400:
                errors.append(detail)
                error_chars += len(detail) + 1
            continue
        if _TEXT_PROCESS.match(stripped):
            return TextStart(line, " ".join(errors)[:400])
        if not seen_csv and _is_source_page_start(stripped):
            raise SourcePageGiven(
                f"{name} is an Nsight Compute source page (`--page source` export), not a metrics page; read it with "
                f"`python -m profiling source {name}`"
            )
        seen_csv = True
        if _is_header(stripped):
            if stripped.count(",") >= MAX_COLUMNS:
                raise ReportError(
                    f"{name}: the CSV header on line {number} has over {MAX_COLUMNS:,} columns; ncu's `--set full` "
                    "raw page has about 2,300"
                )
            if "\x00" in stripped:
                raise ReportError(f"{name} has a NUL character in its header (line {number}): not a CSV export")
            try:
                return [cell.strip() for cell in next(csv.reader([stripped]))]
            except csv.Error as exc:
                raise ReportError(f"{name}: the CSV header on line {number} is unreadable ({exc})") from None
    if errors:
        raise ReportError(f"{name} holds no metrics; ncu said: {' '.join(errors)[:400]}")
    if not seen_text:
        raise ReportError(f"{name} is empty; expected an Nsight Compute CSV export or a .ncu-rep file")
    raise ReportError(
        f"{name} is not an Nsight Compute CSV (no header with 'ID' and 'Kernel Name' found); "
        "expected `ncu --csv` output such as `ncu --import report.ncu-rep --csv --page raw`"
    )


def body_records(lines: Iterator[str], name: str, notes: Notes) -> Iterator[str]:
    """The CSV records after the header, one string each ("\\n"-ended), without ncu's own `==PROF==` lines.

    A quoted cell may span lines (the record then spans them too). A stream cut inside a quoted cell gets the
    closing quote, so that the launches before the cut are still read.
    """
    pending: list[str] = []
    for line in lines:
        if "\x00" in line:
            raise ReportError(f"{name} has NUL characters after its header: a binary file, not an Nsight Compute CSV")
        odd = line.count('"') % 2 == 1
        if pending:
            pending.append(line)
            if odd:
                yield "".join(pending)
                pending = []
            continue
        if line[:1] != '"' and _NCU_LINE.match(line):
            continue
        if odd:
            pending.append(line)
        else:
            yield line
    if pending:  # cut inside a quoted cell: the layout's own check notes the short row
        yield "".join(pending).rstrip("\n") + '"\n'


def record_cells(record: str) -> list[str]:
    """The cells of one record (csv rules); [] when csv cannot read it."""
    try:
        return next(csv.reader([record]), [])
    except csv.Error:
        return []


def csv_rows(records: Iterator[str], name: str) -> Iterator[list[str]]:
    """csv rows of records, skipping rows whose cells are all blank; ReportError for what csv cannot read."""
    reader = csv.reader(records)
    while True:
        try:
            row = next(reader)
        except StopIteration:
            return
        except csv.Error as exc:
            raise ReportError(f"{name}: CSV row {reader.line_num} is unreadable ({exc})") from None
        if row and any(cell.strip() for cell in row):
            yield row
