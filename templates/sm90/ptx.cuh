// flexjit: the Hopper (sm_90a) instructions the sm90 family uses, as inline PTX so that NVRTC
// needs no CUDA or CUTLASS headers: mbarriers, the bulk tensor copy (TMA), wgmma fences and
// shared-memory matrix descriptors, register reallocation and named barriers.
//
// Compiled by nvcc and NVRTC for sm_90a; includes nothing but the common helpers.
#pragma once

#include "common/attention_common.cuh"

namespace flexjit {
namespace sm90 {

// ---------------------------------------------------------------------------------------------
// mbarrier: a shared-memory barrier that completes a phase when `count` arrivals and the expected
// transaction bytes (TMA) have both arrived. Waiters name the parity of the phase they wait for.
__device__ __forceinline__ void mbarrier_init(unsigned bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// Makes the initialised barriers visible to the copy engine and the other threads (then a CTA
// barrier).
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
__device__ __forceinline__ void mbarrier_arrive(unsigned bar) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.shared::cta.b64 state, [%0];\n}\n" ::"r"(bar) : "memory");
}
// One arrival that also announces `bytes` of TMA traffic for this phase.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned bar, unsigned bytes) {
  asm volatile("{\n .reg .b64 state;\n mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n}\n" ::"r"(bar),
               "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbarrier_wait(unsigned bar, unsigned parity) {
  asm volatile(
      "{\n"
      " .reg .pred done;\n"
      " wait_%=:\n"
      " mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      " @!done bra wait_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// One arrival on `bar` once every cp.async this thread issued before has landed (without raising
// the phase's expected count: the barrier's init count includes it): a producer that gathers rows
// with cp.async hands them over as TMA would.
__device__ __forceinline__ void cp_async_mbarrier_arrive(unsigned bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(bar) : "memory");
}

// An L2 policy that keeps the lines it tags past others (evict_last) or lets them go first
// (evict_first), for the cache-hinted copy below.
__device__ __forceinline__ unsigned long long l2_policy_evict_last() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}
__device__ __forceinline__ unsigned long long l2_policy_evict_first() {
  unsigned long long policy;
  asm volatile("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;\n" : "=l"(policy));
  return policy;
}
// cp_async_16 under an L2 policy, asking L2 to fetch the 256 bytes around the source: a gathered
// row's 16-byte pieces are read by neighbouring threads at once, and one 256-byte request from
// memory serves them.
__device__ __forceinline__ void cp_async_16_prefetch_256(unsigned dst, const void* src, bool pred,
                                                         unsigned long long policy) {
  const int src_bytes = pred ? 16 : 0;
  asm volatile("cp.async.cg.shared.global.L2::cache_hint.L2::256B [%0], [%1], 16, %2, %3;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes), "l"(policy)
               : "memory");
}

// Waits up to `ns` nanoseconds (a hint to the hardware) for the phase of that parity; whether it
// completed. The thread sleeps meanwhile and wakes when the phase completes. A parity names one of
// two phases, so a waiter must never be more than one phase from the barrier's.
__device__ __forceinline__ bool mbarrier_try(unsigned bar, unsigned parity, unsigned ns) {
  unsigned done;
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2, %3;\n"
      " selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity), "r"(ns)
      : "memory");
  return done != 0;
}
// Whether the phase of that parity has completed, without waiting: for a barrier polled beside
// another, where a sleep on one would miss the other's completion.
__device__ __forceinline__ bool mbarrier_test(unsigned bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      " .reg .pred p;\n"
      " mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      " selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

// ---------------------------------------------------------------------------------------------
// TMA: a box of a 4-D tensor (innermost coordinate first) into shared memory, completing on an
// mbarrier. `map` is the generic address of a __grid_constant__ CUtensorMap (TmaDescriptor).
// Out-of-range rows of the box are zero-filled by the copy engine.
__device__ __forceinline__ void tma_load_4d(unsigned dst, const void* map, unsigned bar, int c0, int c1, int c2,
                                            int c3) {
  asm volatile(
      "cp.async.bulk.tensor.4d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4, %5}], "
      "[%6];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(c3), "r"(bar)
      : "memory");
}
// A contiguous run of `bytes` (a multiple of 16, both addresses 16-byte aligned) from global to
// shared memory by the copy engine, completing on an mbarrier (the backward's lse2 and delta rows).
__device__ __forceinline__ void bulk_load(unsigned dst, const void* src, unsigned bytes, unsigned bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(dst),
               "l"(src), "r"(bytes), "r"(bar)
               : "memory");
}
// dst[i] += src[i] over `bytes` of fp32 (a multiple of 16, both addresses 16-byte aligned),
// added in L2 by the copy engine: the backward's dQ tiles. Each call is committed as a bulk group
// of the calling thread, which alone can wait for it.
__device__ __forceinline__ void bulk_reduce_add_f32(float* dst, unsigned src, unsigned bytes) {
  asm volatile("cp.reduce.async.bulk.global.shared::cta.bulk_group.add.f32 [%0], [%1], %2;\n" ::"l"(dst), "r"(src),
               "r"(bytes)
               : "memory");
  asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
}
// Until at most N of this thread's bulk groups still read their shared memory (the source may be
// rewritten) ...
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// ... or are still in flight at all (their writes to global memory done).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void tma_prefetch_descriptor(const void* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(map)) : "memory");
}

