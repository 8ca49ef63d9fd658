// SPDX-License-Identifier: MIT
//
// ptxgen-run: run ptxgen's kernels on a real GPU with the CUDA driver API
// and print what they computed (tests/ptx/gen/run-gpu.sh builds and runs
// it; nvcc -O2 ptxgen-run.cu -lcuda).
//
//   ptxgen-run [--note TEXT] [--first N] DIR MODULE
//
// loads DIR/MODULE.cubin when it exists (ptxas -arch=sm_90a of the PTX),
// else DIR/MODULE.ptx, with cuModuleLoadData; runs each kernel of
// DIR/MODULE.manifest once on its inputs (grid ROWS/32, block 32, the
// output zeroed first) and prints, on stdout:
//
//   # ptxgen: GPU NAME (sm_XY), CUDA driver API V; NOTE
//   # module MODULE hash HHHHHHHHHHHHHHHH kernels N
//   kernel NAME OUTWORDS
//   the OUTWORDS 32-bit words in hex, 8 a line
//
// A kernel whose launch fails prints "kernel NAME error CUDA_ERROR_..."
// instead; the context is then made again and the run goes on.
#include <cuda.h>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "ptxgen_manifest.h"

static CUdevice dev;
static CUcontext ctx;
static CUmodule mod;

static const char *errname(CUresult r)
{
	const char *s = NULL;

	cuGetErrorName(r, &s);
	return s ? s : "CUDA_ERROR_?";
}

