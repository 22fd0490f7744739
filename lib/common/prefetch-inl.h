// SPDX-License-Identifier: Apache-2.0
// When a decode kernel asks for the next block of weight rows ahead of time.
//
// A decode step reads each weight once, from DRAM in a model, several rows of W side by side. Rows of a small
// model are short (a 768-input int8 row is 12 cache lines), too short for this x86 core's hardware prefetchers to
// lock on to before each row ends: int8 768 x 768 read eight rows at a time ran at 8 GB/s of a 23 GB/s DRAM. The
// rows of a block are contiguous, and so is the next block, so a kernel can request the next block's lines in
// address order while it computes this one: 1.1-2.3x on such shapes (docs/performance.md, "Streaming the
// weights"). The lead time is one block.
// Prefetches are hints (they never fault) and the kernels keep them inside W. Off on one-lane targets (the
// microcontrollers) and on Arm, where this was not measured.

#if defined(EDGEATTN_LIB_COMMON_PREFETCH_INL_H_) == defined(HWY_TARGET_TOGGLE)
#ifdef EDGEATTN_LIB_COMMON_PREFETCH_INL_H_
#undef EDGEATTN_LIB_COMMON_PREFETCH_INL_H_
#else
#define EDGEATTN_LIB_COMMON_PREFETCH_INL_H_
#endif

#include <stddef.h>

#include "hwy/cache_control.h"
#include "hwy/highway.h"

HWY_BEFORE_NAMESPACE();
namespace edgeattn {
namespace HWY_NAMESPACE {

// How a kernel that reads `rows` rows of row_bytes side by side fetches the next such block (kNone: not at all,
// on targets where this was not measured): into L1 (kL1: blocks under 4 KB, where one block's compute is too
// short a lead for L2's latency) or into L2 (kL2: into L1 the requests held the L1 miss buffers that the block in
// use needs, and ran 10-40% slower). Rows of any length: on CPU family 25, rows over 3 KB streamed 8-12% faster
// without the requests, but on family 26 the 4 KB rows of a 4096 x 4096 int8 matrix stream 1.3-1.4x faster with
// them (docs/performance.md, "One stream"), and family 26 is the machine this project is measured on.
enum class Ahead { kNone, kL1, kL2 };
HWY_INLINE Ahead NextRowsAhead(size_t row_bytes, size_t rows) {
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
  return row_bytes * rows < 4096 ? Ahead::kL1 : Ahead::kL2;
#else
  (void)row_bytes, (void)rows;
  return Ahead::kNone;
#endif
}

// Into L1 on the targets where NextRowsAhead requests at all: for kernels whose lead time is long at every block
// size (the four-row kernels of lib/linear, which read each block of W once per four rows of x).
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
constexpr Ahead kAheadIntoL1 = Ahead::kL1;
#else
constexpr Ahead kAheadIntoL1 = Ahead::kNone;
#endif

// Requests bytes [from, to) of `next` (to <= next's length), a 64-byte line at a time.
HWY_INLINE void PrefetchBytes(Ahead ahead, const void* next, size_t from, size_t to) {
  const char* p = static_cast<const char*>(next);
#if HWY_ARCH_X86
  if (ahead == Ahead::kL2) {
    for (size_t j = from; j < to; j += 64) _mm_prefetch(p + j, _MM_HINT_T1);
    return;
  }
#endif
  if (ahead != Ahead::kNone) {
    for (size_t j = from; j < to; j += 64) hwy::Prefetch(p + j);
  }
}

// The bytes per step (whole lines) of a block of `bytes` requested a part per step of a loop of `slices` >= 1 steps:
// computed once per loop, outside it (a division).
HWY_INLINE size_t SliceBytes(size_t bytes, size_t slices) { return (bytes / slices + 63) / 64 * 64; }

// Requests step i's part, `slice` bytes from SliceBytes, of the `bytes` bytes at `next`.
HWY_INLINE void PrefetchSlice(Ahead ahead, const void* next, size_t bytes, size_t i, size_t slice) {
  const size_t from = i * slice;
  if (from < bytes) PrefetchBytes(ahead, next, from, from + slice < bytes ? from + slice : bytes);
}

// Matrices of at most this many bytes are taken to be in a cache in a decode loop (a model of 1 MB of weights stays
// in L2): lib/linear's calls of fewer than four rows run eight outputs side by side, which ran faster there than one
// row at a time (64 outputs of 172 inputs: 5.8 against 12.5 ns per output on an Intel Xeon, family 6, model 207;
// larger matrices stream from DRAM or L3, where one row at a time won), and its four-row kernel requests nothing.
constexpr size_t kCachedMatrixBytes = 256 * 1024;

// The bytes of the next block of four W rows (block_bytes) that a four-row kernel requests per four of its block_rows
// rows of x (0: none): on the targets of kAheadIntoL1, for matrices over kCachedMatrixBytes. Smaller ones stay in a
// cache, where the requests and their loop cost 4-10% (docs/performance.md, "Prefill's weights requested ahead").
HWY_INLINE size_t FourRowAheadSlice(size_t matrix_bytes, size_t block_bytes, size_t block_rows) {
  if (kAheadIntoL1 == Ahead::kNone || block_rows < 4 || matrix_bytes <= kCachedMatrixBytes) return 0;
  return SliceBytes(block_bytes, block_rows / 4);
}

// Whether a decode kernel reads W one row at a time, in address order (one sequential stream, the line
// kStreamAheadBytes further on requested into L1 as it goes), rather than eight rows side by side. On the AMD EPYC
// of CPU family 26 this session measured (docs/performance.md, "One stream"), a pure-read harness ran one stream
// at 35 GB/s and, with the request 4 KB ahead, 37-38 GB/s of a 39.8 GB/s DRAM; eight rows side by side, fetched
// ahead as NextRowsAhead says, ran at 23-30 GB/s. Only on x86 SIMD targets (Arm was not measured; the
// microcontrollers' one-lane targets keep the eight-row kernel their stack figures were taken with).
#if HWY_ARCH_X86 && HWY_TARGET != HWY_SCALAR && HWY_TARGET != HWY_EMU128
constexpr bool kStreamOneRow = true;
#else
constexpr bool kStreamOneRow = false;
#endif
constexpr size_t kStreamAheadBytes = 4096;

// Requests the line holding p + kStreamAheadBytes when that is still before `end` (W's end: the requests stay
// inside W).
HWY_INLINE void StreamAhead(const void* p, const void* end) {
  const char* c = static_cast<const char*>(p);
  if (static_cast<size_t>(static_cast<const char*>(end) - c) > kStreamAheadBytes) hwy::Prefetch(c + kStreamAheadBytes);
}

// NOLINTNEXTLINE(google-readability-namespace-comments)
}  // namespace HWY_NAMESPACE
}  // namespace edgeattn
HWY_AFTER_NAMESPACE();

#endif  // include guard toggle