// Orders this thread's ordinary shared-memory stores before reads by the async proxy (wgmma
// operands from shared memory, TMA stores): after writing an operand, before the barrier.
__device__ __forceinline__ void fence_async_shared() { asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory"); }
// Orders the async proxy's completed writes to global memory (bulk reduce-adds) before this
// thread's later ordinary accesses and fences.
__device__ __forceinline__ void fence_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }

// ---------------------------------------------------------------------------------------------
// wgmma ordering: fence before the first wgmma that reads registers written by ordinary code,
// commit the issued wgmmas as a group, wait until at most N groups are in flight.
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}

// A shared-memory matrix descriptor for the 128-byte swizzle (the layout TMA writes with
// CU_TENSOR_MAP_SWIZZLE_128B: rows of 128 bytes, 16-byte chunk c of row r stored at chunk
// c ^ (r % 8), tiles 1024-byte aligned), or with swizzle_bytes = 64 the 64-byte one (rows of 64
// bytes, 8-row groups of 512). Offsets in bytes:
//   K-major operands (Q, K): `leading` unused, `stride` = 8 rows (1024 or 512: from one 8-row group
//   to the next);
//   N-major B (V): `leading` = from one 64-column block to the next, `stride` = 1024.
__device__ __forceinline__ unsigned long long smem_descriptor(unsigned addr, unsigned leading, unsigned stride,
                                                              int swizzle_bytes = 128) {
  unsigned long long d = 0;
  d |= static_cast<unsigned long long>((addr & 0x3FFFFu) >> 4);
  d |= static_cast<unsigned long long>((leading & 0x3FFFFu) >> 4) << 16;
  d |= static_cast<unsigned long long>((stride & 0x3FFFFu) >> 4) << 32;
  d |= (swizzle_bytes == 128 ? 1ull : 2ull) << 62;  // the layout type: 128- or 64-byte swizzle
  return d;
}

// ---------------------------------------------------------------------------------------------
// Register reallocation between warpgroups (needs a register cap at entry: __launch_bounds__ with
// a minimum of one block per SM).
template <int N>
__device__ __forceinline__ void registers_release() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
template <int N>
__device__ __forceinline__ void registers_claim() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}

// Named barrier `id` (1..15; 0 is __syncthreads) over `threads` threads.
__device__ __forceinline__ void named_barrier_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
// Named barrier `id` over `threads` threads that also ORs their `v`: true for all when any is.
__device__ __forceinline__ bool named_barrier_or(int id, int threads, bool v) {
  unsigned any;
  asm volatile(
      "{\n .reg .pred p, q;\n setp.ne.u32 p, %1, 0;\n bar.red.or.pred q, %2, %3, p;\n selp.u32 %0, 1, 0, q;\n}\n"
      : "=r"(any)
      : "r"(static_cast<unsigned>(v)), "r"(id), "r"(threads)
      : "memory");
  return any != 0;
}
// Arrives at named barrier `id` without waiting: the signal half of a producer/consumer pair.
__device__ __forceinline__ void named_barrier_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// One int in shared memory (the persistent grid's tile slots; ordered by the mbarrier around them).
__device__ __forceinline__ void sts_s32(unsigned addr, int v) {
  asm volatile("st.shared.s32 [%0], %1;\n" ::"r"(addr), "r"(v) : "memory");
}
__device__ __forceinline__ int lds_s32(unsigned addr) {
  int v;
  asm volatile("ld.shared.s32 %0, [%1];\n" : "=r"(v) : "r"(addr) : "memory");
  return v;
}

// One pointer in shared memory (the deterministic backward's dQ records), 8-byte aligned.
__device__ __forceinline__ void sts_ptr(unsigned addr, const void* v) {
  asm volatile("st.shared.u64 [%0], %1;\n" ::"r"(addr), "l"(reinterpret_cast<unsigned long long>(v)) : "memory");
}
template <class T>
__device__ __forceinline__ T* lds_ptr(unsigned addr) {
  unsigned long long v;
  asm volatile("ld.shared.u64 %0, [%1];\n" : "=l"(v) : "r"(addr) : "memory");
  return reinterpret_cast<T*>(v);
}

__device__ __forceinline__ void stg_32(void* ptr, unsigned v) {
  asm volatile("st.global.u32 [%0], %1;\n" ::"l"(ptr), "r"(v) : "memory");
}

}  // namespace sm90
}  // namespace flexjit
