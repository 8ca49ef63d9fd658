// SPDX-License-Identifier: MIT
/*
 * The PTX front end (make bench):
 *  - compile time per 1000 PTX lines over the clang and nvcc corpus,
 *    beside the time the assembler alone takes for the same programs'
 *    generated vGPU assembly (its share of the compile, measured in the
 *    same run);
 *  - the PTX of each CUDA port under examples/cuda/ (clang-19 -O2)
 *    against the hand-written examples/NAME.vgs on the sim backend:
 *    static instructions, warp-instructions executed and time per
 *    launch, ratio (target <= 1.3x).
 * Run from the repository root (make bench does).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/bench_summary.h"
#include "vgpu.h"
#include "vgpu_asm.h"
#include "ptx_corpus.h"

#define REPS 5

static void __attribute__((noreturn)) die(const char *what, int err)
{
	fprintf(stderr, "bench_ptx: %s: %s\n", what, strerror(err < 0 ? -err : err));
	exit(1);
}

static int64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	char *b;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	b = malloc((size_t)n + 1);
	if (b && fread(b, 1, (size_t)n, f) != (size_t)n) {
		free(b);
		b = NULL;
	}
	if (b)
		b[n] = '\0';
	fclose(f);
	return b;
}

static unsigned lines(const char *s)
{
	unsigned n = 0;

	for (; *s; s++)
		n += *s == '\n';
	return n;
}

static void compile_time(void)
{
	double best_ptx = 1e30, best_asm = 1e30;
	unsigned nlines = 0, nprog = 0;
	char log[4096];

	for (size_t i = 0; ptx_corpus[i].name; i++, nprog++)
		nlines += lines(ptx_corpus[i].text);
	for (int r = 0; r < REPS; r++) {
		int64_t tp = 0, ta = 0;

		for (size_t i = 0; ptx_corpus[i].name; i++) {
			const char *t = ptx_corpus[i].text;
			struct vgpu_object obj;
			char *text = NULL;
			int64_t t0 = now_ns();
			int ret = vgpu_ptx_to_asm(t, strlen(t), ptx_corpus[i].name, &text, log,
						  sizeof(log));
			int64_t t1 = now_ns();

			if (ret) {
				fputs(log, stderr);
				die("compile", ret);
			}
			ret = vgpu_assemble(text, strlen(text), "bench", &obj, log, sizeof(log));
			ta += now_ns() - t1;
			tp += t1 - t0;
			if (ret)
				die("assemble", ret);
			vgpu_object_fini(&obj);
			free(text);
		}
		if (tp < best_ptx)
			best_ptx = (double)tp;
		if (ta < best_asm)
			best_asm = (double)ta;
	}
	printf("  compile %u PTX lines (%u modules): %.2f ms per 1000 PTX lines"
	       "   (of which the assembler %.2f ms, %.0f%%)\n",
	       nlines, nprog, best_ptx / nlines * 1000 / 1e6,
	       best_asm / nlines * 1000 / 1e6, 100 * best_asm / best_ptx);
	bench_row("PTX compile, per 1000 lines", bench_fmt("%.2f ms", best_ptx / nlines * 1000 / 1e6),
		  bench_fmt("assembler %.2f ms", best_asm / nlines * 1000 / 1e6),
		  bench_fmt("%.1fx", best_ptx / best_asm), "", -1);
}

/* Instructions of the first kernel of @path (to the next entry or the end). */
static uint32_t static_insns(const char *path)
{
	struct vgpu_object obj;
	char log[4096], *src = NULL, *text = NULL;
	uint32_t end;
	int ret;

	if (strstr(path, ".ptx")) {
		src = slurp(path);
		if (!src)
			die(path, -errno);
		ret = vgpu_ptx_to_asm(src, strlen(src), path, &text, log, sizeof(log));
		ret = ret ?: vgpu_assemble(text, strlen(text), path, &obj, log, sizeof(log));
	} else {
		ret = vgpu_object_load_file(path, &obj, log, sizeof(log));
	}
	if (ret) {
		fputs(log, stderr);
		die(path, ret);
	}
	end = obj.code_size;
	for (uint32_t i = 1; i < obj.nkernels; i++)
		if (obj.kernels[i].entry > obj.kernels[0].entry && obj.kernels[i].entry < end)
			end = obj.kernels[i].entry;
	end = (end - obj.kernels[0].entry) / 16;
	vgpu_object_fini(&obj);
	free(src);
	free(text);
	return end;
}

struct run {
	uint32_t code_insns;
	uint64_t warp_insns;
	double ns;
};

