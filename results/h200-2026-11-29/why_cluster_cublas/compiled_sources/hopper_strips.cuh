// The strips builds (wgmma-staged, wgmma-streamk, wgmma-streamk-bf16, wgmma-streamk-cluster): hopper_persistent.cuh
// with its switches on the path between two slices' wgmmas set, in one place for the four. The consumers keep the ring's barrier addresses in
// registers (0.1-0.5 % faster on an H200, results/h200-2026-11-29/pinned/), build each wgmma descriptor by one add,
// and wait for the next slice's data while this slice's wgmmas run (0.7 % faster together at 8192^3,
// results/h200-2026-11-29/fastdesc/). scripts/wgmma_variants.py measures each at 0.

#pragma once

#ifndef PERSISTENT_PINNED_BARS
#define PERSISTENT_PINNED_BARS 1
#endif
#ifndef PERSISTENT_FAST_DESC
#define PERSISTENT_FAST_DESC 1
#endif
#ifndef PERSISTENT_EARLY_WAIT
#define PERSISTENT_EARLY_WAIT 1
#endif
#include "hopper_persistent.cuh"
