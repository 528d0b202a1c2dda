// Programmatic dependent launch (sm_90): a kernel launched with the programmatic stream serialization attribute may
// start while the kernel before it in the stream is still running, so a split-K operation's launches (the zeroing or
// padding launch, the multiply, the copy back) need not each wait for the one before to drain and the next to be
// scheduled. GEMMLENS_PDL (0 unless the source defines it first: v9_splitk.cu does) compiles the two instructions in; a
// launch without the attribute makes them no-ops. scripts/pdl_probe.py measures the builds and launches against each
// other.
#pragma once

#ifndef GEMMLENS_PDL
#define GEMMLENS_PDL 0
#endif

// Lets the next kernel in the stream be scheduled once every block of this one has got here or exited; called first,
// as the next kernel waits (pdl_wait) before it reads anything this one writes.
__device__ __forceinline__ void pdl_launch_dependents()
{
#if GEMMLENS_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}

// Waits until the kernel before this one in the stream has finished and its writes are visible: the first thing a
// kernel launched programmatically does, before it reads or writes the matrices.
__device__ __forceinline__ void pdl_wait()
{
#if GEMMLENS_PDL && defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}

// Both, at the start of a launch that follows another and may be followed.
__device__ __forceinline__ void pdl_enter()
{
    pdl_wait();
    pdl_launch_dependents();
}
