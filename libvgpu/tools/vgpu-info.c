/* SPDX-License-Identifier: MIT */
/*
 * vgpu-info: the vGPU devices libvgpu can open, and what each one is and
 * can do: backend, DRM node, PCI slot and IDs, every driver parameter by
 * name and the feature bits by name.
 *
 * Exit status: 0 success, 1 a device could not be found, opened or
 * queried, 2 usage error.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "vgpu.h"

#define EXIT_DEVICE 1
#define EXIT_USAGE 2

static const char usage_text[] =
	"usage: vgpu-info [OPTION]...\n"
	"List the vGPU devices libvgpu can open and show what each can do:\n"
	"backend, DRM node, PCI slot and IDs, every driver parameter by name\n"
	"and the feature bits by name.\n"
	"\n"
	"  -l, --list            only list the drm devices, one line each:\n"
	"                        node, PCI slot, vendor:device, revision\n"
	"  -b, --backend B       drm: every drm device; sim: a simulated device;\n"
	"                        auto: the device vgpu_device_open() picks\n"
	"                        ($VGPU_BACKEND, else drm when one exists, else sim)\n"
	"  -d, --device NAME     one device, as vgpu_device_open() names it: sim,\n"
	"                        drm, a PCI slot (0000:00:03.0) or a DRM node\n"
	"                        (/dev/dri/renderD128)\n"
	"  -p, --param NAME      print only this parameter's value (decimal), e.g.\n"
	"                        SMS or VGPU_PARAM_SMS, of one device: --device,\n"
	"                        --backend (drm: when there is exactly one), or\n"
	"                        the one vgpu_device_open() picks\n"
	"  -h, --help            show this help\n"
	"\n"
	"Without options: every drm device, then the sim backend.\n"
	"Exit status: 0 ok, 1 no such device or it could not be opened or\n"
	"queried, 2 usage error.\n";

/* How to print a parameter's value. */
enum fmt { DEC, HEX, BYTES, VERSION };

static const struct {
	const char *name;
	enum fmt fmt;
} params[] = {
	[VGPU_PARAM_DEVICE_ID] = { "DEVICE_ID", HEX },
	[VGPU_PARAM_REVISION] = { "REVISION", DEC },
	[VGPU_PARAM_HW_VERSION] = { "HW_VERSION", VERSION },
	[VGPU_PARAM_SMS] = { "SMS", DEC },
	[VGPU_PARAM_SMEM] = { "SMEM", BYTES },
	[VGPU_PARAM_MAX_THREADS] = { "MAX_THREADS", DEC },
	[VGPU_PARAM_BARRIERS] = { "BARRIERS", DEC },
	[VGPU_PARAM_FEATURES] = { "FEATURES", HEX },
	[VGPU_PARAM_QUEUES] = { "QUEUES", DEC },
	[VGPU_PARAM_WARP_SIZE] = { "WARP_SIZE", DEC },
	[VGPU_PARAM_MAX_PARAM] = { "MAX_PARAM", BYTES },
	[VGPU_PARAM_MAX_CODE] = { "MAX_CODE", BYTES },
	[VGPU_PARAM_VA_BITS] = { "VA_BITS", DEC },
	[VGPU_PARAM_VA_START] = { "VA_START", HEX },
	[VGPU_PARAM_VA_SIZE] = { "VA_SIZE", HEX },
	[VGPU_PARAM_RESET_COUNT] = { "RESET_COUNT", DEC },
	[VGPU_PARAM_FILE_RESET_COUNT] = { "FILE_RESET_COUNT", DEC },
	[VGPU_PARAM_JOB_TIMEOUT_MS] = { "JOB_TIMEOUT_MS", DEC },
	[VGPU_PARAM_DRIVER_VERSION] = { "DRIVER_VERSION", VERSION },
	[VGPU_PARAM_MAX_QUEUES] = { "MAX_QUEUES", DEC },
	[VGPU_PARAM_BAN_AFTER] = { "BAN_AFTER", DEC },
	[VGPU_PARAM_USER_QUEUES] = { "USER_QUEUES", DEC },
	[VGPU_PARAM_MODEL] = { "MODEL", DEC },
	[VGPU_PARAM_SMEM_SM] = { "SMEM_SM", BYTES },
	[VGPU_PARAM_CTAS_SM] = { "CTAS_SM", DEC },
	[VGPU_PARAM_WARPS_SM] = { "WARPS_SM", DEC },
	[VGPU_PARAM_REGS_SM] = { "REGS_SM", DEC },
	[VGPU_PARAM_CLUSTER] = { "CLUSTER", DEC },
	[VGPU_PARAM_CLUSTER_MAX] = { "CLUSTER_MAX", DEC },
};

