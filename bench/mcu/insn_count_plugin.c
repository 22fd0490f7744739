// SPDX-License-Identifier: Apache-2.0
// QEMU TCG plugin: counts the guest instructions executed between two marker functions of a firmware, exactly and
// repeatably (an instruction-count proxy for the Cortex-M boards, which QEMU does not time).
//
//   qemu-system-arm ... -plugin insn_count.so,start=0x60001234,stop=0x60001240,out=counts.txt[,mve=mve.txt]
//
// start and stop are the addresses of the firmware's marker functions (bench/mcu/mcu_bench.cc; from nm, the Thumb
// bit is ignored). Every time stop runs after start, one line "<instructions> <mve instructions>" is appended to
// out: the instructions executed from the start marker's first instruction up to the stop marker's first
// instruction, the markers' own call and return included (the firmware measures an empty region first, and the
// report subtracts it). mve names a file of instruction addresses, one hexadecimal number per line, that count
// as MVE (Helium) instructions in the second column (scripts/bench-mcu.sh lists them from llvm-objdump-14's
// disassembly: QEMU's own disassembler does not know MVE).
//
// Debian's QEMU 7.2 runs plugins but ships no qemu-plugin.h, so the few functions of the version-1 plugin API used
// here are declared below (their meaning is QEMU's docs/devel/tcg-plugins.rst). Built with
// `gcc -shared -fPIC -O2` (scripts/bench-mcu.sh). Each instruction gets an inline counter increment (generated
// code, no call) when it is translated; the markers get a callback. One vCPU: the boards are single-core.
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

// ---- The version-1 plugin API of QEMU 7.2 (include/qemu/qemu-plugin.h there), as far as this plugin uses it.
typedef uint64_t qemu_plugin_id_t;
typedef struct qemu_info_t qemu_info_t;  // only passed through
struct qemu_plugin_tb;
struct qemu_plugin_insn;
enum qemu_plugin_cb_flags { QEMU_PLUGIN_CB_NO_REGS, QEMU_PLUGIN_CB_R_REGS, QEMU_PLUGIN_CB_RW_REGS };
enum qemu_plugin_op { QEMU_PLUGIN_INLINE_ADD_U64 };
typedef void (*qemu_plugin_vcpu_tb_trans_cb_t)(qemu_plugin_id_t id, struct qemu_plugin_tb* tb);
typedef void (*qemu_plugin_vcpu_udata_cb_t)(unsigned int vcpu_index, void* userdata);
typedef void (*qemu_plugin_udata_cb_t)(qemu_plugin_id_t id, void* userdata);
void qemu_plugin_register_vcpu_tb_trans_cb(qemu_plugin_id_t id, qemu_plugin_vcpu_tb_trans_cb_t cb);
size_t qemu_plugin_tb_n_insns(const struct qemu_plugin_tb* tb);
struct qemu_plugin_insn* qemu_plugin_tb_get_insn(const struct qemu_plugin_tb* tb, size_t idx);
uint64_t qemu_plugin_insn_vaddr(const struct qemu_plugin_insn* insn);
void qemu_plugin_register_vcpu_insn_exec_inline(struct qemu_plugin_insn* insn, enum qemu_plugin_op op, void* ptr,
                                                uint64_t imm);
void qemu_plugin_register_vcpu_insn_exec_cb(struct qemu_plugin_insn* insn, qemu_plugin_vcpu_udata_cb_t cb,
                                            enum qemu_plugin_cb_flags flags, void* userdata);
void qemu_plugin_register_atexit_cb(qemu_plugin_id_t id, qemu_plugin_udata_cb_t cb, void* userdata);
void qemu_plugin_outs(const char* string);

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

// ---- State.
static uint64_t g_start, g_stop;    // marker addresses, Thumb bit cleared
static uint64_t g_executed, g_mve;  // running totals, bumped by inline code
static uint64_t g_at_start, g_mve_at_start;
static bool g_in_region;
static FILE* g_out;
static uint64_t* g_mve_addresses;  // sorted
static size_t g_mve_count;
static unsigned long g_regions;

static int CompareAddresses(const void* a, const void* b) {
  const uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
  return x < y ? -1 : x > y;
}

static bool IsMve(uint64_t address) {
  return g_mve_count != 0 &&
         bsearch(&address, g_mve_addresses, g_mve_count, sizeof(uint64_t), CompareAddresses) != NULL;
}

