// SPDX-License-Identifier: Apache-2.0
// Arm semihosting for the QEMU boards: console output, the command line, the time, and the exit code.
#ifndef EDGEATTN_PLATFORMS_CORTEX_M_SEMIHOSTING_H_
#define EDGEATTN_PLATFORMS_CORTEX_M_SEMIHOSTING_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

// Writes len bytes to the host's console.
void semihosting_write(const char* data, size_t len);
// Copies the command line QEMU was given (-semihosting-config ...,arg=...) into buffer; returns its length, or
// -1 if there is none.
int semihosting_command_line(char* buffer, size_t size);
// Seconds since 1970 on the host.
long semihosting_time(void);
// Ends the emulation with this exit code (SYS_EXIT_EXTENDED: QEMU exits with exactly this code).
void semihosting_exit(int code) __attribute__((noreturn));

#ifdef __cplusplus
}
#endif

#endif  // EDGEATTN_PLATFORMS_CORTEX_M_SEMIHOSTING_H_
