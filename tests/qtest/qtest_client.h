/* SPDX-License-Identifier: MIT */
/*
 * A small client of QEMU's qtest protocol (softmmu/qtest.c): start
 * qemu-system-x86_64 with -accel qtest, then read and write guest memory,
 * I/O ports and PCI configuration space through a UNIX socket, one text
 * command and one reply at a time.  No libqtest or glib needed.
 *
 * The binary is $VGPU_QEMU, or build/qemu-build/qemu-system-x86_64 from
 * the current directory; firmware comes from /usr/share/qemu and
 * /usr/share/seabios.  QEMU's guest-error log (-d guest_errors) goes to a
 * file that qts_log() returns.
 *
 * When QEMU stops answering (it crashed or hung for 60 s) every call
 * returns 0 and qts_alive() is false.
 */
#ifndef VGPU_QTEST_CLIENT_H
#define VGPU_QTEST_CLIENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct qts;

/*
 * Start QEMU: -M q35 -nodefaults -accel qtest -m 256M plus @args (split
 * on blanks, e.g. "-device vgpu-pci,addr=04.0").  NULL on failure, with a
 * message on stderr.
 */
struct qts *qts_start(const char *args);
/* Stop QEMU (SIGTERM, then SIGKILL) and free everything. */
void qts_quit(struct qts *s);
/* QEMU still answers a command. */
bool qts_alive(struct qts *s);
/* Everything QEMU has written to its log so far (NUL-terminated, owned by s). */
const char *qts_log(struct qts *s);

uint8_t qts_readb(struct qts *s, uint64_t addr);
uint16_t qts_readw(struct qts *s, uint64_t addr);
uint32_t qts_readl(struct qts *s, uint64_t addr);
uint64_t qts_readq(struct qts *s, uint64_t addr);
void qts_writeb(struct qts *s, uint64_t addr, uint8_t v);
void qts_writew(struct qts *s, uint64_t addr, uint16_t v);
void qts_writel(struct qts *s, uint64_t addr, uint32_t v);
void qts_writeq(struct qts *s, uint64_t addr, uint64_t v);
void qts_memread(struct qts *s, uint64_t addr, void *buf, size_t len);
void qts_memwrite(struct qts *s, uint64_t addr, const void *buf, size_t len);
void qts_memset(struct qts *s, uint64_t addr, uint8_t v, size_t len);

uint32_t qts_inl(struct qts *s, uint16_t port);
void qts_outl(struct qts *s, uint16_t port, uint32_t v);
void qts_outw(struct qts *s, uint16_t port, uint16_t v);

/*
 * PCI configuration space of bus 0, @devfn = slot << 3 | function
 * (qtest_pci.c, on the port primitives above).
 */
uint32_t qts_cfg_readl(struct qts *s, unsigned devfn, unsigned off);
uint16_t qts_cfg_readw(struct qts *s, unsigned devfn, unsigned off);
void qts_cfg_writel(struct qts *s, unsigned devfn, unsigned off, uint32_t v);
void qts_cfg_writew(struct qts *s, unsigned devfn, unsigned off, uint16_t v);
/* Offset of capability @id in the standard list, or 0. */
unsigned qts_cfg_find_cap(struct qts *s, unsigned devfn, uint8_t id);

/*
 * Run a human-monitor command (e.g. "migrate exec:cat>FILE") and wait for
 * the next prompt; the monitor's output (without prompts) goes to @out.
 * Returns 0 or -1.
 */
int qts_hmp(struct qts *s, const char *cmd, char *out, size_t len);
/*
 * Advance the virtual clock by @ns (under -accel qtest it moves only so)
 * and run the timers that came due.  The device's own threads keep the
 * host's clock: only QEMU_CLOCK_VIRTUAL timers (DELAY_IRQ) follow this.
 */
void qts_clock_step(struct qts *s, uint64_t ns);
/* Directory of this QEMU's sockets and log, for files a test creates. */
const char *qts_dir(struct qts *s);

/* Monotonic nanoseconds, for benchmarks. */
uint64_t qts_now_ns(void);

#endif
