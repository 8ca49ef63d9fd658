/* SPDX-License-Identifier: MIT */
/*
 * Device benchmarks through qtest (make bench).  Each figure is printed
 * beside a baseline measured in the same run, with the ratio; targets are
 * printed, never enforced.
 *
 *   (a) a plain qtest register read: the cost of one protocol round trip,
 *       the floor under everything else measured through qtest;
 *   (b) an empty kernel's launch-to-completion latency: doorbell, then
 *       polling the completion record through qtest until it appears;
 *   (c) launches per second with the ring kept full (refilled as the
 *       device completes, one doorbell per refill);
 *   (d) a compute-bound kernel's instruction rate through the device
 *       (threads=1) beside the host runner's (the same core, in process,
 *       on host memory).  Target: >= 80%.  The completion is polled every
 *       200 us: polling flat out would keep this process and QEMU's main
 *       thread on the CPUs the SM thread needs (on 2 cores that halves
 *       the device's rate).
 *   (e) the device with 1, 2 and 4 SM worker threads (threads=) on a grid
 *       of 64 independent CTAs of the compute-bound kernel: the completion
 *       record's elapsed time and the speed-up over threads=1 (bounded by
 *       the machine's cores).
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/bench_summary.h"
#include "bench/kernels.h"
#include "hostmem.h"
#include "vgpu_core.h"
#include "vgpu_dev.h"

#define REG_READS 20000
#define LAT_REPS 300
#define FULL_LAUNCHES 3000
#define RING 256u
#define ALU_ITERS 4000u
#define ALU_THREADS 1024u
#define ALU_REPS 3

static const char k_empty[] = ".kernel empty\n    EXIT ;\n";

static void die(const char *msg)
{
	fprintf(stderr, "bench_device: %s\n", msg);
	exit(1);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

/* (a) */
static double bench_reg_read(struct dev *d)
{
	uint64_t t0 = qts_now_ns();

	for (int i = 0; i < REG_READS; i++)
		if (reg_read(d, VGPU_REG_ID) != VGPU_ID_MAGIC)
			die("register read failed");
	return (double)(qts_now_ns() - t0) / REG_READS;
}

/* (b): median doorbell-to-completion time seen through qtest */
static void bench_latency(struct dev *d, const struct dev_kernel *kern,
			  double reg_ns)
{
	static uint64_t lat[LAT_REPS], dev_ns[LAT_REPS];
	struct vgpu_cmd_launch cmd = dev_launch_cmd(kern, 1, 32, 0, 0);
	struct vgpu_completion c;

	for (int i = 0; i < LAT_REPS; i++) {
		uint32_t slot = dev_put(d, 0, &cmd);
		uint64_t t0 = qts_now_ns();

		dev_doorbell(d, 0);
		if (!dev_wait(d, 0, slot, &c) || c.status != VGPU_ERR_NONE)
			die("empty launch failed");
		lat[i] = qts_now_ns() - t0;
		dev_ns[i] = c.elapsed_ns;
	}
	qsort(lat, LAT_REPS, sizeof(lat[0]), cmp_u64);
	qsort(dev_ns, LAT_REPS, sizeof(dev_ns[0]), cmp_u64);
	printf("(b) empty kernel, launch to completion (median of %d)\n", LAT_REPS);
	printf("    through qtest        %10.1f us   (%.1f register reads)\n",
	       us(lat[LAT_REPS / 2]), (double)lat[LAT_REPS / 2] / reg_ns);
	printf("    inside the device    %10.1f us   (completion record's elapsed_ns:"
	       " fetch, MMU, predecode, run; target <= 5 us)\n", us(dev_ns[LAT_REPS / 2]));
	bench_row("device, empty kernel inside", bench_fmt("%.1f us", us(dev_ns[LAT_REPS / 2])),
		  bench_fmt("qtest read %.1f us", reg_ns / 1e3),
		  bench_fmt("%.2fx", (double)dev_ns[LAT_REPS / 2] / reg_ns), "<= 5 us",
		  dev_ns[LAT_REPS / 2] <= 5000);
	bench_row("device, empty kernel via qtest", bench_fmt("%.1f us", us(lat[LAT_REPS / 2])),
		  bench_fmt("qtest read %.1f us", reg_ns / 1e3),
		  bench_fmt("%.1fx", (double)lat[LAT_REPS / 2] / reg_ns), "", -1);
}

