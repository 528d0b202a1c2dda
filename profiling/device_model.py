"""GPU performance ceilings (peak FLOP/s and bytes/s) with where each number came from.

Three sources, trusted in this order: an ncu report of the run (the clocks the kernel actually ran at),
the live device's properties (max clocks, bus width), then the built-in table of datasheet values.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, fields, replace
from typing import Any

from profiling import metric_names as MN
from profiling.errors import InvalidInput

# FP32 lanes (FP32 "CUDA cores") per SM; CUDA C++ Programming Guide, compute-capability sections
# (7.x: 64; 8.0: 64; 8.6/8.9: 128; 9.0: 128), Blackwell from SM counts x cores in NVIDIA's specs
# (B200 148 SMs, RTX 5090 170 SMs x 128 = 21,760 cores; Thor 20 SMs x 128 = 2,560).
FP32_LANES_PER_SM = {
    "7.0": 64,
    "7.2": 64,
    "7.5": 64,
    "8.0": 64,
    "8.6": 128,
    "8.7": 128,
    "8.9": 128,
    "9.0": 128,
    "10.0": 128,
    "10.3": 128,
    "11.0": 128,
    "12.0": 128,
}


def device_slug(device_name: str) -> str:
    """A file-name-safe form of a device name ("NVIDIA H200" -> "nvidia-h200"), for per-device records."""
    return re.sub(r"[^A-Za-z0-9]+", "-", device_name).strip("-").lower() or "gpu"


def fp32_lanes_per_sm(cc: str) -> int:
    """FP32 lanes per SM for compute capability `cc`; InvalidInput for an unknown one."""
    key = str(cc).strip()
    if key not in FP32_LANES_PER_SM:
        raise InvalidInput(f"no FP32 lane count known for compute capability {cc!r}")
    return FP32_LANES_PER_SM[key]


@dataclass(frozen=True)
class DeviceInfo:
    """The GPU a measurement ran on, as the worker described it (`profiling.gpu.device.device_info`): the "device"
    object of a results file and of a saved run, read once where its JSON is read.

    A key it does not know, or a value of another type than its field's, stays in `other`; `keys` keeps the order
    the keys were read in, so `to_dict()` writes the object back as it was read.
    """

    name: str | None = None
    cc: str | None = None  # compute capability, "9.0"
    sm_count: int | None = None
    max_sm_clock_mhz: int | None = None
    max_mem_clock_mhz: int | None = None
    memory_bus_width_bits: int | None = None
    total_memory_bytes: int | None = None
    l2_bytes: int | None = None
    shared_mem_per_block_optin: int | None = None
    shared_mem_per_sm: int | None = None
    registers_per_sm: int | None = None
    max_threads_per_sm: int | None = None
    fp32_lanes_per_sm: int | None = None
    fp32_peak_tflops: float | None = None
    power_limit_w: float | None = None
    driver: str | None = None  # the NVIDIA driver, "570.133.20"
    cuda_runtime: int | None = None  # as CUDA encodes it: 12080 is 12.8
    cuda_driver: int | None = None
    cupy: str | None = None
    # The NVRTC that built the catalog's kernels, "13.0": one compiler for another moves a kernel by points (v9-regdb's
    # tuned tile 96.7 % of cuBLAS under NVRTC 13.0, 91.6 % under 13.2 on an H200, results/h200-2026-12-01/nvrtc/).
    nvrtc: str | None = None
    python: str | None = None
    pci_bus_id: str | None = None
    uuid: str | None = None
    host: str | None = None
    other: Mapping[str, Any] = field(default_factory=dict)
    keys: tuple[str, ...] = ()

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> DeviceInfo:
        """The description in a JSON object (None or a non-object: an empty one)."""
        if not isinstance(data, Mapping):
            return cls()
        typed: dict[str, Any] = {}
        other: dict[str, Any] = {}
        for key, value in data.items():
            kind = _DEVICE_FIELD_TYPES.get(key)
            fits = value is None or (
                kind is not None and isinstance(value, kind) and not (isinstance(value, bool) and kind is not bool)
            )
            (typed if kind is not None and fits else other)[str(key)] = value
        return cls(**typed, other=other, keys=tuple(str(k) for k in data))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the keys read, in their order, then any field set since (a description built here)."""
        out: dict[str, Any] = {}
        for key in self.keys:
            out[key] = self.other[key] if key in self.other else getattr(self, key)
        for name in _DEVICE_FIELD_TYPES:
            value = getattr(self, name)
            if name not in out and value is not None:
                out[name] = value
        return out | {k: v for k, v in self.other.items() if k not in out}

    @property
    def known(self) -> bool:
        """Whether anything is known about the device (a bundle without a benchmark knows nothing)."""
        return bool(self.keys or self.other) or any(getattr(self, n) is not None for n in _DEVICE_FIELD_TYPES)


