"""Predicted against measured: the indexing models' whole-launch figures (profiling/analysis/access.py) beside
the counters Nsight Compute measured for the same launch.

Two kinds of measurement are compared. The hardware counters (l1tex__*, smsp__sass_inst_executed_*) count
what the L1 did, including wavefronts other traffic caused. The source counters of a `--set full` capture
(memory_l1_wavefronts_shared, memory_l2_theoretical_sectors_global) are computed by ncu per instruction from
the addresses it recorded: they show what the instructions alone cost.

The shared-memory writes of cp.async are not compared: ncu's wavefronts for them do not follow their banks
(profiling/analysis/access.py), so kernels with cp.async are checked on their shared loads and global traffic.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import asdict, dataclass, replace

from kernels.indexing import MODELS, KernelModel, model_for
from kernels.tuning import all_tuning_configs
from profiling import metric_names as MN
from profiling.analysis.access import LaunchPrediction, predict_launch
from profiling.nsight.report import KernelLaunch, Report
from profiling.nsight.source import Instruction, short_name
from profiling.shape import Shape

TOLERANCE_PCT = 2.0

# quantity: (numerator metrics, denominator metrics); ldmatrix wavefronts count among shared loads, while its
# instructions are counted apart from smsp__sass_inst_executed_op_shared_ld.
RATIO_METRICS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "global_ld_sectors_per_request": (
        (MN.GLOBAL_LD_SECTORS,),
        (MN.GLOBAL_LD_REQUESTS,),
    ),
    "global_st_sectors_per_request": (
        (MN.GLOBAL_ST_SECTORS,),
        (MN.GLOBAL_ST_REQUESTS,),
    ),
    "shared_ld_wavefronts_per_instruction": (
        (MN.SHARED_LD_WAVEFRONTS,),
        (MN.SHARED_LD_INST, MN.LDSM_INST),
    ),
    "shared_st_wavefronts_per_instruction": (
        (MN.SHARED_ST_WAVEFRONTS,),
        (MN.SHARED_ST_INST,),
    ),
    "shared_ld_conflicts_per_instruction": (
        (MN.SHARED_LD_CONFLICTS,),
        (MN.SHARED_LD_INST, MN.LDSM_INST),
    ),
    "shared_st_conflicts_per_instruction": (
        (MN.SHARED_ST_CONFLICTS,),
        (MN.SHARED_ST_INST,),
    ),
}
# Metrics a capture may lack where they would be zero (the quick set has no ldmatrix counter).
OPTIONAL_ZERO = {MN.LDSM_INST}

QUANTITY_LABELS = {
    "global_ld_sectors_per_request": "global load sectors / request",
    "global_st_sectors_per_request": "global store sectors / request",
    "shared_ld_wavefronts_per_instruction": "shared load wavefronts / instruction",
    "shared_st_wavefronts_per_instruction": "shared store wavefronts / instruction",
    "shared_ld_conflicts_per_instruction": "shared load bank conflicts / instruction",
    "shared_st_conflicts_per_instruction": "shared store bank conflicts / instruction",
    "shared_wavefronts_source_counters": "shared wavefronts, all (source counters)",
    "global_sectors_source_counters": "global sectors, all (source counters)",
    "shared_ld_instructions": "shared load instructions (incl. ldmatrix)",
    "shared_st_instructions": "shared store instructions",
    "global_ld_requests": "global load requests",
    "global_st_requests": "global store requests",
}


@dataclass(frozen=True)
class Comparison:
    """One predicted figure beside its measured value.

    `scale` is what the difference is a percentage of: the prediction itself, except for bank conflicts,
    which are measured against the wavefronts per instruction (a conflict-free prediction has no scale of
    its own).
    """

    kernel: str
    quantity: str
    predicted: float
    measured: float
    source: str
    scale: float | None = None

    @property
    def diff_pct(self) -> float | None:
        scale = self.scale if self.scale is not None else self.predicted
        if not scale:
            return 0.0 if self.measured == self.predicted else None
        return 100.0 * (self.measured - self.predicted) / scale

    @property
    def within_tolerance(self) -> bool:
        diff = self.diff_pct
        return diff is not None and abs(diff) <= TOLERANCE_PCT

    def to_dict(self) -> dict:
        return asdict(self) | {
            "label": QUANTITY_LABELS.get(self.quantity, self.quantity),
            "diff_pct": self.diff_pct,
            "within_tolerance": self.within_tolerance,
        }


def _sum(launch: KernelLaunch, names: tuple[str, ...]) -> float | None:
    total = 0.0
    for name in names:
        value = launch.value(name)
        if value is None:
            if name in OPTIONAL_ZERO:
                continue
            return None
        total += value
    return total


def measured_ratio(launch: KernelLaunch, quantity: str, prediction: LaunchPrediction | None = None) -> float | None:
    """A per-request or per-instruction figure from a launch's counters (None: counters missing or zero)."""
    num_names, den_names = RATIO_METRICS[quantity]
    if prediction is not None and MN.LDSM_INST in den_names:
        has_ldsm = any(cat == "shared_ld" and sass.startswith("LDSM") for cat, sass in prediction.by_sass)
        if has_ldsm and launch.value(MN.LDSM_INST) is None:
            return None  # ldmatrix instructions would be missing from the denominator
    num, den = _sum(launch, num_names), _sum(launch, den_names)
    return num / den if num is not None and den else None


