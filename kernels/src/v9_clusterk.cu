// v9 cluster split-K: v9-splitk's K split, with the partial tiles summed inside a thread-block cluster through
// distributed shared memory instead of added into C with reductions (sm_90 and newer). The SPLITS blocks that split
// one output tile's K range form one cluster (__cluster_dims__(1, 1, SPLITS), the grid's z is exactly SPLITS);
// each runs v9's register-double-buffered main loop (v9_body.cuh) over its range of BK-deep K slices, writes its
// partial tile into its own shared memory (the pipeline's stages, reused), and after a cluster barrier block rank
// r sums rows [r*BM/SPLITS, (r+1)*BM/SPLITS) of the tile over every block's shared memory (mapa +
// ld.shared::cluster, float4), in rank order, and stores them into C with plain stores; a second cluster barrier
// keeps every block's shared memory alive until the others have read it.
//
// So the GEMM is one launch: no zeroing launch before it, no atomics, and C is the same bits on every run. The
// split count is the template parameter SPLITS (2, 4 or 8; 8 is the portable cluster size), fixed per tuning
// configuration (kernels/tuning.py V9_CLUSTERK_TUNING_CONFIGS): a block whose K range is empty (K shorter than
// SPLITS slices) adds zeros and still joins both barriers. Any M, N, K >= 1, as v9.
//
// Built for an older target (sm_80) the kernel is a trap: clusters and distributed shared memory do not exist
// there, and the catalog refuses such GPUs before compiling (KernelSpec.min_cc).

#include "v9_body.cuh"

#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
#define V9_CLUSTER_K_DIMS(S)
#else
#define V9_CLUSTER_K_DIMS(S) __cluster_dims__(1, 1, S)
#endif

// ORDER is v9's FFMA order (v9_regdb.cu), defaulted last so that a configuration with ORDER 0 leaves it out of its
// name; every tile size is a template argument.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS, int MIN_BLOCKS,
          int SPLITS, int ORDER = 0>
__global__ void V9_CLUSTER_K_DIMS(SPLITS) __launch_bounds__(THREADS, MIN_BLOCKS)
sgemm_regdb_clusterk(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N,
                     int K)
{
    static_assert(THREADS * MIN_BLOCKS <= 2048, "MIN_BLOCKS blocks must fit one SM's 2048 threads");
    static_assert(SPLITS == 2 || SPLITS == 4 || SPLITS == 8, "a cluster of 2, 4 or 8 blocks (8: the portable most)");
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ < 900
    __trap();
#else
    extern __shared__ __align__(16) float smem[];
    if ((N & 3) == 0)
        regdb_body<true, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false, SPLITS>(A, B, C, M, N, K, smem);
    else
        regdb_body<false, BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, ORDER, false, SPLITS>(A, B, C, M, N, K, smem);
#endif
}

// Explicit instantiations of kernels/tuning.py V9_CLUSTERK_TUNING_CONFIGS (the catalog entry's is the first), so
// that an offline nvcc -cubin build emits them (NVRTC instantiates what the launcher names and skips this).
#ifndef __CUDACC_RTC__
template __global__ void sgemm_regdb_clusterk<64,128,16,32,64,8,8,3,128,3,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<64,128,16,32,64,8,8,3,128,3,8>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<64,64,16,32,64,8,8,3,64,6,8>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<128,128,16,64,32,8,8,3,256,2,2>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<128,128,16,64,32,8,8,3,256,2,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<128,256,16,64,64,8,16,3,256,1,2,3>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<128,128,8,64,64,8,16,3,128,2,4>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_regdb_clusterk<128,128,8,64,64,8,16,3,128,2,8>(const float*, const float*, float*, int, int, int);
#endif
