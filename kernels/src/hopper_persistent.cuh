// The persistent Hopper AddMM body shared by wgmma-persistent (CLUSTER 1), wgmma-cluster (CLUSTER 2),
// wgmma-persistent-bf16 (CLUSTER 1, IN bf16: bfloat16 A and B, the same 2-byte tiles and boxes) and the strips
// builds (hopper_strips.cuh: wgmma-staged, wgmma-streamk, -bf16, and wgmma-streamk-cluster, CLUSTER 2): one block
// per SM walks output tiles of 128 x 256 in grouped order; a producer warp group (one thread issues the TMA copies)
// streams 64-deep K slices through a 4-slot ring across tile boundaries; two consumer warp groups multiply
// (m64n256k16, 64 rows each). Same operation, operands and edge rules as wgmma-tma-store (D = alpha*A*B + beta*C,
// half (or, with IN bf16, bfloat16) A and B row-major, float C and D, all four as TMA tensor maps; M, N, K
// multiples of 16; edges zero-filled on load and clipped on store).
//
// Shared memory (197,632 bytes, one block per SM) is the ring alone: 4 slots of 48 KB. The C tile of a block tile
// (16 boxes of 64 x 32 floats, 6 per slot) travels through the ring as 3 more slots after the tile's K slices: the
// consumers add alpha * acc + beta * C in place there and TMA stores the boxes to D. Those slots return to the ring
// at the next tile's first slice, once TMA has read them, while that slice (loaded during the epilogue into the
// fourth slot) is multiplied. C was prefetched into L2 16 slices before, so its copies do not wait for DRAM.
// Measured alternatives (scripts/wgmma_variants.py, H100, % of cuBLAS HGEMM at 4096 / 8192): 32-deep slices in 4
// slots beside a 128 KB buffer of C's own 74 / 72 %, in 8 or 9 slots with C through the ring 71-76 % (A's box rows
// are then 64 bytes, the 64-byte swizzle, kept as PERSISTENT_BK 32); 64-deep slices in 2 slots beside the buffer
// 57 / 64 %; this ring 85 / 82-83 %. Epilogues that keep C out of the ring (PERSISTENT_EPILOGUE 1 and 2, H200,
// interleaved, % of cuBLAS's own AddMM at 4096 / 6144 / 8192: results/h200-2026-11-28/epilogue/): C straight into
// registers with D stored from them 103.9 / 96.0 / 99.6 %, or with D through TMA-stored staging 105.2 / 97.2 / 99.6 %;
// this ring 107.6 / 98.2 / 100.7 %. C through this ring with D through the staging boxes (3): 107.2 against 107.4 at
// 4096 and 100.8 against 100.2 % at 8192 (results/h200-2026-11-28/epilogue/ring_staged/).
//
// Ordering, all through mbarriers (a phase's parity is what a wait checks): full[s] / empty[s] per slot. A slot is
// refilled when every consumer warp that read it, of every block of the cluster, has released it: for K slices
// each warp arrives once; for C slots each consumer's storing thread arrives for its 4 warps once its stores have
// been read. With CLUSTER 2 the two blocks of a cluster take vertically adjacent tiles (same columns of B): each
// block's producer loads half of the B boxes and multicasts them into both blocks' slots, so B crosses L2 once per
// pair; both blocks walk the same ring positions, so a block's slot is refilled only when both have released it.

#pragma once

#include "hopper_wgmma.cuh"

