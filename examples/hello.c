/* SPDX-License-Identifier: MIT */
/*
 * hello: libvgpu end to end, using only <vgpu.h>.
 *
 *   1. open a device (the drm backend when a vgpu device exists, else the
 *      in-process simulator; or the one named on the command line);
 *   2. allocate two buffer objects;
 *   3. assemble a program from inline source: three kernels;
 *   4. launch "fill", then "square" with an explicit dependency on it
 *      through a timeline syncobj (point 1 -> point 2);
 *   5. wait, read the results back and check them;
 *   6. launch "oops", which stores past the end of its buffer, and print
 *      the device's exception record as vgpu_job_describe() explains it.
 *
 * Build against an installed libvgpu:
 *   cc $(pkg-config --cflags vgpu) -o hello hello.c $(pkg-config --libs vgpu)
 *
 * Usage: hello [DEVICE]   (DEVICE as vgpu_device_open() takes it: sim, drm,
 * a PCI slot or a /dev/dri node; default: automatic).
 * Exit status 0 when the results are right and the fault was reported.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <vgpu.h>

#define N 1024u	    /* elements: 4 KiB, one page */
#define BLOCK 256u  /* threads per CTA */
#define K 7u	    /* fill's scalar parameter */

/*
 * The kernels.  A thread's global index is i = ctaid.x * ntid.x + tid.x.
 * Buffers lie below 4 GiB, so adding a byte offset to the low word of an
 * address never carries into the high word.
 */
static const char source[] =
	"// data[i] = 3 * i + k\n"
	".kernel fill\n"
	".param ptr data\n"
	".param u32 k\n"
	"    S2R R0, SR_TID.X ;\n"
	"    S2R R1, SR_CTAID.X ;\n"
	"    S2R R7, SR_NTID.X ;\n"
	"    IMAD R0, R1, R7, R0 ;        // i\n"
	"    LDP.64 R2, [data] ;\n"
	"    LDP R8, [k] ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    IADD R2, R2, R4 ;            // &data[i]\n"
	"    IMAD R5, R0, 0x3, R8 ;\n"
	"    STG [R2], R5 ;\n"
	"    EXIT ;\n"
	"\n"
	"// out[i] = data[i] * data[i]: reads what fill wrote\n"
	".kernel square\n"
	".param ptr data\n"
	".param ptr out\n"
	"    S2R R0, SR_TID.X ;\n"
	"    S2R R1, SR_CTAID.X ;\n"
	"    S2R R7, SR_NTID.X ;\n"
	"    IMAD R0, R1, R7, R0 ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    LDP.64 R2, [data] ;\n"
	"    LDP.64 R8, [out] ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    IADD R8, R8, R4 ;\n"
	"    LDG R5, [R2] ;\n"
	"    IMUL R5, R5, R5 ;\n"
	"    STG [R8], R5 ;\n"
	"    EXIT ;\n"
	"\n"
	"// A bug: data[i + 1024] lies past the end of the 4 KiB buffer\n"
	".kernel oops\n"
	".param ptr data\n"
	"    S2R R0, SR_TID.X ;\n"
	"    IADD R0, R0, 0x400 ;\n"
	"    SHL R4, R0, 0x2 ;\n"
	"    LDP.64 R2, [data] ;\n"
	"    IADD R2, R2, R4 ;\n"
	"    STG [R2], R0 ;\n"
	"    EXIT ;\n";

/* Print what failed and pass the error on. */
static int check(int err, const char *what)
{
	if (err < 0)
		fprintf(stderr, "hello: %s: %s\n", what, strerror(-err));
	return err;
}

/* A kernel of @prog with one argument set; 0 or -errno. */
static int kernel_args(struct vgpu_program *prog, const char *name,
		       const struct vgpu_kernel **k, struct vgpu_args **args)
{
	int err = check(vgpu_program_find_kernel(prog, name, k), name);

	return err ? err : check(vgpu_args_new(*k, args), "vgpu_args_new");
}

