// SPDX-License-Identifier: Apache-2.0
// The attention paths by name (docs/performance.md, The attention paths). Internal: the dispatcher's choice,
// and a test-only hook that reports it.
#ifndef EDGEATTN_LIB_ATTENTION_ATTENTION_PATH_H_
#define EDGEATTN_LIB_ATTENTION_ATTENTION_PATH_H_

#include "edgeattn/attention.h"

namespace edgeattn {
namespace internal {

enum class AttentionPath { kRow, kTiled, kDecode, kSmall, kPackedSmall };

// "row", "tiled", "decode", "small", "packed_small": the names of the files, tests, benchmark rows and doc
// sections of each path.
constexpr const char* AttentionPathName(AttentionPath path) {
  return path == AttentionPath::kRow      ? "row"
         : path == AttentionPath::kTiled  ? "tiled"
         : path == AttentionPath::kDecode ? "decode"
         : path == AttentionPath::kSmall  ? "small"
                                          : "packed_small";
}

// For tests and benchmarks only: the path Attention takes for desc on the target the dispatcher selects now
// (forced targets included). An invalid descriptor, which Attention rejects, answers kRow.
AttentionPath AttentionPathForTest(const AttentionDesc& desc) noexcept;

}  // namespace internal
}  // namespace edgeattn

#endif  // EDGEATTN_LIB_ATTENTION_ATTENTION_PATH_H_
