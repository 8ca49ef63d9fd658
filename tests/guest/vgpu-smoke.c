/* SPDX-License-Identifier: MIT */
/*
 * vgpu-smoke: runs in the guest (static, no driver needed).
 *
 *   1. finds the vgpu-pci function in /sys/bus/pci/devices by vendor and
 *      device ID, enables it and maps BAR0 through sysfs resource0;
 *   2. prints its identification and capabilities;
 *   3. with an object file argument (/vgpu/store.vgo in the initramfs):
 *      plays a minimal driver from user space: pins pages, finds their
 *      physical addresses in /proc/self/pagemap, builds GPU page tables,
 *      a command ring and a completion ring in them, launches the kernel
 *      (out[i] = i * 2 + k) and checks its results and completion record.
 *
 * Exit status 0 when everything matched.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "vgpu_hw.h"
#include "vgpu_isa.h"

#define SYSFS_PCI "/sys/bus/pci/devices"
#define NPAGES 16
#define THREADS 64u
#define K_VALUE 1000u

static volatile uint32_t *regs;

static uint32_t rd(uint32_t off)
{
	return regs[off / 4];
}

static void wr(uint32_t off, uint32_t v)
{
	regs[off / 4] = v;
}

static int read_hex(const char *dir, const char *name, unsigned *val)
{
	char path[512];
	FILE *f;
	int ok;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	ok = fscanf(f, "%x", val) == 1;
	fclose(f);
	return ok ? 0 : -1;
}

static int find_device(char *dir, size_t len)
{
	DIR *d = opendir(SYSFS_PCI);
	struct dirent *e;

	if (!d) {
		perror(SYSFS_PCI);
		return -1;
	}
	while ((e = readdir(d))) {
		unsigned ven, dev;

		if (e->d_name[0] == '.')
			continue;
		snprintf(dir, len, "%s/%s", SYSFS_PCI, e->d_name);
		if (!read_hex(dir, "vendor", &ven) && !read_hex(dir, "device", &dev) &&
		    ven == VGPU_PCI_VENDOR_ID && dev == VGPU_PCI_DEVICE_ID) {
			closedir(d);
			return 0;
		}
	}
	closedir(d);
	return -1;
}

/* Enable memory decoding and bus mastering in the command register. */
static int enable_device(const char *dir)
{
	char path[512];
	uint16_t cmd;
	int fd;

	snprintf(path, sizeof(path), "%s/config", dir);
	fd = open(path, O_RDWR);
	if (fd < 0 || pread(fd, &cmd, 2, 4) != 2) {
		perror(path);
		return -1;
	}
	cmd |= 0x6;
	if (pwrite(fd, &cmd, 2, 4) != 2) {
		perror(path);
		close(fd);
		return -1;
	}
	close(fd);
	return 0;
}

/* ---- a user-space driver for one launch ---- */

struct page {
	uint8_t *va;	/* our mapping */
	uint64_t pa;	/* guest physical */
};

static struct page pages[NPAGES];

static int pin_pages(void)
{
	uint8_t *mem = mmap(NULL, NPAGES * 4096, PROT_READ | PROT_WRITE,
			    MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE | MAP_LOCKED,
			    -1, 0);
	int fd;

	if (mem == MAP_FAILED) {
		perror("mmap");
		return -1;
	}
	memset(mem, 0, NPAGES * 4096);
	fd = open("/proc/self/pagemap", O_RDONLY);
	if (fd < 0) {
		perror("/proc/self/pagemap");
		return -1;
	}
	for (int i = 0; i < NPAGES; i++) {
		uint64_t ent;
		uintptr_t va = (uintptr_t)(mem + 4096 * i);

		if (pread(fd, &ent, 8, (off_t)(va / 4096 * 8)) != 8 ||
		    !(ent >> 63) || !(ent & ((1ull << 55) - 1))) {
			fprintf(stderr, "vgpu-smoke: no physical address for page %d\n", i);
			close(fd);
			return -1;
		}
		pages[i].va = mem + 4096 * i;
		pages[i].pa = (ent & ((1ull << 55) - 1)) * 4096;
	}
	close(fd);
	return 0;
}