_Static_assert(sizeof(params) / sizeof(params[0]) == VGPU_PARAM_COUNT,
	       "a name for every driver parameter");

static const struct {
	uint64_t bit;
	const char *name;
} features[] = {
	{ VGPU_FEAT_MMU, "MMU" },
	{ VGPU_FEAT_RANDOM_SCHED, "RANDOM_SCHED" },
	{ VGPU_FEAT_MBARRIER, "MBARRIER" },
	{ VGPU_FEAT_TMA, "TMA" },
	{ VGPU_FEAT_CLUSTERS, "CLUSTERS" },
};

static void usage_error(const char *msg, const char *arg)
{
	fprintf(stderr, "vgpu-info: %s%s%s%s\n", msg, arg ? " '" : "",
		arg ? arg : "", arg ? "'" : "");
	fputs("Try 'vgpu-info --help' for more information.\n", stderr);
}

/* Index of parameter @name ("SMS", "sms" or "VGPU_PARAM_SMS"), or -1. */
static int param_index(const char *name)
{
	if (!strncasecmp(name, "VGPU_PARAM_", 11))
		name += 11;
	for (int i = 0; i < VGPU_PARAM_COUNT; i++)
		if (!strcasecmp(name, params[i].name))
			return i;
	return -1;
}

static void print_param(uint32_t i, uint64_t v)
{
	printf("    %-18s ", params[i].name);
	switch (params[i].fmt) {
	case DEC:
		printf("%" PRIu64 "\n", v);
		break;
	case HEX:
		printf("0x%" PRIx64 "\n", v);
		break;
	case BYTES:
		if (v >= 1024 && v % 1024 == 0)
			printf("%" PRIu64 " (%" PRIu64 " KiB)\n", v, v / 1024);
		else
			printf("%" PRIu64 "\n", v);
		break;
	case VERSION:
		printf("%" PRIu64 ".%" PRIu64 "\n", v >> 16, v & 0xffff);
		break;
	}
}

static void print_features(uint64_t f)
{
	uint64_t known = 0;

	printf("  features:");
	for (size_t i = 0; i < sizeof(features) / sizeof(features[0]); i++) {
		known |= features[i].bit;
		if (f & features[i].bit)
			printf(" %s", features[i].name);
	}
	if (f & ~known)
		printf(" unknown(0x%" PRIx64 ")", f & ~known);
	printf("%s\n", f ? "" : " none");
}

/*
 * Open the device @name and print it (or, with @param >= 0, only that
 * parameter's value).  Returns 0 or EXIT_DEVICE.
 */
static int show(const char *name, int param)
{
	struct vgpu_device_info info;
	struct vgpu_device *dev;
	int err = vgpu_device_open(name, &dev);

	if (err) {
		fprintf(stderr, "vgpu-info: cannot open device '%s': %s\n",
			name ? name : "auto", strerror(-err));
		return EXIT_DEVICE;
	}
	err = vgpu_device_query(dev, &info);
	vgpu_device_close(dev);
	if (err) {
		fprintf(stderr, "vgpu-info: cannot query device '%s': %s\n",
			name ? name : "auto", strerror(-err));
		return EXIT_DEVICE;
	}
	if (param >= 0) {
		printf("%" PRIu64 "\n", info.param[param]);
		return 0;
	}
	printf("device %s\n", name ? name : "auto");
	printf("  backend: %s\n", vgpu_backend_name(info.backend));
	printf("  driver:  %s\n", info.driver);
	if (info.node[0])
		printf("  node:    %s\n", info.node);
	if (info.pci_slot[0])
		printf("  pci:     %s\n", info.pci_slot);
	printf("  ids:     %04" PRIx64 ":%04" PRIx64 " revision %" PRIu64 "\n",
	       info.param[VGPU_PARAM_DEVICE_ID] >> 16,
	       info.param[VGPU_PARAM_DEVICE_ID] & 0xffff,
	       info.param[VGPU_PARAM_REVISION]);
	printf("  parameters:\n");
	for (uint32_t i = 0; i < VGPU_PARAM_COUNT; i++)
		print_param(i, info.param[i]);
	print_features(info.param[VGPU_PARAM_FEATURES]);
	return 0;
}

