// wgmma-staged: wgmma-persistent with one change to its epilogue (sm_90a only). Same operation, operands, tile order
// and ring. Each tile's C still travels through the ring as three slots, but each slot holds the same column strips of
// both consumers (strips 0-2, 3-5, 6-7 of eight), and D no longer goes back over C: the consumers write alpha * acc +
// beta * C into two 8 KB staging boxes each, which TMA stores while the next box is blended. So a C slot returns to
// the ring as soon as both consumers have blended its boxes (a third of the way into the epilogue for the first),
// not after the whole tile once TMA has read the D written over it, and the next tile's slices start loading sooner.
// Measured on an H200 against wgmma-persistent (results/h200-2026-11-28/epilogue/ and staged/): 4096^3 108.1 against
// 107.3 %, 6144^3 99.0 against 97.0 %, 8192^3 101.8 against 100.4 % of cuBLAS's AddMM (interleaved rounds); the gain
// is where the power cap holds the clock down (at full clock, 1 % slower at 8192^3).

#define PERSISTENT_EPILOGUE 4
#include "hopper_strips.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_persistent::THREADS, 1)
hgemm_wgmma_staged(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                   const __grid_constant__ hopper::TensorMap map_c, const __grid_constant__ hopper::TensorMap map_d,
                   int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<1>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta);
#endif
}
