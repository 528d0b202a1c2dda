// wgmma-streamk: wgmma-staged with one change to its schedule (sm_90a only). Same operation, operands, tile, ring
// and epilogue. A persistent grid of one block per SM walks the 128 x 256 tiles in waves; when the tile count is not
// a multiple of the grid, the last wave keeps only some of the SMs busy (8192^3 on 132 SMs: 2048 tiles, 15 whole
// waves and 68 tiles, so the run takes 16 tile times for 15.5 tiles' work). Here the whole waves run as before and
// the last wave's tiles are laid end to end along K and cut into equal runs of slices, one per block (stream-K over
// the tail): a block that runs a tile's first slices writes its float sums to a slot in global memory and raises a
// flag; the block that runs the tile's last slices waits for the flags, adds the sums in block order and writes D
// through the strips epilogue. A block waits only for blocks of lower index, which the GPU starts first, so the grid
// need not be resident at once (tests/gpu/test_gpu_residency.py runs it on 4 SMs beside 128 held by another kernel).

#ifndef PERSISTENT_EPILOGUE  // scripts/wgmma_variants.py measures EPILOGUE 5 on this schedule
#define PERSISTENT_EPILOGUE 4
#endif
#define PERSISTENT_STREAMK 1
#include "hopper_strips.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_persistent::THREADS, 1)
hgemm_wgmma_streamk(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
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