namespace wgmma_persistent {

// Slice depth, ring length, tile-order group height, wgmma slices left in flight, the slice of the next tile at
// which C's slots are released: the catalog's build uses the defaults; scripts/wgmma_variants.py builds others.
#ifndef PERSISTENT_BK
#define PERSISTENT_BK 64
#endif
#ifndef PERSISTENT_STAGES
#define PERSISTENT_STAGES 4
#endif
#ifndef PERSISTENT_GROUP_M
#define PERSISTENT_GROUP_M 16
#endif
#ifndef PERSISTENT_WAIT
#define PERSISTENT_WAIT 0
#endif
#ifndef PERSISTENT_C_RELEASE
#define PERSISTENT_C_RELEASE 0
#endif
// PERSISTENT_NO_EPILOGUE 1 (measurement only, D is not written): the main loop alone.
#ifndef PERSISTENT_NO_EPILOGUE
#define PERSISTENT_NO_EPILOGUE 0
#endif
// PERSISTENT_EPILOGUE (4 is wgmma-staged's build, hgemm_wgmma_staged.cu; the others are measured by
// scripts/wgmma_variants.py, and with 1 or 2 the entry points also take C's and D's pointers): 0, C through the ring
// (wgmma-persistent, wgmma-cluster, wgmma-persistent-bf16); 1, C loaded from global (L2, prefetched) straight into registers in
// batches of PERSISTENT_C_BATCH 8-column chunks and D stored from registers, so the ring carries K slices only and
// the next tile's slices fill every slot during the epilogue; 2, C as in 1, D through a 32 KB staging area of two
// boxes per consumer stored by TMA; 3, C through the ring as in 0, D through the staging boxes of 2, so that the C slots
// return to the ring as soon as the consumers have read them, not once TMA has read the D written over them; 4, as 3
// with each C slot holding the same column strips of both consumers (strips 0-2, 3-5, 6-7), each slot released as
// soon as both have blended its boxes, so the next tile's slices start loading a third of the way in; 6 (measurement
// only, stream-K), C added to the accumulators inside the main loop: C's three strip slots (as in 4) take ring
// positions between the tile's last slices (PERSISTENT_C_GAP slices apart, the last PERSISTENT_C_LAST slices before the
// end), each consumer adds (beta / alpha) * C from its boxes at once and releases the slot, and the epilogue only
// scales by alpha and stores D through the staging boxes. The ring then never waits on the epilogue: the next tile's
// first four slices load while D is stored. Where beta / alpha is not a finite number (alpha == 0), the slots come
// after the tile's last slice and the consumers add alpha * acc + beta * C there, as before. Correct, and 2-3 % slower
// than 4 at 4096^3 and 8192^3 on an H200, at every placement (results/h200-2026-11-29/epi6/).
#ifndef PERSISTENT_EPILOGUE
#define PERSISTENT_EPILOGUE 0
#endif
#ifndef PERSISTENT_C_BATCH
#define PERSISTENT_C_BATCH 16
#endif
// PERSISTENT_C_PREFETCH: how many slices before a tile's end its C is prefetched into L2. PERSISTENT_NO_STORE 1
// (measurement only, D is not written): the ring epilogue without its TMA stores.
#ifndef PERSISTENT_C_PREFETCH
#define PERSISTENT_C_PREFETCH 16
#endif
#ifndef PERSISTENT_NO_STORE
#define PERSISTENT_NO_STORE 0
#endif
// PERSISTENT_STREAMK 1 (wgmma-streamk's build, with EPILOGUE 4; wgmma-streamk-cluster's with CLUSTER 2): the tiles
// that do not fill a last wave of the grid are shared out as equal runs of K slices (stream-K over the tail), so no
// block idles through a last wave that a fraction of the blocks run. In a cluster both blocks run the same runs of
// their own tiles.
#ifndef PERSISTENT_STREAMK
#define PERSISTENT_STREAMK 0
#endif
// The share of blocks a last wave must leave idle for stream-K to split it, in percent, a multiple of 10 (measured).
#ifndef PERSISTENT_SK_IDLE_PCT
#define PERSISTENT_SK_IDLE_PCT 20
#endif
// The shortest run of K slices a block takes of the last wave, as a fraction of a tile: 1 / PERSISTENT_SK_MIN_RUN.
// Measured (H200, % of cuBLAS's AddMM, runs of 1/2, 1/4, 1/8, 1/16 of a tile): 5120^3 95.1 / 98.2 / 98.0 / 95.3,
// 3072^3 81.2 / 84.5 / 80.5 / 80.5, 10240^3 102.1 / 103.1 / 102.9 / 102.9 (results/h200-2026-11-29/runs/).
#ifndef PERSISTENT_SK_MIN_RUN
#define PERSISTENT_SK_MIN_RUN 4
#endif
// PERSISTENT_STAGGER_NS (measurement only): the odd blocks' producers start this many nanoseconds late, so that
// half the blocks reach every tile's epilogue (C's reads, D's writes) out of step with the other half.
#ifndef PERSISTENT_STAGGER_NS
#define PERSISTENT_STAGGER_NS 0
#endif
// PERSISTENT_C_LOADS_FIRST 1 (measurement only, EPILOGUE 3-5): a box's eight C loads are issued together, before
// the staging box is acquired, instead of each just before its blend. The loads and stores are volatile, so each
// load otherwise waited for the store before it: ncu's source page put 2.7 % of wgmma-streamk's warp samples at
// 5120^3 on the blend's wait for its C load (results/h200-2026-11-29/why/). No effect at 4096-8192^3: the other
// warps hide it (results/h200-2026-11-29/cloads/).
#ifndef PERSISTENT_C_LOADS_FIRST
#define PERSISTENT_C_LOADS_FIRST 0
#endif
// PERSISTENT_ONE_BARRIER (EPILOGUE 3-5): 1, one barrier a box. The storing thread waits for every store it issued to
// have read its staging box (store b - 1's is the box that box b + 1 writes) before the barrier that publishes box
// b, so no barrier is needed before the writes. 0 (measurement only), the earlier two: one to acquire the staging
// box, one to publish it. One barrier is 0.1 % faster at 8192^3 and 0.4 % at 4096^3 on an H200, at full clock
// (results/h200-2026-11-29/onebar/).
#ifndef PERSISTENT_ONE_BARRIER
#define PERSISTENT_ONE_BARRIER 1
#endif
// PERSISTENT_L2_HINTS (measurement only): 1, C's TMA loads and D's TMA stores carry an L2 evict-first policy (each
// is touched once), so that they push A's and B's slices, which the other blocks read again, out of L2 less; 2, as 1
// and A's and B's loads evict-last.
// PERSISTENT_PINNED_BARS 1 (the strips builds, hopper_strips.cuh): the consumers hold the ring's
// barrier addresses in registers. Otherwise ptxas recomputes them at every slice from the block's cluster rank (S2R
// SR_CgaCtaId, a variable-latency read) on the path from one slice's wgmma.wait_group to the next slice's wgmmas.
// Measured on an H200 at full clock (results/h200-2026-11-29/pinned/): 0.1 % faster at 8192^3 and 0.4-0.5 % at
// 4096^3 for both builds. PERSISTENT_SLICE_SPIN puts the share of that path the tensor cores wait on at 15-20 %.
#ifndef PERSISTENT_PINNED_BARS
#define PERSISTENT_PINNED_BARS 0
#endif
// PERSISTENT_FAST_DESC 1 (64-deep slices; the strips builds, hopper_strips.cuh): the consumers
// build each wgmma descriptor by one add to a start fixed before the loop (the slot's and the k-step's offsets, >> 4),
// instead of masking and shifting the address every time. ncu's source page at 8192^3
// (results/h200-2026-11-29/why8192/) put 17.5 % of the consumer warps' samples on the path between one slice's
// wgmma.wait_group and the next slice's wgmmas, mostly that arithmetic; a slice's loop went from about 90 SASS
// instructions to 58. Measured on an H200 (fastdesc/): 0.2-0.3 % faster at 8192^3, 0.6 % at 4096^3.
#ifndef PERSISTENT_FAST_DESC
#define PERSISTENT_FAST_DESC 0
#endif
// PERSISTENT_EARLY_WAIT 1 (the strips builds, hopper_strips.cuh): a consumer waits for the next
// slice's data right after issuing this slice's wgmmas, while they run, instead of after they finish, so that path
// holds only the release and the issue. Alone, within 0.3 % either way (results/h200-2026-11-29/early/); with the
// fast descriptors, 0.7 % faster than the build before both at 8192^3 and 0.2 % at 4096^3 (fastdesc/).
#ifndef PERSISTENT_EARLY_WAIT
#define PERSISTENT_EARLY_WAIT 0
#endif
// PERSISTENT_SLICE_SPIN (measurement only): each consumer spins this many cycles after releasing a slice, a probe of
// how much of the path between two slices' wgmmas the tensor cores wait on.
#ifndef PERSISTENT_SLICE_SPIN
#define PERSISTENT_SLICE_SPIN 0
#endif
#ifndef PERSISTENT_L2_HINTS
#define PERSISTENT_L2_HINTS 0
#endif
constexpr int BM = 128;
// PERSISTENT_BN 320 (measurement only, with EPILOGUE 1 or 2): 128 x 320 tiles, cuBLAS's choice at 5120^3 and 8192^3
// on the H200 (nvjet ..._320x128_64x3_1x2, results/h200-2026-11-29/names/), 160 accumulators a consumer thread.
#ifndef PERSISTENT_BN
#define PERSISTENT_BN 256
#endif
constexpr int BN = PERSISTENT_BN;
static_assert(BN == 256 || BN == 320, "tiles 256 or 320 columns wide");
constexpr int ACC = BN / 2;  // accumulators of a consumer thread: its warp group's 64 x BN floats over 128 threads
constexpr int BK = PERSISTENT_BK;  // halves per K slice: one swizzle row of A (64 or 128 bytes)
constexpr int STAGES = PERSISTENT_STAGES;
static_assert(BK == 32 || BK == 64, "A's swizzle is 64 bytes for 32-deep slices, 128 bytes for 64-deep ones");
constexpr int CONSUMERS = 2;  // warp groups that multiply, 64 rows each
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int GROUP_M = PERSISTENT_GROUP_M;  // tile rows per group of the tile order
constexpr int B_BOX_N = 64;   // a 128-byte swizzled box of B holds 64 halves across
constexpr int B_BOXES = BN / B_BOX_N;
constexpr int A_STAGE_BYTES = BM * BK * 2;                          // 16 KB
constexpr int A_CONSUMER_BYTES = 64 * BK * 2;                       // 8 KB: one consumer's 64 rows
constexpr int B_BOX_BYTES = B_BOX_N * BK * 2;                       // 8 KB: 64 K rows of 128 bytes
constexpr int STAGE_BYTES = A_STAGE_BYTES + B_BOXES * B_BOX_BYTES;  // 48 KB
constexpr int OUT_BOX_ROWS = 64;  // C and D boxes: one consumer's rows x one 128-byte swizzle row of floats
constexpr int OUT_BOX_COLS = 32;
constexpr int OUT_BOX_BYTES = OUT_BOX_ROWS * OUT_BOX_COLS * 4;  // 8 KB
constexpr int OUT_BOXES_PER_CONSUMER = BN / OUT_BOX_COLS;       // 8
constexpr int OUT_BOXES = CONSUMERS * OUT_BOXES_PER_CONSUMER;   // 16
constexpr int OUT_BOXES_PER_SLOT = STAGE_BYTES / OUT_BOX_BYTES;  // 6 (a box never straddles two slots)
constexpr int C_SLOTS = (OUT_BOXES + OUT_BOXES_PER_SLOT - 1) / OUT_BOXES_PER_SLOT;  // 3
constexpr int EPILOGUE = PERSISTENT_EPILOGUE;
constexpr int C_BATCH = PERSISTENT_C_BATCH;
static_assert(EPILOGUE >= 0 && EPILOGUE <= 6, "epilogue variants 0 to 6");
constexpr bool C_IN_RING = EPILOGUE == 0 || EPILOGUE == 3 || EPILOGUE == 4 || EPILOGUE == 6;
// EPILOGUE 5 (measurement only): as 4, but C comes through an area of its own, a ring of C_AREA_SLOTS slots of one
// strip each (the same 32 columns of both consumers), so the K ring is never lent to C and the next tile's first
// slices load while the consumers blend. The main loop runs as fast on 3 stages as on 4 at 8192^3
// (results/h200-2026-11-29/stages/), which left room for the area; the whole kernel did not: on an H200 it is 1 %
// slower at 8192^3 and 3.5 % at 4096^3 (results/h200-2026-11-29/epi5_full/, epi5/).
constexpr bool C_AREA = EPILOGUE == 5;
constexpr bool C_IN_LOOP = EPILOGUE == 6;  // C joins the accumulators inside the main loop
#ifndef PERSISTENT_C_AREA_SLOTS
#define PERSISTENT_C_AREA_SLOTS 3
#endif
constexpr int C_AREA_SLOTS = PERSISTENT_C_AREA_SLOTS;
static_assert(BN / 8 % C_BATCH == 0 && C_BATCH % 4 == 0, "C batches of whole boxes");
constexpr int STAGING_BOXES = 2;  // per consumer, EPILOGUE 2, 3 and 4
constexpr int STAGING_BYTES = EPILOGUE >= 2 ? CONSUMERS * STAGING_BOXES * OUT_BOX_BYTES : 0;
constexpr int C_AREA_SLOT_BYTES = CONSUMERS * OUT_BOX_BYTES;  // one strip: consumer c's box at c * OUT_BOX_BYTES
// The area's full and empty barriers sit in the 1024 bytes after its slots (as static shared arrays they would move
// every other build's shared variables, and so their code).
constexpr int C_AREA_BYTES = C_AREA ? C_AREA_SLOTS * C_AREA_SLOT_BYTES + 1024 : 0;
constexpr int SMEM_BYTES = STAGES * STAGE_BYTES + STAGING_BYTES + C_AREA_BYTES + 1024;  // + slack to align to 1024
constexpr bool STREAMK = PERSISTENT_STREAMK != 0;
// The stream-K schedule needs more producer registers (at 40 or 48 it spills; an earlier build measured 40 / 232 the
// same as 48 / 224 on an H200, results/h200-2026-11-29/hsk/first/).
#ifndef PERSISTENT_SK_REGS  // measurement only: 1 gives wgmma-streamk the other steps' 40 / 232
#define PERSISTENT_SK_REGS 0
#endif
// The stream-K producer's registers: 56 (wgmma-streamk), 64 in two-block clusters (wgmma-streamk-cluster's producer
// spills 48 bytes at 56). The 320-wide tile's producer (five B boxes a slice) spills a word at 40.
#ifndef PERSISTENT_SK_PRODUCER_REGS
#define PERSISTENT_SK_PRODUCER_REGS 56
#endif
constexpr int PRODUCER_REGS = STREAMK && !PERSISTENT_SK_REGS ? PERSISTENT_SK_PRODUCER_REGS : BN == 320 ? 48 : 40;
constexpr int CONSUMER_REGS = STREAMK && !PERSISTENT_SK_REGS ? 216 : BN == 320 ? 224 : 232;
// The producer prefetches a tile's C into L2 this many slices before the tile's end; the consumers' storing
// threads release the previous tile's C slots after this slice of the next tile (or its last).
constexpr int C_PREFETCH_SLICES = PERSISTENT_C_PREFETCH;
constexpr int C_RELEASE_SLICE = PERSISTENT_C_RELEASE;
// Slices of wgmmas a consumer leaves running while it issues the next (wgmma.wait_group's argument).
constexpr int WGMMA_IN_FLIGHT = PERSISTENT_WAIT;
static_assert(!STREAMK || EPILOGUE >= 4, "the stream-K tail is built on the strips epilogue");
static_assert(EPILOGUE != 6 || WGMMA_IN_FLIGHT == 0, "C joins accumulators no wgmma is writing");
static_assert(EPILOGUE != 6 || !PERSISTENT_EARLY_WAIT, "the slot after a slice may be C's");
static_assert(!PERSISTENT_FAST_DESC || (BK == 64 && BN == 256), "fast descriptors for 64-deep slices, 256-wide tiles");
static_assert(BN == 256 || EPILOGUE == 1 || EPILOGUE == 2, "the ring epilogues' C slots are laid out for 256 columns");
static_assert(SMEM_BYTES + 256 <= 227 * 1024, "dynamic plus static shared memory of one block (catalog: dynamic_smem_bytes)");
static_assert(PRODUCER_REGS * 128 + CONSUMER_REGS * 128 * CONSUMERS <= 65536, "setmaxnreg budget");
static_assert(OUT_BOX_BYTES * OUT_BOXES_PER_SLOT == STAGE_BYTES, "C boxes tile a slot");
// The next tile's slices up to C_RELEASE_SLICE must fit in the slots the C slots leave, or the producer would wait
// for the release that waits for them.
static_assert(EPILOGUE != 0 || STAGES - C_SLOTS > C_RELEASE_SLICE, "ring long enough for the C slots and the next tile's first slices");
static_assert(STAGES > WGMMA_IN_FLIGHT + 1, "the consumers hold WGMMA_IN_FLIGHT + 1 slots");

#ifndef PERSISTENT_C_GAP
#define PERSISTENT_C_GAP 2
#endif
#ifndef PERSISTENT_C_LAST
#define PERSISTENT_C_LAST 2
#endif
static_assert(PERSISTENT_C_LAST >= 1 && PERSISTENT_C_GAP >= 0, "EPILOGUE 6's C slots lie before a slice of the tile");

// Which rows and columns of the block tile epilogue box `box` covers (box = consumer * 8 + column strip), and
// whether any of it lies inside D (`rows`, `cols`: D's rows and columns from the tile's origin on).
__device__ __forceinline__ int box_row(int box) { return (box / OUT_BOXES_PER_CONSUMER) * OUT_BOX_ROWS; }
__device__ __forceinline__ int box_col(int box) { return (box % OUT_BOXES_PER_CONSUMER) * OUT_BOX_COLS; }
__device__ __forceinline__ bool box_in_d(int box, int rows, int cols) { return box_row(box) < rows && box_col(box) < cols; }

// EPILOGUE 4's C slots: slot o holds column strips 3o .. 3o+2 (of 8) of both consumers, consumer 0's first.
constexpr int STRIPS_PER_SLOT = OUT_BOXES_PER_SLOT / CONSUMERS;  // 3
__device__ __forceinline__ int strip_slot(int box) { return (box % OUT_BOXES_PER_CONSUMER) / STRIPS_PER_SLOT; }
__device__ __forceinline__ int strip_index(int box)
{
    const int strip = box % OUT_BOXES_PER_CONSUMER, o = strip / STRIPS_PER_SLOT;
    const int in_slot = min(STRIPS_PER_SLOT, OUT_BOXES_PER_CONSUMER - o * STRIPS_PER_SLOT);
    return (box / OUT_BOXES_PER_CONSUMER) * in_slot + strip - o * STRIPS_PER_SLOT;
}

#if PERSISTENT_EPILOGUE == 6
// How a piece of work takes C: 0, not at all (beta == 0, or a stream-K contribution); 1, (beta / alpha) * C added
// inside the main loop; 2, alpha * acc + beta * C after it (beta / alpha not finite).
__device__ __forceinline__ int c_mode(bool finishes, float alpha, float beta)
{
    if (!finishes || beta == 0.0f) return 0;
    return alpha != 0.0f && isfinite(beta / alpha) ? 1 : 2;
}

// In mode 1, the K slice (of the tile's) before which C slot o takes its ring position.
__device__ __forceinline__ int c_slot_slice(int o, int k_begin, int k_end)
{
    return max(k_begin, k_end - PERSISTENT_C_LAST - (C_SLOTS - 1 - o) * PERSISTENT_C_GAP);
}
#endif

// wgmma descriptor of a K-major operand in the 64-byte swizzle (layout type 2 in bits 62-63): 8-row groups of 64-byte
// rows, `sbo` bytes apart; the leading byte offset is unused for swizzled K-major layouts.
__device__ __forceinline__ unsigned long long make_desc_sw64(unsigned addr, unsigned sbo)
{
    return (unsigned long long)((addr & 0x3FFFF) >> 4) | (1ull << 16) |
           ((unsigned long long)((sbo >> 4) & 0x3FFF) << 32) | (2ull << 62);
}

// 2-D TMA load multicast to the blocks of the cluster named in `mask` (same shared-memory offset and barrier in
// each); each receiving block's barrier is credited with the box's bytes.
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const hopper::TensorMap* map, int c0, int c1,
                                                      unsigned bar, unsigned short mask)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
                 "[%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "h"(mask)
                 : "memory");
}

