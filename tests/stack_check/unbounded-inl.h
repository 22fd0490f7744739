// SPDX-License-Identifier: Apache-2.0
// Not compiled: the form check_stack_buffers.cmake must refuse (a one-vector buffer sized by HWY_MAX_BYTES).
template <class D, typename T>
void StoreTailUnbounded(D d, T* p) {
  HWY_ALIGN T buf[HWY_MAX_BYTES / sizeof(T)];
  (void)d;
  (void)p;
  (void)buf;
}
