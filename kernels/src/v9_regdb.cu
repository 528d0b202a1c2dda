// v9 register double buffering: v8's cp.async pipeline with the next k step's A and B fragments loaded
// from shared memory while the FMAs of the current k step issue, so LDS latency hides behind TM*TN
// independent FMAs instead of stalling each k step. The barrier and the copy for the next slice sit in a
// slice's last k step, after the fragment loads of that step and before its FMAs, and the first fragments
// of the next slice are loaded right after the barrier: the loop never waits on shared memory.
// Larger thread tiles are possible (8x16 per thread, 128x256 block, one 256-thread block per SM with up
// to 255 registers): 128 FMAs per 6 LDS.128 instead of v8's 64 per 4, and copy, barrier and address work
// spread over twice the FMAs.
//
// Every tile parameter is a template argument (BM, BN, BK block tile; WM, WN warp tile; TM, TN thread
// tile in 4x4 fragments; STAGES; THREADS; MIN_BLOCKS for __launch_bounds__; ORDER of the FFMAs) so kernels/tuning.py can
// instantiate a sweep. Any M, N, K >= 1: cp.async's src-size operand zero-fills what lies outside the
// matrices (v8's edge handling). Blocks are visited in groups of 8 block-rows for L2 reuse.
//
// The body is in v9_body.cuh, shared with the split-K kernel (v9_splitk.cu).

#include "v9_body.cuh"

template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, 0>(A, B, C, M, N, K, smem);
    else
        regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, 0>(A, B, C, M, N, K, smem);
}

// The same kernel with another FFMA order (1: rows, every other one reversed; 2: columns, likewise). A function
// of its own rather than a defaulted template argument of sgemm_regdb, so that sgemm_regdb's mangled names, and
// with them the kernel names in every saved capture, stay what they were.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS, int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_ordered(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                    int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER>(A, B, C, M, N, K, smem);
    else
        regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER>(A, B, C, M, N, K, smem);
}

// The kernel the host launches where N % 4 != 0 (KernelSpec.narrow_entry): B's rows are not 16-byte aligned, so B
// is copied in 4-byte pieces, one column per thread. A function of its own, not the !VEC branch above, so that
// sgemm_regdb's and sgemm_regdb_ordered's machine code stays what it was (the branch they keep for N % 4 != 0 is
// never launched).
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS, int ORDER>
__global__ void __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_narrow(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                   int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    extern __shared__ __align__(16) float smem[];
    regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false, 0, true>(A, B, C, M, N, K, smem);
}

// Explicit instantiations of every kernels/tuning.py v9 configuration, so that an offline nvcc -cubin build
// (the compile tests, the resource report) emits them. NVRTC instantiates what the launcher names through
// name expressions and skips these to keep each compile to one kernel.
#ifndef __CUDACC_RTC__
template __global__ void sgemm_regdb<128,256,16,64,64,8,16,3,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,256,16,64,64,8,16,4,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,256,8,64,64,8,16,4,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<256,128,16,64,64,16,8,3,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<256,128,8,64,64,16,8,4,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,128,16,64,32,8,8,3,256,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,128,8,64,32,8,8,4,256,2>(const float*, const float*, float*, int, int, int);
// Candidates of the session-5 sweep for the last points to cuBLAS (kernels/tuning.py V9_TUNING_CONFIGS).
template __global__ void sgemm_regdb_ordered<256,128,16,64,64,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,16,64,64,16,8,3,256,1,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,16,64,64,8,16,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,16,64,64,8,16,3,256,1,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,256,16,32,128,8,16,3,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<256,128,16,128,32,16,8,3,256,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<128,128,8,64,64,8,16,4,128,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,128,8,64,64,8,16,4,128,2,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,8,64,64,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,16,128,32,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,8,64,64,8,16,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,16,64,64,16,8,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,8,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,8,64,64,8,16,4,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<256,128,8,64,64,16,8,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<128,256,16,64,64,8,16,4,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<64,128,16,32,64,8,8,3,128,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<64,64,8,32,32,8,4,3,128,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb<64,64,16,32,32,8,4,3,128,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_ordered<64,64,16,32,32,8,4,3,128,4,1>(const float*, const float*, float*, int, int, int);
// Their N % 4 != 0 kernels (128x256x8 with ORDER 3 has none: kernels/tuning.py says why).
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,4,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,8,64,64,8,16,4,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,64,64,16,8,3,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,8,64,64,16,8,4,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,128,16,64,32,8,8,3,256,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,128,8,64,32,8,8,4,256,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,64,64,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,64,64,16,8,3,256,1,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,32,128,8,16,3,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,128,32,16,8,3,256,1,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,128,8,64,64,8,16,4,128,2,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,128,8,64,64,8,16,4,128,2,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,8,64,64,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,128,32,16,8,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,8,64,64,8,16,3,256,1,1>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,64,64,16,8,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,16,64,64,16,8,3,256,1,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,8,64,64,8,16,4,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<256,128,8,64,64,16,8,3,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<128,256,16,64,64,8,16,4,256,1,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<64,128,16,32,64,8,8,3,128,3,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<64,64,8,32,32,8,4,3,128,4,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<64,64,16,32,32,8,4,3,128,4,0>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_narrow<64,64,16,32,32,8,4,3,128,4,1>(const float*, const float*, float*, int, int, int);
#endif
