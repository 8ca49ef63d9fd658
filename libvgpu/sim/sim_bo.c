/* SPDX-License-Identifier: MIT */
/*
 * sim backend: buffer objects, the device's GPU address space, PRIME, and
 * the core's view of global memory.
 *
 * A BO is a memfd mapped once (MAP_SHARED) for the core; CPU mappings are
 * further mappings of the same memfd (vgpu_bo_map_at_gpu_address()'s one
 * at the BO's GPU address), and PRIME hands out the memfd, so
 * every mapping, in any device, sees the same pages.  VAs are allocated
 * as vgpu.ko's drm_mm does (best fit from VGPU_PARAM_VA_START, one guard
 * page after each BO), and the page tables vgpu.ko would have allocated
 * are tracked only so that an MMU fault reports the level its walk would
 * fail at.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sim_priv.h"

#define SIM_MEMFD_NAME "vgpu-sim-bo:flags="

static uint64_t sim_page_align(uint64_t v)
{
	return (v + SIM_PAGE_SIZE - 1) & ~(SIM_PAGE_SIZE - 1);
}

/* ---- handles ---- */

struct sim_bo *vgpu_sim_bo_lookup(struct vgpu_sim *sim, uint32_t handle)
{
	if (!handle || handle > sim->nbos)
		return NULL;
	return sim->bos[handle - 1];
}

/* The lowest free handle (idr_alloc(.., 1, 0)) for @bo. */
static int sim_handle_alloc(struct vgpu_sim *sim, struct sim_bo *bo)
{
	struct sim_bo **t;
	uint32_t i;

	for (i = 0; i < sim->nbos; i++)
		if (!sim->bos[i])
			break;
	if (i == sim->nbos) {
		if (sim->nbos == INT32_MAX)
			return -ENOSPC;
		if (sim->nbos == sim->bos_cap) {
			uint32_t cap = sim->bos_cap ? 2 * sim->bos_cap : 16;

			t = realloc(sim->bos, cap * sizeof(*t));
			if (!t)
				return -ENOMEM;
			sim->bos = t;
			sim->bos_cap = cap;
		}
		sim->bos[sim->nbos++] = NULL;
	}
	sim->bos[i] = bo;
	bo->handle = i + 1;
	return 0;
}

/* ---- address space ---- */

/* Key of the page table at @level (0 = leaf) that covers @va. */
static uint64_t sim_table_key(uint32_t level, uint64_t va)
{
	return (uint64_t)level << 62 |
	       va >> (VGPU_PAGE_SHIFT + 9u * (level + 1));
}

