// SPDX-License-Identifier: MIT
/*
 * libcuda.so.1: initialisation, devices, errors, the handle registry and
 * contexts (docs/cuda.md).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_priv.h"
#include "thread_block.h"

pthread_mutex_t cuv_lock = PTHREAD_MUTEX_INITIALIZER;

/* protected by cuv_lock; cuv_initialized_flag is also read without it
 * (set once, after the devices) */
atomic_bool cuv_initialized_flag;
static struct cuv_device *devices;
static int ndevices;

/* ---- the threads' blocks (cuda_priv.h, cuv_self) ---- */

VGPU_THREAD_BLOCKS(cuv_thread, cuv_tls, cuv_thread_none, cuv_thread_new, NULL)

/* ---- warnings, errno codes ---- */

void cuv_warn(const char *fmt, ...)
{
	va_list ap;

	fputs("libcuda (vGPU): ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

CUresult cuv_errno(int err)
{
	switch (err) {
	case 0:
		return CUDA_SUCCESS;
	case -EINVAL:
		return CUDA_ERROR_INVALID_VALUE;
	case -ENOMEM:
	case -E2BIG:
	case -ENOSPC:
		return CUDA_ERROR_OUT_OF_MEMORY;
	case -ENODEV:
		return CUDA_ERROR_DEVICE_UNAVAILABLE;
	case -ENOENT:
		return CUDA_ERROR_NOT_FOUND;
	case -ETIME:
		return CUDA_ERROR_NOT_READY;
	case -EPERM:
		return CUDA_ERROR_NOT_PERMITTED;
	case -EOPNOTSUPP:
		return CUDA_ERROR_NOT_SUPPORTED;
	default:
		return CUDA_ERROR_UNKNOWN;
	}
}

/* ---- the handle registry: a set of live pointers with their kind ---- */

struct slot {
	const void *p; /* NULL: empty; &tomb: deleted */
	enum cuv_kind kind;
};
static struct slot *slots;
static size_t nslots, nused; /* nused counts tombstones too */
static const char tomb;

static size_t hash_ptr(const void *p)
{
	uint64_t x = (uint64_t)(uintptr_t)p;

	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	return (size_t)x;
}

static void registry_insert(const void *p, enum cuv_kind kind)
{
	size_t i = hash_ptr(p) & (nslots - 1);

	while (slots[i].p && slots[i].p != &tomb)
		i = (i + 1) & (nslots - 1);
	if (!slots[i].p)
		nused++;
	slots[i].p = p;
	slots[i].kind = kind;
}

static struct slot *registry_find(const void *p)
{
	size_t i;

	if (!nslots || !p)
		return NULL;
	i = hash_ptr(p) & (nslots - 1);
	while (slots[i].p) {
		if (slots[i].p == p)
			return &slots[i];
		i = (i + 1) & (nslots - 1);
	}
	return NULL;
}

void cuv_handle_add(void *p, enum cuv_kind kind)
{
	pthread_mutex_lock(&cuv_lock);
	if ((nused + 1) * 2 > nslots) {
		struct slot *old = slots;
		size_t n = nslots, cap = nslots ? nslots * 2 : 256;
		struct slot *fresh = calloc(cap, sizeof(*fresh));

		if (!fresh) { /* keep the old table: lookups of @p fail */
			pthread_mutex_unlock(&cuv_lock);
			cuv_warn("out of memory in the handle registry");
			return;
		}
		slots = fresh;
		nslots = cap;
		nused = 0;
		for (size_t i = 0; i < n; i++)
			if (old[i].p && old[i].p != &tomb)
				registry_insert(old[i].p, old[i].kind);
		free(old);
	}
	registry_insert(p, kind);
	pthread_mutex_unlock(&cuv_lock);
}

/*
 * Every deletion bumps the registry's generation.  A thread remembers the
 * handles it found live (a small direct-mapped cache, its block's seen), each
 * with the generation it was found in: while no handle has been deleted
 * since, the answer stands without cuv_lock (cuv_handle_ok_in).
 */
atomic_ulong cuv_registry_gen = 1;

void cuv_handle_del(void *p)
{
	struct slot *s;

	pthread_mutex_lock(&cuv_lock);
	s = registry_find(p);
	if (s)
		s->p = &tomb;
	atomic_fetch_add_explicit(&cuv_registry_gen, 1, memory_order_release);
	pthread_mutex_unlock(&cuv_lock);
}

bool cuv_handle_lookup(struct cuv_thread *t, const void *p, enum cuv_kind kind)
{
	unsigned long gen;
	struct slot *s;
	bool ok;

	pthread_mutex_lock(&cuv_lock);
	s = registry_find(p);
	ok = s && s->kind == kind;
	gen = atomic_load_explicit(&cuv_registry_gen, memory_order_relaxed) << 8 | kind;
	pthread_mutex_unlock(&cuv_lock);
	if (ok && cuv_thread_writable(t))
		cuv_seen_put(t, p, gen);
	return ok;
}

/* ---- initialisation and devices ---- */

static int add_device(const char *open_name)
{
	struct vgpu_device *dev;
	struct cuv_device *d;
	int ret = vgpu_device_open(open_name, &dev);

	if (ret)
		return ret;
	d = &devices[ndevices];
	memset(d, 0, sizeof(*d));
	snprintf(d->open_name, sizeof(d->open_name), "%s", open_name);
	ret = vgpu_device_query(dev, &d->info);
	vgpu_device_close(dev);
	if (ret)
		return ret;
	snprintf(d->name, sizeof(d->name), "vGPU %s (%s%s%s)",
		 d->info.backend == VGPU_BACKEND_SIM ? "sim" : "drm", d->info.driver,
		 d->info.pci_slot[0] ? " at " : "", d->info.pci_slot);
	ndevices++;
	return 0;
}

static CUresult find_devices(void)
{
	const char *env = getenv("VGPU_BACKEND");
	struct vgpu_device_desc descs[16];
	unsigned int count = 0;
	bool want_drm = env && !strcmp(env, "drm");
	bool want_sim = env && !strcmp(env, "sim");

	if (env && *env && !want_drm && !want_sim && strcmp(env, "auto")) {
		cuv_warn("VGPU_BACKEND=%s: expected sim, drm or auto", env);
		return CUDA_ERROR_NO_DEVICE;
	}
	free(devices); /* an earlier cuInit found none */
	ndevices = 0;
	devices = calloc(16, sizeof(*devices));
	if (!devices)
		return CUDA_ERROR_OUT_OF_MEMORY;
	if (!want_sim && vgpu_device_list(descs, 16, &count) == 0)
		for (unsigned int i = 0; i < count && i < 16; i++)
			if (add_device(descs[i].pci_slot))
				cuv_warn("cannot open the vgpu device at %s", descs[i].pci_slot);
	if (!ndevices && !want_drm && add_device("sim"))
		return CUDA_ERROR_NO_DEVICE;
	return ndevices ? CUDA_SUCCESS : CUDA_ERROR_NO_DEVICE;
}

/*
 * VGPU_RANDOM_SCHEDULE=SEED: every launch of the process runs under the
 * device's seeded random interleaving of warps (VGPU_LAUNCH_RANDOM_SCHED),
 * the i-th launch with seed SEED + i, so that a CUDA program is tested
 * under many schedules unchanged (scripts/corpus-schedules.sh).
 */
bool cuv_sched_random;
uint64_t cuv_sched_seed;
atomic_ulong cuv_sched_launches;

static void sched_init(void)
{
	const char *e = getenv("VGPU_RANDOM_SCHEDULE");
	char *end;
	unsigned long long v;

	cuv_sched_random = false;
	if (!e || !*e)
		return;
	errno = 0;
	v = strtoull(e, &end, 0);
	if (*end || errno || e[0] == '-') {
		cuv_warn("VGPU_RANDOM_SCHEDULE=%s: not a seed (a number), ignored", e);
		return;
	}
	cuv_sched_random = true;
	cuv_sched_seed = v;
}

CUresult CUDAAPI cuInit(unsigned int Flags)
{
	CUresult r = CUDA_SUCCESS;

	if (Flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&cuv_lock);
	if (!atomic_load(&cuv_initialized_flag)) {
		sched_init();
		r = find_devices();
		atomic_store(&cuv_initialized_flag, r == CUDA_SUCCESS);
	}
	pthread_mutex_unlock(&cuv_lock);
	return r;
}

/*
 * A device exception is sticky for the whole process, as in CUDA ("the
 * process must be terminated and relaunched"): the first one is kept and
 * every later call that needs a context returns it, in any context, and
 * so do cuCtxCreate and cuDevicePrimaryCtxRetain; cuCtxDestroy,
 * cuDevicePrimaryCtxRelease/Reset and the current-context calls succeed
 * (what NVIDIA's driver answers: tests/cuda/real-gpu/probe.h200.log).
 */
_Atomic CUresult cuv_sticky_error;

void cuv_sticky_set(CUresult r)
{
	CUresult none = CUDA_SUCCESS;
	const char *name = "?";

	if (!r || !atomic_compare_exchange_strong(&cuv_sticky_error, &none, r))
		return;
	cuGetErrorName(r, &name);
	cuv_warn("%s is sticky: every later call of this process that needs a context "
		 "returns it, as CUDA's driver does (the process must be restarted)", name);
}

CUresult cuv_device(CUdevice dev, struct cuv_device **out)
{
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	if (dev < 0 || dev >= ndevices)
		return CUDA_ERROR_INVALID_DEVICE;
	*out = &devices[dev];
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDriverGetVersion(int *driverVersion)
{
	if (!driverVersion)
		return CUDA_ERROR_INVALID_VALUE;
	*driverVersion = CUDA_VERSION;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetCount(int *count)
{
	if (!count)
		return CUDA_ERROR_INVALID_VALUE;
	if (!cuv_initialized())
		return CUDA_ERROR_NOT_INITIALIZED;
	*count = ndevices;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGet(CUdevice *device, int ordinal)
{
	struct cuv_device *d;
	CUresult r;

	if (!device)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(ordinal, &d);
	if (r)
		return r;
	*device = ordinal;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetName(char *name, int len, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!name || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	snprintf(name, (size_t)len, "%s", d->name);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceGetUuid(CUuuid *uuid, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!uuid)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	/* stable for a device: "vGPU" and its ordinal and PCI identity */
	memset(uuid, 0, sizeof(*uuid));
	memcpy(uuid->bytes, "vGPU", 4);
	uuid->bytes[4] = (char)dev;
	snprintf(uuid->bytes + 5, 11, "%s", d->info.pci_slot[0] ? d->info.pci_slot + 5 : "sim");
	return CUDA_SUCCESS;
}

/* "0000:00:03.0" for a drm device, a made-up slot past the bus for sim */
CUresult CUDAAPI cuDeviceGetPCIBusId(char *pciBusId, int len, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!pciBusId || len <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	if (d->info.pci_slot[0])
		snprintf(pciBusId, (size_t)len, "%s", d->info.pci_slot);
	else
		snprintf(pciBusId, (size_t)len, "0000:ff:%02x.0", (unsigned int)dev);
	return CUDA_SUCCESS;
}

/* The device's memory: what VA space it offers, at most 64 GiB. */
static uint64_t total_mem(const struct cuv_device *d)
{
	uint64_t va = d->info.param[VGPU_PARAM_VA_SIZE];

	if (!va || va > (64ull << 30))
		va = 64ull << 30;
	return va;
}

CUresult CUDAAPI cuDeviceTotalMem(size_t *bytes, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!bytes)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	*bytes = (size_t)total_mem(d);
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuMemGetInfo(size_t *free_bytes, size_t *total)
{
	struct CUctx_st *ctx;
	CUresult r;

	if (!free_bytes || !total)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_current(&ctx);
	if (!r)
		r = cuv_sticky();
	if (r)
		return r;
	*total = (size_t)total_mem(ctx->cudev);
	pthread_mutex_lock(&ctx->lock);
	*free_bytes = *total;
	for (size_t i = 0; i < ctx->nallocs; i++)
		if (ctx->allocs[i].size < *free_bytes)
			*free_bytes -= ctx->allocs[i].size;
	pthread_mutex_unlock(&ctx->lock);
	return CUDA_SUCCESS;
}

/* Shared memory a CTA may use without opting in (CUDA's 48 KiB). */
#define CUV_SMEM_DEFAULT (48 * 1024)

CUresult CUDAAPI cuDeviceGetAttribute(int *pi, CUdevice_attribute attrib, CUdevice dev)
{
	struct cuv_device *d;
	const uint64_t *p;
	int smem, v;
	CUresult r;

	if (!pi)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	p = d->info.param;
	smem = (int)p[VGPU_PARAM_SMEM];
	switch (attrib) {
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
		v = (int)p[VGPU_PARAM_MAX_THREADS];
		break;
	/* the SMs' shape: the device model's occupancy limits */
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		v = (int)(p[VGPU_PARAM_WARPS_SM] * p[VGPU_PARAM_WARP_SIZE]);
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
		v = (int)p[VGPU_PARAM_CTAS_SM];
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_BLOCK:
	case CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR:
		v = (int)p[VGPU_PARAM_REGS_SM];
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR:
		v = (int)p[VGPU_PARAM_SMEM_SM];
		break;
	case CU_DEVICE_ATTRIBUTE_RESERVED_SHARED_MEMORY_PER_BLOCK:
		v = p[VGPU_PARAM_SMEM_SM] > p[VGPU_PARAM_SMEM] ?
			    (int)(p[VGPU_PARAM_SMEM_SM] - p[VGPU_PARAM_SMEM]) : 0;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
		v = CUV_MAX_BLOCK_Z;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
		v = (int)CUV_MAX_GRID_X;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
	case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
		v = CUV_MAX_GRID_YZ;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
		v = smem < CUV_SMEM_DEFAULT ? smem : CUV_SMEM_DEFAULT;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
		v = smem;
		break;
	case CU_DEVICE_ATTRIBUTE_TOTAL_CONSTANT_MEMORY:
		v = 65536;
		break;
	case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
		v = (int)p[VGPU_PARAM_WARP_SIZE];
		break;
	case CU_DEVICE_ATTRIBUTE_CLOCK_RATE:
	case CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE:
		v = 1000000; /* kHz: a nominal 1 GHz */
		break;
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		v = (int)p[VGPU_PARAM_SMS];
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		v = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_PCI_BUS_ID:
	case CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID:
	case CU_DEVICE_ATTRIBUTE_PCI_DOMAIN_ID: {
		unsigned int dom = 0, bus = 0, slot = 0, fn = 0;

		sscanf(d->info.pci_slot, "%x:%x:%x.%x", &dom, &bus, &slot, &fn);
		v = (int)(attrib == CU_DEVICE_ATTRIBUTE_PCI_BUS_ID ? bus :
			  attrib == CU_DEVICE_ATTRIBUTE_PCI_DEVICE_ID ? slot : dom);
		break;
	}
	case CU_DEVICE_ATTRIBUTE_UNIFIED_ADDRESSING:
	case CU_DEVICE_ATTRIBUTE_CAN_MAP_HOST_MEMORY:
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_KERNELS:
	case CU_DEVICE_ATTRIBUTE_STREAM_PRIORITIES_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
	case CU_DEVICE_ATTRIBUTE_CLUSTER_LAUNCH:
	case CU_DEVICE_ATTRIBUTE_TENSOR_MAP_ACCESS_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_COMPUTE_PREEMPTION_SUPPORTED:
	case CU_DEVICE_ATTRIBUTE_MANAGED_MEMORY: /* cuMemAllocManaged */
		v = 1;
		break;
	case CU_DEVICE_ATTRIBUTE_ASYNC_ENGINE_COUNT:
	case CU_DEVICE_ATTRIBUTE_INTEGRATED:
	case CU_DEVICE_ATTRIBUTE_ECC_ENABLED:
	case CU_DEVICE_ATTRIBUTE_KERNEL_EXEC_TIMEOUT:
	/* the host touches managed memory only while no kernel runs */
	case CU_DEVICE_ATTRIBUTE_CONCURRENT_MANAGED_ACCESS:
	case CU_DEVICE_ATTRIBUTE_PAGEABLE_MEMORY_ACCESS:
	case CU_DEVICE_ATTRIBUTE_COMPUTE_MODE: /* default */
	case CU_DEVICE_ATTRIBUTE_MULTICAST_SUPPORTED: /* none: cu_multicast.c */
		v = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE:
		v = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH:
		v = 64;
		break;
	case CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT:
	case CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT: /* cuMemAllocPitch's */
		v = 512;
		break;
	default:
		if ((int)attrib <= 0 || attrib >= CU_DEVICE_ATTRIBUTE_MAX)
			return CUDA_ERROR_INVALID_VALUE;
		v = 0; /* textures, surfaces and the rest: not offered */
		break;
	}
	*pi = v;
	return CUDA_SUCCESS;
}

CUresult CUDAAPI cuDeviceComputeCapability(int *major, int *minor, CUdevice dev)
{
	struct cuv_device *d;
	CUresult r;

	if (!major || !minor)
		return CUDA_ERROR_INVALID_VALUE;
	r = cuv_device(dev, &d);
	if (r)
		return r;
	*major = 9;
	*minor = 0;
	return CUDA_SUCCESS;
}

/* ---- errors ---- */

#define CUV_ERRORS(X)                                                                  \
	X(CUDA_SUCCESS, "no error")                                                    \
	X(CUDA_ERROR_INVALID_VALUE, "invalid argument")                                \
	X(CUDA_ERROR_OUT_OF_MEMORY, "out of memory")                                   \
	X(CUDA_ERROR_NOT_INITIALIZED, "initialization error: cuInit was not called")   \
	X(CUDA_ERROR_DEINITIALIZED, "driver shutting down")                            \
	X(CUDA_ERROR_STUB_LIBRARY, "stub library")                                     \
	X(CUDA_ERROR_DEVICE_UNAVAILABLE, "device unavailable")                         \
	X(CUDA_ERROR_NO_DEVICE, "no vGPU device (VGPU_BACKEND=sim|drm)")               \
	X(CUDA_ERROR_INVALID_DEVICE, "invalid device ordinal")                         \
	X(CUDA_ERROR_INVALID_IMAGE, "device kernel image is invalid")                  \
	X(CUDA_ERROR_INVALID_CONTEXT, "invalid device context")                        \
	X(CUDA_ERROR_CONTEXT_ALREADY_CURRENT, "context already current")               \
	X(CUDA_ERROR_NO_BINARY_FOR_GPU,                                                \
	  "no PTX for the device: build with -gencode arch=compute_90a,code=[sm_90a,compute_90a]") \
	X(CUDA_ERROR_UNSUPPORTED_LIMIT, "unsupported limit")                           \
	X(CUDA_ERROR_CONTEXT_ALREADY_IN_USE, "context already in use")                 \
	X(CUDA_ERROR_INVALID_PTX, "a PTX JIT compilation failed")                      \
	X(CUDA_ERROR_JIT_COMPILER_NOT_FOUND, "PTX JIT compiler not found")             \
	X(CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "unsupported PTX version")               \
	X(CUDA_ERROR_INVALID_SOURCE, "device kernel image is invalid")                 \
	X(CUDA_ERROR_FILE_NOT_FOUND, "file not found")                                 \
	X(CUDA_ERROR_SHARED_OBJECT_SYMBOL_NOT_FOUND, "shared object symbol not found") \
	X(CUDA_ERROR_SHARED_OBJECT_INIT_FAILED, "shared object initialization failed") \
	X(CUDA_ERROR_OPERATING_SYSTEM, "OS call failed")                               \
	X(CUDA_ERROR_INVALID_HANDLE, "invalid resource handle")                        \
	X(CUDA_ERROR_ILLEGAL_STATE, "illegal state")                                   \
	X(CUDA_ERROR_NOT_FOUND, "named symbol not found")                              \
	X(CUDA_ERROR_NOT_READY, "device not ready")                                    \
	X(CUDA_ERROR_ILLEGAL_ADDRESS, "an illegal memory access was encountered")      \
	X(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "too many resources requested for launch") \
	X(CUDA_ERROR_LAUNCH_TIMEOUT, "the launch timed out and was terminated")        \
	X(CUDA_ERROR_PRIMARY_CONTEXT_ACTIVE, "primary context active")                 \
	X(CUDA_ERROR_CONTEXT_IS_DESTROYED, "context is destroyed")                     \
	X(CUDA_ERROR_ASSERT, "device-side assert triggered")                           \
	X(CUDA_ERROR_HARDWARE_STACK_ERROR, "hardware stack error")                     \
	X(CUDA_ERROR_ILLEGAL_INSTRUCTION, "an illegal instruction was encountered")    \
	X(CUDA_ERROR_MISALIGNED_ADDRESS, "misaligned address")                         \
	X(CUDA_ERROR_INVALID_ADDRESS_SPACE, "operation not supported on global/shared address space") \
	X(CUDA_ERROR_INVALID_PC, "invalid program counter")                            \
	X(CUDA_ERROR_LAUNCH_FAILED, "unspecified launch failure")                      \
	X(CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "too many blocks in cooperative launch") \
	X(CUDA_ERROR_NOT_PERMITTED, "operation not permitted")                         \
	X(CUDA_ERROR_NOT_SUPPORTED, "operation not supported")                         \
	X(CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED, "operation not permitted when stream is capturing") \
	X(CUDA_ERROR_TIMEOUT, "wait operation timed out")                              \
	X(CUDA_ERROR_INVALID_CLUSTER_SIZE, "invalid cluster size")                     \
	X(CUDA_ERROR_FUNCTION_NOT_LOADED, "function not loaded")                       \
	X(CUDA_ERROR_UNKNOWN, "unknown error")

CUresult CUDAAPI cuGetErrorName(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
#define X(e, s)         \
	case e:         \
		*pStr = #e; \
		return CUDA_SUCCESS;
		CUV_ERRORS(X)
#undef X
	default:
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
}

CUresult CUDAAPI cuGetErrorString(CUresult error, const char **pStr)
{
	if (!pStr)
		return CUDA_ERROR_INVALID_VALUE;
	switch (error) {
#define X(e, s)        \
	case e:        \
		*pStr = s; \
		return CUDA_SUCCESS;
		CUV_ERRORS(X)
#undef X
	default:
		*pStr = NULL;
		return CUDA_ERROR_INVALID_VALUE;
	}
}