/* @path (PTX or assembly) launched @iters times with one out buffer. */
static struct run measure(struct vgpu_device *dev, const char *path, uint32_t block,
			  uint32_t words, uint32_t *out_copy)
{
	struct vgpu_launch_config cfg = { .grid = { 1 }, .block = { block } };
	struct vgpu_program *prog;
	const struct vgpu_kernel *k;
	struct vgpu_args *args;
	struct vgpu_bo *bo;
	struct run r = { 0 };
	char log[4096];
	int ret, iters = 200;

	ret = vgpu_program_load_file(dev, path, &prog, log, sizeof(log));
	if (ret) {
		fputs(log, stderr);
		die(path, ret);
	}
	ret = vgpu_program_kernel(prog, 0, &k);
	ret = ret ?: vgpu_bo_new(dev, words * 4, 0, &bo);
	ret = ret ?: vgpu_args_new(k, &args);
	ret = ret ?: vgpu_args_set_bo(args, 0, bo, 0);
	if (ret)
		die("setup", ret);
	r.ns = 1e30;
	for (int rep = 0; rep < REPS; rep++) {
		int64_t t0 = now_ns();

		for (int i = 0; i < iters; i++) {
			struct vgpu_job_status st;
			struct vgpu_job *job;

			ret = vgpu_kernel_launch(k, &cfg, args, &job);
			ret = ret ?: vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
			ret = ret ?: vgpu_job_status(job, &st);
			if (ret)
				die("launch", ret);
			r.warp_insns = st.warp_insns;
			vgpu_job_free(job);
		}
		double t = (double)(now_ns() - t0) / iters;

		if (t < r.ns)
			r.ns = t;
	}
	ret = vgpu_bo_read(bo, 0, out_copy, words * 4);
	if (ret)
		die("read", ret);
	r.code_insns = static_insns(path);
	vgpu_args_free(args);
	vgpu_bo_free(bo);
	vgpu_program_free(prog);
	return r;
}

static void versus(struct vgpu_device *dev, const char *name, uint32_t block, uint32_t words)
{
	char vgs[256], ptx[256];
	uint32_t *a = calloc(words, 4), *b = calloc(words, 4);
	struct run h, p;

	if (!a || !b)
		die("memory", -ENOMEM);
	snprintf(vgs, sizeof(vgs), "examples/%s.vgs", name);
	snprintf(ptx, sizeof(ptx), "%s/ptx/examples/%s.ptx", VGPU_BUILD_DIR, name);
	h = measure(dev, vgs, block, words, a);
	p = measure(dev, ptx, block, words, b);
	if (memcmp(a, b, words * 4))
		die("the PTX port computed another result than the .vgs", -EINVAL);
	printf("  %-22s hand-written: %4u insns, %7llu warp-insns, %8.0f ns   "
	       "PTX: %4u insns, %7llu warp-insns, %8.0f ns   ratio insns %.2fx, "
	       "executed %.2fx, time %.2fx   target <= 1.3x: %s\n",
	       name, h.code_insns, (unsigned long long)h.warp_insns, h.ns, p.code_insns,
	       (unsigned long long)p.warp_insns, p.ns, (double)p.code_insns / h.code_insns,
	       (double)p.warp_insns / (double)h.warp_insns, p.ns / h.ns,
	       p.ns / h.ns <= 1.3 && (double)p.warp_insns / (double)h.warp_insns <= 1.3
		       ? "met" : "NOT MET");
	bench_row(bench_fmt("PTX port of %s", name), bench_fmt("%.0f ns", p.ns),
		  bench_fmt("hand-written %.0f ns", h.ns), bench_fmt("%.2fx", p.ns / h.ns),
		  "<= 1.3x", p.ns / h.ns <= 1.3 &&
		  (double)p.warp_insns / (double)h.warp_insns <= 1.3);
	free(a);
	free(b);
}

int main(void)
{
	struct vgpu_device *dev;
	int ret;

	/* the compiler's time, not libvgpu's compile cache's */
	setenv("VGPU_CACHE_DISABLE", "1", 1);
	printf("bench_ptx: the PTX front end, best of %d runs\n", REPS);
	compile_time();
	ret = vgpu_device_open("sim", &dev);
	if (ret)
		die("open sim", ret);
	versus(dev, "reduce_bar_sync", 256, 4);
	versus(dev, "producer_consumer", 128, 64);
	versus(dev, "mbar_producer_consumer", 96, 64);
	vgpu_device_close(dev);
	return 0;
}