/* Index of the first key >= @key. */
static uint32_t sim_table_pos(const struct vgpu_sim *sim, uint64_t key)
{
	uint32_t lo = 0, hi = sim->ntables;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sim->tables[mid] < key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool sim_table_exists(const struct vgpu_sim *sim, uint32_t level,
			     uint64_t va)
{
	uint64_t key = sim_table_key(level, va);
	uint32_t pos = sim_table_pos(sim, key);

	return pos < sim->ntables && sim->tables[pos] == key;
}

/* The tables vgpu_pte(.., alloc) creates to map [@va, @va + @size). */
static int sim_tables_add(struct vgpu_sim *sim, uint64_t va, uint64_t size)
{
	for (uint32_t level = 0; level < VGPU_PT_LEVELS - 1; level++) {
		uint64_t first = sim_table_key(level, va);
		uint64_t last = sim_table_key(level, va + size - 1);

		for (uint64_t key = first; key <= last; key++) {
			uint32_t pos = sim_table_pos(sim, key);

			if (pos < sim->ntables && sim->tables[pos] == key)
				continue;
			if (sim->ntables == sim->tables_cap) {
				uint32_t cap = sim->tables_cap ? 2 * sim->tables_cap : 64;
				uint64_t *t = realloc(sim->tables, cap * sizeof(*t));

				if (!t)
					return -ENOMEM;
				sim->tables = t;
				sim->tables_cap = cap;
			}
			memmove(&sim->tables[pos + 1], &sim->tables[pos],
				(sim->ntables - pos) * sizeof(*sim->tables));
			sim->tables[pos] = key;
			sim->ntables++;
		}
	}
	return 0;
}

/* The level at which a walk for unmapped @va fails (vgpu_mmu_translate). */
static uint32_t sim_fault_level(const struct vgpu_sim *sim, uint64_t va)
{
	for (uint32_t level = VGPU_PT_LEVELS - 1; level > 0; level--)
		if (!sim_table_exists(sim, level - 1, va))
			return level;
	return 0;
}

/*
 * A VA for @size bytes plus the guard page: best fit, lowest address
 * among equals, at the start of the hole (drm_mm, DRM_MM_INSERT_BEST).
 * *@pos is where the BO goes in @map.
 */
static int sim_va_alloc(const struct vgpu_sim *sim, uint64_t size,
			uint64_t *va, uint32_t *pos)
{
	uint64_t need = size + SIM_PAGE_SIZE, best_hole = UINT64_MAX;
	uint64_t start = SIM_VA_START;
	bool found = false;

	for (uint32_t i = 0; i <= sim->nmap; i++) {
		uint64_t end = i < sim->nmap ? sim->map[i]->va : SIM_VA_END;
		uint64_t hole = end - start;

		if (hole >= need && hole < best_hole) {
			best_hole = hole;
			*va = start;
			*pos = i;
			found = true;
		}
		if (i < sim->nmap)
			start = sim->map[i]->va + sim->map[i]->size + SIM_PAGE_SIZE;
	}
	return found ? 0 : -ENOSPC;
}

/* Index in @map of the first BO above @va. */
static uint32_t sim_map_pos(const struct vgpu_sim *sim, uint64_t va)
{
	uint32_t lo = 0, hi = sim->nmap;

	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;

		if (sim->map[mid]->va <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The BO whose pages hold @va, or NULL. */
static const struct sim_bo *sim_bo_at(const struct vgpu_sim *sim, uint64_t va)
{
	uint32_t pos = sim_map_pos(sim, va);

	if (!pos || va - sim->map[pos - 1]->va >= sim->map[pos - 1]->size)
		return NULL;
	return sim->map[pos - 1];
}

/* ---- the core's global memory ---- */

static uint8_t *sim_fault(struct sim_mem *m, uint64_t va, uint32_t acc,
			  uint32_t reason, uint32_t level)
{
	m->fault_va = va;
	m->fault_acc = acc;
	m->fault_reason = reason;
	m->fault_level = level;
	return NULL;
}

static uint8_t *sim_fault_unmapped(struct sim_mem *m, uint64_t va,
				   uint32_t acc)
{
	if (va >> VGPU_VA_BITS)
		return sim_fault(m, va, acc, VGPU_MMU_F_NONCANONICAL,
				 VGPU_PT_LEVELS - 1);
	return sim_fault(m, va, acc, VGPU_MMU_F_NOT_PRESENT,
			 sim_fault_level(m->sim, va));
}

/* The VGPU_MMU_ACC_* accesses a BO's mapping permits (its PTE bits). */
static uint32_t sim_bo_access(uint32_t flags)
{
	uint32_t acc = VGPU_MMU_ACC_READ;

	if (!(flags & VGPU_BO_READ_ONLY))
		acc |= VGPU_MMU_ACC_WRITE | VGPU_MMU_ACC_ATOMIC;
	if (!(flags & VGPU_BO_NO_EXEC))
		acc |= VGPU_MMU_ACC_EXEC;
	return acc;
}

static inline uint8_t *sim_xlate(struct sim_mem *m, uint64_t va, uint64_t len,
				 uint32_t acc)
{
	const struct sim_bo *bo = m->last;

	if (!bo || va < bo->va || va - bo->va >= bo->size) {
		bo = sim_bo_at(m->sim, va);
		if (!bo)
			return sim_fault_unmapped(m, va, acc);
		m->last = bo;
	}
	/* Page by page as vgpu_mmu_copy(): permission first, then the end. */
	if (!(bo->access & acc))
		return sim_fault(m, va, acc, VGPU_MMU_F_PERMISSION, 0);
	if (len > bo->size - (va - bo->va))
		return sim_fault_unmapped(m, bo->va + bo->size, acc);
	return bo->ptr + (va - bo->va);
}

uint8_t *vgpu_sim_xlate(struct sim_mem *m, uint64_t va, uint64_t len,
			uint32_t acc)
{
	return sim_xlate(m, va, len, acc);
}

void vgpu_sim_fault_record(const struct sim_mem *m,
			   struct vgpu_exception_record *exc)
{
	if (m->fault_reason)
		vgpu_exc_set_mmu_fault(exc, m->fault_va, m->fault_acc,
				      m->fault_reason, m->fault_level, SIM_ASID);
}

/* The core's accesses are 1..16 bytes, naturally aligned: copy inline. */
static inline void sim_copy(void *dst, const void *src, uint32_t len)
{
	switch (len) {
	case 4:
		memcpy(dst, src, 4);
		break;
	case 8:
		memcpy(dst, src, 8);
		break;
	case 16:
		memcpy(dst, src, 16);
		break;
	default:
		memcpy(dst, src, len);
		break;
	}
}

static int sim_mem_read(void *opaque, uint64_t addr, void *buf, uint32_t len)
{
	const uint8_t *p = sim_xlate(opaque, addr, len, VGPU_MMU_ACC_READ);

	if (!p)
		return -1;
	sim_copy(buf, p, len);
	return 0;
}

static int sim_mem_write(void *opaque, uint64_t addr, const void *buf,
			 uint32_t len)
{
	struct sim_mem *m = opaque;
	uint8_t *p = sim_xlate(m, addr, len, VGPU_MMU_ACC_WRITE);

	if (p) {
		sim_copy(p, buf, len);
		return 0;
	}
	/* As vgpu_mmu_copy(): the pages before the faulting one are written. */
	if (m->fault_va > addr) {
		p = sim_xlate(m, addr, m->fault_va - addr, VGPU_MMU_ACC_WRITE);
		if (p)
			memcpy(p, buf, m->fault_va - addr);
	}
	return -1;
}

static int sim_mem_read_block(void *opaque, uint64_t addr, void *buf,
			      uint32_t len)
{
	const uint8_t *p = sim_xlate(opaque, addr, len, VGPU_MMU_ACC_READ);

	if (!p)
		return -1;
	memcpy(buf, p, len);
	return 0;
}

/* The BO holding all of [addr, addr + len) with the access, no fault recorded. */
static void *sim_mem_span(void *opaque, uint64_t addr, uint64_t len, bool write)
{
	struct sim_mem *m = opaque;
	const struct sim_bo *bo = sim_bo_at(m->sim, addr);
	uint32_t acc = write ? VGPU_MMU_ACC_WRITE : VGPU_MMU_ACC_READ;

	if (!bo || !(bo->access & acc) || len > bo->size - (addr - bo->va))
		return NULL;
	return bo->ptr + (addr - bo->va);
}

/* Every operation as a compare-and-swap loop over the core's own rule. */
static int sim_mem_atomic(void *opaque, uint64_t addr, unsigned size,
			  enum vgpu_atomic_op op, uint64_t val, uint64_t cmp,
			  uint64_t *old)
{
	void *p = sim_xlate(opaque, addr, size, VGPU_MMU_ACC_ATOMIC);

	if (!p || (addr & (size - 1)))
		return -1;
	*old = vgpu_atomic_host(p, size, op, val, cmp);
	return 0;
}

static int sim_mem_cas16(void *opaque, uint64_t addr, const void *cmp, const void *val,
			 void *old)
{
	void *p = sim_xlate(opaque, addr, 16, VGPU_MMU_ACC_ATOMIC);

	if (!p || (addr & 15))
		return -1;
	vgpu_cas16_host(p, cmp, val, old);
	return 0;
}

const struct vgpu_mem_ops vgpu_sim_mem_ops = {
	.read = sim_mem_read,
	.write = sim_mem_write,
	.atomic = sim_mem_atomic,
	.cas16 = sim_mem_cas16,
	.read_block = sim_mem_read_block,
	.write_block = sim_mem_write,
	.span = sim_mem_span,
};

/* ---- creating and freeing ---- */

static void sim_bo_free(struct sim_bo *bo)
{
	if (bo->ptr)
		munmap(bo->ptr, bo->size);
	if (bo->memfd >= 0)
		close(bo->memfd);
	free(bo);
}

/*
 * Map @fd's first @size bytes into the device: handle, VA, page tables.
 * Takes @fd (closed on failure).  0 or -errno.
 */
static int sim_bo_add(struct vgpu_sim *sim, int fd, uint64_t size,
		      uint32_t flags, const struct stat *st, struct sim_bo **out)
{
	struct sim_bo *bo;
	uint32_t pos = 0;
	int ret;

	bo = calloc(1, sizeof(*bo));
	if (!bo) {
		close(fd);
		return -ENOMEM;
	}
	bo->memfd = fd;
	bo->size = size;
	bo->flags = flags;
	bo->access = sim_bo_access(flags);
	bo->st_dev = st->st_dev;
	bo->st_ino = st->st_ino;
	bo->ptr = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (bo->ptr == MAP_FAILED) {
		ret = -errno;
		bo->ptr = NULL;
		goto err;
	}
	ret = sim_va_alloc(sim, size, &bo->va, &pos);
	if (ret)
		goto err;
	if (sim->nmap == sim->map_cap) {
		uint32_t cap = sim->map_cap ? 2 * sim->map_cap : 16;
		struct sim_bo **m = realloc(sim->map, cap * sizeof(*m));

		if (!m) {
			ret = -ENOMEM;
			goto err;
		}
		sim->map = m;
		sim->map_cap = cap;
	}
	ret = sim_tables_add(sim, bo->va, size);
	if (ret)
		goto err;
	ret = sim_handle_alloc(sim, bo);
	if (ret)
		goto err;
	memmove(&sim->map[pos + 1], &sim->map[pos],
		(sim->nmap - pos) * sizeof(*sim->map));
	sim->map[pos] = bo;
	sim->nmap++;
	*out = bo;
	return 0;

err:
	sim_bo_free(bo);
	return ret;
}

static void sim_bo_remove(struct vgpu_sim *sim, struct sim_bo *bo)
{
	uint32_t i = sim_map_pos(sim, bo->va) - 1; /* @map holds it */

	memmove(&sim->map[i], &sim->map[i + 1],
		(sim->nmap - i - 1) * sizeof(*sim->map));
	sim->nmap--;
	sim->bos[bo->handle - 1] = NULL;
	if (sim->hint_code == bo)
		sim->hint_code = NULL;
	if (sim->hint_params == bo)
		sim->hint_params = NULL;
	sim_bo_free(bo);
}

void vgpu_sim_bos_fini(struct vgpu_sim *sim)
{
	for (uint32_t i = 0; i < sim->nbos; i++)
		if (sim->bos[i])
			sim_bo_free(sim->bos[i]);
	free(sim->bos);
	free(sim->map);
	free(sim->tables);
	sim->bos = sim->map = NULL;
	sim->hint_code = sim->hint_params = NULL;
	sim->tables = NULL;
	sim->nbos = sim->bos_cap = sim->nmap = sim->map_cap = 0;
	sim->ntables = sim->tables_cap = 0;
}

/* ---- ioctls ---- */

int vgpu_sim_bo_create(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_bo_create *args = data;
	char name[sizeof(SIM_MEMFD_NAME) + 12];
	uint64_t size;
	struct sim_bo *bo;
	struct stat st;
	uint32_t flags;
	int fd, ret;

	if (args->flags & ~VGPU_BO_FLAGS || !args->size)
		return -EINVAL;
	if (args->size > VGPU_BO_MAX_SIZE)
		return -E2BIG;
	size = sim_page_align(args->size);
	/*
	 * The model's BOs have their memory from the start (a memfd), as
	 * VGPU_BO_POPULATE asks: it does not model vgpu.ko's lazy pages.
	 */
	flags = args->flags & ~VGPU_BO_POPULATE;

	/* The flags travel with the memory, for imports into other devices. */
	snprintf(name, sizeof(name), SIM_MEMFD_NAME "%u", flags);
	fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)size) ||
	    fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_SEAL) ||
	    fstat(fd, &st)) {
		ret = -errno;
		close(fd);
		return ret;
	}
	ret = sim_bo_add(sim, fd, size, flags, &st, &bo);
	if (ret)
		return ret;
	args->handle = bo->handle;
	args->va = bo->va;
	return 0;
}

