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
 *   (e) the device with 1, 2 and 4 SM worker threads (threads=; the list
 *       from VGPU_BENCH_THREADS) on a grid of 64 independent CTAs
 *       (VGPU_BENCH_CTAS) of the compute-bound kernel and of a
 *       BAR.SYNC-heavy one, and of a TMA ring (a producer thread
 *       streaming tiles through 4 stages of shared memory to 7 consumer
 *       warps): the completion record's elapsed time, the
 *       warp-instructions (the ring: bytes copied) per second and the
 *       speed-up over the first (bounded by the machine's cores).
 *       `bench_device e` runs (e) only.
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

/*
 * (e): a grid of independent CTAs of 256 threads on threads=N SM workers
 * (sms= the most threads asked, at least 4); the completion record's
 * elapsed ns, best of ALU_REPS.  @src: the kernel's text.
 */
static uint64_t scale_run(const char *props, const char *src, uint32_t ctas)
{
	struct dev d;
	struct dev_kernel kern;
	struct vgpu_cmd_launch cmd;
	struct vgpu_completion c;
	uint64_t out_va, par_va, par_pa, best = UINT64_MAX;

	if (dev_open(&d, props, 1))
		die("cannot start QEMU");
	dev_queue_init(&d, 0, RING);
	if (dev_kernel_load(&d, 0, src, &kern))
		die("assembly failed");
	/* each CTA stores to its own 4 KiB (kernels.h) */
	out_va = dev_buf(&d, 0, 4096ull * ctas, VGPU_PTE_VALID | VGPU_PTE_READ | VGPU_PTE_WRITE,
			 NULL);
	par_va = dev_buf(&d, 0, 8, VGPU_PTE_VALID | VGPU_PTE_READ, &par_pa);
	qts_memwrite(d.qts, par_pa, &out_va, 8);
	cmd = dev_launch_cmd(&kern, ctas, 256, par_va, 8);
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

/*
 * (e)'s third grid: a TMA ring per CTA, as a kernel written for TMA keeps
 * one.  Thread 0 streams %u tiles of 1 KiB from the CTA's 4 KiB of out
 * into a 4-stage ring of shared memory with CP.ASYNC.BULK (full[s]:
 * expect_tx then the copy's complete_tx; it waits on empty[s] before it
 * refills a stage); warps 1..7 wait on full[s], each thread adds a word
 * of the tile, and arrive on empty[s] (224 arrivals).  Each consumer
 * stores its sum at the end, when every copy has landed.
 */
static const char tma_src_fmt[] =
	".kernel tma\n"
	".param ptr out\n"
	".shared ring, 4160\n"
	"    S2R R0, SR_TID.X ;\n"
	"    LDP.64 R2, [out] ;\n"
	"    S2R R6, SR_CTAID.X ;\n"
	"    SHL R6, R6, 0xc ;\n"
	"    IADD R20, R2, R6 ;\n    MOV R21, R3 ;\n"
	"    ISETP.EQ.U32 P0, R0, 0x0 ;\n"
	"    @!P0 BRA ready ;\n"
	"    MOV R16, 0x1000 ;\n    MBAR.INIT [R16], 0x1 ;\n"
	"    MOV R16, 0x1008 ;\n    MBAR.INIT [R16], 0x1 ;\n"
	"    MOV R16, 0x1010 ;\n    MBAR.INIT [R16], 0x1 ;\n"
	"    MOV R16, 0x1018 ;\n    MBAR.INIT [R16], 0x1 ;\n"
	"    MOV R16, 0x1020 ;\n    MBAR.INIT [R16], 0xe0 ;\n"
	"    MOV R16, 0x1028 ;\n    MBAR.INIT [R16], 0xe0 ;\n"
	"    MOV R16, 0x1030 ;\n    MBAR.INIT [R16], 0xe0 ;\n"
	"    MOV R16, 0x1038 ;\n    MBAR.INIT [R16], 0xe0 ;\n"
	"ready:\n"
	"    BAR.SYNC 0x0 ;\n"
	"    MOV R1, 0x0 ;\n"
	"    ISETP.GE.U32 P1, R0, 0x20 ;\n"
	"    @P1 BRA cons ;\n"
	"    @!P0 BRA done ;\n"
	"prod:\n"
	"    LOP.AND R7, R1, 0x3 ;\n    SHR.U32 R8, R1, 0x2 ;\n    SHL R9, R7, 0x3 ;\n"
	"    IADD R10, R9, 0x1020 ;\n    IADD R11, R9, 0x1000 ;\n    SHL R12, R7, 0xa ;\n"
	"    ISETP.LT.U32 P2, R1, 0x4 ;\n"
	"    @P2 BRA issue ;\n"
	"    IADD R13, R8, -0x1 ;\n    LOP.AND R13, R13, 0x1 ;\n"
	"pw:\n"
	"    MBAR.TRY_WAIT.PARITY P3, [R10], R13 ;\n"
	"    @!P3 BRA pw ;\n"
	"issue:\n"
	"    MBAR.ARRIVE.EXPECT_TX _, [R11], 0x400 ;\n"
	"    IADD R22, R20, R12 ;\n    MOV R23, R21 ;\n"
	"    CP.ASYNC.BULK [R12], [R22], 0x400, [R11] ;\n"
	"    IADD R1, R1, 0x1 ;\n"
	"    ISETP.LT.U32 P4, R1, 0x%x ;\n"
	"    @P4 BRA prod ;\n"
	"    BRA done ;\n"
	"cons:\n"
	"    MOV R4, 0x0 ;\n"
	"    IADD R14, R0, -0x20 ;\n    SHL R14, R14, 0x2 ;\n"
	"cl:\n"
	"    LOP.AND R7, R1, 0x3 ;\n    SHR.U32 R8, R1, 0x2 ;\n    LOP.AND R8, R8, 0x1 ;\n"
	"    SHL R9, R7, 0x3 ;\n    IADD R10, R9, 0x1020 ;\n    IADD R11, R9, 0x1000 ;\n"
	"cw:\n"
	"    MBAR.TRY_WAIT.PARITY P3, [R11], R8 ;\n"
	"    @!P3 BRA cw ;\n"
	"    SHL R12, R7, 0xa ;\n    IADD R12, R12, R14 ;\n"
	"    LDS.32 R15, [R12] ;\n"
	"    IADD R4, R4, R15 ;\n"
	"    MBAR.ARRIVE _, [R10] ;\n"
	"    IADD R1, R1, 0x1 ;\n"
	"    ISETP.LT.U32 P4, R1, 0x%x ;\n"
	"    @P4 BRA cl ;\n"
	"    SHL R5, R0, 0x2 ;\n    IADD R24, R20, R5 ;\n    MOV R25, R21 ;\n"
	"    STG.32 [R24], R4 ;\n"
	"done:\n"
	"    EXIT ;\n";

/* tiles each CTA of the TMA grid streams */
#define TMA_TILES 256u

/*
 * (e) over VGPU_BENCH_THREADS (default "1 2 4") with VGPU_BENCH_CTAS CTAs
 * (default 64) on VGPU_BENCH_SMS SMs (default: the most threads, at least
 * 4): the compute-bound grid and the BAR.SYNC-heavy one, each
 * as warp-instructions per second and the speed-up over threads=1.
 */
static void bench_workers(void)
{
	const char *list = getenv("VGPU_BENCH_THREADS");
	const char *ctas_env = getenv("VGPU_BENCH_CTAS");
	uint32_t ctas = ctas_env ? (uint32_t)strtoul(ctas_env, NULL, 0) : 64;
	unsigned n[16], nn = 0, sms = 4;
	char *copy = strdup(list && *list ? list : "1 2 4"), *tok, *save;
	struct {
		const char *name;
		char src[sizeof(tma_src_fmt) + 64];
		uint64_t warp_insns;
	} grids[3];

	for (tok = strtok_r(copy, " ,", &save); tok && nn < 16; tok = strtok_r(NULL, " ,", &save))
		if ((n[nn] = (unsigned)strtoul(tok, NULL, 0)) >= 1)
			sms = n[nn++] > sms ? n[nn - 1] : sms;
	free(copy);
	if (getenv("VGPU_BENCH_SMS"))
		sms = (unsigned)strtoul(getenv("VGPU_BENCH_SMS"), NULL, 0);
	if (!nn || !ctas)
		die("VGPU_BENCH_THREADS / VGPU_BENCH_CTAS");
	grids[0].name = "compute";
	snprintf(grids[0].src, sizeof(grids[0].src), alu_src_fmt, 500u);
	grids[0].warp_insns = ALU_WARP_INSNS(500) * 8 * ctas;
	grids[1].name = "BAR.SYNC";
	snprintf(grids[1].src, sizeof(grids[1].src), bar_src_fmt, 1000u, "BAR.SYNC 0x0");
	grids[1].warp_insns = BAR_WARP_INSNS(1000) * 8 * ctas;
	grids[2].name = "TMA ring";
	snprintf(grids[2].src, sizeof(grids[2].src), tma_src_fmt, TMA_TILES, TMA_TILES);
	grids[2].warp_insns = 0; /* figured as bytes copied */
	printf("(e) %u independent CTAs x 256 threads on sms=%u, by SM worker threads"
	       " (%ld CPUs online): compute (500 iterations), BAR.SYNC (1000 rounds),"
	       " TMA ring (%u tiles of 1 KiB, 4 stages)\n",
	       ctas, sms, sysconf(_SC_NPROCESSORS_ONLN), TMA_TILES);
	for (unsigned g = 0; g < 3; g++) {
		uint64_t t1 = 0;

		for (unsigned i = 0; i < nn; i++) {
			char props[48];
			uint64_t t;
			double wips;

			snprintf(props, sizeof(props), "sms=%u,threads=%u", sms, n[i]);
			t = scale_run(props, grids[g].src, ctas);
			if (!i)
				t1 = t;
			if (grids[g].warp_insns) {
				wips = (double)grids[g].warp_insns / ((double)t / 1e9);
				printf("    %-8s threads=%-2u %9.2f ms  %7.1f M warp-insns/s  speed-up "
				       "%.2fx over threads=%u\n", grids[g].name, n[i], (double)t / 1e6,
				       wips / 1e6, (double)t1 / (double)t, n[0]);
			} else { /* the TMA ring: bytes copied per second */
				wips = 1024.0 * TMA_TILES * ctas / ((double)t / 1e9);
				printf("    %-8s threads=%-2u %9.2f ms  %7.2f GB/s copied     speed-up "
				       "%.2fx over threads=%u\n", grids[g].name, n[i], (double)t / 1e6,
				       wips / 1e9, (double)t1 / (double)t, n[0]);
			}
			bench_row(bench_fmt("device %s, %u CTAs, sms=%u threads=%u", grids[g].name,
					    ctas, sms, n[i]),
				  bench_fmt(grids[g].warp_insns ? "%.2f ms (%.0f M warp-insns/s)" :
						"%.2f ms (%.0f MB/s copied)", (double)t / 1e6,
					    grids[g].warp_insns ? wips / 1e6 : wips / 1e6),
				  bench_fmt("threads=%u %.2f ms", n[0], (double)t1 / 1e6),
				  bench_fmt("%.2fx speed-up", (double)t1 / (double)t), "", -1);
		}
	}
}

int main(int argc, char **argv)
{
	struct dev d;
	struct dev_kernel empty;
	double reg_ns;

	/* "e": the scaling grids alone (on a many-core machine) */
	if (argc > 1 && !strcmp(argv[1], "e")) {
		bench_workers();
		return 0;
	}
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