/* (c) */
static void bench_throughput(struct dev *d, const struct dev_kernel *kern,
			     double reg_ns)
{
	struct vgpu_cmd_launch cmd = dev_launch_cmd(kern, 1, 32, 0, 0);
	uint64_t base = qreg_read(d, 0, VGPU_Q_COMPLETED_LO), t0, t;
	uint32_t submitted = 0, done = 0, doorbells = 0;

	/* write the command into every slot (the tail comes back where it
	 * was); refills below only move the tail */
	for (uint32_t i = 0; i < RING; i++)
		dev_put(d, 0, &cmd);
	t0 = qts_now_ns();
	while (done < FULL_LAUNCHES) {
		uint32_t space = RING - 1 - (submitted - done);
		uint32_t n = space < FULL_LAUNCHES - submitted ? space : FULL_LAUNCHES - submitted;

		if (n) {
			d->tail[0] = (d->tail[0] + n) % RING;
			dev_doorbell(d, 0);
			doorbells++;
			submitted += n;
		}
		done = (uint32_t)(qreg_read(d, 0, VGPU_Q_COMPLETED_LO) - base);
		if (qreg_read(d, 0, VGPU_Q_STATUS) & VGPU_QSTAT_STOPPED)
			die("queue stopped");
	}
	t = qts_now_ns() - t0;
	printf("(c) empty kernels with the ring kept full (%u slots, %d launches, %u doorbells)\n",
	       RING, FULL_LAUNCHES, doorbells);
	printf("    %10.0f launches/s   %8.1f us per launch   (%.1f register reads)\n",
	       FULL_LAUNCHES / ((double)t / 1e9), us(t) / FULL_LAUNCHES,
	       (double)t / FULL_LAUNCHES / reg_ns);
	bench_row("device, launches with a full ring", bench_fmt("%.1f us each", us(t) / FULL_LAUNCHES),
		  bench_fmt("qtest read %.1f us", reg_ns / 1e3),
		  bench_fmt("%.2fx", (double)t / FULL_LAUNCHES / reg_ns), "", -1);
}

/* (d) the host runner's rate: best of ALU_REPS */
static double host_alu_rate(const struct vgpu_object *obj, uint64_t *insns)
{
	struct vgpu_sm_config cfg = { 0 };
	struct vgpu_sm *sm = vgpu_sm_new(&cfg);
	struct vgpu_hostmem hm;
	struct vgpu_prog *prog;
	uint64_t addr, best = UINT64_MAX;
	uint8_t *data, params[8];
	struct vgpu_sm_stats st;

	vgpu_hostmem_init(&hm, 0x10000000ull, 0x20000000ull);
	if (!sm || vgpu_hostmem_alloc(&hm, 16 * ALU_THREADS, &addr, &data) ||
	    vgpu_prog_load(obj->code, obj->code_size, &prog))
		die("host set-up failed");
	memcpy(params, &addr, 8);
	for (int r = 0; r < ALU_REPS; r++) {
		struct vgpu_launch l = {
			.prog = prog,
			.entry = obj->kernels[0].entry,
			.grid = { 1, 1, 1 },
			.block = { ALU_THREADS, 1, 1 },
			.params = params,
			.param_size = 8,
			.mem = &vgpu_hostmem_ops,
			.mem_opaque = &hm,
		};
		struct vgpu_exception_record exc;
		uint64_t t0 = qts_now_ns(), t;

		vgpu_sm_reset_stats(sm);
		if (vgpu_sm_launch(sm, &l, &exc))
			die("host launch failed");
		t = qts_now_ns() - t0;
		if (t < best)
			best = t;
	}
	vgpu_sm_get_stats(sm, &st);
	*insns = st.warp_insns;
	vgpu_prog_free(prog);
	vgpu_sm_free(sm);
	vgpu_hostmem_fini(&hm);
	return (double)st.warp_insns / ((double)best / 1e9);
}

static void bench_alu(struct dev *d)
{
	char src[sizeof(alu_src_fmt) + 16];
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t out_va, par_va, par_pa, host_insns, best_dev = UINT64_MAX, best_wall = UINT64_MAX;
	double host, dev_rate, wall_rate;

	snprintf(src, sizeof(src), alu_src_fmt, ALU_ITERS);
	if (dev_kernel_load(d, 0, src, &kern))
		die("assembly failed");
	out_va = dev_buf(d, 0, 16 * ALU_THREADS, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE,
			 NULL);
	par_va = dev_buf(d, 0, 8, VGPU_PTE_VALID | VGPU_PTE_READ, &par_pa);
	qts_memwrite(d->qts, par_pa, &out_va, 8);
	cmd = dev_launch_cmd(&kern, 1, ALU_THREADS, par_va, 8);
	for (int r = 0; r < ALU_REPS; r++) {
		uint32_t slot = dev_put(d, 0, &cmd);
		uint64_t t0 = qts_now_ns(), t;

		dev_doorbell(d, 0);
		/*
		 * Poll gently: a busy qtest loop would keep QEMU's main thread
		 * and this process on the CPUs the SM thread needs.
		 */
		do
			usleep(200);
		while (!qts_readq(d->qts, DEV_CPL_PA(0, slot) +
					   offsetof(struct vgpu_completion, seq)));
		t = qts_now_ns() - t0;
		dev_read_cpl(d, 0, slot, &c);
		if (c.status != VGPU_ERR_NONE)
			die("ALU launch failed");
		if (c.elapsed_ns < best_dev)
			best_dev = c.elapsed_ns;
		if (t < best_wall)
			best_wall = t;
	}
	host = host_alu_rate(&kern.obj, &host_insns);
	if (host_insns != c.warp_insns)
		die("device and host ran different instruction counts");
	dev_rate = (double)c.warp_insns / ((double)best_dev / 1e9);
	wall_rate = (double)c.warp_insns / ((double)best_wall / 1e9);
	printf("(d) compute-bound kernel: %u threads x %u iterations, %" PRIu64
	       " warp-instructions (best of %d)\n", ALU_THREADS, ALU_ITERS, (uint64_t)c.warp_insns,
	       ALU_REPS);
	printf("    host runner (in process)        %8.1f M warp-insn/s\n", host / 1e6);
	printf("    device, inside (elapsed_ns)     %8.1f M warp-insn/s   %5.1f%% of host"
	       "   (target >= 80%%)\n", dev_rate / 1e6, 100.0 * dev_rate / host);
	printf("    device, doorbell to completion  %8.1f M warp-insn/s   %5.1f%% of host\n",
	       wall_rate / 1e6, 100.0 * wall_rate / host);
	bench_row("device, compute-bound kernel", bench_fmt("%.1f M warp-insn/s", dev_rate / 1e6),
		  bench_fmt("host runner %.1f M", host / 1e6),
		  bench_fmt("%.0f%%", 100.0 * dev_rate / host), ">= 80%",
		  dev_rate >= 0.8 * host);
	dev_kernel_free(&kern);
}

