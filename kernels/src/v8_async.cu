// v8 asynchronous pipeline: v7's warp-tiled compute fed by cp.async (sm_80+) through STAGES shared-memory
// buffers instead of v7's register-staged double buffer. Copies go global -> shared without passing
// through registers (no staging registers, no stall on the load before the store), and with 3-4 stages
// the copies for slice t+STAGES-1 are in flight while slice t is computed, so two blocks per SM hide
// DRAM/L2 latency that v7 exposes at every slice. Blocks are also visited in groups of 8 block-rows so
// that the blocks resident at the same time share A and B panels in L2.
//
// Every tile parameter is a template argument (BM, BN, BK block tile; WM, WN warp tile; TM, TN thread
// tile, in 4x4 fragments; STAGES; THREADS) so kernels/tuning.py can instantiate a sweep.
//
// Any M, N, K >= 1: cp.async's src-size operand zero-fills what lies outside the matrices, so partial
// tiles need no separate path. A is transposed on the way in with 4-byte copies (a 16-byte copy cannot
// transpose); B uses 16-byte copies when N % 4 == 0 (then every aligned group of 4 columns is wholly
// inside or outside), 4-byte copies otherwise.

#include "v8_body.cuh"

namespace v8 {

// v8-async's policy: every block runs the whole K range and stores its tile into C.
struct WholeK {
    template <int BK>
    __device__ static __forceinline__ bool slices(int K, int& first, int& count)
    {
        first = 0;
        count = (K + BK - 1) / BK;
        return true;
    }
    __device__ static __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
    __device__ static __forceinline__ void store1(float* row, int col, int c, float v) { row[col + c] = v; }
};

}  // namespace v8

// The body (tile copies, pipeline, warp-tiled FMAs, epilogue) is v8_body.cuh's, shared with v8_splitk.cu.
template <int BM, int BN, int BK, int WM, int WN, int TM, int TN, int STAGES, int THREADS>
__global__ void __launch_bounds__(THREADS, 512 / THREADS)
sgemm_async(const float* __restrict__ A, const float* __restrict__ B, float* __restrict__ C, int M, int N, int K)
{
    v8::sgemm_body<BM, BN, BK, WM, WN, TM, TN, STAGES, THREADS, v8::WholeK>(A, B, C, M, N, K);
}

// Explicit instantiations of the catalog entry and of every kernels/tuning.py configuration, so that an
// offline nvcc -cubin build (the compile tests, the resource report) emits them. NVRTC instantiates what
// the launcher names through name expressions and skips these to keep each compile to one kernel.
#ifndef __CUDACC_RTC__
template __global__ void sgemm_async<128,128,16,64,32,8,8,3,256>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<128,128,8,64,32,8,8,4,256>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<128,128,8,64,32,8,8,3,256>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<128,128,16,32,64,8,8,3,256>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<128,128,16,64,32,8,8,4,256>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<256,128,16,64,32,8,8,3,512>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<128,64,8,64,32,8,8,4,128>(const float*, const float*, float*, int, int, int);
template __global__ void sgemm_async<64,64,16,32,32,8,4,3,128>(const float*, const float*, float*, int, int, int);
#endif
