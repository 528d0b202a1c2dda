// splitk_zero_c, the zeroing launch of every split-K operation (v8_splitk.cu, v9_splitk.cu): the runner looks it
// up by name in the split-K kernel's own module (kernels/spec.py SPLIT_K_ZERO_ENTRY).
#pragma once

#include "pdl.cuh"

// Threads `first`, `first` + `stride`, ... of C = 0 over count floats: 16-byte stores over the whole of it
// (cudaMalloc'd C is 256-byte aligned), the last count % 4 floats one by one. The zeroing launch's whole work, and a
// part of the padding launch's (v9_splitk.cu) and of the fused stream-K kernel's.
__device__ __forceinline__ void zero_c_part(float* __restrict__ C, long long count, long long first, long long stride)
{
    const long long vecs = count / 4;
    for (long long i = first; i < vecs; i += stride) reinterpret_cast<float4*>(C)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (first < count - vecs * 4) C[vecs * 4 + first] = 0.0f;
}

// The first launch of the operation. A kernel rather than cudaMemsetAsync so that ncu's capture of the operation
// shows it as a part.
extern "C" __global__ void splitk_zero_c(float* __restrict__ C, long long count)
{
    pdl_enter();
    zero_c_part(C, count, (long long)blockIdx.x * blockDim.x + threadIdx.x, (long long)gridDim.x * blockDim.x);
}
