// SPDX-License-Identifier: Apache-2.0
// Reset and fault handling for QEMU's Cortex-M4 (mps2-an386), Cortex-M7 (mps2-an500) and Cortex-M55
// (mps3-an547) boards: vector table, .data copy, .bss clear, FPU enable, static constructors, main() with the
// semihosting command line as arguments, and an exit code for every way the program can end.
#include <stdint.h>
#include <string.h>

#include "semihosting.h"

extern uint32_t __data_load[], __data_start[], __data_end[];  // from the linker script
extern uint32_t __bss_start[], __bss_end[];
extern uint32_t __stack_top[];
extern void __libc_init_array(void);
extern int main(int argc, char** argv);
extern void exit(int code);

void Reset_Handler(void) __attribute__((noreturn));
void _init(void);
void _fini(void);

// newlib's __libc_init_array calls these, and C++ static destructors register against __dso_handle (crti,
// crtbegin and crtn are not linked: this file is the start-up code).
void _init(void) {}
void _fini(void) {}
void* __dso_handle = &__dso_handle;
void Fault_Handler(void);

// The first two entries are the initial stack pointer and the reset vector; every exception leads to
// Fault_Handler, which reports it and exits with code 3 (a hung firmware would never exit).
__attribute__((section(".vectors"), used)) void (*const g_vectors[16])(void) = {
    (void (*)(void))__stack_top, Reset_Handler, Fault_Handler, Fault_Handler, Fault_Handler,
    Fault_Handler, Fault_Handler, 0, 0, 0, 0, Fault_Handler, Fault_Handler, 0, Fault_Handler, Fault_Handler};

void Fault_Handler(void) {
  uint32_t ipsr;
  __asm__ volatile("mrs %0, ipsr" : "=r"(ipsr));
  static const char kMessage[] = "\n*** Cortex-M exception ";
  semihosting_write(kMessage, sizeof(kMessage) - 1);
  char digits[4] = {(char)('0' + ipsr / 10 % 10), (char)('0' + ipsr % 10), '\n', 0};
  semihosting_write(digits, 3);
  semihosting_exit(3);
}

#define kMaxArgs 64
static char g_command_line[4096];
static char* g_argv[kMaxArgs + 1];

// Splits the command line at spaces; single quotes group (enough for --gtest_filter=... arguments).
static int SplitCommandLine(void) {
  int argc = 0;
  const int length = semihosting_command_line(g_command_line, sizeof(g_command_line) - 1);
  if (length <= 0) {
    static char program[] = "firmware";
    g_argv[0] = program;
    return 1;
  }
  g_command_line[length] = 0;
  char* p = g_command_line;
  while (*p != 0 && argc < kMaxArgs) {
    while (*p == ' ') ++p;
    if (*p == 0) break;
    char* out = p;
    g_argv[argc++] = out;
    int quoted = 0;
    while (*p != 0 && (quoted || *p != ' ')) {
      if (*p == '\'') {
        quoted = !quoted;
      } else {
        *out++ = *p;
      }
      ++p;
    }
    if (*p != 0) ++p;
    *out = 0;
  }
  g_argv[argc] = 0;
  return argc;
}

void Reset_Handler(void) {
  memcpy(__data_start, __data_load, (size_t)((char*)__data_end - (char*)__data_start));
  memset(__bss_start, 0, (size_t)((char*)__bss_end - (char*)__bss_start));
#if defined(__ARM_FP)
  // CPACR: full access to CP10 and CP11, or the first floating-point instruction faults.
  volatile uint32_t* const cpacr = (volatile uint32_t*)0xE000ED88u;
  *cpacr |= (0xFu << 20);
  __asm__ volatile("dsb\n isb" ::: "memory");
#endif
  __libc_init_array();
  const int argc = SplitCommandLine();
  exit(main(argc, g_argv));
  for (;;) {
  }
}
