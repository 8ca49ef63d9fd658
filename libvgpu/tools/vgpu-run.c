/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run: run one kernel through libvgpu, on either backend: the vgpu
 * DRM driver (drm) or the in-process execution core (sim).
 *
 * Each --buffer is a buffer object of the device, zero-filled or loaded
 * from a file; its GPU address is the device's.  Each --tensor-map is a
 * 128-byte struct vgpu_tensor_map (uapi/vgpu_hw.h) in a small buffer
 * object of its own, describing a tensor stored densely in an earlier
 * buffer (its base is that buffer's GPU address).  The kernel's parameters
 * are the buffers' and tensor maps' addresses, in the order the options
 * are given: pushed back to back for a kernel without .param
 * declarations, else set into its ptr/u64 parameters in turn.
 *
 * Exit status: 0 success, 1 host failure (out of memory, I/O, no device),
 * 2 usage, assembly or launch-parameter error (also a sim-only option on
 * the drm backend), 3 device exception (the record is printed to stderr).
 *
 * The command line is parsed in vgpu-run/options.c.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vgpu-run/run_priv.h"

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "vgpu-run writes tensor maps in host byte order"
#endif

/* "vgpu-run: " and a libvgpu error. */
static void lib_error(const char *what, int err)
{
	fprintf(stderr, "vgpu-run: %s: %s\n", what, strerror(-err));
}

/*
 * Create every buffer object, loading FILEs and writing tensor maps.
 * Returns 0, EXIT_USAGE (message printed) or EXIT_HOST.
 */
static int gmem_map(struct vgpu_device *dev, struct gmem *gm)
{
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		struct buffer *b = &gm->bufs[i];
		int err = vgpu_bo_new(dev, b->size, 0, &b->bo);
		void *map;

		if (err) {
			fprintf(stderr, "vgpu-run: cannot allocate %" PRIu64
				" bytes for '%s': %s\n", b->size, b->name,
				strerror(-err));
			return err == -E2BIG || err == -EINVAL ? EXIT_USAGE
							       : EXIT_HOST;
		}
		if (b->is_tmap) {
			/* the host is little-endian, as the descriptor */
			b->tm.base = vgpu_bo_gpu_address(gm->bufs[b->target].bo);
			err = vgpu_bo_write(b->bo, 0, &b->tm, sizeof(b->tm));
			if (err) {
				lib_error(b->name, err);
				return EXIT_HOST;
			}
			continue;
		}
		if (b->file) {
			FILE *f = fopen(b->file, "rb");
			size_t got;

			if (!f) {
				run_usage_error("--buffer %s: cannot open '%s': %s",
						b->name, b->file, strerror(errno));
				return EXIT_USAGE;
			}
			err = vgpu_bo_map(b->bo, &map);
			if (err) {
				fclose(f);
				lib_error(b->name, err);
				return EXIT_HOST;
			}
			got = fread(map, 1, b->size, f);
			if (ferror(f)) {
				fprintf(stderr, "vgpu-run: reading '%s': %s\n",
					b->file, strerror(errno));
				fclose(f);
				return EXIT_HOST;
			}
			if (got == b->size && fgetc(f) != EOF) {
				run_usage_error("--buffer %s: '%s' is larger than "
						"%" PRIu64 " bytes", b->name,
						b->file, b->size);
				fclose(f);
				return EXIT_USAGE;
			}
			fclose(f);
		}
	}
	return 0;
}

static void gmem_fini(struct gmem *gm)
{
	for (unsigned int i = 0; i < gm->nbufs; i++)
		vgpu_bo_free(gm->bufs[i].bo);
	free(gm->bufs);
}