int main(int argc, char **argv)
{
	const struct vgpu_kernel *fill, *square, *oops;
	struct vgpu_args *fill_args = NULL, *square_args = NULL;
	struct vgpu_args *oops_args = NULL;
	struct vgpu_device *dev = NULL;
	struct vgpu_program *prog = NULL;
	struct vgpu_bo *data = NULL, *out = NULL;
	struct vgpu_syncobj *timeline = NULL;
	struct vgpu_job *job = NULL, *bad = NULL;
	struct vgpu_device_info info;
	char log[4096], text[4096];
	uint32_t result[N];
	uint64_t point = 0;
	unsigned int wrong = 0;
	int err, status = 1;

	if (argc > 2 || (argc == 2 && !strcmp(argv[1], "--help"))) {
		fprintf(argc > 2 ? stderr : stdout, "usage: hello [DEVICE]\n");
		return argc > 2 ? 2 : 0;
	}

	/* 1. The device. */
	err = check(vgpu_device_open(argc == 2 ? argv[1] : NULL, &dev),
		    "vgpu_device_open");
	if (err)
		return 1;
	if (check(vgpu_device_query(dev, &info), "vgpu_device_query"))
		goto out;
	printf("hello: %s backend, %s%s%s\n", vgpu_backend_name(info.backend),
	       info.driver, info.node[0] ? " on " : "", info.node);

	/* 2. Memory: zero-filled, mapped in the device's address space. */
	if (check(vgpu_bo_new(dev, N * 4, 0, &data), "vgpu_bo_new") ||
	    check(vgpu_bo_new(dev, N * 4, 0, &out), "vgpu_bo_new"))
		goto out;

	/* 3. The program: diagnostics, if any, land in @log. */
	err = vgpu_program_assemble(dev, source, strlen(source), "hello.vgs",
				    &prog, log, sizeof(log));
	if (err) {
		fprintf(stderr, "%s", log);
		check(err, "vgpu_program_assemble");
		goto out;
	}
	if (kernel_args(prog, "fill", &fill, &fill_args) ||
	    kernel_args(prog, "square", &square, &square_args) ||
	    kernel_args(prog, "oops", &oops, &oops_args))
		goto out;
	/* Parameters by index, in declaration order; set_bo also tells the
	 * launch which buffers it uses. */
	if (check(vgpu_args_set_bo(fill_args, 0, data, 0), "set data") ||
	    check(vgpu_args_set_u32(fill_args, 1, K), "set k") ||
	    check(vgpu_args_set_bo(square_args, 0, data, 0), "set data") ||
	    check(vgpu_args_set_bo(square_args, 1, out, 0), "set out") ||
	    check(vgpu_args_set_bo(oops_args, 0, data, 0), "set data"))
		goto out;

	/* 4. Two launches ordered by a timeline syncobj: fill signals point
	 * 1, square waits for it and signals point 2. */
	if (check(vgpu_syncobj_new(dev, 0, &timeline), "vgpu_syncobj_new"))
		goto out;
	{
		const struct vgpu_sync_point p1 = { timeline, 1 };
		const struct vgpu_sync_point p2 = { timeline, 2 };
		struct vgpu_launch_config cfg = {
			.grid = { N / BLOCK },
			.block = { BLOCK },
			.flags = VGPU_LAUNCH_SANITIZE,
			.signal = &p1,
			.nsignal = 1,
		};

		/* fire and forget: no job handle */
		if (check(vgpu_kernel_launch(fill, &cfg, fill_args, NULL),
			  "launch fill"))
			goto out;
		cfg.wait = &p1;
		cfg.nwait = 1;
		cfg.signal = &p2;
		if (check(vgpu_kernel_launch(square, &cfg, square_args, &job),
			  "launch square"))
			goto out;
	}

	/* 5. Wait (for the job, and the timeline has reached point 2), read
	 * back, check. */
	if (check(vgpu_job_wait(job, 10 * 1000000000ll), "wait for square") ||
	    check(vgpu_syncobj_wait(timeline, 2, 0), "timeline point 2") ||
	    check(vgpu_syncobj_query(timeline, &point), "vgpu_syncobj_query") ||
	    check(vgpu_bo_read(out, 0, result, sizeof(result)), "vgpu_bo_read"))
		goto out;
	for (uint32_t i = 0; i < N; i++) {
		uint32_t v = 3 * i + K;

		if (result[i] != v * v && wrong++ < 5)
			fprintf(stderr, "hello: out[%u] = %u, expected %u\n", i,
				result[i], v * v);
	}
	printf("hello: fill -> square through timeline point %llu: %u of %u "
	       "results right (out[%u] = %u)\n", (unsigned long long)point,
	       N - wrong, N, N - 1, result[N - 1]);
	if (wrong)
		goto out;

	/* 6. A faulting kernel: the job fails, its exception record says
	 * where and why, with the instruction disassembled. */
	if (check(vgpu_kernel_launch(oops, &(struct vgpu_launch_config){
						   .block = { 32 } },
				     oops_args, &bad), "launch oops"))
		goto out;
	err = vgpu_job_wait(bad, 10 * 1000000000ll);
	if (err != -EIO && err != -EFAULT) {
		fprintf(stderr, "hello: oops: expected a device exception, got "
			"%s\n", err ? strerror(-err) : "success");
		goto out;
	}
	printf("hello: oops failed as it should (vgpu_job_wait: %s):\n",
	       strerror(-err));
	/* like snprintf: the length of the whole text, or -errno */
	if (check(vgpu_job_describe(bad, text, sizeof(text)),
		  "vgpu_job_describe") < 0)
		goto out;
	printf("%s", text);
	printf("hello: PASS\n");
	status = 0;
out:
	/* Everything is released in any order; the device goes last. */
	vgpu_job_free(bad);
	vgpu_job_free(job);
	vgpu_syncobj_free(timeline);
	vgpu_args_free(oops_args);
	vgpu_args_free(square_args);
	vgpu_args_free(fill_args);
	vgpu_program_free(prog);
	vgpu_bo_free(out);
	vgpu_bo_free(data);
	vgpu_device_close(dev);
	return status;
}
