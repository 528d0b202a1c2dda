// wgmma-cluster: wgmma-persistent run by clusters of two blocks (sm_90a only). Same operation, operands, tiles and
// edge rules. Two blocks on neighbouring SMs take vertically adjacent 128 x 256 tiles, which need the same 64 x 256
// slices of B: each block's producer loads two of the four 64-column B boxes and multicasts them into both blocks'
// stages, so every B slice leaves L2 once per pair instead of twice (the L2-to-SM traffic per slice drops from
// 48 KB to 32 KB per block). A stage is refilled only when the consumers of both blocks have released it.

#include "hopper_persistent.cuh"

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(wgmma_persistent::THREADS, 1)
hgemm_wgmma_cluster(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                    const __grid_constant__ hopper::TensorMap map_c, const __grid_constant__ hopper::TensorMap map_d,
                    int M, int N, int K, float alpha, float beta
#if PERSISTENT_EPILOGUE == 1 || PERSISTENT_EPILOGUE == 2
                    , const float* __restrict__ c_ptr, float* __restrict__ d_ptr  // the variants' direct epilogue
#endif
                    )
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma, setmaxnreg and clusters' multicast do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<2>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta
#if PERSISTENT_EPILOGUE == 1 || PERSISTENT_EPILOGUE == 2
                                                , c_ptr, d_ptr
#endif
    );
#endif
}