__device__ __forceinline__ void tma_store_2d(const hopper::TensorMap* map, int c0, int c1, unsigned src)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group [%0, {%1, %2}], [%3];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(src)
                 : "memory");
}

__device__ __forceinline__ unsigned long long l2_evict_first_policy()
{
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

__device__ __forceinline__ unsigned long long l2_evict_last_policy()
{
    unsigned long long policy;
    asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
    return policy;
}

// tma_load_2d and tma_store_2d with an L2 eviction policy (PERSISTENT_L2_HINTS).
__device__ __forceinline__ void tma_load_2d_hint(unsigned dst, const hopper::TensorMap* map, int c0, int c1,
                                                 unsigned bar, unsigned long long policy)
{
    asm volatile("cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes.L2::cache_hint "
                 "[%0], [%1, {%2, %3}], [%4], %5;\n"
                 ::"r"(dst), "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(bar), "l"(policy)
                 : "memory");
}

__device__ __forceinline__ void tma_store_2d_hint(const hopper::TensorMap* map, int c0, int c1, unsigned src,
                                                  unsigned long long policy)
{
    asm volatile("cp.async.bulk.tensor.2d.global.shared::cta.bulk_group.L2::cache_hint [%0, {%1, %2}], [%3], %4;\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(src), "l"(policy)
                 : "memory");
}

__device__ __forceinline__ void tma_prefetch_l2_2d(const hopper::TensorMap* map, int c0, int c1)
{
    asm volatile("cp.async.bulk.prefetch.tensor.2d.L2.global.tile [%0, {%1, %2}];\n"
                 ::"l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1)
                 : "memory");
}

// A copy of v that ptxas cannot recompute from what v was made of, so it stays in a register (the consumers' ring
// addresses and descriptor starts, recomputed at every slice otherwise).
__device__ __forceinline__ unsigned opaque(unsigned v)
{
    unsigned copy;
    asm volatile("mov.u32 %0, %1;\n" : "=r"(copy) : "r"(v));
    return copy;
}

// `count` arrivals on the barrier at the same shared-memory offset in block `rank` of the cluster (this block
// included). The default CTA-scope release: with .release.cluster ptxas puts a MEMBAR.ALL.GPU before every arrive,
// which made the clustered kernel four times slower (a slot's reads by wgmma are complete after wgmma.wait_group,
// and by TMA after cp.async.bulk.wait_group.read).
__device__ __forceinline__ void mbar_arrive_cluster(unsigned bar, unsigned rank, unsigned count)
{
    asm volatile("{\n .reg .b32 remote;\n mapa.shared::cluster.u32 remote, %0, %1;\n"
                 " mbarrier.arrive.shared::cluster.b64 _, [remote], %2;\n}\n"
                 ::"r"(bar), "r"(rank), "r"(count)
                 : "memory");
}

// `count` consumer warps are done with a slot: tell this block's producer and, with clusters, the other blocks'
// (whose multicasts also write into this block's slot).
template <int CLUSTER>
__device__ __forceinline__ void release_stage(unsigned empty_bar, unsigned count)
{
    if constexpr (CLUSTER == 1) {
        asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0], %1;\n" ::"r"(empty_bar), "r"(count) : "memory");
    } else {
#pragma unroll
        for (int r = 0; r < CLUSTER; ++r) mbar_arrive_cluster(empty_bar, r, count);
    }
}

