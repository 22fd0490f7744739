// SPDX-License-Identifier: Apache-2.0
// Arm semihosting calls (BKPT 0xAB with the operation in r0 and its parameter block in r1), and the newlib
// system calls built on them, for programs that run on QEMU's Cortex-M boards.
#include "semihosting.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/times.h>

enum {
  kSysOpen = 0x01,
  kSysWrite = 0x05,
  kSysTime = 0x11,
  kSysGetCmdline = 0x15,
  kSysExitExtended = 0x20,
};

static intptr_t SemihostingCall(int operation, void* parameters) {
  register intptr_t r0 __asm__("r0") = operation;
  register void* r1 __asm__("r1") = parameters;
  __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
  return r0;
}

static intptr_t ConsoleHandle(void) {
  static intptr_t handle = -1;  // the console, opened on first use (":tt", mode "w")
  if (handle < 0) {
    uintptr_t parameters[3] = {(uintptr_t)":tt", 4, 3};
    handle = SemihostingCall(kSysOpen, parameters);
  }
  return handle;
}

void semihosting_write(const char* data, size_t len) {
  uintptr_t parameters[3] = {(uintptr_t)ConsoleHandle(), (uintptr_t)data, len};
  SemihostingCall(kSysWrite, parameters);
}

int semihosting_command_line(char* buffer, size_t size) {
  uintptr_t parameters[2] = {(uintptr_t)buffer, size};
  if (SemihostingCall(kSysGetCmdline, parameters) != 0) return -1;
  return (int)parameters[1];
}

long semihosting_time(void) { return (long)SemihostingCall(kSysTime, 0); }

void semihosting_exit(int code) {
  uintptr_t parameters[2] = {0x20026 /* ADP_Stopped_ApplicationExit */, (uintptr_t)code};
  SemihostingCall(kSysExitExtended, parameters);
  for (;;) {
  }
}

// ---- newlib system calls ---------------------------------------------------------------------------------

extern char __heap_start[];  // from the linker script
extern char __heap_end[];

// Writes "<text><value>" to the console without stdio (which may itself need the heap).
static void WriteNumber(const char* text, size_t value) {
  char digits[24];
  size_t i = sizeof(digits);
  do {
    digits[--i] = (char)('0' + value % 10);
    value /= 10;
  } while (value != 0);
  semihosting_write(text, strlen(text));
  semihosting_write(digits + i, sizeof(digits) - i);
}

// malloc grows the heap through here, and fails (returns null, so operator new throws std::bad_alloc and, with
// nothing to catch it, the program aborts with code 134) only when this does: the console says why first, or a
// test that asked for too much would end right after its seed line with no word about the cause.
void* _sbrk(ptrdiff_t increment) {
  static char* top = __heap_start;
  if (increment > __heap_end - top || increment < __heap_start - top) {
    WriteNumber("\n*** out of memory: the heap cannot grow by ", (size_t)increment);
    WriteNumber(" bytes (heap ", (size_t)(__heap_end - __heap_start));
    WriteNumber(" bytes, in use ", (size_t)(top - __heap_start));
    semihosting_write(")\n", 2);
    errno = ENOMEM;
    return (void*)-1;
  }
  char* previous = top;
  top += increment;
  return previous;
}

int _write(int fd, const char* data, int len) {
  (void)fd;  // stdout and stderr both go to the console
  semihosting_write(data, (size_t)len);
  return len;
}

int _read(int fd, char* data, int len) {
  (void)fd;
  (void)data;
  (void)len;
  return 0;
}

int _close(int fd) {
  (void)fd;
  return 0;
}

int _fstat(int fd, struct stat* st) {
  (void)fd;
  memset(st, 0, sizeof(*st));
  st->st_mode = S_IFCHR;
  return 0;
}

int _isatty(int fd) {
  (void)fd;
  return 1;
}

int _lseek(int fd, int offset, int whence) {
  (void)fd;
  (void)offset;
  (void)whence;
  return 0;
}

int _open(const char* path, int flags, int mode) {
  (void)path;
  (void)flags;
  (void)mode;
  errno = ENOENT;
  return -1;
}

int _gettimeofday(struct timeval* tv, void* tz) {
  (void)tz;
  tv->tv_sec = semihosting_time();
  tv->tv_usec = 0;
  return 0;
}

clock_t _times(struct tms* buf) {
  memset(buf, 0, sizeof(*buf));
  return 0;
}

int _getpid(void) { return 1; }

int _kill(int pid, int signal) {
  (void)pid;
  WriteNumber("\n*** killed by signal ", (size_t)signal);  // abort() is signal 6
  semihosting_write("\n", 1);
  semihosting_exit(128 + signal);
}

void _exit(int code) { semihosting_exit(code); }

int _unlink(const char* path) {
  (void)path;
  errno = ENOENT;
  return -1;
}

int _link(const char* from, const char* to) {
  (void)from;
  (void)to;
  errno = EMLINK;
  return -1;
}

int _stat(const char* path, struct stat* st) {
  (void)path;
  (void)st;
  errno = ENOENT;
  return -1;
}

// Seeds for tests (std::random_device): the host's clock stirred by a counter. Not for cryptography.
int getentropy(void* buffer, size_t length) {
  static uint32_t state;
  state ^= (uint32_t)semihosting_time() * 2654435761u;
  unsigned char* out = (unsigned char*)buffer;
  for (size_t i = 0; i < length; ++i) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    state += 0x9E3779B9u;
    out[i] = (unsigned char)(state >> 24);
  }
  return 0;
}

int mkdir(const char* path, mode_t mode) {
  (void)path;
  (void)mode;
  errno = ENOSYS;
  return -1;
}
