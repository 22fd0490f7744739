/* SPDX-License-Identifier: Apache-2.0 */
/* Prints the SIMD target edgeattn runs on in this process (the flag matrix checks it, docs/platforms.md lists it). */
#include <stdio.h>

#include "edgeattn/edgeattn.h"

int main(void) {
  printf("edgeattn %s simd_target=%s\n", edgeattn_version(), edgeattn_simd_target());
  return 0;
}
