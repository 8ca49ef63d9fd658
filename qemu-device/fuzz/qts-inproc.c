/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * tests/qtest/qtest_client.h on QEMU's own libqtest, in process: the
 * device fuzzer (vgpu-fuzz.c) runs inside qemu-fuzz-x86_64, where the
 * fuzzing harness has already started the machine; qts_inproc() wraps its
 * QTestState, so that tests/qtest/vgpu_dev.c drives the device there as it
 * does over the socket in the qtests.  Starting, stopping, the monitor and
 * the log are the socket client's alone.
 */
#include "qemu/osdep.h"
#include "tests/qtest/libqtest.h"

#include "qtest_client.h"

struct qts {
    QTestState *s;
};

struct qts *qts_inproc(QTestState *s);

struct qts *qts_inproc(QTestState *s)
{
    static struct qts q;

    q.s = s;
    return &q;
}

struct qts *qts_start(const char *args)
{
    return NULL;
}

void qts_quit(struct qts *s)
{
}

bool qts_alive(struct qts *s)
{
    return true;
}

const char *qts_log(struct qts *s)
{
    return "";
}

int qts_hmp(struct qts *s, const char *cmd, char *out, size_t len)
{
    return -1;
}

const char *qts_dir(struct qts *s)
{
    return "/tmp";
}

uint64_t qts_now_ns(void)
{
    return g_get_monotonic_time() * 1000;
}

uint8_t qts_readb(struct qts *s, uint64_t addr)
{
    return qtest_readb(s->s, addr);
}

uint16_t qts_readw(struct qts *s, uint64_t addr)
{
    return qtest_readw(s->s, addr);
}

uint32_t qts_readl(struct qts *s, uint64_t addr)
{
    return qtest_readl(s->s, addr);
}

uint64_t qts_readq(struct qts *s, uint64_t addr)
{
    return qtest_readq(s->s, addr);
}

void qts_writeb(struct qts *s, uint64_t addr, uint8_t v)
{
    qtest_writeb(s->s, addr, v);
}

void qts_writew(struct qts *s, uint64_t addr, uint16_t v)
{
    qtest_writew(s->s, addr, v);
}

void qts_writel(struct qts *s, uint64_t addr, uint32_t v)
{
    qtest_writel(s->s, addr, v);
}

void qts_writeq(struct qts *s, uint64_t addr, uint64_t v)
{
    qtest_writeq(s->s, addr, v);
}

void qts_memread(struct qts *s, uint64_t addr, void *buf, size_t len)
{
    qtest_memread(s->s, addr, buf, len);
}

void qts_memwrite(struct qts *s, uint64_t addr, const void *buf, size_t len)
{
    qtest_memwrite(s->s, addr, buf, len);
}

/*
 * Not qtest_memset: QEMU 7.2's in-process wrapper of it
 * (tests/qtest/fuzz/qtest_wrappers.c) leaks its buffer every call, which
 * LeakSanitizer reports as the fuzzer's.
 */
void qts_memset(struct qts *s, uint64_t addr, uint8_t v, size_t len)
{
    g_autofree uint8_t *buf = g_malloc(len);

    memset(buf, v, len);
    qtest_memwrite(s->s, addr, buf, len);
}

uint32_t qts_inl(struct qts *s, uint16_t port)
{
    return qtest_inl(s->s, port);
}

void qts_outl(struct qts *s, uint16_t port, uint32_t v)
{
    qtest_outl(s->s, port, v);
}

void qts_outw(struct qts *s, uint16_t port, uint16_t v)
{
    qtest_outw(s->s, port, v);
}