__device__ __forceinline__ void ld_shared_f2(unsigned addr, float& x, float& y)
{
    asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];\n" : "=f"(x), "=f"(y) : "r"(addr) : "memory");
}

__device__ __forceinline__ void st_shared_f2(unsigned addr, float x, float y)
{
    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(addr), "f"(x), "f"(y) : "memory");
}

// The tiles of a launch: `count` units of CLUSTER vertically adjacent 128 x 256 tiles, in groups of GROUP_M tile
// rows walked down a group's rows first (the units in flight together share A's row panels and B's column panels
// in L2); unit u's block `rank` computes rows bm.., columns bn.. of D.
template <int CLUSTER>
struct TileOrder {
    int tiles_n, units_m, count;

    __device__ __forceinline__ TileOrder(int M, int N)
    {
        tiles_n = (N + BN - 1) / BN;
        units_m = ((M + BM - 1) / BM + CLUSTER - 1) / CLUSTER;
        count = units_m * tiles_n;
    }

    __device__ __forceinline__ void origin(int unit, int rank, int& bm, int& bn) const
    {
        constexpr int group_m = GROUP_M / CLUSTER;
        const int group_size = group_m * tiles_n;
        const int first_m = (unit / group_size) * group_m;
        const int rows_in_group = min(units_m - first_m, group_m);
        bm = ((first_m + (unit % group_size) % rows_in_group) * CLUSTER + rank) * BM;
        bn = ((unit % group_size) / rows_in_group) * BN;
    }
};

// A stream-K launch's partial tiles: one slot per block (a block contributes to at most one tile it does not finish),
// each consumer's 64 x 256 floats in accumulator order, 16 bytes per thread side by side so a warp's stores coalesce;
// and one flag per slot and consumer, set when the slot is written and cleared by the block that adds it, so the
// flags are zero at every launch. They are this module's: two stream-K launches of one module must not overlap.
constexpr int TAIL_MAX_BLOCKS = 160;  // grids larger than this run the tail as whole tiles
#if PERSISTENT_STREAMK
__device__ float4 tail_partials[TAIL_MAX_BLOCKS * CONSUMERS * 32 * 128];
__device__ unsigned tail_ready[TAIL_MAX_BLOCKS * CONSUMERS];

// Block `block`'s slot for consumer `consumer`'s sums, and its flag.
__device__ __forceinline__ float4* tail_slot(int block, int consumer)
{
    return tail_partials + static_cast<size_t>(block * CONSUMERS + consumer) * 32 * 128;
}
__device__ __forceinline__ unsigned* tail_flag(int block, int consumer) { return tail_ready + block * CONSUMERS + consumer; }
#endif

// One piece of work of a block: K slices [k_begin, k_end) of tile `unit`; `finishes` when it ends the tile's K, so
// it writes D (after adding the partials of the blocks that ran the tile's earlier slices).
struct Work {
    int unit, k_begin, k_end;
    bool finishes;
    int index;  // its place in the block's order of work: 0, 1, ...
};

// What each block computes, in order. Without stream-K: units block, block + blocks, ... whole. With it, the
// count % blocks units of the last, partial wave are laid end to end as one run of K slices and cut into equal
// pieces of `seg` slices, one per block: at least a quarter of a tile (PERSISTENT_SK_MIN_RUN), so at most five blocks
// share a tile. A block's run crosses at most one tile boundary; the piece that does not end its tile (a contribution)
// goes first, so a block waiting for contributions waits only for pieces that wait for nothing.
template <int CLUSTER>
struct Schedule {
    int k_tiles, whole_units, seg, tail_slices;  // few: the producer runs in PRODUCER_REGS registers
    int whole_count, items;  // this block's whole tiles and all its pieces of work (stream-K)

    __device__ __forceinline__ int blocks() const { return gridDim.x / CLUSTER; }
    __device__ __forceinline__ int block() const { return blockIdx.x / CLUSTER; }

    __device__ __forceinline__ Schedule(const TileOrder<CLUSTER>& order, int K)
    {
        k_tiles = (K + BK - 1) / BK;
        const int blocks = this->blocks();
        whole_units = order.count;
        seg = 0;
        tail_slices = 0;
        if constexpr (STREAMK) {
            // Splitting costs about a quarter of a tile's time (partial sums, a wait, two pieces' pipeline ends):
            // worth it where the last wave would leave at least 20 % of the blocks idle (H200: split, 4096^3's 116 of
            // 132 lost 3.3 points and 7168^3's 116 gained nothing; 5120^3's 8 gained 3.8, 8192^3's 68 2.0 and
            // 6144^3's 96 1.1: results/h200-2026-11-29/hsk/ and idle/).
            const int tail = order.count % blocks;
            if (tail != 0 && 10 * tail <= (10 - PERSISTENT_SK_IDLE_PCT / 10) * blocks &&
                static_cast<int>(gridDim.x) <= TAIL_MAX_BLOCKS) {
                whole_units = order.count - tail;
                tail_slices = tail * k_tiles;
                constexpr int min_run = PERSISTENT_SK_MIN_RUN;
                seg = max((tail_slices + blocks - 1) / blocks, (k_tiles + min_run - 1) / min_run);
            }
            // Counted once: the divisions would otherwise sit between every two tiles of every warp (an ncu
            // capture at 4096^3 showed 4 % more instructions than wgmma-staged's where nothing is split).
            whole_count = whole();
            items = whole_count + pieces();
        }
    }

    __device__ __forceinline__ int whole() const
    {
        return whole_units > block() ? (whole_units - 1 - block()) / blocks() + 1 : 0;
    }

    __device__ __forceinline__ int pieces() const
    {
        const int s = block() * seg;
        if (seg == 0 || s >= tail_slices) return 0;
        return s / k_tiles == (min(s + seg, tail_slices) - 1) / k_tiles ? 1 : 2;
    }

    // Walked as `for (Work w = first(); more(w); w = next(w))`; without stream-K, the plain strided loop.
    __device__ __forceinline__ Work first() const
    {
        return STREAMK && whole_count == 0 ? at(0) : Work{block(), 0, k_tiles, true, 0};
    }
    __device__ __forceinline__ bool more(const Work& w) const { return STREAMK ? w.index < items : w.unit < whole_units; }
    __device__ __forceinline__ Work next(const Work& w) const
    {
        return STREAMK && w.index + 1 >= whole_count ? at(w.index + 1)
                                                     : Work{w.unit + blocks(), 0, k_tiles, true, w.index + 1};
    }

    // Piece i of this block's tail (i >= whole_count), or whole tile i.
    __device__ __forceinline__ Work at(int i) const
    {
        const int w = whole_count;
        if (i < w) return {block() + i * blocks(), 0, k_tiles, true, i};
        const int s = block() * seg, e = min(s + seg, tail_slices);
        int lo = s, hi = e;
        if (pieces() == 2) {
            const int boundary = (s / k_tiles + 1) * k_tiles;
            const bool second_first = e % k_tiles != 0;  // the second piece is a contribution
            const bool second = (i == w) == second_first;
            lo = second ? boundary : s;
            hi = second ? e : boundary;
        }
        const int tile = lo / k_tiles;
        return {whole_units + tile, lo - tile * k_tiles, hi - tile * k_tiles, hi - tile * k_tiles == k_tiles, i};
    }

    // The first block whose piece contributes to tail unit `unit` (the finishing block is the last).
    __device__ __forceinline__ int first_contributor(int unit) const { return (unit - whole_units) * k_tiles / seg; }
};

__device__ __forceinline__ unsigned cluster_rank()
{
    unsigned r;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
    return r;
}

__device__ __forceinline__ void cluster_sync()
{
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}

// The 128 threads of consumer warp group `consumer` meet (named barrier 1 or 2; the producer never joins them).
__device__ __forceinline__ void consumer_sync(int consumer)
{
    if (consumer == 0)
        asm volatile("bar.sync 1, 128;\n" ::: "memory");
    else
        asm volatile("bar.sync 2, 128;\n" ::: "memory");
}

// This consumer's shared-memory writes made visible to TMA (the async proxy), once all its threads have written.
__device__ __forceinline__ void publish_to_tma(int consumer)
{
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    consumer_sync(consumer);
}

// A staging box may be written again: the store issued from it STAGING_BOXES boxes ago has read it (one store group
// a box), and the whole consumer knows it.
__device__ __forceinline__ void acquire_staging(bool storer, int consumer)
{
    if (storer) asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(STAGING_BOXES - 1) : "memory");
    consumer_sync(consumer);
}

// The byte offset, inside its row of a 128-byte-swizzled box, of the two floats a lane holds for the accumulator's
// 8-column chunk j (the row's 16-byte chunk (j % 4) * 2 + (lane % 4) / 2, swizzled by the row % 8 == lane / 4).
__device__ __forceinline__ unsigned box_in_row(int j, int lane)
{
    const unsigned chunk = (j % 4) * 2 + (lane % 4) / 2;
    return ((chunk ^ (lane / 4)) * 16) + (lane % 2) * 8;
}

