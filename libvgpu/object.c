/* SPDX-License-Identifier: MIT */
/*
 * vGPU object files: struct vgpu_object <-> the little-endian file layout
 * of uapi/vgpu_isa.h, loading from a path, kernel lookup.
 *
 * vgpu_object_read() trusts nothing: every offset, count and size is
 * checked before use, and names must be NUL-terminated, so that callers can
 * hand it any file.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "asm_priv.h"
#include "le.h"
#include "vgpu_asm.h"
#include "vgpu_hw.h"

#define HDR_SIZE sizeof(struct vgpu_obj_header)
#define KERNEL_SIZE sizeof(struct vgpu_obj_kernel)
#define PARAM_SIZE sizeof(struct vgpu_obj_param)
#define RELOC_SIZE sizeof(struct vgpu_obj_reloc)

void vgpu_object_fini(struct vgpu_object *obj)
{
	if (!obj)
		return;
	free(obj->code);
	free(obj->kernels);
	free(obj->params);
	free(obj->data);
	free(obj->relocs);
	memset(obj, 0, sizeof(*obj));
}

const struct vgpu_obj_kernel *vgpu_object_find_kernel(const struct vgpu_object *obj,
						      const char *name)
{
	if (!obj || !obj->nkernels)
		return NULL;
	if (!name)
		return &obj->kernels[0];
	for (uint32_t i = 0; i < obj->nkernels; i++)
		if (!strncmp(obj->kernels[i].name, name, VGPU_OBJ_NAME_MAX) &&
		    strlen(name) < VGPU_OBJ_NAME_MAX)
			return &obj->kernels[i];
	return NULL;
}

/* Fixed-size name field: the name, NUL, zero padding. */
static void put_name(uint8_t *p, const char *name)
{
	size_t n = strnlen(name, VGPU_OBJ_NAME_MAX - 1);

	memcpy(p, name, n);
	memset(p + n, 0, VGPU_OBJ_NAME_MAX - n);
}

static void put_kernel(uint8_t *p, const struct vgpu_obj_kernel *k)
{
	put_name(p, k->name);
	p += VGPU_OBJ_NAME_MAX;
	vgpu_put_le32(p, k->entry);
	vgpu_put_le32(p + 4, k->smem_static);
	vgpu_put_le32(p + 8, k->param_size);
	vgpu_put_le32(p + 12, k->first_param);
	vgpu_put_le32(p + 16, k->nparams);
	vgpu_put_le32(p + 20, k->local_bytes);
}

static void put_param(uint8_t *p, const struct vgpu_obj_param *pa)
{
	put_name(p, pa->name);
	p += VGPU_OBJ_NAME_MAX;
	vgpu_put_le32(p, pa->offset);
	vgpu_put_le32(p + 4, pa->size);
	vgpu_put_le32(p + 8, pa->type);
	vgpu_put_le32(p + 12, 0);
}

static const uint32_t param_sizes[] = {
	[VGPU_PARAM_U32] = 4, [VGPU_PARAM_S32] = 4, [VGPU_PARAM_F32] = 4,
	[VGPU_PARAM_U64] = 8, [VGPU_PARAM_S64] = 8, [VGPU_PARAM_PTR] = 8,
	[VGPU_PARAM_LOCAL] = 8, [VGPU_PARAM_DATA] = 8, [VGPU_PARAM_PRINTF] = 8,
	[VGPU_PARAM_PARAMS] = 8, [VGPU_PARAM_U8] = 1, [VGPU_PARAM_U16] = 2,
	[VGPU_PARAM_ENVREGS] = 4 * VGPU_ENVREGS,
};

/* The bytes relocation @kind writes, or 0 for an unknown kind. */
static uint32_t reloc_bytes(uint32_t kind)
{
	if (kind == VGPU_RELOC_ADDR64 || kind == VGPU_RELOC_HEAP64)
		return 8;
	if (kind == VGPU_RELOC_KDESC)
		return sizeof(struct vgpu_kernel_desc);
	return kind >= VGPU_RELOC_ADDR_BYTE0 && kind < VGPU_RELOC_ADDR_BYTE0 + 8 ? 1 : 0;
}

