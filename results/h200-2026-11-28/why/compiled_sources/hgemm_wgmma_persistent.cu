// wgmma-persistent: wgmma-tma-store's warp-specialised 128 x 256 block made persistent (sm_90a only). Same
// operation, operands and edge rules. What wgmma-tma-store leaves on the table at 4096^3: 512 blocks in 3.9 waves,
// each starting on an empty pipeline. Here one block per SM walks the tiles in grouped order, its producer
// streaming the next tile's first slice while the consumers finish the current one, and C travels through the
// same stage ring after each tile's slices (kernels/src/hopper_persistent.cuh has the body and its ordering rules).

#include "hopper_persistent.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_persistent::THREADS, 1)
hgemm_wgmma_persistent(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                       const __grid_constant__ hopper::TensorMap map_c, const __grid_constant__ hopper::TensorMap map_d,
                       int M, int N, int K, float alpha, float beta
#if PERSISTENT_EPILOGUE == 1 || PERSISTENT_EPILOGUE == 2
                       , const float* __restrict__ c_ptr, float* __restrict__ d_ptr  // the variants' direct epilogue
#endif
                       )
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<1>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta
#if PERSISTENT_EPILOGUE == 1 || PERSISTENT_EPILOGUE == 2
                                                , c_ptr, d_ptr
#endif
    );
#endif
}
