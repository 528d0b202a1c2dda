"""Read compute-sanitizer output (memcheck, racecheck, initcheck, synccheck) into findings and a summary."""

from __future__ import annotations

import re
from dataclasses import dataclass, field


@dataclass
class SanitizerFinding:
    """One reported error or hazard, with its indented detail lines."""

    severity: str
    message: str
    details: list[str] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        return {"severity": self.severity, "message": self.message, "details": self.details}


@dataclass
class SanitizerResult:
    """A compute-sanitizer run: the tool, error count from its summary, and the findings."""

    tool: str
    errors: int | None
    warnings: int | None
    findings: list[SanitizerFinding]
    summary: str
    returncode: int = 0

    @property
    def clean(self) -> bool:
        return (self.errors or 0) == 0 and not self.findings

    def to_dict(self) -> dict[str, object]:
        return {
            "tool": self.tool,
            "errors": self.errors,
            "warnings": self.warnings,
            "clean": self.clean,
            "summary": self.summary,
            "findings": [f.to_dict() for f in self.findings],
        }


_SAN_PREFIX = re.compile(r"^=========( ?)(.*)$")


_ERROR_SUMMARY = re.compile(r"ERROR SUMMARY:\s*([\d,]+)\s+errors?")


_RACE_SUMMARY = re.compile(
    r"RACECHECK SUMMARY:\s*([\d,]+)\s+hazards?\s+displayed\s*\(([\d,]+)\s+errors?,\s*([\d,]+)\s+warnings?\)"
)


_SEVERITY = re.compile(r"^(Error|ERROR|Warning|WARNING|WARN|Invalid|Program hit|Race|Uninitialized|Barrier)")


def parse_sanitizer_output(text: str, tool: str) -> SanitizerResult:
    """Findings and counts from compute-sanitizer's `=========`-prefixed report."""
    findings: list[SanitizerFinding] = []
    errors: int | None = None
    warnings: int | None = None
    summary = ""
    current: SanitizerFinding | None = None
    for line in text.splitlines():
        match = _SAN_PREFIX.match(line)
        if not match:
            continue
        body = match.group(2)
        stripped = body.strip()
        if not stripped or stripped == "COMPUTE-SANITIZER":
            current = None
            continue
        race = _RACE_SUMMARY.search(stripped)
        if race:
            summary = stripped
            errors, warnings = int(race.group(2).replace(",", "")), int(race.group(3).replace(",", ""))
            current = None
            continue
        err = _ERROR_SUMMARY.search(stripped)
        if err:
            summary = summary or stripped
            if errors is None:
                errors = int(err.group(1).replace(",", ""))
            current = None
            continue
        indented = body.startswith(" ") or body.startswith("\t")
        if indented and current is not None:
            current.details.append(stripped)
            continue
        if _SEVERITY.match(stripped) or not indented:
            lowered = stripped.lower()
            severity = "warning" if lowered.startswith("warn") else "error"
            message = re.sub(r"^(Error|ERROR|Warning|WARNING|WARN)\s*:\s*", "", stripped)
            current = SanitizerFinding(severity=severity, message=message)
            findings.append(current)
    return SanitizerResult(tool=tool, errors=errors, warnings=warnings, findings=findings, summary=summary)