void vgpu_object_relocate(const struct vgpu_object *obj, uint64_t va, uint8_t *data)
{
	for (uint32_t i = 0; i < obj->nrelocs; i++) {
		const struct vgpu_obj_reloc *x = &obj->relocs[i];
		uint64_t a = va + x->target;

		if (x->kind == VGPU_RELOC_HEAP64 || x->kind == VGPU_RELOC_KDESC)
			continue; /* at the launch (vgpu_heap_attach), by the loader */
		if (x->kind == VGPU_RELOC_ADDR64)
			vgpu_put_le64(data + x->offset, a);
		else
			data[x->offset] = (uint8_t)(a >> (8 * (x->kind - VGPU_RELOC_ADDR_BYTE0)));
	}
}

int vgpu_object_write(const struct vgpu_object *obj, uint8_t **buf, size_t *len)
{
	size_t koff = HDR_SIZE, poff, coff, doff, roff, total;
	uint8_t *b;

	if (!obj || !buf || !len || obj->code_size % VGPU_INSN_BYTES ||
	    (obj->code_size && !obj->code) || (obj->nkernels && !obj->kernels) ||
	    (obj->nparams && !obj->params) || (obj->data_size && !obj->data) ||
	    (obj->nrelocs && (!obj->relocs || !obj->data_size)))
		return -EINVAL;
	if (obj->data_size)
		koff += sizeof(struct vgpu_obj_data);
	if (obj->nrelocs)
		koff += sizeof(struct vgpu_obj_relocs);
	poff = koff + (size_t)obj->nkernels * KERNEL_SIZE;
	coff = (poff + (size_t)obj->nparams * PARAM_SIZE + 15) & ~(size_t)15;
	doff = coff + obj->code_size;
	roff = (doff + obj->data_size + 7) & ~(size_t)7;
	total = obj->nrelocs ? roff + (size_t)obj->nrelocs * RELOC_SIZE : doff + obj->data_size;
	if (total > UINT32_MAX)
		return -EFBIG;
	b = calloc(1, total);
	if (!b)
		return -ENOMEM;
	vgpu_put_le32(b + 0, VGPU_OBJ_MAGIC);
	vgpu_put_le32(b + 4, obj->nrelocs ? VGPU_OBJ_VERSION_RELOCS :
			     obj->data_size ? VGPU_OBJ_VERSION_DATA : VGPU_OBJ_VERSION);
	if (obj->data_size) {
		vgpu_put_le32(b + HDR_SIZE, (uint32_t)doff);
		vgpu_put_le32(b + HDR_SIZE + 4, obj->data_size);
		memcpy(b + doff, obj->data, obj->data_size);
	}
	if (obj->nrelocs) {
		vgpu_put_le32(b + HDR_SIZE + 8, (uint32_t)roff);
		vgpu_put_le32(b + HDR_SIZE + 12, obj->nrelocs);
		for (uint32_t i = 0; i < obj->nrelocs; i++) {
			uint8_t *p = b + roff + i * RELOC_SIZE;

			vgpu_put_le32(p, obj->relocs[i].offset);
			vgpu_put_le32(p + 4, obj->relocs[i].kind);
			vgpu_put_le64(p + 8, obj->relocs[i].target);
		}
	}
	vgpu_put_le32(b + 8, obj->nkernels);
	vgpu_put_le32(b + 12, obj->nparams);
	vgpu_put_le32(b + 16, (uint32_t)koff);
	vgpu_put_le32(b + 20, (uint32_t)poff);
	vgpu_put_le32(b + 24, (uint32_t)coff);
	vgpu_put_le32(b + 28, obj->code_size);
	for (uint32_t i = 0; i < obj->nkernels; i++)
		put_kernel(b + koff + i * KERNEL_SIZE, &obj->kernels[i]);
	for (uint32_t i = 0; i < obj->nparams; i++)
		put_param(b + poff + i * PARAM_SIZE, &obj->params[i]);
	if (obj->code_size)
		memcpy(b + coff, obj->code, obj->code_size);
	*buf = b;
	*len = total;
	return 0;
}

