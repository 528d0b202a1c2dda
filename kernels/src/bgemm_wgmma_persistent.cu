// wgmma-persistent-bf16: wgmma-persistent with bfloat16 A and B (sm_90a only). The same body, tiles, ring, tile order
// and edge rules (kernels/src/hopper_persistent.cuh); only the element type of A and B differs: the TMA tensor maps
// of A and B are BFLOAT16 (same 2-byte elements, so the same boxes and swizzle) and the wgmma instruction multiplies
// .bf16 inputs into the same float32 accumulators. C and D stay float32.

#include "hopper_persistent.cuh"

extern "C" __global__ void __launch_bounds__(wgmma_persistent::THREADS, 1)
bgemm_wgmma_persistent(const __grid_constant__ hopper::TensorMap map_a, const __grid_constant__ hopper::TensorMap map_b,
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