// EPILOGUE 4's and 6's C slot o (strips 3o .. 3o + 2 of both consumers) of the tile at (tm, tn) into the ring slot at
// `slot` (its full barrier `full`): the boxes inside D when C is read, and the bytes they bring (none otherwise, so
// the slot only signals).
__device__ __forceinline__ void load_c_strips(const hopper::TensorMap* map_c, unsigned slot, unsigned full, int o,
                                              int M, int N, int tm, int tn, bool use_c)
{
    int bytes = 0;
    for (int box = 0; box < OUT_BOXES; ++box)
        bytes += strip_slot(box) == o && use_c && box_in_d(box, M - tm, N - tn) ? OUT_BOX_BYTES : 0;
    hopper::mbar_arrive_expect_tx(full, bytes);
    for (int box = 0; box < OUT_BOXES; ++box) {
        if (strip_slot(box) == o && use_c && box_in_d(box, M - tm, N - tn)) {
            const unsigned c_dst = slot + strip_index(box) * OUT_BOX_BYTES;
            if constexpr (PERSISTENT_L2_HINTS >= 1)
                tma_load_2d_hint(c_dst, map_c, tn + box_col(box), tm + box_row(box), full, l2_evict_first_policy());
            else
                hopper::tma_load_2d(c_dst, map_c, tn + box_col(box), tm + box_row(box), full);
        }
    }
}

#if PERSISTENT_EPILOGUE == 6
// EPILOGUE 6: the consumer's boxes of C slot O (strips 3O .. 3O + 2), at ring position `pos`, joined to the
// accumulators as acc_scale * acc + c_scale * C; then the slot goes back to the producer.
template <int CLUSTER, int O>
__device__ __forceinline__ void add_c_slot(float (&d)[ACC], unsigned& pos, int consumer, int row_in_box,
                                           int lane, unsigned smem_base, unsigned full0, unsigned empty0,
                                           float acc_scale, float c_scale)
{
    const int s = pos % STAGES;
    hopper::mbar_wait(full0 + 8 * s, (pos / STAGES) & 1);
#pragma unroll
    for (int b = 0; b < OUT_BOXES_PER_CONSUMER; ++b) {
        if (b / STRIPS_PER_SLOT != O) continue;
        const unsigned box_addr =
            smem_base + s * STAGE_BYTES + strip_index(consumer * OUT_BOXES_PER_CONSUMER + b) * OUT_BOX_BYTES;
#pragma unroll
        for (int j = 4 * b; j < 4 * b + 4; ++j) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                float cx, cy;
                ld_shared_f2(box_addr + (row_in_box + half * 8) * 128 + box_in_row(j, lane), cx, cy);
                d[4 * j + 2 * half] = fmaf(c_scale, cx, acc_scale * d[4 * j + 2 * half]);
                d[4 * j + 2 * half + 1] = fmaf(c_scale, cy, acc_scale * d[4 * j + 2 * half + 1]);
            }
        }
    }
    __syncwarp();
    if (lane == 0) release_stage<CLUSTER>(empty0 + 8 * s, 1);
    ++pos;
}

// add_c_slot of slot o, chosen at run time (each slot's accumulators are named at compile time).
template <int CLUSTER>
__device__ __forceinline__ void add_c_slot_at(int o, float (&d)[ACC], unsigned& pos, int consumer, int row_in_box,
                                              int lane, unsigned smem_base, unsigned full0, unsigned empty0,
                                              float acc_scale, float c_scale)
{
    static_assert(C_SLOTS == 3, "three C slots");
    if (o == 0)
        add_c_slot<CLUSTER, 0>(d, pos, consumer, row_in_box, lane, smem_base, full0, empty0, acc_scale, c_scale);
    else if (o == 1)
        add_c_slot<CLUSTER, 1>(d, pos, consumer, row_in_box, lane, smem_base, full0, empty0, acc_scale, c_scale);
    else
        add_c_slot<CLUSTER, 2>(d, pos, consumer, row_in_box, lane, smem_base, full0, empty0, acc_scale, c_scale);
}
#endif

// EPILOGUE 1 and 2: D = alpha * acc + beta * C for one consumer's 64 x BN part of the tile at (bm, bn), C read from
// global in batches of C_BATCH 8-column chunks (all loads of a batch before its first use, so a batch waits once for
// L2), D stored from registers (1) or through this consumer's two staging boxes by TMA (2).
__device__ __forceinline__ void direct_epilogue(const float (&d)[ACC], const float* __restrict__ c_ptr,
                                                float* __restrict__ d_ptr, const hopper::TensorMap* map_d, int M,
                                                int N, int bm, int bn, int consumer, int warp, int lane, float alpha,
                                                float beta, bool use_c, unsigned staging)
{
    const int row = bm + consumer * 64 + warp * 16 + lane / 4;
    const int col0 = bn + 2 * (lane % 4);
    const bool storer = warp == 0 && lane == 0;
#pragma unroll
    for (int jb = 0; jb < BN / 8; jb += C_BATCH) {
        float2 cv[C_BATCH][2];
#pragma unroll
        for (int j = 0; j < C_BATCH; ++j) {
#pragma unroll
            for (int half = 0; half < 2; ++half) {
                const int r = row + 8 * half;
                const int col = col0 + 8 * (jb + j);
                cv[j][half] = use_c && r < M && col < N
                                  ? __ldg(reinterpret_cast<const float2*>(c_ptr + static_cast<size_t>(r) * N + col))
                                  : make_float2(0.0f, 0.0f);
            }
        }
        if constexpr (EPILOGUE == 1) {
#pragma unroll
            for (int j = 0; j < C_BATCH; ++j) {
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const int r = row + 8 * half;
                    const int col = col0 + 8 * (jb + j);
                    const int i = 4 * (jb + j) + 2 * half;
                    if (r < M && col < N)
                        *reinterpret_cast<float2*>(d_ptr + static_cast<size_t>(r) * N + col) =
                            make_float2(fmaf(beta, cv[j][half].x, alpha * d[i]), fmaf(beta, cv[j][half].y, alpha * d[i + 1]));
                }
            }
        } else {
#pragma unroll
            for (int jq = 0; jq < C_BATCH; jq += 4) {
                const int box = (jb + jq) / 4;  // this consumer's column strip, 0..7
                const unsigned buf = staging + (box % STAGING_BOXES) * OUT_BOX_BYTES;
                acquire_staging(storer, consumer);
#pragma unroll
                for (int j = jq; j < jq + 4; ++j) {
                    const unsigned in_row = box_in_row(j, lane);
#pragma unroll
                    for (int half = 0; half < 2; ++half) {
                        const int i = 4 * (jb + j) + 2 * half;
                        st_shared_f2(buf + (warp * 16 + lane / 4 + half * 8) * 128 + in_row,
                                     fmaf(beta, cv[j][half].x, alpha * d[i]), fmaf(beta, cv[j][half].y, alpha * d[i + 1]));
                    }
                }
                publish_to_tma(consumer);
                if (storer) {
                    const int r0 = bm + consumer * 64, c0 = bn + box * OUT_BOX_COLS;
                    if (r0 < M && c0 < N) tma_store_2d(map_d, c0, r0, buf);
                    asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
                }
            }
        }
    }
}

