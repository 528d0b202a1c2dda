// wgmma-streamk-cluster-bf16: wgmma-streamk-cluster with bfloat16 A and B (sm_90a only). The same body, clusters,
// tiles, ring, epilogue and stream-K tail (kernels/src/hopper_persistent.cuh); only the element type of A and B
// differs, as between wgmma-streamk and wgmma-streamk-bf16. C and D stay float32.

#define PERSISTENT_EPILOGUE 4
#define PERSISTENT_STREAMK 1
#define PERSISTENT_SK_PRODUCER_REGS 64
#include "hopper_strips.cuh"

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(wgmma_persistent::THREADS, 1)
bgemm_wgmma_streamk_cluster(const __grid_constant__ hopper::TensorMap map_a,
                            const __grid_constant__ hopper::TensorMap map_b,
                            const __grid_constant__ hopper::TensorMap map_c,
                            const __grid_constant__ hopper::TensorMap map_d, int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma, setmaxnreg and clusters' multicast do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<2, hopper::Input::bf16>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta);
#endif
}
