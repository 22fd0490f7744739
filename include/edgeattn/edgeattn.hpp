// SPDX-License-Identifier: Apache-2.0
// edgeattn C++ API, all kernels. The C API is edgeattn/edgeattn.h.
#ifndef EDGEATTN_EDGEATTN_HPP_
#define EDGEATTN_EDGEATTN_HPP_

#include "edgeattn/activation.h"
#include "edgeattn/attention.h"
#include "edgeattn/dot.h"
#include "edgeattn/exp.h"
#include "edgeattn/kv_cache.h"
#include "edgeattn/linear.h"
#include "edgeattn/linear_q8.h"
#include "edgeattn/norm.h"
#include "edgeattn/positional_encoding.h"
#include "edgeattn/rope.h"
#include "edgeattn/softmax.h"
#include "edgeattn/status.h"

#endif  // EDGEATTN_EDGEATTN_HPP_