template <int CLUSTER, hopper::Input IN = hopper::Input::f16>
__device__ __forceinline__ void persistent_addmm(const hopper::TensorMap& map_a, const hopper::TensorMap& map_b,
                                                 const hopper::TensorMap& map_c, const hopper::TensorMap& map_d,
                                                 int M, int N, int K, float alpha, float beta,
                                                 const float* __restrict__ c_ptr = nullptr,
                                                 float* __restrict__ d_ptr = nullptr)
{
    using namespace hopper;
    extern __shared__ unsigned char smem_raw[];
    __shared__ __align__(8) unsigned long long full_bar[STAGES];
    __shared__ __align__(8) unsigned long long empty_bar[STAGES];

    // Swizzled tiles must start on 1024-byte boundaries for TMA's and wgmma's swizzle patterns to agree.
    const unsigned smem_base = (smem_u32(smem_raw) + 1023u) & ~1023u;
    const unsigned full0 = smem_u32(&full_bar[0]);
    const unsigned empty0 = smem_u32(&empty_bar[0]);
    const unsigned c_area = smem_base + STAGES * STAGE_BYTES + STAGING_BYTES;
    const unsigned c_full0 = c_area + C_AREA_SLOTS * C_AREA_SLOT_BYTES;
    const unsigned c_empty0 = c_full0 + 8 * C_AREA_SLOTS;

    const int tid = threadIdx.x;
    const int group = tid / 128;  // 0: producer; 1..CONSUMERS: consumers

    if (tid == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbar_init(full0 + 8 * s, 1);                          // the producer's arrive.expect_tx
            mbar_init(empty0 + 8 * s, 4 * CONSUMERS * CLUSTER);  // each consumer warp of each block of the cluster
        }
        if constexpr (C_AREA) {
            for (int s = 0; s < C_AREA_SLOTS; ++s) {
                mbar_init(c_full0 + 8 * s, 1);
                mbar_init(c_empty0 + 8 * s, 4 * CONSUMERS * CLUSTER);  // each consumer's storer, for its 4 warps
            }
        }
        // Make the initialised barriers visible to the async proxy (TMA) and to the other blocks of the cluster.
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    }
    if constexpr (CLUSTER > 1)
        cluster_sync();  // no block multicasts into or arrives on another's barriers before they exist
    else
        __syncthreads();

    if (group == 0) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(PRODUCER_REGS));
        if (tid == 0) {
#if PERSISTENT_STAGGER_NS > 0
            if (blockIdx.x & 1) {
                unsigned long long start, now;
                asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
                do {
                    __nanosleep(256);
                    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
                } while (now - start < PERSISTENT_STAGGER_NS);
            }
#endif
            const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
            const TileOrder<CLUSTER> order(M, N);
            const Schedule<CLUSTER> schedule(order, K);
            const bool use_c = beta != 0.0f;
            unsigned pos = 0;  // ring positions filled so far (K slices and C slots): the slot and its round
#if PERSISTENT_EPILOGUE == 5  // preprocessed away elsewhere: unused lambdas still moved the stream-K build's code
            // C-area positions filled so far, and the strips of the last finished tile not yet loaded (the area
            // holds C_AREA_SLOTS of its 8; the rest follow once the next tile's first slices are queued).
            unsigned c_pos = 0;
            int pending_strip = OUT_BOXES_PER_CONSUMER, pending_bm = 0, pending_bn = 0;
            auto load_c_strip = [&](int strip, int tm, int tn) {
                const int cs = c_pos % C_AREA_SLOTS;
                mbar_wait(c_empty0 + 8 * cs, ((c_pos / C_AREA_SLOTS) & 1) ^ 1);
                int bytes = 0;
                for (int c = 0; c < CONSUMERS; ++c)
                    bytes += use_c && box_in_d(c * OUT_BOXES_PER_CONSUMER + strip, M - tm, N - tn) ? OUT_BOX_BYTES : 0;
                mbar_arrive_expect_tx(c_full0 + 8 * cs, bytes);
                for (int c = 0; c < CONSUMERS; ++c) {
                    const int box = c * OUT_BOXES_PER_CONSUMER + strip;
                    if (use_c && box_in_d(box, M - tm, N - tn))
                        tma_load_2d(c_area + cs * C_AREA_SLOT_BYTES + c * OUT_BOX_BYTES, &map_c, tn + box_col(box),
                                    tm + box_row(box), c_full0 + 8 * cs);
                }
                ++c_pos;
            };
            auto load_pending_c = [&]() {
                for (; pending_strip < OUT_BOXES_PER_CONSUMER; ++pending_strip)
                    load_c_strip(pending_strip, pending_bm, pending_bn);
            };
#endif
#if PERSISTENT_EPILOGUE == 6
            // C slot o of the tile at (tm, tn) into the next ring position (EPILOGUE 4's strips).
            auto load_c_slot = [&](int o, int tm, int tn) {
                const int s = pos % STAGES;
                mbar_wait(empty0 + 8 * s, ((pos / STAGES) & 1) ^ 1);
                load_c_strips(&map_c, smem_base + s * STAGE_BYTES, full0 + 8 * s, o, M, N, tm, tn, true);
                ++pos;
            };
#endif
            for (Work work = schedule.first(); schedule.more(work); work = schedule.next(work)) {
                int bm, bn;
                order.origin(work.unit, rank, bm, bn);
                // B boxes wholly right of N are not loaded (their stale columns are never stored).
                const int b_boxes = min(B_BOXES, (N - bn + B_BOX_N - 1) / B_BOX_N);
#if PERSISTENT_EPILOGUE == 6
                const int c_how = c_mode(work.finishes, alpha, beta);
                const int prefetch_at =
                    work.finishes ? max(work.k_begin, c_slot_slice(0, work.k_begin, work.k_end) - C_PREFETCH_SLICES) : -1;
#else
                const int prefetch_at = work.finishes ? max(work.k_begin, work.k_end - C_PREFETCH_SLICES) : -1;
#endif
                for (int t = work.k_begin; t < work.k_end; ++t, ++pos) {
#if PERSISTENT_EPILOGUE == 6
                    if (c_how == 1)
                        for (int o = 0; o < C_SLOTS; ++o)
                            if (c_slot_slice(o, work.k_begin, work.k_end) == t) load_c_slot(o, bm, bn);
#endif
                    // This slice's stage is free only once the consumers, done with the last tile's C, have run
                    // this tile's first slice: the C strips they are waiting for go first.
#if PERSISTENT_EPILOGUE == 5
                    if (t - work.k_begin == STAGES) load_pending_c();
#endif
                    const int s = pos % STAGES;
                    mbar_wait(empty0 + 8 * s, ((pos / STAGES) & 1) ^ 1);
                    const unsigned full = full0 + 8 * s;
                    mbar_arrive_expect_tx(full, A_STAGE_BYTES + b_boxes * B_BOX_BYTES);
                    const unsigned dst = smem_base + s * STAGE_BYTES;
                    if constexpr (PERSISTENT_L2_HINTS >= 2)
                        tma_load_2d_hint(dst, &map_a, t * BK, bm, full, l2_evict_last_policy());
                    else
                        tma_load_2d(dst, &map_a, t * BK, bm, full);
                    for (int j = 0; j < b_boxes; ++j) {
                        const unsigned b_dst = dst + A_STAGE_BYTES + j * B_BOX_BYTES;
                        if constexpr (CLUSTER > 1) {
                            if (j % CLUSTER == static_cast<int>(rank))
                                tma_load_2d_multicast(b_dst, &map_b, bn + j * B_BOX_N, t * BK, full,
                                                      (unsigned short)((1u << CLUSTER) - 1));
                        } else if constexpr (PERSISTENT_L2_HINTS >= 2) {
                            tma_load_2d_hint(b_dst, &map_b, bn + j * B_BOX_N, t * BK, full, l2_evict_last_policy());
                        } else {
                            tma_load_2d(b_dst, &map_b, bn + j * B_BOX_N, t * BK, full);
                        }
                    }
                    // A contribution runs before the piece that finishes a tile: that tile's C goes to L2 now.
                    if (STREAMK && t == work.k_begin && !work.finishes && use_c) {
                        const Work finishing = schedule.next(work);
                        if (schedule.more(finishing) && finishing.finishes) {
                            int fm, fn;
                            order.origin(finishing.unit, rank, fm, fn);
                            for (int box = 0; box < OUT_BOXES; ++box)
                                if (box_in_d(box, M - fm, N - fn)) tma_prefetch_l2_2d(&map_c, fn + box_col(box), fm + box_row(box));
                        }
                    }
                    if (t == prefetch_at && use_c) {
                        for (int box = 0; box < OUT_BOXES; ++box)
                            if (box_in_d(box, M - bm, N - bn)) tma_prefetch_l2_2d(&map_c, bn + box_col(box), bm + box_row(box));
                    }
                }
#if PERSISTENT_EPILOGUE == 6
                if (c_how == 2)
                    for (int o = 0; o < C_SLOTS; ++o) load_c_slot(o, bm, bn);
                continue;
#endif
#if PERSISTENT_EPILOGUE == 5
                load_pending_c();
                if (PERSISTENT_NO_EPILOGUE || !work.finishes) continue;
                for (int strip = 0; strip < min(C_AREA_SLOTS, OUT_BOXES_PER_CONSUMER); ++strip) load_c_strip(strip, bm, bn);
                pending_strip = min(C_AREA_SLOTS, OUT_BOXES_PER_CONSUMER), pending_bm = bm, pending_bn = bn;
                continue;
#endif
                if (PERSISTENT_NO_EPILOGUE || !C_IN_RING || !work.finishes) continue;
                // The tile's C into the next C_SLOTS ring slots (OUT_BOXES_PER_SLOT boxes each), or, with
                // beta == 0 or boxes outside D, only the signal: the consumers wait for these slots as for slices.
                for (int o = 0; o < C_SLOTS; ++o, ++pos) {
                    const int s = pos % STAGES;
                    mbar_wait(empty0 + 8 * s, ((pos / STAGES) & 1) ^ 1);
                    const unsigned full = full0 + 8 * s;
                    if constexpr (EPILOGUE == 4) {
                        load_c_strips(&map_c, smem_base + s * STAGE_BYTES, full, o, M, N, bm, bn, use_c);
                        continue;
                    }
                    const int first = o * OUT_BOXES_PER_SLOT;
                    const int last = min(first + OUT_BOXES_PER_SLOT, OUT_BOXES);
                    int bytes = 0;
                    for (int box = first; box < last; ++box) bytes += use_c && box_in_d(box, M - bm, N - bn) ? OUT_BOX_BYTES : 0;
                    mbar_arrive_expect_tx(full, bytes);
                    for (int box = first; box < last; ++box) {
                        if (use_c && box_in_d(box, M - bm, N - bn))
                            tma_load_2d(smem_base + s * STAGE_BYTES + (box - first) * OUT_BOX_BYTES, &map_c,
                                        bn + box_col(box), bm + box_row(box), full);
                    }
                }
            }
#if PERSISTENT_EPILOGUE == 5
            load_pending_c();  // the last tile's strips
#endif
        }
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(CONSUMER_REGS));
        const unsigned rank = CLUSTER > 1 ? cluster_rank() : 0;
        const TileOrder<CLUSTER> order(M, N);
        const Schedule<CLUSTER> schedule(order, K);
        const bool use_c = beta != 0.0f;
        const int consumer = group - 1;
        const int warp = (tid / 32) % 4;  // warp within the warp group: rows 16*warp .. +15 of its 64
        const int lane = tid % 32;
        const bool storer = warp == 0 && lane == 0;
        const int first_box = consumer * OUT_BOXES_PER_CONSUMER;
        // Accumulator layout of m64nN (per warp as mma.sync's m16n8): for each 8-column chunk j the lane holds
        // (row lane/4, columns 8j + 2*(lane%4) + {0,1}) in d[4j], d[4j+1], and the same columns 8 rows lower in
        // d[4j+2], d[4j+3]. In a box (64 rows of 128 bytes, 128-byte swizzled) row r's 16-byte chunk q sits at
        // r*128 + 16*(q ^ (r % 8)); here r % 8 == lane / 4.
        const int row_in_box = warp * 16 + lane / 4;

