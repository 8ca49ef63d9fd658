/* SPDX-License-Identifier: GPL-2.0-or-later */
/*
 * vgpu-fuzz: a target of QEMU's own fuzzing harness (tests/qtest/fuzz,
 * qemu-fuzz-x86_64 --fuzz-target=vgpu-fuzz; libFuzzer, ASan and UBSan)
 * for the vgpu-pci device, built by `make fuzz-device` (scripts/build-qemu.sh
 * with VGPU_QEMU_FLAVOUR=fuzz grafts this directory into tests/qtest/fuzz).
 *
 * Like generic-fuzz it turns the input into a sequence of operations on
 * the device, but knows the device: each operation is one byte of opcode
 * (mod OP_COUNT) and its operands:
 *
 *   REG_WRITE  off16 val32   any BAR0 register (global and queue ones)
 *   REG_READ   off16
 *   MEM        area8 off16 len8 bytes   guest memory the device reads:
 *              a ring, a completion ring, the AS table, the page-table
 *              pool, the data pool (programs, parameters, semaphores)
 *   QUEUE      q8 size8      set up and enable a queue (vgpu_dev.c)
 *   CMD        q8 fix8 bytes[128]   a raw command into the ring, doorbell;
 *              fix8 odd: its opcode made one of the known ones
 *   LAUNCH     q8 shape[8] n8 words [dims32[9]]  a launch of the
 *              known-good kernel or of n = n8 % 17 instruction words, raw
 *              or (n8 / 17 bit 0) each made a valid instruction of a
 *              random table row (tests/fuzz/wellformed.h: a random
 *              well-formed program whose addresses start at the buffer
 *              its parameter points at), any grid, block, cluster (small,
 *              or with n8 / 17 bit 1 nine raw 32-bit dimensions), shared
 *              memory, flags and budget, on a mapped buffer
 *   PTE        as8 va32 level8 pte64   any page-table entry, including
 *              one pointing back at the root (a loop)
 *   WAIT       ms8           let the device run (the main loop too)
 *   RESET      -             CONTROL reset, set up again
 *   CSB        q8 slot8 raw8 page32   context-save slot size, a queue's
 *              buffer (allocated, or a raw page number), a PREEMPT request
 *   PCI_CFG    off8 val32    PCI configuration space
 *   USERQ      q8 size8 as8  set up a queue in user mode, in address space
 *              as8 (any value: one past the table too)
 *   DOORBELL   q8 off16 val32   a 32-bit write into BAR4's doorbell pages
 *              (any queue's page, any offset, garbage tails)
 *
 * The device has fault injection on (x-inject=on): REG_WRITE reaches
 * INJECT too, so dropped, delayed and corrupt completions, injected
 * faults and hung queues are part of what the input can do (a device
 * reset disarms them).
 *
 * The machine is not restarted between inputs: each input ends with a
 * device reset.  Oracle, besides ASan/UBSan and QEMU's own assertions:
 * after the reset the device answers its ID register and runs a
 * known-good launch to the right result within 10 s; otherwise abort(),
 * which libFuzzer reports as a crash.
 */
#include "qemu/osdep.h"
#include "qemu/module.h"
#include "tests/qtest/libqtest.h"
#include "tests/qtest/fuzz/fuzz.h"

#include "vgpu_dev.h"
#include "vgpu-fuzz-kernel.h"   /* vgpu_fuzz_obj[]: known-good.vgs, assembled */
#include "wellformed.h"

struct qts *qts_inproc(QTestState *s);

enum {
    OP_REG_WRITE, OP_REG_READ, OP_MEM, OP_QUEUE, OP_CMD, OP_LAUNCH, OP_PTE,
    OP_WAIT, OP_RESET, OP_CSB, OP_PCI_CFG, OP_USERQ, OP_DOORBELL, OP_COUNT
};

#define FUZZ_QUEUES 4
#define FUZZ_AS 2
#define MAX_OPS 64
#define KNOWN_THREADS 64

static struct dev d;
static QTestState *qts;

struct cursor {
    const uint8_t *p;
    size_t n;
};

static uint64_t take(struct cursor *c, unsigned bytes)
{
    uint64_t v = 0;

    for (unsigned i = 0; i < bytes && c->n; i++, c->n--) {
        v |= (uint64_t)*c->p++ << (8 * i);
    }
    return v;
}