_DEVICE_FIELD_TYPES: dict[str, type | tuple[type, ...]] = {
    f.name: (int, float) if f.type == "float | None" else {"int | None": int, "str | None": str}[f.type]
    for f in fields(DeviceInfo)
    if f.name not in ("other", "keys")
}


@dataclass(frozen=True)
class GpuSpec:
    """One row of the built-in table; `tensor_fp16_tflops` is dense (no sparsity)."""

    name: str
    cc: str
    sm_count: int
    boost_clock_mhz: int
    datasheet_fp32_tflops: float
    tensor_fp16_tflops: float
    tensor_note: str
    memory_bandwidth_gbs: float
    l2_mb: float
    source: str

    @property
    def fp32_lanes_per_sm(self) -> int:
        return fp32_lanes_per_sm(self.cc)

    @property
    def fp32_flops(self) -> float:
        """SMs x lanes x 2 (FMA) x boost clock."""
        return self.sm_count * self.fp32_lanes_per_sm * 2 * self.boost_clock_mhz * 1e6


_A100_40GB = GpuSpec(
    "A100 SXM 40GB", "8.0", 108, 1410, 19.5, 312.0, "FP16/BF16, FP32 accumulate", 1555, 40, "A100 datasheet"
)

GPU_TABLE: dict[str, GpuSpec] = {
    spec.name: spec
    for spec in (
        # NVIDIA Tesla V100 datasheet (SXM2): 15.7 TFLOPS FP32, 125 tensor TFLOPS, 900 GB/s; Volta
        # whitepaper: 80 SMs, 1530 MHz boost, 6 MB L2. Tensor cores accumulate FP32 at full rate.
        GpuSpec("V100 SXM2", "7.0", 80, 1530, 15.7, 125.0, "FP16 in, FP32 accumulate", 900, 6, "V100 datasheet"),
        # NVIDIA T4 datasheet: 8.1 TFLOPS FP32, 65 TFLOPS mixed precision (FP16/FP32), 320 GB/s;
        # Turing whitepaper: 40 SMs, 1590 MHz boost, 4 MB L2.
        GpuSpec("T4", "7.5", 40, 1590, 8.1, 65.0, "FP16 in, FP32 accumulate", 320, 4, "T4 datasheet"),
        # NVIDIA A10 datasheet: 31.2 TFLOPS FP32, FP16 tensor 125 | 250 (sparse), 600 GB/s; GA102 with
        # 72 SMs at 1695 MHz, 6 MB L2. The datasheet does not say which accumulate precision.
        GpuSpec("A10", "8.6", 72, 1695, 31.2, 125.0, "datasheet dense FP16", 600, 6, "A10 datasheet"),
        # NVIDIA A100 datasheet: 19.5 TFLOPS FP32, FP16/BF16 tensor 312 (dense), 1,555 GB/s (40GB) or
        # 2,039 GB/s (80GB SXM); Ampere whitepaper: 108 SMs, 1410 MHz, 40 MB L2. The 80GB card is the same GPU.
        _A100_40GB,
        replace(_A100_40GB, name="A100 SXM 80GB", memory_bandwidth_gbs=2039),
        # NVIDIA L4 datasheet: 30.3 TFLOPS FP32, FP16 tensor 242 with sparsity (121 dense), 300 GB/s;
        # AD104 with 58 SMs at 2040 MHz, 48 MB L2.
        GpuSpec(
            "L4",
            "8.9",
            58,
            2040,
            30.3,
            121.0,
            "datasheet dense FP16 (242 sparse / 2)",
            300,
            48,
            "L4 datasheet",
        ),
        # NVIDIA L40S datasheet: 91.6 TFLOPS FP32, BF16/FP16 tensor 362.05 | 733 (sparse), 864 GB/s;
        # 142 SMs (18,176 cores) at 2520 MHz, 96 MB L2.
        GpuSpec("L40S", "8.9", 142, 2520, 91.6, 362.05, "datasheet dense FP16/BF16", 864, 96, "L40S datasheet"),
        # NVIDIA Ampere GA102 whitepaper, RTX 3090: 35.6 TFLOPS FP32, FP16 tensor with FP32 accumulate
        # 71 dense (142 with FP16 accumulate), 936 GB/s, 82 SMs at 1695 MHz, 6 MB L2.
        GpuSpec(
            "RTX 3090",
            "8.6",
            82,
            1695,
            35.6,
            71.0,
            "FP32 accumulate (142 with FP16 acc.)",
            936,
            6,
            "GA102 whitepaper",
        ),
        # NVIDIA Ada Lovelace whitepaper, RTX 4090: 82.6 TFLOPS FP32, FP16 tensor with FP32 accumulate
        # 165.2 dense (330.3 with FP16 accumulate), 1,008 GB/s, 128 SMs at 2520 MHz, 72 MB L2.
        GpuSpec(
            "RTX 4090",
            "8.9",
            128,
            2520,
            82.6,
            165.2,
            "FP32 accumulate (330 with FP16 acc.)",
            1008,
            72,
            "Ada whitepaper",
        ),
        # NVIDIA H100 datasheet (PCIe): 51 TFLOPS FP32, FP16 tensor 1,513 sparse (756 dense), 2 TB/s;
        # 114 SMs at 1755 MHz, 50 MB L2.
        GpuSpec(
            "H100 PCIe",
            "9.0",
            114,
            1755,
            51.2,
            756.0,
            "FP16/BF16 dense, FP32 acc.",
            2000,
            50,
            "H100 datasheet",
        ),
        # NVIDIA H100 datasheet (SXM): 67 TFLOPS FP32, FP16 tensor 1,979 sparse (989.4 dense), 3.35 TB/s;
        # Hopper whitepaper: 132 SMs, 1980 MHz max SM clock, 50 MB L2.
        GpuSpec(
            "H100 SXM",
            "9.0",
            132,
            1980,
            66.9,
            989.4,
            "FP16/BF16 dense, FP32 acc.",
            3350,
            50,
            "H100 datasheet",
        ),
        # NVIDIA H200 datasheet: same GH100 compute as H100 SXM (FP16 tensor 1,979 sparse), 4.8 TB/s HBM3e.
        GpuSpec("H200", "9.0", 132, 1980, 66.9, 989.4, "FP16/BF16 dense, FP32 acc.", 4800, 50, "H200 datasheet"),
    )
}

