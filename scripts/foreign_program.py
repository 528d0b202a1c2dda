"""A PyTorch + Triton program that is not ours, for capturing Nsight Compute reports of other people's code.

Run on a GPU machine (scripts/gpu_check.sh stage `foreign` profiles it). Everything worth profiling runs once
outside the NVTX range first (cuBLAS heuristics, Triton JIT), then once inside `foreign`, so `--nvtx-include
foreign/` picks one launch of each: FP32/FP16/BF16 matmul (cuBLAS, nvjet), a cuBLASLt GEMM with a GELU
epilogue, softmax, layer norm, an elementwise chain, a reduction, a random fill and a Triton kernel.
"""

from __future__ import annotations

import torch
import triton
import triton.language as tl


@triton.jit
def scaled_add_kernel(x_ptr, y_ptr, out_ptr, n_elements, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offsets = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n_elements
    x = tl.load(x_ptr + offsets, mask=mask)
    y = tl.load(y_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, alpha * x + y, mask=mask)


def scaled_add(x: torch.Tensor, y: torch.Tensor, alpha: float) -> torch.Tensor:
    out = torch.empty_like(x)
    n = x.numel()
    scaled_add_kernel[(triton.cdiv(n, 1024),)](x, y, out, n, alpha, BLOCK=1024)
    return out


def workload(a32: torch.Tensor, b32: torch.Tensor, bias: torch.Tensor) -> None:
    c32 = a32 @ b32
    a16, b16 = a32.half(), b32.half()
    c16 = a16 @ b16
    cbf = a32.bfloat16() @ b32.bfloat16()
    gelu = torch._addmm_activation(bias, a16, b16, use_gelu=True)  # cuBLASLt with a GELU epilogue
    torch.softmax(c32, dim=-1)
    torch.nn.functional.layer_norm(c32, (c32.shape[-1],))
    (c32 * 2.0 + 1.0).relu_()
    c32.sum(dim=0)
    torch.rand(c32.shape, device=c32.device)
    scaled_add(c32, c16.float(), 0.5)
    del cbf, gelu


def main() -> None:
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.manual_seed(0)
    n = 2048
    a32 = torch.randn(n, n, device="cuda")
    b32 = torch.randn(n, n, device="cuda")
    bias = torch.randn(n, device="cuda", dtype=torch.float16)
    workload(a32, b32, bias)  # warm-up outside the range: heuristics, JIT, allocator
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_push("foreign")
    workload(a32, b32, bias)
    torch.cuda.synchronize()
    torch.cuda.nvtx.range_pop()
    print("foreign program done:", torch.cuda.get_device_name())


if __name__ == "__main__":
    main()