static void OnStart(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  (void)userdata;
  g_at_start = g_executed;
  g_mve_at_start = g_mve;
  g_in_region = true;
}

static void OnStop(unsigned int vcpu, void* userdata) {
  (void)vcpu;
  (void)userdata;
  if (!g_in_region) return;
  g_in_region = false;
  fprintf(g_out, "%" PRIu64 " %" PRIu64 "\n", g_executed - g_at_start, g_mve - g_mve_at_start);
  fflush(g_out);
  ++g_regions;
}

// The marker callbacks are registered before the inline increments, so both run before the instruction itself
// and every region counts the same fixed overhead (measured by the firmware's empty region).
static void OnTranslate(qemu_plugin_id_t id, struct qemu_plugin_tb* tb) {
  (void)id;
  const size_t n = qemu_plugin_tb_n_insns(tb);
  for (size_t i = 0; i < n; ++i) {
    struct qemu_plugin_insn* insn = qemu_plugin_tb_get_insn(tb, i);
    const uint64_t address = qemu_plugin_insn_vaddr(insn);
    if (address == g_start) qemu_plugin_register_vcpu_insn_exec_cb(insn, OnStart, QEMU_PLUGIN_CB_NO_REGS, NULL);
    if (address == g_stop) qemu_plugin_register_vcpu_insn_exec_cb(insn, OnStop, QEMU_PLUGIN_CB_NO_REGS, NULL);
    qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &g_executed, 1);
    if (IsMve(address)) qemu_plugin_register_vcpu_insn_exec_inline(insn, QEMU_PLUGIN_INLINE_ADD_U64, &g_mve, 1);
  }
}

static void OnExit(qemu_plugin_id_t id, void* userdata) {
  (void)id;
  (void)userdata;
  char line[128];
  snprintf(line, sizeof line, "insn_count: %lu regions\n", g_regions);
  qemu_plugin_outs(line);
  fclose(g_out);
  free(g_mve_addresses);
}

static int LoadMveAddresses(const char* path) {
  FILE* f = fopen(path, "r");
  if (f == NULL) return -1;
  size_t capacity = 1024;
  g_mve_addresses = malloc(capacity * sizeof(uint64_t));
  char line[64];
  while (g_mve_addresses != NULL && fgets(line, sizeof line, f) != NULL) {
    if (g_mve_count == capacity) {
      capacity *= 2;
      uint64_t* grown = realloc(g_mve_addresses, capacity * sizeof(uint64_t));
      if (grown == NULL) break;
      g_mve_addresses = grown;
    }
    g_mve_addresses[g_mve_count++] = strtoull(line, NULL, 16) & ~(uint64_t)1;
  }
  fclose(f);
  if (g_mve_addresses == NULL) return -1;
  qsort(g_mve_addresses, g_mve_count, sizeof(uint64_t), CompareAddresses);
  return 0;
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id, const qemu_info_t* info, int argc,
                                                               char** argv) {
  (void)info;
  const char* out = NULL;
  for (int i = 0; i < argc; ++i) {
    if (strncmp(argv[i], "start=", 6) == 0) {
      g_start = strtoull(argv[i] + 6, NULL, 0) & ~(uint64_t)1;
    } else if (strncmp(argv[i], "stop=", 5) == 0) {
      g_stop = strtoull(argv[i] + 5, NULL, 0) & ~(uint64_t)1;
    } else if (strncmp(argv[i], "out=", 4) == 0) {
      out = argv[i] + 4;
    } else if (strncmp(argv[i], "mve=", 4) == 0) {
      if (LoadMveAddresses(argv[i] + 4) != 0) {
        fprintf(stderr, "insn_count: cannot read %s\n", argv[i] + 4);
        return -1;
      }
    } else {
      fprintf(stderr, "insn_count: unknown argument %s\n", argv[i]);
      return -1;
    }
  }
  if (g_start == 0 || g_stop == 0 || out == NULL) {
    fprintf(stderr, "insn_count: needs start=ADDRESS,stop=ADDRESS,out=FILE\n");
    return -1;
  }
  g_out = fopen(out, "w");
  if (g_out == NULL) {
    fprintf(stderr, "insn_count: cannot write %s\n", out);
    return -1;
  }
  qemu_plugin_register_vcpu_tb_trans_cb(id, OnTranslate);
  qemu_plugin_register_atexit_cb(id, OnExit, NULL);
  return 0;
}