def compare_launch(launch: KernelLaunch, prediction: LaunchPrediction) -> list[Comparison]:
    """Every figure the launch's counters allow, predicted beside measured."""
    kid = prediction.kernel
    out = []
    predicted = prediction.ratios()
    for quantity in RATIO_METRICS:
        p, m = predicted[quantity], measured_ratio(launch, quantity, prediction)
        if m is None or (p is None and not m):
            continue  # not measured, or the kernel has no such instruction and ncu agrees
        scale = predicted[quantity.replace("conflicts", "wavefronts")] if "conflicts" in quantity else None
        out.append(Comparison(kid, quantity, p or 0.0, m, "hardware counters", scale))
    t = prediction.totals
    # the source counters' shared total includes cp.async writes, which are not predicted
    shared_total = None if t["ldgsts"].instructions else launch.value("memory_l1_wavefronts_shared")
    totals = {
        "shared_wavefronts_source_counters": (
            t["shared_ld"].wavefronts + t["shared_st"].wavefronts,
            shared_total,
            "source counters",
        ),
        "global_sectors_source_counters": (
            t["global_ld"].sectors + t["global_st"].sectors,
            launch.value("memory_l2_theoretical_sectors_global"),
            "source counters",
        ),
        "shared_ld_instructions": (
            t["shared_ld"].instructions,
            _sum(launch, RATIO_METRICS["shared_ld_wavefronts_per_instruction"][1]),
            "hardware counters",
        ),
        "shared_st_instructions": (
            t["shared_st"].instructions,
            launch.value(MN.SHARED_ST_INST),
            "hardware counters",
        ),
        "global_ld_requests": (
            t["global_ld"].requests,
            launch.value(MN.GLOBAL_LD_REQUESTS),
            "hardware counters",
        ),
        "global_st_requests": (
            t["global_st"].requests,
            launch.value(MN.GLOBAL_ST_REQUESTS),
            "hardware counters",
        ),
    }
    for quantity, (p, m, source) in totals.items():
        if m is not None and (p or m):
            out.append(Comparison(kid, quantity, p, m, source))
    return out


def launch_shape(launch: KernelLaunch, k: int | None = None) -> tuple[str, Shape] | None:
    """(catalog id, shape) of one of our launches: from the worker's NVTX range, else from the grid (then K
    must be given)."""
    ident = launch.identity
    if ident.kernel_id is not None and ident.shape is not None:
        return ident.kernel_id, ident.shape
    if ident.kernel_id is None or ident.grid_mn is None or k is None:
        return None
    return ident.kernel_id, Shape(ident.grid_mn[0], ident.grid_mn[1], k)


def launch_model(kernel_id: str, name: str) -> KernelModel:
    """The indexing model of what a launch of catalog kernel `kernel_id` named `name` ("void sgemm_regdb<128, 128, 16,
    ...>(...)") ran: the tuning configuration with that kernel (a GPU's tuning record can make the runner launch
    another configuration than the catalog entry), and where it ran the configuration's own kernel, not its
    N % 4 != 0 twin, a model without the twin (a capture from before the twins existed)."""
    model = model_for(kernel_id)
    ran = short_name(name)
    for c in all_tuning_configs():
        if c["base"] == kernel_id and ran in (c["entry"], c["narrow_entry"]):
            model = model_for(c["id"])
            if ran == c["entry"] and c["narrow_entry"]:
                model = type(model)(replace(model.spec, narrow_entry=None))
            break
    return model


