// v8 split-K: v8-async's cp.async pipeline with the K loop split across gridDim.z blocks per output tile, for
// shapes whose M x N gives too few tiles to fill the GPU (127x127 is one 128x128 tile for 132 SMs) while K is
// large. Block z computes the partial product of its own range of BK-deep K slices and adds it into C with
// float reductions (RED.E.ADD.F32; red.global.add.v4.f32, one per 4 columns, on sm_90), so C must hold zeros
// first: the operation is two launches, splitk_zero_c then sgemm_splitk, timed and profiled together
// (profiling/gpu/runner.py Problem.launcher). The split count is chosen per shape on the host
// (kernels/spec.py KernelSpec.split_count); with one split this is v8-async plus a zeroing pass.
//
// Float addition is not associative and the reductions land in whatever order the blocks finish, so the last
// bits of C may differ between runs (the relative-error check does not care; a bitwise one would).
//
// Any M, N, K >= 1, as v8: cp.async zero-fills what lies outside the matrices, and a K range that ends inside a
// slice is padded with zeros the same way.

#include "splitk_zero.cuh"
#include "v8_body.cuh"

namespace v8s {

// v8-splitk's policy: block z takes the z-th of gridDim.z ranges of K slices and adds its partial tile into C.
struct SplitK {
    // gridDim.z splits of per_split slices each (the host picks gridDim.z so that none is empty; an empty one
    // would add nothing and return).
    template <int BK>
    __device__ static __forceinline__ bool slices(int K, int& first, int& count)
    {
        const int all_tiles = (K + BK - 1) / BK;
        const int per_split = (all_tiles + gridDim.z - 1) / gridDim.z;
        first = blockIdx.z * per_split;
        count = min(per_split, all_tiles - first);
        return count > 0;
    }

    // C[0..3] += v with one 16-byte reduction where the hardware has it (sm_90), four otherwise.
    __device__ static __forceinline__ void store4(float* p, float4 v)
    {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
        asm volatile("red.global.add.v4.f32 [%0], {%1, %2, %3, %4};" ::"l"(p), "f"(v.x), "f"(v.y), "f"(v.z), "f"(v.w)
                     : "memory");
#else
        add1(p, v.x); add1(p + 1, v.y); add1(p + 2, v.z); add1(p + 3, v.w);
#endif
    }

    __device__ static __forceinline__ void store1(float* row, int col, int c, float v) { add1(row + col + c, v); }

    // C += v for one float; the result is unused, so this compiles to a reduction (RED), not an atomic round trip.
    __device__ static __forceinline__ void add1(float* p, float v) { atomicAdd(p, v); }
};

}  // namespace v8s

// The body (tile copies, pipeline, warp-tiled FMAs) is v8_body.cuh's, shared with v8_async.cu; v8s::SplitK
// gives it this block's K range and the adding epilogue.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS>
__global__ void __launch_bounds__(THREADS, 512 / THREADS)
sgemm_splitk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    v8::sgemm_body<BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, v8s::SplitK>(A, B, C, M, N, K);
}

// Explicit instantiations of the catalog entry and the tuning configurations, so that an offline nvcc -cubin build
// emits them (NVRTC instantiates what the launcher names and skips this).
#ifndef __CUDACC_RTC__
template __global__ void sgemm_splitk<128,128,16,64,32,8,8,3,256>(const float*, const float*, float*, int, int, int);
// kernels/tuning.py SPLITK_TUNING_CONFIGS (the catalog entry's is the first).
template __global__ void sgemm_splitk<64,64,16,32,32,8,4,3,128>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_splitk<32,32,16,32,32,8,4,2,32>(const float*, const float*, float*, int, int, int);
#endif