#define CHECK(x)                                                                      \
	do {                                                                          \
		CUresult r_ = (x);                                                    \
		if (r_ != CUDA_SUCCESS) {                                             \
			fprintf(stderr, "ptxgen-run: %s: %s\n", #x, errname(r_));     \
			exit(1);                                                      \
		}                                                                     \
	} while (0)

static void load(const char *image)
{
	char log[8192] = "";
	CUjit_option opt[] = { CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES };
	void *val[] = { log, (void *)(uintptr_t)sizeof(log) };
	CUresult r;

	CHECK(cuCtxCreate(&ctx, NULL, 0, dev));
	r = cuModuleLoadDataEx(&mod, image, 2, opt, val);
	if (r != CUDA_SUCCESS) {
		fprintf(stderr, "ptxgen-run: cuModuleLoadData: %s\n%s\n", errname(r), log);
		exit(1);
	}
}

static void unload(void)
{
	cuModuleUnload(mod);
	cuCtxDestroy(ctx);
}

/* The g_tmr_* kernels' tensor map (ptxgen_table4.py) in their input's
 * first 128 bytes: the GPU's encoding of the tensor that test_ptxgen.c's
 * tmap_in() gives vGPU (2-D .u32, 16 x 16, rows of 64 bytes, box 8 x 4). */
static CUresult tmap_in(CUdeviceptr din)
{
	CUtensorMap tm;
	cuuint64_t dims[2] = { 16, 16 }, strides[1] = { 64 };
	cuuint32_t box[2] = { 8, 4 }, es[2] = { 1, 1 };
	CUresult r = cuTensorMapEncodeTiled(&tm, CU_TENSOR_MAP_DATA_TYPE_UINT32, 2, (void *)din,
					    dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
					    CU_TENSOR_MAP_SWIZZLE_NONE,
					    CU_TENSOR_MAP_L2_PROMOTION_NONE,
					    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);

	return r == CUDA_SUCCESS ? cuMemcpyHtoD(din, &tm, sizeof(tm)) : r;
}

/* Run kernel @k; 0 and its words in @out, or the failing call's result. */
static CUresult run(const struct pg_kernel *k, std::vector<uint32_t> &out)
{
	CUfunction fn;
	CUdeviceptr din = 0, dout = 0;
	size_t inb = (k->inwords ? k->inwords : 1) * 4u, outb = (k->outwords ? k->outwords : 1) * 4u;
	CUresult r;

	out.assign(k->outwords, 0);
	r = cuModuleGetFunction(&fn, mod, k->name);
	if (r == CUDA_SUCCESS)
		r = cuMemAlloc(&din, inb);
	if (r == CUDA_SUCCESS)
		r = cuMemAlloc(&dout, outb);
	if (r == CUDA_SUCCESS && k->inwords)
		r = cuMemcpyHtoD(din, k->in, k->inwords * 4u);
	if (r == CUDA_SUCCESS && !strncmp(k->name, "g_tmr_", 6) && k->inwords >= 32)
		r = tmap_in(din);
	if (r == CUDA_SUCCESS)
		r = cuMemsetD8(dout, 0, outb);
	if (r == CUDA_SUCCESS) {
		void *args[] = { &dout, &din };

		r = cuLaunchKernel(fn, k->rows / 32, 1, 1, 32, 1, 1, 0, NULL, args, NULL);
	}
	if (r == CUDA_SUCCESS)
		r = cuCtxSynchronize();
	if (r == CUDA_SUCCESS && k->outwords)
		r = cuMemcpyDtoH(out.data(), dout, k->outwords * 4u);
	if (din)
		cuMemFree(din);
	if (dout)
		cuMemFree(dout);
	return r;
}

int main(int argc, char **argv)
{
	const char *note = "", *dir, *name;
	unsigned int first = 0;
	char path[4096], err[256], gpu[256];
	struct pg_module m;
	int drv = 0, major = 0, minor = 0;
	char *image;

	for (;;) {
		if (argc > 2 && !strcmp(argv[1], "--note")) {
			note = argv[2];
		} else if (argc > 2 && !strcmp(argv[1], "--first")) {
			first = (unsigned int)strtoul(argv[2], NULL, 10);
		} else {
			break;
		}
		argc -= 2;
		argv += 2;
	}
	if (argc != 3) {
		fprintf(stderr, "usage: ptxgen-run [--note TEXT] [--first N] DIR MODULE\n");
		return 2;
	}
	dir = argv[1];
	name = argv[2];
	if (pg_module_load(&m, dir, name, err, sizeof(err))) {
		fprintf(stderr, "ptxgen-run: %s\n", err);
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.cubin", dir, name);
	image = pg_read_file(path, NULL);
	if (!image)
		image = m.ptx;
	CHECK(cuInit(0));
	CHECK(cuDeviceGet(&dev, 0));
	CHECK(cuDeviceGetName(gpu, sizeof(gpu), dev));
	CHECK(cuDriverGetVersion(&drv));
	CHECK(cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, dev));
	CHECK(cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, dev));
	if (!first) {
		printf("# ptxgen: GPU %s (sm_%d%d), CUDA driver API %d; %s\n", gpu, major,
		       minor, drv, note);
		printf("# module %s hash %016llx kernels %u\n", name,
		       (unsigned long long)m.hash, m.nk);
	}
	load(image);
	for (unsigned int i = first; i < m.nk; i++) {
		std::vector<uint32_t> out;
		CUresult r = run(&m.k[i], out);

		if (r != CUDA_SUCCESS) {
			/*
			 * A fault is sticky: the process's CUDA context is
			 * lost for good.  Exit 3: run-gpu.sh starts a new
			 * process at the next kernel (--first).
			 */
			printf("kernel %s error %s\n", m.k[i].name, errname(r));
			fflush(stdout);
			return 3;
		}
		printf("kernel %s %u\n", m.k[i].name, m.k[i].outwords);
		for (unsigned int w = 0; w < m.k[i].outwords; w++)
			printf("%08x%c", out[w], w % 8 == 7 || w + 1 == m.k[i].outwords ? '\n' : ' ');
		fflush(stdout); /* a kernel that hangs: the file ends before it */
	}
	unload();
	if (image != m.ptx)
		free(image);
	pg_module_free(&m);
	return 0;
}