/* The drm devices (malloc'd), or NULL with *@n = 0 on none or error. */
static struct vgpu_device_desc *list_drm(unsigned int *n, int *err)
{
	struct vgpu_device_desc *descs = NULL;
	unsigned int count = 0;

	*n = 0;
	*err = vgpu_device_list(NULL, 0, &count);
	if (*err || !count)
		return NULL;
	descs = calloc(count, sizeof(*descs));
	if (!descs) {
		*err = -ENOMEM;
		return NULL;
	}
	/* a device may come or go between the two calls */
	*err = vgpu_device_list(descs, count, n);
	if (*n > count)
		*n = count;
	return descs;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "list", no_argument, NULL, 'l' },
		{ "backend", required_argument, NULL, 'b' },
		{ "device", required_argument, NULL, 'd' },
		{ "param", required_argument, NULL, 'p' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *backend = NULL, *device = NULL;
	struct vgpu_device_desc *descs;
	bool list = false;
	int c, param = -1, status = 0, err;
	unsigned int n;

	while ((c = getopt_long(argc, argv, "lb:d:p:h", opts, NULL)) != -1) {
		switch (c) {
		case 'l':
			list = true;
			break;
		case 'b':
			if (strcmp(optarg, "drm") && strcmp(optarg, "sim") &&
			    strcmp(optarg, "auto")) {
				usage_error("--backend: not drm, sim or auto:", optarg);
				return EXIT_USAGE;
			}
			backend = optarg;
			break;
		case 'd':
			if (!optarg[0]) {
				usage_error("--device: empty name", NULL);
				return EXIT_USAGE;
			}
			device = optarg;
			break;
		case 'p':
			param = param_index(optarg);
			if (param < 0) {
				usage_error("--param: no such parameter:", optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h':
			fputs(usage_text, stdout);
			return 0;
		default:
			fputs("Try 'vgpu-info --help' for more information.\n",
			      stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc) {
		usage_error("unexpected argument", argv[optind]);
		return EXIT_USAGE;
	}
	if (device && (backend || list)) {
		usage_error(backend ? "--device and --backend exclude each other"
				    : "--device and --list exclude each other",
			    NULL);
		return EXIT_USAGE;
	}
	if (list && param >= 0) {
		usage_error("--list and --param exclude each other", NULL);
		return EXIT_USAGE;
	}

	if (device)
		return show(device, param);
	if (param >= 0 && !backend)
		return show(NULL, param);
	if (backend && strcmp(backend, "drm"))
		return show(strcmp(backend, "auto") ? backend : NULL, param);

	/* every drm device (--backend drm, --list, or no option) */
	descs = list_drm(&n, &err);
	if (err) {
		fprintf(stderr, "vgpu-info: cannot list drm devices: %s\n",
			strerror(-err));
		free(descs);
		return EXIT_DEVICE;
	}
	if (param >= 0) {
		if (n != 1) {
			fprintf(stderr, "vgpu-info: --param needs one device; %u "
				"drm device%s (use --device)\n",
				n, n == 1 ? "" : "s");
			free(descs);
			return n ? EXIT_USAGE : EXIT_DEVICE;
		}
		status = show(descs[0].node, param);
		free(descs);
		return status;
	}
	if (list || !backend)
		printf("drm devices: %u\n", n);
	for (unsigned int i = 0; i < n; i++) {
		if (list || !backend)
			printf("  %s %s %04x:%04x revision %u\n", descs[i].node,
			       descs[i].pci_slot, descs[i].vendor_id,
			       descs[i].device_id, descs[i].revision);
	}
	if (list) {
		free(descs);
		return 0;
	}
	if (backend && !n) {
		fprintf(stderr, "vgpu-info: no drm device (is vgpu.ko loaded?)\n");
		free(descs);
		return EXIT_DEVICE;
	}
	for (unsigned int i = 0; i < n; i++) {
		/* open by node: two devices may share nothing else */
		if (show(descs[i].node, -1))
			status = EXIT_DEVICE;
	}
	free(descs);
	if (!backend && show("sim", -1))
		status = EXIT_DEVICE;
	return status;
}
