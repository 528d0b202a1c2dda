// wgmma-streamk-cluster: wgmma-streamk run as thread-block clusters of two (sm_90a only), as wgmma-cluster is to
// wgmma-persistent. The two blocks of a cluster take vertically adjacent 128 x 256 tiles, which need the same slices of
// B: each producer loads two of a slice's four B boxes and multicasts them into both blocks' stages, so B leaves L2
// once per pair. The schedule, stream-K tail included, walks units of two tiles: both blocks of a cluster run the same
// K slices of their own tiles, and a block's partial sums take the slot of its own block index. The producer's
// schedule needs 64 registers here (it spills at wgmma-streamk's 56).

#define PERSISTENT_EPILOGUE 4
#define PERSISTENT_STREAMK 1
#define PERSISTENT_SK_PRODUCER_REGS 64
#include "hopper_strips.cuh"

extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(wgmma_persistent::THREADS, 1)
hgemm_wgmma_streamk_cluster(const __grid_constant__ hopper::TensorMap map_a,
                            const __grid_constant__ hopper::TensorMap map_b,
                            const __grid_constant__ hopper::TensorMap map_c,
                            const __grid_constant__ hopper::TensorMap map_d, int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma, setmaxnreg and clusters' multicast do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<2>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta);
#endif
}