static size_t take_bytes(struct cursor *c, void *buf, size_t len)
{
    len = MIN(len, c->n);
    memcpy(buf, c->p, len);
    c->p += len;
    c->n -= len;
    return len;
}

/* Let the device's threads and the main loop (interrupts) run @ms. */
static void pump(unsigned ms)
{
    for (unsigned i = 0; i < ms; i++) {
        flush_events(qts);
        g_usleep(1000);
    }
    flush_events(qts);
}

static uint32_t le32_at(const uint8_t *p)
{
    return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The known-good kernel's code, uploaded into @asid: its VA and size. */
static uint64_t known_code(unsigned asid, uint32_t *size)
{
    uint32_t off = le32_at(vgpu_fuzz_obj + 24);
    uint64_t pa, va;

    *size = le32_at(vgpu_fuzz_obj + 28);
    g_assert(off + *size <= sizeof(vgpu_fuzz_obj));
    va = dev_buf(&d, asid, *size, VGPU_PTE_VALID | VGPU_PTE_READ |
                 VGPU_PTE_EXEC, &pa);
    qts_memwrite(d.qts, pa, vgpu_fuzz_obj + off, *size);
    return va;
}

/* A parameter buffer holding @out_va (the kernels' one parameter). */
static uint64_t params_for(unsigned asid, uint64_t out_va)
{
    uint64_t pa, va = dev_buf(&d, asid, 64, VGPU_PTE_VALID | VGPU_PTE_READ,
                              &pa);

    qts_memwrite(d.qts, pa, &out_va, 8);
    return va;
}

/* Queue @q as the operations left it, set up if it never was. */
static unsigned ready_queue(unsigned q)
{
    if (!d.ring_size[q]) {
        dev_queue_init(&d, q, 8);
    }
    return q;
}

static void op_launch(struct cursor *c)
{
    unsigned q = ready_queue(take(c, 1) % FUZZ_QUEUES);
    unsigned asid = take(c, 1) % FUZZ_AS;
    uint8_t shape[8], words[16 * 16];
    struct vgpu_cmd_launch cmd = { .hdr = { .opcode = VGPU_CMD_LAUNCH } };
    uint64_t out_pa, out_va, pa;
    uint32_t n, mode;

    memset(shape, 0, sizeof(shape));
    take_bytes(c, shape, sizeof(shape));
    n = take(c, 1);
    mode = n / 17;
    n %= 17;
    out_va = dev_buf(&d, asid, 4096, VGPU_PTE_VALID | VGPU_PTE_READ |
                     VGPU_PTE_WRITE, &out_pa);
    if (!n) {
        cmd.code_va = known_code(asid, &cmd.code_size);
    } else {
        memset(words, 0, sizeof(words));
        take_bytes(c, words, n * 16);
        cmd.code_size = n * 16;
        if (mode & 1) {
            vgpu_wf_program(words, cmd.code_size);
        }
        cmd.code_va = dev_buf(&d, asid, cmd.code_size, VGPU_PTE_VALID |
                              VGPU_PTE_READ | VGPU_PTE_EXEC, &pa);
        qts_memwrite(d.qts, pa, words, cmd.code_size);
        cmd.entry = mode & 1 ? 0 : (shape[7] % n) * 16;
    }
    cmd.asid = asid;
    cmd.grid[0] = 1 + shape[0] % 8;
    cmd.grid[1] = 1 + shape[1] % 2;
    cmd.grid[2] = 1;
    cmd.cluster[0] = shape[2] % 3;
    cmd.block[0] = 1 + ((shape[3] | shape[4] << 8) % 1024);
    cmd.block[1] = cmd.block[2] = 1;
    if (mode & 2) {
        /* any dimensions: products past 2^32 and 2^64 included */
        for (int i = 0; i < 3; i++) {
            cmd.grid[i] = take(c, 4);
            cmd.block[i] = take(c, 4);
            cmd.cluster[i] = take(c, 4);
        }
    }
    cmd.smem_bytes = shape[5] * 256u;
    cmd.launch_flags = shape[6];
    cmd.budget = 1000 + 1000u * (shape[7] % 64);
    cmd.param_va = params_for(asid, out_va);
    cmd.param_size = 8;
    cmd.seed = shape[0];
    dev_submit(&d, q, &cmd);
}

static void op_mem(struct cursor *c)
{
    static const uint64_t span = 0x10000;
    unsigned area = take(c, 1) % 6, q = area % FUZZ_QUEUES;
    uint64_t off = take(c, 2), base;
    uint8_t buf[64];
    size_t len = take(c, 1) % (sizeof(buf) + 1);

    switch (area) {
    case 0:
        base = dev_ring_pa(q);
        break;
    case 1:
        base = DEV_CPL_PA(q, 0);
        break;
    case 2:
        base = DEV_AS_TABLE;
        break;
    case 3:
        base = d.root[0];   /* the page-table pool starts at a root */
        break;
    default:
        base = d.data_next > span ? d.data_next - span : d.data_next;
        break;
    }
    len = take_bytes(c, buf, len);
    qts_memwrite(d.qts, base + off % span, buf, len);
}

static void op_cmd(struct cursor *c)
{
    unsigned q = ready_queue(take(c, 1) % FUZZ_QUEUES), fix = take(c, 1);
    uint8_t cmd[VGPU_CMD_BYTES];

    memset(cmd, 0, sizeof(cmd));
    take_bytes(c, cmd, sizeof(cmd));
    if (fix & 1) {
        cmd[0] %= VGPU_CMD_SEM_RELEASE + 1;
    }
    dev_submit(&d, q, cmd);
}

static void op_pte(struct cursor *c)
{
    unsigned asid = take(c, 1) % FUZZ_AS;
    uint64_t va = DEV_VA_BASE + (take(c, 4) << VGPU_PAGE_SHIFT);
    unsigned level = take(c, 1) % VGPU_PT_LEVELS;
    uint64_t pte = take(c, 8);

    if (pte & 2) {  /* a loop: back to the root */
        pte = d.root[asid] | VGPU_PTE_VALID;
    }
    dev_set_pte(&d, asid, va, level, pte);
}

static void op_csb(struct cursor *c)
{
    unsigned q = take(c, 1) % FUZZ_QUEUES;
    uint32_t slot = (take(c, 1) % 3) * 0x10000;
    unsigned raw = take(c, 1);
    uint32_t page = take(c, 4);

    reg_write(&d, VGPU_REG_CSB_SLOT, slot);
    if (!(raw & 1) && slot) {
        page = dev_alloc_pa(&d, (uint64_t)slot * 2) >> VGPU_PAGE_SHIFT;
    }
    qreg_write(&d, q, VGPU_Q_CONTROL, 0);
    qreg_write(&d, q, VGPU_Q_CSB, page);
    if (raw & 2) {
        reg_write(&d, VGPU_REG_PREEMPT, q);
    }
}

static void device_reset(void)
{
    /* the input may have turned memory decoding off: on first */
    dev_setup(&d, FUZZ_AS);
    reg_write(&d, VGPU_REG_CONTROL, VGPU_CTRL_RESET);
    dev_setup(&d, FUZZ_AS);
    reg_write(&d, VGPU_REG_WDOG_MS, 500);
}

/* The oracle: after a reset, the ID register and a known-good launch. */
static void check_device(void)
{
    struct vgpu_cmd_launch cmd = { .hdr = { .opcode = VGPU_CMD_LAUNCH } };
    uint32_t out[KNOWN_THREADS], id, slot;
    uint64_t out_pa, out_va, seq_pa;
    struct vgpu_completion cpl;

    device_reset();
    id = reg_read(&d, VGPU_REG_ID);
    if (id != VGPU_ID_MAGIC) {
        fprintf(stderr, "vgpu-fuzz: ID register 0x%x after a reset\n", id);
        abort();
    }
    out_va = dev_buf(&d, 0, 4096, VGPU_PTE_VALID | VGPU_PTE_READ |
                     VGPU_PTE_WRITE, &out_pa);
    cmd.code_va = known_code(0, &cmd.code_size);
    cmd.grid[0] = cmd.grid[1] = cmd.grid[2] = 1;
    cmd.block[0] = KNOWN_THREADS;
    cmd.block[1] = cmd.block[2] = 1;
    cmd.param_va = params_for(0, out_va);
    cmd.param_size = 8;
    dev_queue_init(&d, 0, 8);
    slot = dev_submit(&d, 0, &cmd);
    seq_pa = DEV_CPL_PA(0, slot) + offsetof(struct vgpu_completion, seq);
    for (int i = 0; i < 10000 && !qts_readq(d.qts, seq_pa); i++) {
        pump(1);
    }
    dev_read_cpl(&d, 0, slot, &cpl);
    if (!cpl.seq || cpl.status != VGPU_ERR_NONE) {
        fprintf(stderr, "vgpu-fuzz: the known-good launch after a reset: "
                "seq %" PRIu64 " status %u: %s\n", (uint64_t)cpl.seq,
                cpl.status, cpl.exc.msg);
        abort();
    }
    qts_memread(d.qts, out_pa, out, sizeof(out));
    for (uint32_t t = 0; t < KNOWN_THREADS; t++) {
        if (out[t] != t * 2 + 5) {
            fprintf(stderr, "vgpu-fuzz: the known-good launch wrote %u for "
                    "thread %u\n", out[t], t);
            abort();
        }
    }
}

static void vgpu_fuzz(QTestState *s, const unsigned char *data, size_t size)
{
    struct cursor c = { data, size };

    for (int ops = 0; c.n && ops < MAX_OPS; ops++) {
        switch (take(&c, 1) % OP_COUNT) {
        case OP_REG_WRITE: {
            uint32_t off = (take(&c, 2) & ~3u) % VGPU_BAR0_SIZE;

            reg_write(&d, off, take(&c, 4));
            break;
        }
        case OP_REG_READ:
            reg_read(&d, (take(&c, 2) & ~3u) % VGPU_BAR0_SIZE);
            break;
        case OP_MEM:
            op_mem(&c);
            break;
        case OP_QUEUE: {
            unsigned q = take(&c, 1) % FUZZ_QUEUES;

            dev_queue_init(&d, q, 1u << (take(&c, 1) % 7));
            break;
        }
        case OP_CMD:
            op_cmd(&c);
            break;
        case OP_LAUNCH:
            op_launch(&c);
            break;
        case OP_PTE:
            op_pte(&c);
            break;
        case OP_WAIT:
            pump(take(&c, 1) % 20);
            break;
        case OP_RESET:
            device_reset();
            break;
        case OP_CSB:
            op_csb(&c);
            break;
        case OP_PCI_CFG: {
            unsigned off = take(&c, 1) & 0xfc;

            qts_cfg_writel(d.qts, DEV_DEVFN, off, take(&c, 4));
            break;
        }
        case OP_USERQ: {
            unsigned q = take(&c, 1) % FUZZ_QUEUES;
            uint32_t size = 1u << (take(&c, 1) % 7);

            dev_user_queue_init(&d, q, size, take(&c, 1) % (FUZZ_AS + 2));
            break;
        }
        case OP_DOORBELL: {
            unsigned q = take(&c, 1) % (FUZZ_QUEUES + 1);
            uint32_t off = (take(&c, 2) & ~3u) % VGPU_DOORBELL_PAGE;

            db_write(&d, q, off, take(&c, 4));
            break;
        }
        }
        flush_events(s);
    }
    pump(2);
    check_device();
}

static void vgpu_pre_fuzz(QTestState *s)
{
    qts = s;
    memset(&d, 0, sizeof(d));
    d.qts = qts_inproc(s);
    device_reset();
}

static GString *vgpu_argv(FuzzTarget *t)
{
    return g_string_new(TARGET_NAME " -machine q35,accel=qtest -m 256M "
                        "-display none -nodefaults -L /usr/share/qemu "
                        "-L /usr/share/seabios "
                        "-device vgpu-pci,addr=04.0,threads=2,queues=4,"
                        "x-inject=on");
}

static void register_vgpu_fuzz_targets(void)
{
    fuzz_add_target(&(FuzzTarget){
        .name = "vgpu-fuzz",
        .description = "Fuzz the vgpu-pci device: registers, rings, "
                       "commands, page tables, programs, preemption; "
                       "a device reset and a known-good launch after each "
                       "input",
        .get_init_cmdline = vgpu_argv,
        .pre_fuzz = vgpu_pre_fuzz,
        .fuzz = vgpu_fuzz,
    });
}

fuzz_target_init(register_vgpu_fuzz_targets);