def compare_report(report: Report, k: int | None = None, kernels: list[str] | None = None) -> list[Comparison]:
    """Predicted against measured for every modelled launch of a report (optionally only `kernels`), each against
    the model of the configuration it ran."""
    out = []
    for launch in report.launches:
        found = launch_shape(launch, k)
        if found is None or found[0] not in MODELS or (kernels and found[0] not in kernels):
            continue
        kid, shape = found
        model = launch_model(kid, launch.name)
        out += [replace(c, kernel=kid) for c in compare_launch(launch, predict_launch(model, shape))]
    return out


# --- per instruction form, against the source page (kernels compiled as the capture ran them) ---

_NOISE = re.compile(r"\.(CONSTANT|LTC128B)\b")


def sass_form(text: str) -> str:
    """A SASS instruction's opcode without predicate or modifiers that do not change the access:
    '@!P1  LDG.E.128.CONSTANT R4, [R2.64]' -> 'LDG.E.128'."""
    words = [w for w in text.split() if not w.startswith("@")]
    return _NOISE.sub("", words[0]) if words else ""


def sass_totals(instructions: Iterable[Instruction]) -> dict[tuple[str, str], dict[str, float]]:
    """(counter family, instruction form) -> executions, shared wavefronts and global sectors, summed over a
    kernel's SASS instructions as the source page counts them (cp.async: a global_ld and an ldgsts entry)."""
    out: dict[tuple[str, str], dict[str, float]] = {}

    def add(key: tuple[str, str], executed: float, wavefronts: float = 0, sectors: float = 0) -> None:
        entry = out.setdefault(key, {"executed": 0.0, "wavefronts": 0.0, "sectors": 0.0})
        entry["executed"] += executed
        entry["wavefronts"] += wavefronts
        entry["sectors"] += sectors

    for ins in instructions:
        space, operation = ins.attributes.get("Address Space"), ins.attributes.get("Access Operation")
        if not ins.executed or space not in ("Shared", "Global", "Global,Shared"):
            continue
        form = sass_form(ins.sass)
        wavefronts = ins.counters.get("L1 Wavefronts Shared", 0.0)
        sectors = ins.counters.get("L2 Theoretical Sectors Global", 0.0)
        if space == "Global,Shared":
            add(("global_ld", form), ins.executed, sectors=sectors)
            add(("ldgsts", form), ins.executed, wavefronts=wavefronts)
        elif space == "Shared":
            add(("shared_ld" if operation == "Load" else "shared_st", form), ins.executed, wavefronts=wavefronts)
        else:
            add(("global_ld" if operation == "Load" else "global_st", form), ins.executed, sectors=sectors)
    return out


def compare_sass(instructions: Iterable[Instruction], prediction: LaunchPrediction) -> list[Comparison]:
    """Per instruction form: executions, and wavefronts (shared) or sectors (global), predicted beside the
    source page's per-instruction counters of the same launch."""
    measured = sass_totals(instructions)
    out = []
    for key in sorted(set(measured) | set(prediction.by_sass)):
        cat, form = key
        p = prediction.by_sass.get(key)
        m = measured.get(key, {"executed": 0.0, "wavefronts": 0.0, "sectors": 0.0})
        pe, pw, ps = (p.instructions, p.wavefronts, p.sectors) if p else (0.0, 0.0, 0.0)
        out.append(Comparison(prediction.kernel, f"{form} {cat} executions", pe, m["executed"], "source page"))
        if cat == "ldgsts":
            continue  # cp.async's shared wavefronts are not predicted (see the module docstring)
        if cat in ("shared_ld", "shared_st"):
            out.append(Comparison(prediction.kernel, f"{form} {cat} wavefronts", pw, m["wavefronts"], "source page"))
        else:
            out.append(Comparison(prediction.kernel, f"{form} {cat} sectors", ps, m["sectors"], "source page"))
    return out