int vgpu_sim_bo_mmap_offset(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_bo_mmap_offset *args = data;
	struct sim_bo *bo;

	if (args->pad)
		return -EINVAL;
	bo = vgpu_sim_bo_lookup(sim, args->handle);
	if (!bo)
		return -ENOENT;
	/* Offsets 4 GiB apart: never reused, never overlapping (<= 1 GiB). */
	if (!bo->mmap_offset) {
		sim->next_mmap_offset += 1ull << 32;
		bo->mmap_offset = sim->next_mmap_offset;
	}
	args->offset = bo->mmap_offset;
	return 0;
}

int vgpu_sim_bo_info(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_bo_info *args = data;
	struct sim_bo *bo = vgpu_sim_bo_lookup(sim, args->handle);

	if (!bo)
		return -ENOENT;
	args->flags = bo->flags;
	args->size = bo->size;
	args->va = bo->va;
	return 0;
}

/* Jobs complete inside SUBMIT: a BO is always idle. */
int vgpu_sim_wait_bo(struct vgpu_sim *sim, void *data)
{
	struct drm_vgpu_wait_bo *args = data;

	if (args->pad)
		return -EINVAL;
	if (!vgpu_sim_bo_lookup(sim, args->handle))
		return -ENOENT;
	return 0;
}

