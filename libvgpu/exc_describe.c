// SPDX-License-Identifier: MIT
/*
 * libvgpu: exception records in words (vgpu_exception_name,
 * vgpu_exception_describe, vgpu_job_describe): the code's name and text
 * from uapi's VGPU_EXC_CODES, where it happened (the kernel and PTX line
 * when the program knows them), and for a deadlock what each warp waits
 * for.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "vgpu_priv.h"

const char *vgpu_exception_name(uint32_t code)
{
	switch (code) {
#define VGPU_X_EXC(name, val, str) \
	case val:                  \
		return #name;
		VGPU_EXC_CODES(VGPU_X_EXC)
#undef VGPU_X_EXC
	}
	return "UNKNOWN";
}

static const char *exception_text(uint32_t code)
{
	switch (code) {
#define VGPU_X_EXC(name, val, str) \
	case val:                  \
		return str;
		VGPU_EXC_CODES(VGPU_X_EXC)
#undef VGPU_X_EXC
	}
	return "unknown exception";
}

static void describe_warp(struct sbuf *sb, uint32_t w, uint8_t s)
{
	switch (s) {
	case VGPU_WAIT_NONE:
		sb_printf(sb, "    warp %2u: runnable\n", w);
		break;
	case VGPU_WAIT_EXITED:
		sb_printf(sb, "    warp %2u: exited\n", w);
		break;
	case VGPU_WAIT_SLEEP:
		sb_printf(sb, "    warp %2u: sleeping\n", w);
		break;
	case VGPU_WAIT_MBAR:
		sb_printf(sb, "    warp %2u: mbarrier (MBAR.TRY_WAIT)\n", w);
		break;
	case VGPU_WAIT_CLUSTER:
		sb_printf(sb, "    warp %2u: cluster barrier\n", w);
		break;
	case VGPU_WAIT_ASYNC:
		sb_printf(sb, "    warp %2u: asynchronous copies\n", w);
		break;
	case VGPU_WAIT_ABSENT:
		break;
	default:
		if (s < VGPU_NUM_NAMED_BARRIERS)
			sb_printf(sb, "    warp %2u: barrier %u\n", w, s);
		else
			sb_printf(sb, "    warp %2u: state 0x%02x\n", w, s);
		break;
	}
}

/*
 * @kname: the kernel launched (NULL when unknown), @entry its first
 * instruction: the pc is shown relative to it when it lies after it.
 */
static int describe(const struct vgpu_exception_record *rec,
		    const char *kname, uint32_t entry, uint32_t nwarps,
		    char *buf, size_t len)
{
	struct sbuf sb = { .p = buf, .cap = len };
	char insn[160];

	if (len)
		buf[0] = '\0';
	vgpu_disasm_insn((const uint64_t[2]){ rec->insn[0], rec->insn[1] },
			 rec->pc, insn, sizeof(insn));
	sb_printf(&sb, "device exception %s: %s\n", vgpu_exception_name(rec->code),
		  exception_text(rec->code));
	sb_printf(&sb, "  cta (%u,%u,%u) warp %u lanes 0x%08x\n", rec->cta[0],
		  rec->cta[1], rec->cta[2], rec->warp, rec->lane_mask);
	if (kname && rec->pc >= entry)
		sb_printf(&sb, "  pc 0x%04x (%.*s+0x%x): %s\n", rec->pc,
			  VGPU_OBJ_NAME_MAX, kname, rec->pc - entry, insn);
	else
		sb_printf(&sb, "  pc 0x%04x: %s\n", rec->pc, insn);
	if (rec->barid != 0xffffffffu)
		sb_printf(&sb, "  barrier %u\n", rec->barid);
	if (rec->addr)
		sb_printf(&sb, "  address 0x%llx\n", (unsigned long long)rec->addr);
	if (rec->msg[0])
		sb_printf(&sb, "  %.*s\n", (int)strnlen(rec->msg, sizeof(rec->msg)),
			  rec->msg);
	if (rec->code == VGPU_EXC_DEADLOCK) {
		sb_printf(&sb, "  warps:\n");
		for (uint32_t w = 0; w < nwarps && w < VGPU_MAX_WARPS_PER_CTA; w++)
			describe_warp(&sb, w, rec->warp_wait[w]);
	}
	return sb.n > INT32_MAX ? INT32_MAX : (int)sb.n;
}

int vgpu_exception_describe(const struct vgpu_exception_record *rec,
			    uint32_t nwarps, char *buf, size_t len)
{
	if (!rec || (!buf && len))
		return -EINVAL;
	return describe(rec, NULL, 0, nwarps, buf, len);
}

int vgpu_job_describe(struct vgpu_job *job, char *buf, size_t len)
{
	struct vgpu_exception_record rec;
	int ret;

	if (!buf && len)
		return -EINVAL;
	ret = vgpu_job_exception(job, &rec);
	if (ret)
		return ret;
	return describe(&rec, job->kernel, job->entry, job->nwarps, buf, len);
}