/* ---- reading ---- */

__attribute__((format(printf, 3, 4))) static int bad(char *err, size_t errlen,
						     const char *fmt, ...)
{
	va_list ap;
	int n;

	if (!err || !errlen)
		return -EINVAL;
	n = snprintf(err, errlen, "invalid object: ");
	if (n < 0 || (size_t)n >= errlen)
		return -EINVAL;
	va_start(ap, fmt);
	vsnprintf(err + n, errlen - (size_t)n, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

/* A NUL-terminated, non-empty name field. */
/*
 * A name is one the assembler takes (vgpu_asm_name_ok: an identifier and
 * no register name, so that the disassembly of the object assembles),
 * NUL-terminated inside its field; the bytes after the NUL are not kept.
 */
static bool get_name(char *dst, const uint8_t *p)
{
	const uint8_t *nul = memchr(p, 0, VGPU_OBJ_NAME_MAX);

	if (!nul)
		return false;
	memset(dst, 0, VGPU_OBJ_NAME_MAX);
	memcpy(dst, p, (size_t)(nul - p));
	return vgpu_asm_name_ok(dst);
}

/* Is [off, off + size) inside the file and clear of the header? */
static bool in_file(uint64_t off, uint64_t size, size_t len)
{
	return off >= HDR_SIZE && off <= len && size <= len - off;
}

struct reader {
	const uint8_t *b;
	size_t len;
	struct vgpu_obj_header h;
	uint32_t data_offset, data_size;
	uint32_t relocs_offset, nrelocs;
	char *err;
	size_t errlen;
};

static int read_header(struct reader *r)
{
	const uint8_t *b = r->b;
	struct vgpu_obj_header *h = &r->h;

	if (r->len < HDR_SIZE)
		return bad(r->err, r->errlen, "%zu bytes, shorter than the header",
			   r->len);
	h->magic = vgpu_get_le32(b);
	h->version = vgpu_get_le32(b + 4);
	h->nkernels = vgpu_get_le32(b + 8);
	h->nparams = vgpu_get_le32(b + 12);
	h->kernels_offset = vgpu_get_le32(b + 16);
	h->params_offset = vgpu_get_le32(b + 20);
	h->code_offset = vgpu_get_le32(b + 24);
	h->code_size = vgpu_get_le32(b + 28);
	if (h->magic != VGPU_OBJ_MAGIC)
		return bad(r->err, r->errlen, "bad magic 0x%08" PRIx32, h->magic);
	if (h->version != VGPU_OBJ_VERSION && h->version != VGPU_OBJ_VERSION_DATA &&
	    h->version != VGPU_OBJ_VERSION_RELOCS)
		return bad(r->err, r->errlen, "unsupported version %" PRIu32,
			   h->version);
	if (h->version >= VGPU_OBJ_VERSION_DATA) {
		size_t ext = sizeof(struct vgpu_obj_data) +
			     (h->version == VGPU_OBJ_VERSION_RELOCS ? sizeof(struct vgpu_obj_relocs) : 0);

		if (r->len < HDR_SIZE + ext)
			return bad(r->err, r->errlen, "%zu bytes, shorter than the header",
				   r->len);
		r->data_offset = vgpu_get_le32(b + HDR_SIZE);
		r->data_size = vgpu_get_le32(b + HDR_SIZE + 4);
		if (!r->data_size || r->data_size > VGPU_MAX_DATA_BYTES ||
		    !in_file(r->data_offset, r->data_size, r->len))
			return bad(r->err, r->errlen, "data of %" PRIu32 " bytes at %" PRIu32
				   " outside the file or too large", r->data_size, r->data_offset);
	}
	if (h->version == VGPU_OBJ_VERSION_RELOCS) {
		r->relocs_offset = vgpu_get_le32(b + HDR_SIZE + 8);
		r->nrelocs = vgpu_get_le32(b + HDR_SIZE + 12);
		if (!r->nrelocs ||
		    !in_file(r->relocs_offset, (uint64_t)r->nrelocs * RELOC_SIZE, r->len))
			return bad(r->err, r->errlen, "%" PRIu32 " relocations at %" PRIu32
				   " outside the file or none", r->nrelocs, r->relocs_offset);
	}
	if (!h->nkernels)
		return bad(r->err, r->errlen, "no kernels");
	if (!in_file(h->kernels_offset, (uint64_t)h->nkernels * KERNEL_SIZE, r->len))
		return bad(r->err, r->errlen, "kernel table outside the file");
	if (!in_file(h->params_offset, (uint64_t)h->nparams * PARAM_SIZE, r->len))
		return bad(r->err, r->errlen, "parameter table outside the file");
	if (h->code_offset % VGPU_INSN_BYTES || h->code_size % VGPU_INSN_BYTES)
		return bad(r->err, r->errlen,
			   "code offset 0x%" PRIx32 " or size 0x%" PRIx32 " not a multiple of 16",
			   h->code_offset, h->code_size);
	if (!in_file(h->code_offset, h->code_size, r->len))
		return bad(r->err, r->errlen, "code outside the file");
	return 0;
}

static int read_param(struct reader *r, uint32_t i, struct vgpu_obj_param *p)
{
	const uint32_t *sizes = param_sizes;
	const uint8_t *b = r->b + r->h.params_offset + (size_t)i * PARAM_SIZE;
	const uint8_t *f = b + VGPU_OBJ_NAME_MAX;

	if (!get_name(p->name, b))
		return bad(r->err, r->errlen, "parameter %" PRIu32 ": bad name", i);
	p->offset = vgpu_get_le32(f);
	p->size = vgpu_get_le32(f + 4);
	p->type = vgpu_get_le32(f + 8);
	p->pad = vgpu_get_le32(f + 12);
	if (!p->type || p->type >= sizeof(param_sizes) / sizeof(param_sizes[0]) ||
	    p->size != sizes[p->type] || p->pad)
		return bad(r->err, r->errlen,
			   "parameter '%s': type %" PRIu32 " with size %" PRIu32,
			   p->name, p->type, p->size);
	if (p->offset % p->size)
		return bad(r->err, r->errlen,
			   "parameter '%s': misaligned offset %" PRIu32, p->name,
			   p->offset);
	return 0;
}

/*
 * The parameters of kernel @k lie inside its parameter buffer; it has one
 * local-memory parameter if it has local memory, else none.
 */
static int check_params(struct reader *r, const struct vgpu_object *o,
			const struct vgpu_obj_kernel *k)
{
	uint32_t nlocal = 0, ndata = 0, nprintf = 0, end = 0;

	for (uint32_t j = 0; j < k->nparams; j++) {
		const struct vgpu_obj_param *p = &o->params[k->first_param + j];

		/* as the assembler lays them out: in order, naturally aligned */
		if (p->offset != ((end + p->size - 1) & ~(p->size - 1)))
			return bad(r->err, r->errlen,
				   "parameter '%s' of kernel '%s' at offset %" PRIu32 " (the layout puts it at %" PRIu32 ")",
				   p->name, k->name, p->offset, (end + p->size - 1) & ~(p->size - 1));
		end = p->offset + p->size;
		for (uint32_t i = 0; i < j; i++)
			if (!strcmp(o->params[k->first_param + i].name, p->name))
				return bad(r->err, r->errlen,
					   "kernel '%s': two parameters '%s'", k->name, p->name);
		nlocal += p->type == VGPU_PARAM_LOCAL;
		ndata += p->type == VGPU_PARAM_DATA;
		nprintf += p->type == VGPU_PARAM_PRINTF;
	}
	if (k->param_size != ((end + 7) & ~7u))
		return bad(r->err, r->errlen,
			   "kernel '%s': %" PRIu32 " parameter bytes for parameters ending at %" PRIu32,
			   k->name, k->param_size, end);
	if (nprintf > 1)
		return bad(r->err, r->errlen, "kernel '%s': %" PRIu32 " printf parameters",
			   k->name, nprintf);
	if (ndata > 1 || (ndata && !r->data_size))
		return bad(r->err, r->errlen, "kernel '%s': %" PRIu32 " data parameters and %"
			   PRIu32 " bytes of data (want at most one, and data)",
			   k->name, ndata, r->data_size);
	if (nlocal != (k->local_bytes ? 1u : 0u))
		return bad(r->err, r->errlen,
			   "kernel '%s': %" PRIu32 " bytes of local memory and %" PRIu32
			   " local parameters (want %s)",
			   k->name, k->local_bytes, nlocal, k->local_bytes ? "one" : "none");
	return 0;
}

static int read_kernel(struct reader *r, uint32_t i, struct vgpu_obj_kernel *k)
{
	const uint8_t *b = r->b + r->h.kernels_offset + (size_t)i * KERNEL_SIZE;
	const uint8_t *f = b + VGPU_OBJ_NAME_MAX;

	if (!get_name(k->name, b))
		return bad(r->err, r->errlen, "kernel %" PRIu32 ": bad name", i);
	k->entry = vgpu_get_le32(f);
	k->smem_static = vgpu_get_le32(f + 4);
	k->param_size = vgpu_get_le32(f + 8);
	k->first_param = vgpu_get_le32(f + 12);
	k->nparams = vgpu_get_le32(f + 16);
	k->local_bytes = vgpu_get_le32(f + 20);
	if (k->entry % VGPU_INSN_BYTES || k->entry >= r->h.code_size)
		return bad(r->err, r->errlen,
			   "kernel '%s': entry 0x%" PRIx32 " outside the code",
			   k->name, k->entry);
	if ((uint64_t)k->first_param + k->nparams > r->h.nparams)
		return bad(r->err, r->errlen, "kernel '%s': parameters out of range",
			   k->name);
	if (k->param_size > VGPU_MAX_PARAM_BYTES)
		return bad(r->err, r->errlen,
			   "kernel '%s': parameter size %" PRIu32 " too large",
			   k->name, k->param_size);
	if (k->local_bytes % 16 || k->local_bytes > VGPU_MAX_LOCAL_BYTES)
		return bad(r->err, r->errlen,
			   "kernel '%s': %" PRIu32 " bytes of local memory (a multiple of 16, at most %u)",
			   k->name, k->local_bytes, VGPU_MAX_LOCAL_BYTES);
	return 0;
}

static int read_tables(struct reader *r, struct vgpu_object *o)
{
	uint32_t next = 0;	/* where the assembler puts the next kernel's */
	int ret = 0;

	for (uint32_t i = 0; i < o->nparams && !ret; i++)
		ret = read_param(r, i, &o->params[i]);
	for (uint32_t i = 0; i < o->nkernels && !ret; i++) {
		ret = read_kernel(r, i, &o->kernels[i]);
		if (!ret)
			ret = check_params(r, o, &o->kernels[i]);
		/*
		 * Each kernel's parameters follow the previous kernel's, as
		 * the assembler writes them: none shared, none left over.
		 */
		if (!ret && o->kernels[i].first_param != next)
			ret = bad(r->err, r->errlen,
				  "kernel '%s': parameters from %" PRIu32
				  " (the layout puts them at %" PRIu32 ")",
				  o->kernels[i].name, o->kernels[i].first_param, next);
		next += o->kernels[i].nparams;
		for (uint32_t j = 0; j < i && !ret; j++)
			if (!strcmp(o->kernels[j].name, o->kernels[i].name))
				ret = bad(r->err, r->errlen, "duplicate kernel '%s'",
					  o->kernels[i].name);
	}
	if (!ret && next != o->nparams)
		ret = bad(r->err, r->errlen,
			  "%" PRIu32 " parameters belong to no kernel",
			  o->nparams - next);
	return ret;
}

/* Each relocation writes bytes of the data, of a known kind. */
static int read_relocs(struct reader *r, struct vgpu_object *o)
{
	o->relocs = calloc(r->nrelocs, sizeof(*o->relocs));
	if (!o->relocs)
		return -ENOMEM;
	o->nrelocs = r->nrelocs;
	for (uint32_t i = 0; i < r->nrelocs; i++) {
		const uint8_t *p = r->b + r->relocs_offset + (size_t)i * RELOC_SIZE;
		struct vgpu_obj_reloc *x = &o->relocs[i];
		uint32_t n;

		x->offset = vgpu_get_le32(p);
		x->kind = vgpu_get_le32(p + 4);
		x->target = vgpu_get_le64(p + 8);
		n = reloc_bytes(x->kind);
		if (!n || x->offset > r->data_size || n > r->data_size - x->offset)
			return bad(r->err, r->errlen, "relocation %" PRIu32 ": kind %" PRIu32
				   " at data offset %" PRIu32 " (%" PRIu32 " bytes of data)", i,
				   x->kind, x->offset, r->data_size);
	}
	return 0;
}

int vgpu_object_read(const void *buf, size_t len, struct vgpu_object *out,
		     char *err, size_t errlen)
{
	struct reader r = { .b = buf, .len = len, .err = err, .errlen = errlen };
	struct vgpu_object o = { 0 };
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!out || (!buf && len))
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	ret = read_header(&r);
	if (ret)
		return ret;
	o.code_size = r.h.code_size;
	o.nkernels = r.h.nkernels;
	o.nparams = r.h.nparams;
	o.code = malloc(o.code_size ? o.code_size : 1);
	o.kernels = calloc(o.nkernels, sizeof(*o.kernels));
	o.params = calloc(o.nparams ? o.nparams : 1, sizeof(*o.params));
	if (!o.code || !o.kernels || !o.params) {
		vgpu_object_fini(&o);
		return -ENOMEM;
	}
	memcpy(o.code, r.b + r.h.code_offset, o.code_size);
	if (r.data_size) {
		o.data = malloc(r.data_size);
		if (!o.data) {
			vgpu_object_fini(&o);
			return -ENOMEM;
		}
		o.data_size = r.data_size;
		memcpy(o.data, r.b + r.data_offset, r.data_size);
	}
	ret = read_tables(&r, &o);
	if (!ret && r.nrelocs)
		ret = read_relocs(&r, &o);
	if (ret) {
		vgpu_object_fini(&o);
		return ret;
	}
	*out = o;
	return 0;
}

/* ---- files ---- */

static int read_all(FILE *f, uint8_t **buf, size_t *len)
{
	size_t cap = 4096, n = 0;
	uint8_t *b = malloc(cap);

	while (b) {
		size_t got = fread(b + n, 1, cap - n, f);

		n += got;
		if (got == 0)
			break;
		if (n == cap) {
			uint8_t *nb = cap > SIZE_MAX / 2 ? NULL : realloc(b, cap * 2);

			if (!nb)
				break;
			b = nb;
			cap *= 2;
		}
	}
	if (!b || n == cap) {
		free(b);
		return -ENOMEM;
	}
	if (ferror(f)) {
		free(b);
		return -EIO;
	}
	*buf = b;
	*len = n;
	return 0;
}

int vgpu_object_load_file(const char *path, struct vgpu_object *out,
			  char *err, size_t errlen)
{
	uint8_t *buf;
	size_t len;
	FILE *f;
	int ret;

	if (err && errlen)
		err[0] = 0;
	if (!path || !out)
		return -EINVAL;
	memset(out, 0, sizeof(*out));
	f = fopen(path, "rb");
	if (!f) {
		ret = -errno;
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	ret = read_all(f, &buf, &len);
	fclose(f);
	if (ret) {
		if (err && errlen)
			snprintf(err, errlen, "%s: %s", path, strerror(-ret));
		return ret;
	}
	if (len >= 4 && vgpu_get_le32(buf) == VGPU_OBJ_MAGIC) {
		ret = vgpu_object_read(buf, len, out, err, errlen);
		if (ret && err && errlen) {
			/* prefix the path: "PATH: invalid object: ..." */
			size_t pl = strlen(path) + 2, el = strlen(err);

			if (pl + el + 1 < errlen) {
				memmove(err + pl, err, el + 1);
				memcpy(err, path, pl - 2);
				memcpy(err + pl - 2, ": ", 2);
			}
		}
	} else {
		ret = vgpu_assemble((const char *)buf, len, path, out, err, errlen);
	}
	free(buf);
	return ret;
}
