// splitk_zero_c, the zeroing launch of every split-K operation (v8_splitk.cu, v9_splitk.cu): the runner looks it
// up by name in the split-K kernel's own module (kernels/spec.py SPLIT_K_ZERO_ENTRY).
#pragma once

// The first launch of the operation: C = 0, 16-byte stores over the whole of it (cudaMalloc'd C is 256-byte
// aligned), the last count % 4 floats one by one. A kernel rather than cudaMemsetAsync so that ncu's capture of
// the operation shows it as a part.
extern "C" __global__ void splitk_zero_c(float* __restrict__ C, long long count)
{
    const long long vecs = count / 4;
    const long long first = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long stride = (long long)gridDim.x * blockDim.x;
    for (long long i = first; i < vecs; i += stride) reinterpret_cast<float4*>(C)[i] = make_float4(0.f, 0.f, 0.f, 0.f);
    if (first < count - vecs * 4) C[vecs * 4 + first] = 0.0f;
}