/* (e): 64 CTAs of the compute-bound kernel on threads=N; elapsed_ns, best of 3 */
static uint64_t scale_run(const char *props)
{
	char src[sizeof(alu_src_fmt) + 16];
	struct dev d;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t out_va, par_va, par_pa, best = UINT64_MAX;

	if (dev_open(&d, props, 1))
		die("cannot start QEMU");
	dev_queue_init(&d, 0, RING);
	snprintf(src, sizeof(src), alu_src_fmt, 500u);
	if (dev_kernel_load(&d, 0, src, &kern))
		die("assembly failed");
	/* every CTA stores the same values to the same words: the CTAs are
	 * independent, the output is one CTA's */
	out_va = dev_buf(&d, 0, 16 * 256, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE,
			 NULL);
	par_va = dev_buf(&d, 0, 8, VGPU_PTE_VALID | VGPU_PTE_READ, &par_pa);
	qts_memwrite(d.qts, par_pa, &out_va, 8);
	cmd = dev_launch_cmd(&kern, 64, 256, par_va, 8);
	for (int r = 0; r < ALU_REPS; r++) {
		uint32_t slot = dev_put(&d, 0, &cmd);

		dev_doorbell(&d, 0);
		do
			usleep(500);
		while (!qts_readq(d.qts, DEV_CPL_PA(0, slot) +
					  offsetof(struct vgpu_completion, seq)));
		dev_read_cpl(&d, 0, slot, &c);
		if (c.status != VGPU_ERR_NONE)
			die("scaling launch failed");
		if (c.elapsed_ns < best)
			best = c.elapsed_ns;
	}
	dev_kernel_free(&kern);
	dev_close(&d);
	return best;
}

static void bench_workers(void)
{
	static const unsigned n[] = { 1, 2, 4 };
	uint64_t t1 = 0;

	printf("(e) 64 independent CTAs x 256 threads x 500 iterations, by SM worker threads"
	       " (%ld CPUs online)\n", sysconf(_SC_NPROCESSORS_ONLN));
	for (unsigned i = 0; i < 3; i++) {
		char props[32];
		uint64_t t;

		snprintf(props, sizeof(props), "threads=%u", n[i]);
		t = scale_run(props);
		if (!i)
			t1 = t;
		printf("    threads=%u   %8.2f ms   speed-up %.2fx over threads=1\n", n[i],
		       (double)t / 1e6, (double)t1 / (double)t);
		bench_row(bench_fmt("device, 64 CTAs, threads=%u", n[i]),
			  bench_fmt("%.2f ms", (double)t / 1e6),
			  bench_fmt("threads=1 %.2f ms", (double)t1 / 1e6),
			  bench_fmt("%.2fx speed-up", (double)t1 / (double)t), "", -1);
	}
}

int main(void)
{
	struct dev d;
	struct dev_kernel empty;
	double reg_ns;

	printf("vgpu-pci device benchmarks (qtest, TCG-less: -accel qtest)\n");
	if (dev_open(&d, "threads=1", 1))
		die("cannot start QEMU (make qemu)");
	dev_queue_init(&d, 0, RING);
	if (dev_kernel_load(&d, 0, k_empty, &empty))
		die("assembly failed");

	reg_ns = bench_reg_read(&d);
	printf("(a) qtest register read (baseline)  %8.1f us\n", reg_ns / 1e3);
	bench_latency(&d, &empty, reg_ns);
	bench_throughput(&d, &empty, reg_ns);
	bench_alu(&d);
	dev_kernel_free(&empty);
	dev_close(&d);
	bench_workers();
	return 0;
}