# Device-name patterns (as CUDA/NVML spell them) -> table row; first match wins, so specific ones first.
_NAME_RULES: tuple[tuple[str, str], ...] = (
    (r"\bh200\b", "H200"),
    (r"\bh100\b.*\bpcie\b", "H100 PCIe"),
    (r"\bh100\b", "H100 SXM"),
    (r"\ba100\b.*\b80\s*gb\b", "A100 SXM 80GB"),
    (r"\ba100\b", "A100 SXM 40GB"),
    (r"\bv100\b", "V100 SXM2"),
    (r"\bl40s\b", "L40S"),
    (r"\bl4\b", "L4"),
    (r"\ba10\b", "A10"),
    (r"\bt4\b", "T4"),
    (r"\brtx\s*3090\b", "RTX 3090"),
    (r"\brtx\s*4090\b", "RTX 4090"),
)


def table_name_for(device_name: str) -> str | None:
    """The built-in table row for a device name such as "NVIDIA H100 80GB HBM3", or None."""
    if device_name in GPU_TABLE:
        return device_name
    lowered = device_name.lower()
    for pattern, name in _NAME_RULES:
        if re.search(pattern, lowered):
            return name
    return None


@dataclass(frozen=True)
class Ceiling:
    """One peak rate and where it came from ("ncu report", "live device", "built-in table: H100 SXM")."""

    value: float
    source: str
    note: str = ""


@dataclass(frozen=True)
class Ceilings:
    """Peaks for a roofline: FLOP/s and bytes/s. Any may be None when no source knows it."""

    fp32_flops: Ceiling | None = None
    tensor_fp16_flops: Ceiling | None = None
    dram_bytes_per_s: Ceiling | None = None
    l2_bytes_per_s: Ceiling | None = None
    l1_bytes_per_s: Ceiling | None = None
    device_name: str | None = None

    def bandwidth(self, level: str) -> Ceiling | None:
        """The bandwidth ceiling for a roofline level ("DRAM", "L2", "L1"; "algorithmic" uses DRAM)."""
        return {
            "DRAM": self.dram_bytes_per_s,
            "algorithmic": self.dram_bytes_per_s,
            "L2": self.l2_bytes_per_s,
            "L1": self.l1_bytes_per_s,
        }.get(level)

    def to_dict(self) -> dict:
        out: dict = {"device_name": self.device_name}
        for f in fields(self):
            value = getattr(self, f.name)
            if isinstance(value, Ceiling):
                out[f.name] = {"value": value.value, "source": value.source, "note": value.note}
        return out


CEILING_FIELDS = ("fp32_flops", "tensor_fp16_flops", "dram_bytes_per_s", "l2_bytes_per_s", "l1_bytes_per_s")