/* Returns 0 or EXIT_HOST. */
static int dump_buffer(const struct buffer *b)
{
	uint64_t words = b->size / 4;
	uint8_t *p;
	void *map;
	int err = vgpu_bo_map(b->bo, &map);

	if (err) {
		lib_error(b->name, err);
		return EXIT_HOST;
	}
	p = map;
	printf("%s:\n", b->name);
	for (uint64_t i = 0; i < words; i++, p += 4) {
		uint32_t v = (uint32_t)p[0] | (uint32_t)p[1] << 8 |
			     (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;

		printf("%08" PRIx32 "%c", v,
		       (i % 8 == 7 || i + 1 == words) ? '\n' : ' ');
	}
	return 0;
}

static bool param_is_pointer(uint32_t type)
{
	return type == VGPU_ARG_PTR || type == VGPU_ARG_U64;
}

/*
 * Check that the buffers fit the kernel's parameters before any is
 * created: without declared parameters at most VGPU_MAX_PARAM_BYTES / 8
 * of them, with them exactly one per ptr/u64 parameter.  Returns -1 to go
 * on, or EXIT_USAGE.
 */
static int check_params(const struct vgpu_kernel *k, const struct gmem *gm)
{
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info a;
	unsigned int want = 0;

	vgpu_kernel_info(k, &ki);
	if (!ki.nparams) {
		if (gm->nbufs * 8ull > VGPU_MAX_PARAM_BYTES) {
			run_usage_error("too many buffers and tensor maps (at most %u)",
					VGPU_MAX_PARAM_BYTES / 8);
			return EXIT_USAGE;
		}
		return -1;
	}
	for (uint32_t i = 0; i < ki.nparams; i++)
		if (!vgpu_kernel_arg(k, i, &a))
			want += param_is_pointer(a.type);
	if (want != gm->nbufs) {
		run_usage_error("kernel '%s' takes %u pointer parameter%s but %u "
				"--buffer/--tensor-map %s given", ki.name, want,
				want == 1 ? "" : "s", gm->nbufs,
				gm->nbufs == 1 ? "was" : "were");
		return EXIT_USAGE;
	}
	return -1;
}

/* Is there a declared parameter that starts at @off?  (Then @a is it.) */
static bool param_at(const struct vgpu_kernel *k, uint32_t off, struct vgpu_arg_info *a)
{
	for (uint32_t i = 0; !vgpu_kernel_arg(k, i, a); i++)
		if (a->offset == off)
			return true;
	return false;
}

/*
 * --arg values at PTX's offsets.  With declared parameters each value
 * must start where one does, with its size, and none may be left over
 * (but the front end's padding).  Returns 0 or EXIT_USAGE.
 */
static int set_kargs(const struct vgpu_kernel *k, const struct gmem *gm,
		     const struct options *o, struct vgpu_args *args)
{
	struct vgpu_kernel_info ki;
	struct vgpu_arg_info a;
	uint32_t off = 0;

	vgpu_kernel_info(k, &ki);
	for (unsigned int i = 0; i < o->nkargs; i++) {
		const struct karg *ka = &o->kargs[i];
		const struct buffer *b = &gm->bufs[ka->ref];
		uint32_t size = ka->type <= KA_F32 ? 4 : 8, align = size;
		uint8_t data[128];
		uint64_t v = ka->bits;

		if (ka->type == KA_PTR || ka->type == KA_TMAP)
			v = vgpu_bo_gpu_address(b->bo);
		memcpy(data, &v, 8);
		if (ka->type == KA_TMAP) {
			uint32_t at8 = (off + 7) & ~7u;

			/* by value unless the parameter there is a u64/ptr */
			if (!ki.nparams || !param_at(k, at8, &a) || a.size != 8) {
				size = sizeof(b->tm);
				align = 64;
				memcpy(data, &b->tm, sizeof(b->tm));
			}
		}
		off = (off + align - 1) & ~(align - 1);
		if (ki.nparams && (!param_at(k, off, &a) ||
				   (a.size != size && size != sizeof(b->tm)))) {
			run_usage_error("--arg %s (argument %u): kernel '%s' has no %u-byte "
					"parameter at offset %u", ka->spec, i + 1, ki.name,
					size, off);
			return EXIT_USAGE;
		}
		if (off + size > VGPU_MAX_PARAM_BYTES) {
			run_usage_error("--arg %s: the parameters exceed %u bytes", ka->spec,
					VGPU_MAX_PARAM_BYTES);
			return EXIT_USAGE;
		}
		if (vgpu_args_set_raw(args, off, data, size))
			return EXIT_USAGE;
		off += size;
	}
	for (uint32_t i = 0; !vgpu_kernel_arg(k, i, &a); i++)
		if (a.offset >= off && strncmp(a.name, "pad", 3) && a.type != VGPU_ARG_LOCAL &&
		    a.type != VGPU_ARG_DATA && a.type != VGPU_ARG_PRINTF &&
		    a.type != VGPU_ARG_PARAMS && a.type != VGPU_ARG_ENVREGS) {
			run_usage_error("kernel '%s' takes more parameters than the %u --arg "
					"value%s given (next: '%s' at offset %u)", ki.name,
					o->nkargs, o->nkargs == 1 ? "" : "s", a.name, a.offset);
			return EXIT_USAGE;
		}
	/* every buffer is reachable by the kernel (tensor maps' data too) */
	for (unsigned int i = 0; i < gm->nbufs; i++)
		if (vgpu_args_use_bo(args, gm->bufs[i].bo))
			return EXIT_HOST;
	return 0;
}

/*
 * The launch's arguments: without declared parameters, the addresses of
 * the buffers and tensor maps back to back, in command-line order; with
 * them, each ptr/u64 parameter in turn gets the next one's address.
 * Returns 0, EXIT_USAGE or EXIT_HOST (message printed).
 */
static int build_args(const struct vgpu_kernel *k, const struct gmem *gm,
		      const struct options *o, struct vgpu_args **out)
{
	struct vgpu_kernel_info ki;
	struct vgpu_args *args;
	unsigned int next = 0;
	int err;

	err = vgpu_args_new(k, &args);
	if (err) {
		lib_error("arguments", err);
		return EXIT_HOST;
	}
	if (o->nkargs) {
		err = set_kargs(k, gm, o, args);
		if (err) {
			vgpu_args_free(args);
			return err;
		}
		*out = args;
		return 0;
	}
	vgpu_kernel_info(k, &ki);
	if (!ki.nparams) {
		for (unsigned int i = 0; i < gm->nbufs && !err; i++)
			err = vgpu_args_push_bo(args, gm->bufs[i].bo, 0);
	} else {
		for (uint32_t i = 0; i < ki.nparams && !err; i++) {
			struct vgpu_arg_info a;

			err = vgpu_kernel_arg(k, i, &a);
			if (!err && param_is_pointer(a.type))
				err = vgpu_args_set_bo(args, i,
						       gm->bufs[next++].bo, 0);
		}
	}
	if (err) {
		vgpu_args_free(args);
		if (err == -E2BIG) {
			run_usage_error("too many buffers and tensor maps for one "
					"launch (at most %u)", VGPU_SUBMIT_MAX_BOS - 2);
			return EXIT_USAGE;
		}
		lib_error("arguments", err);
		return err == -ENOMEM ? EXIT_HOST : EXIT_USAGE;
	}
	*out = args;
	return 0;
}

/*
 * Open the device: --device NAME, else --backend, else auto.  With both,
 * the device must be of that backend.  Returns 0 or the exit status.
 */
static int open_device(const struct options *o, struct vgpu_device **dev)
{
	const char *name = o->device ? o->device : o->backend;
	int err = vgpu_device_open(name, dev);

	if (err == -EINVAL) {
		if (o->device)
			run_usage_error("--device: '%s' names no device (sim, drm, "
					"a PCI slot or a /dev/dri node)", o->device);
		else
			run_usage_error("VGPU_BACKEND='%s' is not drm, sim or auto",
					getenv("VGPU_BACKEND") ? getenv("VGPU_BACKEND")
							       : "");
		return EXIT_USAGE;
	}
	if (err) {
		fprintf(stderr, "vgpu-run: cannot open device '%s': %s%s\n",
			name ? name : "auto", strerror(-err),
			err == -ENODEV ? " (no such vgpu device; see vgpu-info)"
				       : "");
		return EXIT_HOST;
	}
	if (o->device && o->backend && strcmp(o->backend, "auto") &&
	    strcmp(o->backend, vgpu_backend_name(vgpu_device_backend(*dev)))) {
		run_usage_error("--device %s is a %s device, not --backend %s",
				o->device,
				vgpu_backend_name(vgpu_device_backend(*dev)),
				o->backend);
		vgpu_device_close(*dev);
		*dev = NULL;
		return EXIT_USAGE;
	}
	return 0;
}

/* A sim-only setting: -EOPNOTSUPP on drm is a usage error. */
static int sim_setting(struct vgpu_device *dev, const char *opt, int err)
{
	if (!err)
		return 0;
	if (err == -EOPNOTSUPP) {
		run_usage_error("%s: only the sim backend has this setting (the %s "
				"backend's device is QEMU's: set it there)", opt,
				vgpu_backend_name(vgpu_device_backend(dev)));
		return EXIT_USAGE;
	}
	fprintf(stderr, "vgpu-run: %s: %s\n", opt, strerror(-err));
	return err == -EINVAL || err == -ERANGE ? EXIT_USAGE : EXIT_HOST;
}

static int apply_sim_settings(struct vgpu_device *dev, const struct options *o)
{
	int status = 0;

	if (o->tma_latency)
		status = sim_setting(dev, "--tma-latency",
				     vgpu_device_set_sim_option(dev,
								VGPU_SIM_TMA_LATENCY,
								o->tma_latency));
	if (!status && o->tma_bandwidth)
		status = sim_setting(dev, "--tma-bandwidth",
				     vgpu_device_set_sim_option(dev,
								VGPU_SIM_TMA_BANDWIDTH,
								o->tma_bandwidth));
	if (!status && o->trace)
		status = sim_setting(dev, "--trace",
				     vgpu_device_set_trace(dev, stderr));
	return status;
}

/* Load the program.  Returns 0 or the exit status. */
static int load_program(struct vgpu_device *dev, const char *path,
			struct vgpu_program **prog)
{
	static char log[16384];
	FILE *f = fopen(path, "rb");
	int err;

	if (!f) {
		run_usage_error("cannot open '%s': %s", path, strerror(errno));
		return EXIT_USAGE;
	}
	fclose(f);
	log[0] = '\0';
	err = vgpu_program_load_file(dev, path, prog, log, sizeof(log));
	if (!err)
		return 0;
	if (log[0])
		fprintf(stderr, "%s%s", log, log[strlen(log) - 1] == '\n' ? "" : "\n");
	else
		fprintf(stderr, "vgpu-run: %s: %s\n", path, strerror(-err));
	return err == -ENOMEM || err == -EIO ? EXIT_HOST : EXIT_USAGE;
}

/* The kernel to run, or NULL after a message. */
static const struct vgpu_kernel *pick_kernel(const struct vgpu_program *prog,
					     const char *name)
{
	const struct vgpu_kernel *k;
	struct vgpu_kernel_info ki;

	if (!name)
		return vgpu_program_kernel(prog, 0, &k) ? NULL : k;
	if (!vgpu_program_find_kernel(prog, name, &k))
		return k;
	fprintf(stderr, "vgpu-run: no kernel named '%s'; the program has:", name);
	for (unsigned int i = 0; i < vgpu_program_kernel_count(prog); i++) {
		if (vgpu_program_kernel(prog, i, &k))
			continue;
		vgpu_kernel_info(k, &ki);
		fprintf(stderr, " %.*s", VGPU_OBJ_NAME_MAX, ki.name);
	}
	fputc('\n', stderr);
	return NULL;
}

/*
 * How a failed job is reported: its exception record described (exit 3),
 * except a launch the device refused (VGPU_EXC_BAD_LAUNCH), which is a
 * launch-parameter error (exit 2) as before the job ran.
 */
static int report_failure(struct vgpu_job *job, int err)
{
	struct vgpu_exception_record rec;
	char text[8192];
	int n;

	fflush(stdout);
	if (!vgpu_job_exception(job, &rec)) {
		if (rec.code == VGPU_EXC_BAD_LAUNCH) {
			run_usage_error("invalid launch: %.*s",
					(int)strnlen(rec.msg, sizeof(rec.msg)),
					rec.msg[0] ? rec.msg
						   : vgpu_exception_name(rec.code));
			return EXIT_USAGE;
		}
		n = vgpu_job_describe(job, text, sizeof(text));
		if (n >= 0) {
			fprintf(stderr, "vgpu-run: %s%s", text,
				n && text[strlen(text) - 1] == '\n' ? "" : "\n");
			return EXIT_DEVICE;
		}
	}
	switch (err) {
	case -ETIMEDOUT:
		fprintf(stderr, "vgpu-run: the job ran past the driver's timeout "
				"and was stopped (the device was reset)\n");
		return EXIT_DEVICE;
	case -ECANCELED:
		fprintf(stderr, "vgpu-run: the job could not run: %s\n",
			strerror(-err));
		return EXIT_DEVICE;
	default:
		fprintf(stderr, "vgpu-run: the job failed: %s\n", strerror(-err));
		return err == -EIO || err == -EFAULT ? EXIT_DEVICE : EXIT_HOST;
	}
}

/* Write @what of @job to @path; non-zero (said on stderr) on failure. */
static int write_file(const char *path, struct vgpu_job *job,
		      int (*what)(struct vgpu_job *, FILE *))
{
	FILE *f = fopen(path, "w");
	uint32_t n = 0;
	uint64_t dropped = 0;
	const struct vgpu_trace_event *ev;
	int err;

	if (!f) {
		fprintf(stderr, "vgpu-run: %s: %s\n", path, strerror(errno));
		return -1;
	}
	err = what(job, f);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		fprintf(stderr, "vgpu-run: %s: %s\n", path,
			err == -ENODATA ? "the launch recorded no timeline" :
			err == -EIO ? "the timeline buffer is corrupt, or writing failed" :
				      strerror(-err));
		return -1;
	}
	if (!vgpu_job_timeline(job, &ev, &n, &dropped) && dropped)
		fprintf(stderr, "vgpu-run: %s: %llu events did not fit the timeline buffer and were dropped (--timeline-bytes)\n",
			path, (unsigned long long)dropped);
	return 0;
}

