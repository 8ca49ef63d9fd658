/* SPDX-License-Identifier: MIT */
/*
 * vgpu-run internals: what its two files share.  vgpu-run/options.c
 * parses the command line into struct options and struct gmem;
 * vgpu-run.c opens the device, loads the program, creates the buffers,
 * launches and reports.
 */
#ifndef VGPU_RUN_PRIV_H
#define VGPU_RUN_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "vgpu.h"

#define EXIT_HOST 1
#define EXIT_USAGE 2
#define EXIT_DEVICE 3

/* A --buffer, or a --tensor-map (@is_tmap): one buffer object. */
struct buffer {
	char *name;	  /* points into argv */
	const char *file; /* NULL: zero-filled */
	uint64_t size;	  /* bytes asked for (the BO rounds up to pages) */
	struct vgpu_bo *bo;
	bool is_tmap;
	unsigned int target;	  /* tensor map: index of its buffer */
	struct vgpu_tensor_map tm; /* tensor map: the descriptor, less base */
};

struct gmem {
	struct buffer *bufs;
	unsigned int nbufs;
};

/* A --arg TYPE:VALUE: the kernel's parameters, in order, laid out as PTX
 * lays them out (natural alignment; a tensor map by value at 64). */
enum karg_type { KA_U32, KA_S32, KA_F32, KA_U64, KA_S64, KA_F64, KA_PTR, KA_TMAP };

struct karg {
	enum karg_type type;
	uint64_t bits;	  /* the value (a float's bits) */
	unsigned int ref; /* ptr, tmap: index of the buffer or tensor map */
	const char *spec; /* as given, for messages */
};

struct options {
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint64_t smem_dyn;
	uint64_t seed;
	uint64_t budget;
	uint64_t tma_latency;
	uint64_t tma_bandwidth;
	bool random_sched;
	bool no_sanitize;
	bool trace;
	const char *timeline;	    /* --timeline FILE */
	const char *deadlock_graph; /* --deadlock-graph FILE */
	uint64_t timeline_bytes;
	struct karg *kargs;
	unsigned int nkargs;
	const char *kernel_name;
	const char *device;
	const char *backend;
	const char *path;
	const char **dumps;
	unsigned int ndumps;
};

/* options.c */
void run_usage_error(const char *fmt, ...)
	__attribute__((format(printf, 1, 2)));
struct buffer *gmem_find_name(struct gmem *gm, const char *name);
/* Returns -1 to go on, or the exit status. */
int run_parse_args(int argc, char **argv, struct options *o, struct gmem *gm);

#endif /* VGPU_RUN_PRIV_H */