def ceilings_from_table(device_name: str) -> Ceilings:
    """Datasheet ceilings for a device in the built-in table (InvalidInput if it is not there)."""
    name = table_name_for(device_name)
    if name is None:
        raise InvalidInput(
            f"{device_name!r} is not in the built-in GPU table ({', '.join(GPU_TABLE)}); "
            "give an ncu report or run on the device instead"
        )
    spec = GPU_TABLE[name]
    source = f"built-in table: {name}"
    return Ceilings(
        fp32_flops=Ceiling(
            spec.fp32_flops,
            source,
            f"{spec.sm_count} SMs x {spec.fp32_lanes_per_sm} lanes x 2 x {spec.boost_clock_mhz} MHz",
        ),
        tensor_fp16_flops=Ceiling(spec.tensor_fp16_tflops * 1e12, source, spec.tensor_note),
        dram_bytes_per_s=Ceiling(spec.memory_bandwidth_gbs * 1e9, source, spec.source),
        device_name=name,
    )


def ceilings_from_device_info(info: DeviceInfo) -> Ceilings:
    """Ceilings from a device description (max clocks, so these are peaks, not what ran).

    FP32 = SMs x lanes x 2 x max SM clock; DRAM = 2 (double data rate) x max memory clock x bus width / 8.
    The tensor peak comes from the table when the name matches, since it depends on the product.
    """
    source = "live device"
    fp32 = dram = None
    if info.sm_count and info.max_sm_clock_mhz and info.cc:
        try:
            lanes = info.fp32_lanes_per_sm or fp32_lanes_per_sm(info.cc)
            fp32 = Ceiling(
                float(info.sm_count) * lanes * 2 * float(info.max_sm_clock_mhz) * 1e6,
                source,
                f"{info.sm_count} SMs x {lanes} lanes x 2 x {info.max_sm_clock_mhz} MHz",
            )
        except InvalidInput:
            pass
    if info.max_mem_clock_mhz and info.memory_bus_width_bits:
        dram = Ceiling(
            2 * float(info.max_mem_clock_mhz) * 1e6 * float(info.memory_bus_width_bits) / 8,
            source,
            f"2 x {info.max_mem_clock_mhz} MHz x {info.memory_bus_width_bits} bits / 8",
        )
    tensor = None
    name = info.name
    if name and table_name_for(name):
        tensor = ceilings_from_table(name).tensor_fp16_flops
    return Ceilings(fp32_flops=fp32, tensor_fp16_flops=tensor, dram_bytes_per_s=dram, device_name=name)


def _metric(metrics: dict[str, float], name: str) -> float | None:
    value = metrics.get(name)
    try:
        value = float(str(value).replace(",", "")) if value is not None else None
    except ValueError:
        return None
    return value if value and value > 0 else None


def _product(metrics: dict[str, float], peak: str, rate: str, factor: float, note: str) -> Ceiling | None:
    a, b = _metric(metrics, peak), _metric(metrics, rate)
    return Ceiling(a * b * factor, "ncu report", note) if a and b else None


def ceilings_from_ncu(metrics: dict[str, float]) -> Ceilings:
    """Ceilings the way ncu's roofline computes them: per-cycle peaks x the clocks measured in the run."""
    return Ceilings(
        fp32_flops=_product(
            metrics,
            MN.FFMA_PEAK_PER_CYCLE,
            MN.SM_CLOCK,
            2.0,
            "FFMA peak per cycle x 2 x SM clock",
        ),
        dram_bytes_per_s=_product(
            metrics,
            MN.DRAM_PEAK_PER_CYCLE,
            MN.DRAM_CLOCK,
            1.0,
            "DRAM bytes per cycle x DRAM clock",
        ),
        l2_bytes_per_s=_product(
            metrics,
            MN.L2_PEAK_PER_CYCLE,
            MN.L2_CLOCK,
            1.0,
            "L2 bytes per cycle x L2 clock",
        ),
        l1_bytes_per_s=_product(
            metrics,
            MN.L1_PEAK_PER_CYCLE,
            MN.L1_CLOCK,
            1.0,
            "L1 bytes per cycle x L1 clock",
        ),
    )


def best_ceilings(
    ncu_metrics: dict[str, float] | None = None,
    device_info: DeviceInfo | None = None,
    device_name: str | None = None,
) -> Ceilings:
    """Each ceiling from the most trusted source that has it: ncu report > live device > built-in table."""
    candidates: list[Ceilings] = []
    if ncu_metrics:
        candidates.append(ceilings_from_ncu(ncu_metrics))
    if device_info is not None and device_info.known:
        candidates.append(ceilings_from_device_info(device_info))
        device_name = device_name or device_info.name
    if device_name and table_name_for(device_name):
        candidates.append(ceilings_from_table(device_name))
    merged = Ceilings(device_name=device_name)
    for name in CEILING_FIELDS:
        value = next((getattr(c, name) for c in candidates if getattr(c, name) is not None), None)
        merged = replace(merged, **{name: value})
    if merged.fp32_flops is None and merged.dram_bytes_per_s is None:
        raise InvalidInput(
            "no ceilings known: give ncu metrics, the device's properties, or a device from the "
            f"built-in table ({', '.join(GPU_TABLE)})"
        )
    return merged