/* Open, load, launch, report.  Returns the exit status. */
static int run(const struct options *o, struct gmem *gm)
{
	struct vgpu_launch_config cfg = { 0 };
	struct vgpu_device *dev = NULL;
	struct vgpu_program *prog = NULL;
	const struct vgpu_kernel *k;
	struct vgpu_kernel_info ki;
	struct vgpu_args *args = NULL;
	struct vgpu_job *job = NULL;
	int status, err;

	status = open_device(o, &dev);
	if (status)
		return status;
	status = apply_sim_settings(dev, o);
	if (status)
		goto out;
	status = load_program(dev, o->path, &prog);
	if (status)
		goto out;
	status = EXIT_USAGE;
	k = pick_kernel(prog, o->kernel_name);
	if (!k)
		goto out;
	vgpu_kernel_info(k, &ki);
	if (o->smem_dyn + ki.smem_static > UINT32_MAX) {
		run_usage_error("--smem: too much shared memory");
		goto out;
	}
	status = o->nkargs ? -1 : check_params(k, gm);
	if (status >= 0)
		goto out;
	status = gmem_map(dev, gm);
	if (status)
		goto out;
	status = build_args(k, gm, o, &args);
	if (status)
		goto out;

	memcpy(cfg.grid, o->grid, sizeof(cfg.grid));
	memcpy(cfg.block, o->block, sizeof(cfg.block));
	memcpy(cfg.cluster, o->cluster, sizeof(cfg.cluster));
	cfg.smem_bytes = (uint32_t)o->smem_dyn;
	cfg.flags = (o->random_sched ? VGPU_LAUNCH_RANDOM_SCHED : 0) |
		    (o->no_sanitize ? 0 : VGPU_LAUNCH_SANITIZE) |
		    (o->timeline || o->deadlock_graph ? VGPU_LAUNCH_TIMELINE : 0);
	if (o->timeline_bytes) {
		err = vgpu_device_set_timeline_bytes(dev, o->timeline_bytes);
		if (err) {
			run_usage_error("--timeline-bytes %llu: a multiple of 8 from 32 to %u",
					(unsigned long long)o->timeline_bytes,
					VGPU_TRACE_MAX_BYTES);
			status = EXIT_USAGE;
			goto out;
		}
	}
	cfg.seed = o->seed;
	cfg.budget = o->budget;
	err = vgpu_kernel_launch(k, &cfg, args, &job);
	if (err) {
		char why[256];

		if (err == -EINVAL && vgpu_kernel_launch_check(k, &cfg, why, sizeof(why))) {
			run_usage_error("invalid launch: %s", why);
			status = EXIT_USAGE;
		} else if (err == -EINVAL || err == -E2BIG) {
			run_usage_error("invalid launch: %s", strerror(-err));
			status = EXIT_USAGE;
		} else {
			lib_error("launch", err);
			status = EXIT_HOST;
		}
		goto out;
	}
	err = vgpu_job_wait(job, VGPU_TIMEOUT_INFINITE);
	if (vgpu_job_printf(job)) /* what the kernel printed, as CUDA shows it */
		fputs(vgpu_job_printf(job), stdout);
	if (o->timeline && write_file(o->timeline, job, vgpu_job_write_timeline))
		status = EXIT_HOST;
	if (err && o->deadlock_graph &&
	    write_file(o->deadlock_graph, job, vgpu_job_write_deadlock_graph))
		status = EXIT_HOST;
	if (err) {
		fflush(stdout);
		if (!status)
			status = report_failure(job, err);
		else
			report_failure(job, err);
		goto out;
	}
	if (status)
		goto out;
	status = 0;
	for (unsigned int i = 0; i < o->ndumps && !status; i++)
		status = dump_buffer(gmem_find_name(gm, o->dumps[i]));
	if (fflush(stdout))
		status = EXIT_HOST;
out:
	vgpu_job_free(job);
	vgpu_args_free(args);
	/* the buffers go before the device's last reference */
	for (unsigned int i = 0; i < gm->nbufs; i++) {
		vgpu_bo_free(gm->bufs[i].bo);
		gm->bufs[i].bo = NULL;
	}
	vgpu_program_free(prog);
	vgpu_device_close(dev);
	return status;
}

int main(int argc, char **argv)
{
	struct options o = {
		.grid = { 1, 1, 1 },
		.block = { 32, 1, 1 },
		.cluster = { 1, 1, 1 },
		.seed = 1,
	};
	struct gmem gm = { 0 };
	int status;

	status = run_parse_args(argc, argv, &o, &gm);
	if (status < 0)
		status = run(&o, &gm);
	gmem_fini(&gm);
	free(o.dumps);
	free(o.kargs);
	return status;
}