/* drm_gem_close_ioctl() (6.1) does not look at @pad. */
int vgpu_sim_gem_close(struct vgpu_sim *sim, void *data)
{
	struct drm_gem_close *args = data;
	struct sim_bo *bo = vgpu_sim_bo_lookup(sim, args->handle);

	if (!bo)
		return -EINVAL;
	sim_bo_remove(sim, bo);
	return 0;
}

/* A new file description of @fd opened with @flags, or -1. */
static int sim_reopen(int fd, int flags)
{
	char path[64];

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	return open(path, flags);
}

int vgpu_sim_prime_handle_to_fd(struct vgpu_sim *sim, void *data)
{
	struct drm_prime_handle *args = data;
	struct sim_bo *bo;
	int fd;

	if (args->flags & ~(uint32_t)(DRM_CLOEXEC | DRM_RDWR))
		return -EINVAL;
	bo = vgpu_sim_bo_lookup(sim, args->handle);
	if (!bo)
		return -ENOENT;
	fd = -1;
	/* A dma-buf fd without O_RDWR cannot be mapped writable. */
	if (!(args->flags & DRM_RDWR))
		fd = sim_reopen(bo->memfd,
				O_RDONLY | (args->flags & DRM_CLOEXEC ? O_CLOEXEC : 0));
	if (fd < 0) /* or no /proc: a duplicate, read-write */
		fd = fcntl(bo->memfd,
			   args->flags & DRM_CLOEXEC ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	if (fd < 0)
		return -errno;
	args->fd = fd;
	return 0;
}

/* The VGPU_BO_* flags of a BO some sim device created, 0 for other memory. */
static uint32_t sim_fd_flags(int fd)
{
	char path[64], link[256];
	unsigned int flags;
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, link, sizeof(link) - 1);
	if (n <= 0)
		return 0;
	link[n] = '\0';
	if (sscanf(link, "/memfd:" SIM_MEMFD_NAME "%u", &flags) != 1)
		return 0;
	return flags & (VGPU_BO_FLAGS & ~VGPU_BO_POPULATE);
}

