// wgmma-streamk-bf16: wgmma-streamk with bfloat16 A and B (sm_90a only). The same body, tiles, ring, epilogue and
// stream-K tail (kernels/src/hopper_persistent.cuh); only the element type of A and B differs, as between
// wgmma-persistent and wgmma-persistent-bf16. C and D stay float32.

#define PERSISTENT_EPILOGUE 4
#define PERSISTENT_STREAMK 1
#include "hopper_strips.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_persistent::THREADS, 1)
bgemm_wgmma_streamk(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
                    const __grid_constant__ hopper::TensorMap map_c, const __grid_constant__ hopper::TensorMap map_d,
                    int M, int N, int K, float alpha, float beta)
{
#if defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
    // Built for another target than sm_90a: wgmma and setmaxnreg do not exist there.
    __trap();
#else
    wgmma_persistent::persistent_addmm<1, hopper::Input::bf16>(map_a, map_b, map_c, map_d, M, N, K, alpha, beta);
#endif
}