#if PERSISTENT_FAST_DESC
        // The low words of slot 0's first descriptors (start address >> 4 in bits 0-13: shared addresses stay under
        // 2^18, so adding a slot's or a k-step's offset never carries out of the field); the high words are constants.
        const unsigned desc_a_lo =
            opaque(static_cast<unsigned>(make_desc(smem_base + consumer * A_CONSUMER_BYTES, 16, 1024)));
        const unsigned desc_b_lo = opaque(static_cast<unsigned>(make_desc(smem_base + A_STAGE_BYTES, B_BOX_BYTES, 1024)));
        constexpr unsigned long long DESC_HI = make_desc(0, 0, 1024) & ~0xFFFFFFFFull;  // sbo 1024, 128-byte swizzle
#endif
#if PERSISTENT_PINNED_BARS
        const unsigned full_ring = opaque(full0), empty_ring = opaque(empty0);
#else
        const unsigned full_ring = full0, empty_ring = empty0;
#endif
        unsigned pos = 0;         // ring positions consumed so far, as the producer counts them
        int held_c = -1;          // ring position of the previous tile's first C slot until its D stores are read
        unsigned c_taken = 0;     // EPILOGUE 5: C-area positions consumed so far, as the producer counts them
        float d[ACC];
        for (Work work = schedule.first(); schedule.more(work); work = schedule.next(work)) {
            const int unit = work.unit;
            const int slices = work.k_end - work.k_begin;
            const int release_at = min(slices - 1, C_RELEASE_SLICE);
#pragma unroll
            for (int i = 0; i < ACC; ++i) d[i] = 0.0f;
#if PERSISTENT_EPILOGUE == 6
            const int c_how = c_mode(work.finishes, alpha, beta);
            const float c_ratio = c_how == 1 ? beta / alpha : 0.0f;
            // One comparison a slice: the loop's path from one slice's wgmmas to the next is what the tensor cores
            // wait on (a first build that tested every slot at every slice was 5 % slower at 8192^3).
            int c_next_slot = c_how == 1 ? 0 : C_SLOTS;
            int c_next = c_how == 1 ? c_slot_slice(0, work.k_begin, work.k_end) - work.k_begin : -1;
#endif
            for (int t = 0; t < slices; ++t, ++pos) {
#if PERSISTENT_EPILOGUE == 6
                if (__builtin_expect(t == c_next, 0)) {
                    do {
                        add_c_slot_at<CLUSTER>(c_next_slot, d, pos, consumer, row_in_box, lane, smem_base, full0,
                                               empty0, 1.0f, c_ratio);
                        ++c_next_slot;
                        c_next = c_next_slot < C_SLOTS ? c_slot_slice(c_next_slot, work.k_begin, work.k_end) - work.k_begin : -1;
                    } while (t == c_next);
                }
#endif
                const int s = pos % STAGES;
                if (!PERSISTENT_EARLY_WAIT || t == 0) mbar_wait(full_ring + 8 * s, (pos / STAGES) & 1);
#if !PERSISTENT_FAST_DESC
                const unsigned a_tile = smem_base + s * STAGE_BYTES + consumer * A_CONSUMER_BYTES;
#endif
                const unsigned b_tile = smem_base + s * STAGE_BYTES + A_STAGE_BYTES;
                fence_accumulators(d);
                wgmma_fence();
#if PERSISTENT_FAST_DESC
                const unsigned slot_desc = s * (STAGE_BYTES >> 4);
#endif
#pragma unroll
                for (int kk = 0; kk < BK / 16; ++kk) {
#if PERSISTENT_FAST_DESC
                    const unsigned long long da = DESC_HI | (desc_a_lo + slot_desc + kk * (32 >> 4));
                    const unsigned long long db = DESC_HI | (desc_b_lo + slot_desc + kk * (16 * 128 >> 4));
#else
                    // A, K-major: 16 halves = 32 bytes along the swizzled rows; 8-row groups 8 rows apart.
                    const unsigned long long da = BK == 32 ? make_desc_sw64(a_tile + kk * 32, 512)
                                                           : make_desc(a_tile + kk * 32, 16, 1024);
                    // B, N-major: 16 K rows of 128 bytes further down each box; boxes B_BOX_BYTES apart.
                    const unsigned long long db = make_desc(b_tile + kk * 16 * 128, B_BOX_BYTES, 1024);
#endif
                    wgmma_m64n256k16<1, IN>(*reinterpret_cast<float(*)[128]>(d), da, db);
                    if constexpr (BN == 320) {
                        // Columns 256..319: B's fifth box.
                        const unsigned long long db4 = make_desc(b_tile + 4 * B_BOX_BYTES + kk * 16 * 128, B_BOX_BYTES, 1024);
                        wgmma_m64n64k16<1, IN>(*reinterpret_cast<float(*)[32]>(d + 128), da, db4);
                    }
                }
                wgmma_commit();
                if (PERSISTENT_EARLY_WAIT && t + 1 < slices)
                    mbar_wait(full_ring + 8 * ((pos + 1) % STAGES), ((pos + 1) / STAGES) & 1);
                // Let the last WGMMA_IN_FLIGHT slices' wgmmas run on; the one before them is finished after this.
                wgmma_wait<WGMMA_IN_FLIGHT>();
                fence_accumulators(d);
                if (t >= WGMMA_IN_FLIGHT && lane == 0)
                    release_stage<CLUSTER>(empty_ring + 8 * ((pos - WGMMA_IN_FLIGHT) % STAGES), 1);
#if PERSISTENT_SLICE_SPIN > 0
                {
                    const long long spin_start = clock64();
                    while (clock64() - spin_start < PERSISTENT_SLICE_SPIN) {
                    }
                }
#endif
                if (t == release_at && held_c >= 0 && storer) {
                    // The previous tile's D stores have read its C slots: they may take the next slices.
                    asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                    for (int o = 0; o < C_SLOTS; ++o) release_stage<CLUSTER>(empty0 + 8 * ((held_c + o) % STAGES), 4);
                }
            }
            wgmma_wait<0>();
            fence_accumulators(d);
            if (lane == 0) {
                for (int i = min(WGMMA_IN_FLIGHT, slices); i >= 1; --i)
                    release_stage<CLUSTER>(empty0 + 8 * ((pos - i) % STAGES), 1);
            }
            if (PERSISTENT_NO_EPILOGUE) {
                // Keeps every accumulator live (never taken with the measured beta): unused wgmma results are
                // otherwise dropped by ptxas, and the main loop would run a quarter of its multiplies.
                if (beta == 1234.5f) {
                    float sum = 0.0f;
#pragma unroll
                    for (int i = 0; i < ACC; ++i) sum += d[i];
                    st_shared_f2(smem_base, sum, sum);
                }
                continue;
            }
            if constexpr (!C_IN_RING && !C_AREA) {
                int bm, bn;
                order.origin(unit, rank, bm, bn);
                direct_epilogue(d, c_ptr, d_ptr, &map_d, M, N, bm, bn, consumer, warp, lane, alpha, beta, use_c,
                                smem_base + STAGES * STAGE_BYTES + consumer * STAGING_BOXES * OUT_BOX_BYTES);
                continue;
            }
#if PERSISTENT_STREAMK
            if (!work.finishes || work.k_begin > 0) {
                const int ti = tid % 128;
                if (!work.finishes) {
                    // A contribution: this piece's sums go to this block's slot, and its flag says they are there
                    // (slots by block index: in a cluster both blocks run the same pieces of their own tiles).
                    float4* slot = tail_slot(schedule.block() * CLUSTER + rank, consumer);
#pragma unroll
                    for (int q = 0; q < 32; ++q)
                        __stcg(slot + q * 128 + ti, make_float4(d[4 * q], d[4 * q + 1], d[4 * q + 2], d[4 * q + 3]));
                    consumer_sync(consumer);
                    if (ti == 0)
                        asm volatile("fence.acq_rel.gpu;\nst.relaxed.gpu.global.u32 [%0], 1;\n"
                                     ::"l"(tail_flag(schedule.block() * CLUSTER + rank, consumer)) : "memory");
                    continue;
                }
                // The tile's earlier slices were run by the blocks before this one: add their sums, in block order.
                for (int b = schedule.first_contributor(unit); b < schedule.block(); ++b) {
                    unsigned* flag = tail_flag(b * CLUSTER + rank, consumer);
                    if (ti == 0) {
                        unsigned ready = 0;
                        do {
                            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(ready) : "l"(flag) : "memory");
                        } while (ready == 0);
                        asm volatile("st.relaxed.gpu.global.u32 [%0], 0;\n" ::"l"(flag) : "memory");
                    }
                    consumer_sync(consumer);
                    const float4* slot = tail_slot(b * CLUSTER + rank, consumer);
#pragma unroll
                    for (int q = 0; q < 32; ++q) {
                        const float4 v = __ldcg(slot + q * 128 + ti);
                        d[4 * q] += v.x;
                        d[4 * q + 1] += v.y;
                        d[4 * q + 2] += v.z;
                        d[4 * q + 3] += v.w;
                    }
                }
            }