static void *load_file(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	long n;

	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	fseek(f, 0, SEEK_SET);
	buf = malloc((size_t)n);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	fclose(f);
	*len = (size_t)n;
	return buf;
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

enum { P_AS, P_L3, P_L2, P_L1, P_L0, P_CODE, P_PARAM, P_OUT, P_RING, P_CPL };
#define VA_CODE 0x10000ull
#define VA_PARAM 0x11000ull
#define VA_OUT 0x12000ull

static int launch(const char *obj_path)
{
	const struct vgpu_obj_header *h;
	const struct vgpu_obj_kernel *k;
	struct vgpu_cmd_launch cmd;
	volatile struct vgpu_completion *cpl;
	uint64_t *pt, start;
	size_t len;
	uint8_t *obj = load_file(obj_path, &len);
	int bad = 0;

	if (!obj || len < sizeof(*h)) {
		fprintf(stderr, "vgpu-smoke: cannot read %s\n", obj_path);
		return -1;
	}
	h = (const void *)obj;
	k = (const void *)(obj + h->kernels_offset);
	if (h->magic != VGPU_OBJ_MAGIC || !h->nkernels || h->code_size > 4096 ||
	    h->code_offset + h->code_size > len) {
		fprintf(stderr, "vgpu-smoke: %s: not a usable object\n", obj_path);
		return -1;
	}
	if (pin_pages())
		return -1;

	/* address space 0: root -> ... -> leaf, VAs below 2 MiB */
	*(uint64_t *)pages[P_AS].va = pages[P_L3].pa | VGPU_PTE_VALID;
	((uint64_t *)pages[P_L3].va)[0] = pages[P_L2].pa | VGPU_PTE_VALID;
	((uint64_t *)pages[P_L2].va)[0] = pages[P_L1].pa | VGPU_PTE_VALID;
	((uint64_t *)pages[P_L1].va)[0] = pages[P_L0].pa | VGPU_PTE_VALID;
	pt = (uint64_t *)pages[P_L0].va;
	pt[VGPU_PT_INDEX(VA_CODE, 0ull)] = pages[P_CODE].pa | VGPU_PTE_VALID |
					   VGPU_PTE_READ | VGPU_PTE_EXEC;
	pt[VGPU_PT_INDEX(VA_PARAM, 0ull)] = pages[P_PARAM].pa | VGPU_PTE_VALID |
					    VGPU_PTE_READ;
	pt[VGPU_PT_INDEX(VA_OUT, 0ull)] = pages[P_OUT].pa | VGPU_PTE_VALID |
					  VGPU_PTE_READ | VGPU_PTE_WRITE;
	memcpy(pages[P_CODE].va, obj + h->code_offset, h->code_size);
	{
		uint64_t out = VA_OUT;
		uint32_t kv = K_VALUE;

		memcpy(pages[P_PARAM].va, &out, 8);
		memcpy(pages[P_PARAM].va + 8, &kv, 4);
	}

	cmd = (struct vgpu_cmd_launch){
		.hdr = { .opcode = VGPU_CMD_LAUNCH },
		.code_va = VA_CODE,
		.code_size = h->code_size,
		.entry = k->entry,
		.grid = { 2, 1, 1 },
		.block = { THREADS / 2, 1, 1 },
		.smem_bytes = k->smem_static,
		.param_va = VA_PARAM,
		.param_size = k->param_size,
	};
	memcpy(pages[P_RING].va, &cmd, sizeof(cmd));
	__sync_synchronize();

	wr(VGPU_REG_AS_BASE_LO, (uint32_t)pages[P_AS].pa);
	wr(VGPU_REG_AS_BASE_HI, (uint32_t)(pages[P_AS].pa >> 32));
	wr(VGPU_REG_AS_COUNT, 1);
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_RING_LO, (uint32_t)pages[P_RING].pa);
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_RING_HI, (uint32_t)(pages[P_RING].pa >> 32));
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_CPL_LO, (uint32_t)pages[P_CPL].pa);
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_CPL_HI, (uint32_t)(pages[P_CPL].pa >> 32));
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_SIZE, 4);
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_CONTROL, VGPU_QCTRL_ENABLE);
	wr(VGPU_REG_QUEUE(0) + VGPU_Q_DOORBELL, 1);

	cpl = (volatile struct vgpu_completion *)pages[P_CPL].va;
	start = now_ms();
	while (!cpl->seq && now_ms() - start < 60000)
		usleep(1000);
	__sync_synchronize();
	if (!cpl->seq) {
		fprintf(stderr, "vgpu-smoke: no completion (queue status 0x%x, error %u)\n",
			rd(VGPU_REG_QUEUE(0) + VGPU_Q_STATUS),
			rd(VGPU_REG_QUEUE(0) + VGPU_Q_ERROR));
		return -1;
	}
	printf("launch: status %u, %" PRIu64 " warp-instructions, %" PRIu64 " us in the device\n",
	       cpl->status, (uint64_t)cpl->warp_insns, (uint64_t)cpl->elapsed_ns / 1000);
	if (cpl->status != VGPU_ERR_NONE) {
		fprintf(stderr, "vgpu-smoke: launch failed: %s\n", (const char *)cpl->exc.msg);
		return -1;
	}
	for (uint32_t i = 0; i < THREADS; i++) {
		uint32_t v = ((volatile uint32_t *)pages[P_OUT].va)[i];

		if (v != i * 2 + K_VALUE && !bad++)
			fprintf(stderr, "vgpu-smoke: out[%u] = %u, expected %u\n", i, v,
				i * 2 + K_VALUE);
	}
	printf("launch: out[0..%u] = %u, %u, ..., %u: %s\n", THREADS - 1,
	       ((volatile uint32_t *)pages[P_OUT].va)[0],
	       ((volatile uint32_t *)pages[P_OUT].va)[1],
	       ((volatile uint32_t *)pages[P_OUT].va)[THREADS - 1], bad ? "WRONG" : "as expected");
	return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
	char dir[300], path[400];
	uint32_t feat;
	int fd;

	if (find_device(dir, sizeof(dir))) {
		fprintf(stderr, "vgpu-smoke: no PCI device %04x:%04x\n",
			VGPU_PCI_VENDOR_ID, VGPU_PCI_DEVICE_ID);
		return 1;
	}
	printf("vgpu-smoke: device %04x:%04x at %s\n", VGPU_PCI_VENDOR_ID,
	       VGPU_PCI_DEVICE_ID, strrchr(dir, '/') + 1);
	if (enable_device(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/resource0", dir);
	fd = open(path, O_RDWR | O_SYNC);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	regs = mmap(NULL, VGPU_BAR0_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (regs == MAP_FAILED) {
		perror("mmap resource0");
		return 1;
	}

	feat = rd(VGPU_REG_CAP_FEATURES);
	printf("id 0x%08x version %u.%u\n", rd(VGPU_REG_ID), rd(VGPU_REG_VERSION) >> 16,
	       rd(VGPU_REG_VERSION) & 0xffff);
	printf("SMs %u, shared memory %u bytes per SM, %u threads per CTA, %u named barriers,"
	       " warp %u\n", rd(VGPU_REG_CAP_SMS), rd(VGPU_REG_CAP_SMEM),
	       rd(VGPU_REG_CAP_MAX_THREADS), rd(VGPU_REG_CAP_BARRIERS),
	       rd(VGPU_REG_CAP_WARP_SIZE));
	printf("queues %u (ring <= %u), address spaces <= %u, %u-bit VAs, params <= %u bytes,"
	       " host threads %u\n", rd(VGPU_REG_CAP_QUEUES), rd(VGPU_REG_CAP_RING_MAX),
	       rd(VGPU_REG_CAP_AS_MAX), rd(VGPU_REG_CAP_VA_BITS), rd(VGPU_REG_CAP_MAX_PARAM),
	       rd(VGPU_REG_CAP_THREADS));
	printf("features:%s%s%s%s%s\n", feat & VGPU_FEAT_MMU ? " mmu" : "",
	       feat & VGPU_FEAT_RANDOM_SCHED ? " random-sched" : "",
	       feat & VGPU_FEAT_MBARRIER ? " mbarrier" : "",
	       feat & VGPU_FEAT_TMA ? " tma" : "", feat & VGPU_FEAT_CLUSTERS ? " clusters" : "");

	if (rd(VGPU_REG_ID) != VGPU_ID_MAGIC || rd(VGPU_REG_VERSION) >> 16 != VGPU_VERSION_MAJOR ||
	    !rd(VGPU_REG_CAP_SMS) || rd(VGPU_REG_CAP_MAX_THREADS) != VGPU_MAX_THREADS_PER_CTA ||
	    rd(VGPU_REG_CAP_BARRIERS) != VGPU_NUM_NAMED_BARRIERS) {
		fprintf(stderr, "vgpu-smoke: unexpected identification\n");
		return 1;
	}
	if (argc > 1 && launch(argv[1]))
		return 1;
	return 0;
}
