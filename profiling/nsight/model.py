"""The report model every consumer reads: kernel launches with their metrics, derived values, findings and
text attributes, in a Report. Parsing lives in profiling.nsight.report (entry points) and .layouts."""

from __future__ import annotations

from collections.abc import Mapping, MutableMapping
from dataclasses import dataclass, field
from typing import Any, Literal

from profiling import metric_names as N
from profiling.identity import LaunchIdentity, identify
from profiling.nsight import metrics as M
from profiling.nsight.metric_table import Metric, MetricRow
from profiling.nsight.names import function_name

Layout = Literal["raw", "details", "summary", "text"]


@dataclass
class Finding:
    """A rule result from the details page (or a compute-sanitizer report)."""

    rule: str
    type: str
    description: str
    section: str = ""
    speedup_type: str = ""
    estimated_speedup_pct: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "rule": self.rule,
            "type": self.type,
            "section": self.section,
            "description": self.description,
            "speedup_type": self.speedup_type,
            "estimated_speedup_pct": self.estimated_speedup_pct,
        }


@dataclass
class KernelLaunch:
    """One profiled kernel launch (or, for a per-kernel summary, one kernel's aggregate)."""

    id: str
    name: str
    block: tuple[int, ...] | None = None
    grid: tuple[int, ...] | None = None
    cc: str | None = None
    device: str | None = None
    process: str | None = None
    invocations: int | None = None
    nvtx: str | None = None
    """The NVTX push/pop range(s) the launch ran in, as ncu prints them."""
    metrics: MutableMapping[str, Metric] = field(default_factory=dict)
    """Canonical name -> Metric: a dict, or for the raw page a MetricRow view of the report's table."""
    derived: Mapping[str, float] = field(default_factory=dict)
    findings: list[Finding] = field(default_factory=list)
    attributes: dict[str, str] = field(default_factory=dict)
    """Text-valued metrics ("NVIDIA H100 80GB HBM3") and labels with no canonical name ("Section: Label")."""
    unmapped: dict[str, Metric] = field(default_factory=dict)
    """Numeric details-page rows whose display label has no canonical name, keyed "Section: Label"."""
    tables: dict[str, list[list[str]]] = field(default_factory=dict)
    """Body tables and notes of a section that ncu prints without launch columns (`--print-details all`: the
    NUMA Affinity table, the NVLink note), keyed by section; each a list of rows, the first the header."""
    ours: bool | None = None
    """Whether the launch comes from a run we made: True for our own captures, False for a report of unknown
    origin (an upload, a file), None for a launch built in code. Only where it is not False may the catalog be
    matched by function name, block and grid; our NVTX range proves a launch ours in any report."""
    _identity: LaunchIdentity | None = field(default=None, init=False, repr=False, compare=False)

    @property
    def identity(self) -> LaunchIdentity:
        """Which kernel this is, at which size, whether ours and whether tensor-core work (profiling.identity);
        set when the report is read (identify()), worked out on each use for a launch built in code."""
        return self._identity if self._identity is not None else self._worked_out()

    @property
    def label(self) -> str:
        """'v3 4096x4096x4096' for our kernels, else '<function> #<id>' (LaunchIdentity.label)."""
        return self.identity.label(self.function, self.id)

    def identify(self, known: dict[tuple[Any, ...], Any] | None = None) -> LaunchIdentity:
        """Work out the identity from the launch's name, NVTX range, grid and counters, and keep it; `known`: as
        profiling.identity.identify takes it, shared by the launches of one report."""
        self._identity = self._worked_out(known)
        return self._identity

    def _worked_out(self, known: dict[tuple[Any, ...], Any] | None = None) -> LaunchIdentity:
        pipe = next((v for v in (self.value(n) for n in N.TENSOR_PIPE_BUSY) if v is not None), None)
        return identify(
            function=self.function,
            nvtx=self.nvtx,
            block=self.block,
            grid=self.grid,
            from_our_run=self.ours,
            tensor_instructions=self.value(N.TENSOR_INST),
            tensor_pipe_pct=pipe,
            fp32_flops=self.derived.get("fp32_flops"),
            known=known,
        )

    @property
    def function(self) -> str:
        """The function's own name ('distribution_elementwise_grid_stride_kernel'); `name` keeps the full one."""
        return function_name(self.name)

    def value(self, name: str) -> float | None:
        """A canonical metric's value in base units, or None."""
        if isinstance(self.metrics, MetricRow):
            return self.metrics.value(name)
        metric = self.metrics.get(name)
        return metric.value if metric is not None else None

    def metric_values(self) -> Mapping[str, float]:
        """Canonical name -> value in base units (what M.derive reads)."""
        if isinstance(self.metrics, MetricRow):
            return self.metrics.floats()
        return {k: m.value for k, m in self.metrics.items()}

    def to_dict(self, metrics: bool = True, derived: bool = True) -> dict[str, Any]:
        """The launch as plain data; without `metrics` (report --json writes them itself, see
        MetricRow.json_members) the "metrics" key is left out, and without `derived` the "derived" key keeps its
        place with None, for a writer that puts their text there itself."""
        data = {
            "id": self.id,
            "name": self.name,
            "function": self.function,
            "block": list(self.block) if self.block else None,
            "grid": list(self.grid) if self.grid else None,
            "cc": self.cc,
            "device": self.device,
            "process": self.process,
            "invocations": self.invocations,
            "nvtx": self.nvtx,
            "identity": self.identity.to_dict(),
            "metrics": {k: m.to_dict() for k, m in self.metrics.items()} if metrics else None,
            "derived": self.derived_dict() if derived else None,
            "findings": [f.to_dict() for f in self.findings],
            "unmapped": {k: m.to_dict() for k, m in self.unmapped.items()},
            "attributes": self.attributes,
            "tables": self.tables,
        }
        if not metrics:
            del data["metrics"]
        return data

    def derived_dict(self) -> dict[str, dict[str, Any]]:
        """The derived values as to_dict writes them: name -> {"value", "unit"}."""
        return {k: {"value": v, "unit": M.DERIVED_UNITS.get(k, "")} for k, v in self.derived.items()}


@dataclass
class Report:
    """Everything read from one report: launches in report order, the layout read, and warnings."""

    launches: list[KernelLaunch]
    layout: Layout
    source: str = ""
    warnings: list[str] = field(default_factory=list)
    source_page: Any = None
    """For a `.ncu-rep` upload: its source view (profiling.nsight.source.SourcePage), where the report has one."""
    metric_labels: dict[str, str] = field(default_factory=dict)
    """Display labels of metrics ("Duration"), where the report names them (a `.ncu-rep`)."""
    metric_sections: dict[str, str] = field(default_factory=dict)
    """The ncu section a metric is shown in ("GPU Speed Of Light Throughput"), where the report says (a `.ncu-rep`)."""

    def to_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "layout": self.layout,
            "launches": [launch.to_dict() for launch in self.launches],
            "warnings": self.warnings,
        }
