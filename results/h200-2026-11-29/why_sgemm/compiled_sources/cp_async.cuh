// cp.async helpers (sm_80+) shared by v8_async.cu, v9_regdb.cu and hgemm_mma_async.cu: copies from global to
// shared memory that bypass registers, grouped with commit() and waited on with wait<N>().
//
// kernels/sources.py inlines this file where a kernel includes it (KernelSpec.read_source), so NVRTC compiles a
// single text and CuPy's kernel cache sees any change to it; nvcc finds it next to the .cu file.
#pragma once

// CP_ASYNC_L2_PREFETCH (measurement, scripts/v9_variants.py): a prefetch-size qualifier such as .L2::128B on every
// copy, as cuBLAS's sm80 FFMA kernels' copies carry (LDGSTS.E.LTC128B in their SASS). Empty: the copies as built.
// Measured, not kept: v9-regdb within 0.2 % at 2048-8192 on an H200 (results/h200-2026-11-29/sgemm_prefetch/).
#ifndef CP_ASYNC_L2_PREFETCH
#define CP_ASYNC_L2_PREFETCH ""
#endif

namespace cp_async {

// The 32-bit shared-memory address of a generic pointer into shared memory, as cp.async and ldmatrix take it.
__device__ __forceinline__ unsigned smem_addr(const void* p)
{
    unsigned r;
    asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(r) : "l"(p));
    return r;
}

// src_bytes < copy size makes the hardware fill the rest of the destination with zeros; with 0 nothing is
// read, so `src` only has to be some valid global address. The source keeps its element type T: passing
// v9's float pointers as void* changed its register allocation (one configuration spilled 4 bytes on sm_90).
template <typename T>
__device__ __forceinline__ void copy4(unsigned dst, const T* src, bool valid)
{
    asm volatile("cp.async.ca.shared.global" CP_ASYNC_L2_PREFETCH " [%0], [%1], 4, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 4 : 0));
}

template <typename T>
__device__ __forceinline__ void copy16(unsigned dst, const T* src, bool valid)
{
    asm volatile("cp.async.cg.shared.global" CP_ASYNC_L2_PREFETCH " [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src), "r"(valid ? 16 : 0));
}

__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }

// Wait until at most PENDING committed groups are still in flight.
template <int PENDING>
__device__ __forceinline__ void wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(PENDING) : "memory"); }

}  // namespace cp_async