#endif
            // alpha, or with EPILOGUE 6's C added after the main loop, 1: what the accumulators are scaled by into D.
            float d_scale = alpha;
#if PERSISTENT_EPILOGUE == 6
            if (c_how == 2) {
#pragma unroll
                for (int o = 0; o < C_SLOTS; ++o)
                    add_c_slot_at<CLUSTER>(o, d, pos, consumer, row_in_box, lane, smem_base, full0, empty0, alpha, beta);
                d_scale = 1.0f;
            }
#endif
            if constexpr (EPILOGUE >= 3) {
                // EPILOGUE 5: C's strip b for both consumers is in C-area slot c_taken + b, not in the ring.
                // EPILOGUE 6: C is in the accumulators already, and no C slot follows the tile's slices.
                const int c_pos = static_cast<int>(pos);
                if constexpr (!C_AREA && !C_IN_LOOP) pos += C_SLOTS;
                const bool blend_c = use_c && !C_IN_LOOP;
                int bm, bn;
                order.origin(unit, rank, bm, bn);
                const unsigned staging = smem_base + STAGES * STAGE_BYTES + consumer * STAGING_BOXES * OUT_BOX_BYTES;
#pragma unroll
                for (int b = 0; b < OUT_BOXES_PER_CONSUMER; ++b) {
                    const int box = first_box + b;
                    const unsigned strip_pos = c_taken + b;
                    const int cs = strip_pos % C_AREA_SLOTS;
                    const int slot_pos = c_pos + (EPILOGUE == 4 ? strip_slot(box) : box / OUT_BOXES_PER_SLOT);
                    unsigned box_addr = 0;
                    if constexpr (C_AREA) {
                        mbar_wait(c_full0 + 8 * cs, (strip_pos / C_AREA_SLOTS) & 1);
                        box_addr = c_area + cs * C_AREA_SLOT_BYTES + consumer * OUT_BOX_BYTES;
                    } else if constexpr (!C_IN_LOOP) {
                        mbar_wait(full0 + 8 * (slot_pos % STAGES), (slot_pos / STAGES) & 1);
                        box_addr = smem_base + (slot_pos % STAGES) * STAGE_BYTES +
                                   (EPILOGUE == 4 ? strip_index(box) : box % OUT_BOXES_PER_SLOT) * OUT_BOX_BYTES;
                    }
                    const unsigned buf = staging + (b % STAGING_BOXES) * OUT_BOX_BYTES;
#if PERSISTENT_C_LOADS_FIRST
                    float cv[16];
                    if (blend_c) {
#pragma unroll
                        for (int q = 0; q < 8; ++q) {
                            const int j = 4 * b + q / 2, half = q % 2;
                            ld_shared_f2(box_addr + (row_in_box + half * 8) * 128 + box_in_row(j, lane), cv[2 * q],
                                         cv[2 * q + 1]);
                        }
                    }
                    if (!PERSISTENT_ONE_BARRIER) acquire_staging(storer, consumer);
#pragma unroll
                    for (int q = 0; q < 8; ++q) {
                        const int j = 4 * b + q / 2, half = q % 2;
                        float x = d_scale * d[4 * j + 2 * half];
                        float y = d_scale * d[4 * j + 2 * half + 1];
                        if (blend_c) {
                            x = fmaf(beta, cv[2 * q], x);
                            y = fmaf(beta, cv[2 * q + 1], y);
                        }
                        st_shared_f2(buf + (row_in_box + half * 8) * 128 + box_in_row(j, lane), x, y);
                    }
#else
                    if (!PERSISTENT_ONE_BARRIER) acquire_staging(storer, consumer);
#pragma unroll
                    for (int j = 4 * b; j < 4 * b + 4; ++j) {
                        const unsigned in_row = box_in_row(j, lane);
#pragma unroll
                        for (int half = 0; half < 2; ++half) {
                            const unsigned offset = (row_in_box + half * 8) * 128 + in_row;
                            float x = d_scale * d[4 * j + 2 * half];
                            float y = d_scale * d[4 * j + 2 * half + 1];
                            if (blend_c) {
                                float cx, cy;
                                ld_shared_f2(box_addr + offset, cx, cy);
                                x = fmaf(beta, cx, x);
                                y = fmaf(beta, cy, y);
                            }
                            st_shared_f2(buf + offset, x, y);
                        }
                    }
#endif
                    if (PERSISTENT_ONE_BARRIER) {
                        // Store b - 1 has read the staging box that box b + 1 writes before anyone passes here.
                        asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
                        if (storer) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
                        consumer_sync(consumer);
                    } else {
                        publish_to_tma(consumer);
                    }
                    if (storer) {
                        if (!PERSISTENT_NO_STORE && box_in_d(box, M - bm, N - bn)) {
                            if constexpr (PERSISTENT_L2_HINTS >= 1)
                                tma_store_2d_hint(&map_d, bn + box_col(box), bm + box_row(box), buf,
                                                  l2_evict_first_policy());
                            else
                                tma_store_2d(&map_d, bn + box_col(box), bm + box_row(box), buf);
                        }
                        asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
                        // This consumer's last box of a slot has been read (the barrier above): the slot goes back.
                        if (C_AREA)
                            release_stage<CLUSTER>(c_empty0 + 8 * cs, 4);
                        else if (EPILOGUE == 4 && (b % STRIPS_PER_SLOT == STRIPS_PER_SLOT - 1 || b == OUT_BOXES_PER_CONSUMER - 1))
                            release_stage<CLUSTER>(empty0 + 8 * ((c_pos + strip_slot(box)) % STAGES), 4);
                    }
                }
                // Every thread of this consumer has read its C boxes (the last barrier): the slots go back now.
                if (EPILOGUE == 3 && storer)
                    for (int o = 0; o < C_SLOTS; ++o) release_stage<CLUSTER>(empty0 + 8 * ((c_pos + o) % STAGES), 4);
                if constexpr (C_AREA) c_taken += OUT_BOXES_PER_CONSUMER;
                continue;
            }
            held_c = static_cast<int>(pos);
            pos += C_SLOTS;

            // Epilogue: alpha * acc + beta * C in place in this consumer's boxes of the C slots, then TMA stores
            // them to D; the slots are released a slice or two into the next tile, once TMA has read them.
            int bm, bn;
            order.origin(unit, rank, bm, bn);
#pragma unroll
            for (int j = 0; j < BN / 8; ++j) {
                const int box = first_box + j / 4;
                const int slot_pos = held_c + box / OUT_BOXES_PER_SLOT;
                if (j % 4 == 0) mbar_wait(full0 + 8 * (slot_pos % STAGES), (slot_pos / STAGES) & 1);
                const unsigned box_addr =
                    smem_base + (slot_pos % STAGES) * STAGE_BYTES + (box % OUT_BOXES_PER_SLOT) * OUT_BOX_BYTES;
                const unsigned in_row = box_in_row(j, lane);
#pragma unroll
                for (int half = 0; half < 2; ++half) {
                    const unsigned addr = box_addr + (row_in_box + half * 8) * 128 + in_row;
                    float x = alpha * d[4 * j + 2 * half];
                    float y = alpha * d[4 * j + 2 * half + 1];
                    if (use_c) {
                        float cx, cy;
                        ld_shared_f2(addr, cx, cy);
                        x = fmaf(beta, cx, x);
                        y = fmaf(beta, cy, y);
                    }
                    st_shared_f2(addr, x, y);
                }
            }
            publish_to_tma(consumer);
            if (storer) {
                for (int box = first_box; box < first_box + OUT_BOXES_PER_CONSUMER; ++box) {
                    if (!PERSISTENT_NO_STORE && box_in_d(box, M - bm, N - bn)) {
                        const int slot_pos = held_c + box / OUT_BOXES_PER_SLOT;
                        tma_store_2d(&map_d, bn + box_col(box), bm + box_row(box),
                                     smem_base + (slot_pos % STAGES) * STAGE_BYTES +
                                         (box % OUT_BOXES_PER_SLOT) * OUT_BOX_BYTES);
                    }
                }
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
        // Only shared memory must outlive the reads: the global writes finish after this block has exited.
        if (storer) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
    }
    // A block must not exit while the other block of its cluster may still arrive on its barriers.
    if constexpr (CLUSTER > 1) cluster_sync();
}

}  // namespace wgmma_persistent