int vgpu_sim_prime_fd_to_handle(struct vgpu_sim *sim, void *data)
{
	struct drm_prime_handle *args = data;
	int32_t ufd = (int32_t)args->fd;
	struct sim_bo *bo;
	struct stat st;
	uint64_t size;
	int fd, ret;

	if (ufd < 0 || fstat(ufd, &st))
		return -EBADF;
	/* Memory this device holds already: its handle (the prime cache). */
	for (uint32_t i = 0; i < sim->nbos; i++) {
		bo = sim->bos[i];
		if (bo && bo->st_dev == st.st_dev && bo->st_ino == st.st_ino) {
			args->handle = bo->handle;
			return 0;
		}
	}
	/* Nothing to map: not a dma-buf, dma_buf_get() says -EINVAL. */
	if (st.st_size <= 0)
		return -EINVAL;
	size = sim_page_align((uint64_t)st.st_size);
	fd = fcntl(ufd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	ret = sim_bo_add(sim, fd, size, sim_fd_flags(fd), &st, &bo);
	if (ret == -EACCES) {
		/* A read-only dma-buf fd: the device still writes the memory. */
		fd = sim_reopen(ufd, O_RDWR | O_CLOEXEC);
		if (fd < 0)
			return -EINVAL;
		ret = sim_bo_add(sim, fd, size, sim_fd_flags(fd), &st, &bo);
	}
	if (ret)
		return ret == -EACCES || ret == -ENODEV ? -EINVAL : ret;
	args->handle = bo->handle;
	return 0;
}

int vgpu_sim_bo_mmap(struct vgpu_sim *sim, uint64_t offset, uint64_t size,
		     void *addr, void **ptr)
{
	struct sim_bo *bo = NULL;
	void *p;

	for (uint32_t i = 0; offset && i < sim->nbos; i++) {
		if (sim->bos[i] && sim->bos[i]->mmap_offset == offset) {
			bo = sim->bos[i];
			break;
		}
	}
	/* drm_gem_mmap(): an exact offset, at most the object's pages. */
	if (!bo || !size || sim_page_align(size) > bo->size)
		return -EINVAL;
	if (addr) {
		int ret = vgpu_mmap_fixed(addr, size, PROT_READ | PROT_WRITE,
					  bo->memfd, 0);

		if (!ret)
			*ptr = addr;
		return ret;
	}
	p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, bo->memfd, 0);
	if (p == MAP_FAILED)
		return -errno;
	*ptr = p;
	return 0;
}
